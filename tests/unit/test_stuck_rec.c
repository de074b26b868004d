// SPDX-License-Identifier: MIT
/* The open waits as a recording record (core/record/stuck_rec.c): round trip and hostile payloads.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "record/stuck_rec.h"

/*
 * A stand-in for the sources (ws_session_open_sources): syscall 202 is a wait on a lock at
 * its first argument, any other syscall is itself; a thread in none is left undescribed.
 */
static int fake_describe(void *ctx, const struct ws_open_wait *w, struct ws_claim *c, char *what,
			 size_t len)
{
	(void)ctx;
	if (w->syscall.nr == WS_SYSCALL_NONE)
		return -1;
	c->strength = WS_CLAIM_SPECIFIC;
	if (w->syscall.nr == 202) {
		snprintf(c->kind, sizeof(c->kind), "lockish");
		snprintf(c->fields[0].key, sizeof(c->fields[0].key), "addr");
		c->fields[0].type = WS_FIELD_HEX;
		c->fields[0].u = w->syscall.args[0];
		c->nfields = 1;
		snprintf(what, len, "lockish 0x%llx", (unsigned long long)w->syscall.args[0]);
		return 1;
	}
	snprintf(c->kind, sizeof(c->kind), "call");
	snprintf(what, len, "call %d", w->syscall.nr);
	return 0;
}

static const struct ws_open_sources fake = { .describe = fake_describe };

static void set_owner(struct ws_stuck_thread *t, uint32_t tid, uint64_t lock)
{
	t->lock = true;
	t->owner = (struct ws_open_owner){ .sz = sizeof(t->owner), .tid = tid, .lock = lock };
	snprintf(t->owner.lock_name, sizeof(t->owner.lock_name), "mutex");
	snprintf(t->owner.evidence, sizeof(t->owner.evidence), "mutex word");
	snprintf(t->owner.evidence_key, sizeof(t->owner.evidence_key), "mutex_word");
}

/* Two threads deadlocked on two locks, a running owner-less third, a sleeper. */
static void make(struct ws_stuck *st, struct ws_stuck_thread *t, size_t *cyc, size_t *cyclen)
{
	memset(st, 0, sizeof(*st));
	memset(t, 0, 4 * sizeof(*t));
	for (int i = 0; i < 4; i++) {
		t[i].s.tid = 100 + i;
		t[i].s.pid = 100;
		t[i].s.arch = WS_ARCH_NATIVE;
		snprintf(t[i].s.comm, sizeof(t[i].s.comm), "th%d", i);
		t[i].s.state = 'S';
		t[i].kind = WS_OPEN_BLOCKED;
	}
	set_owner(&t[0], 101, 0x1000);
	set_owner(&t[1], 100, 0x2000);
	t[0].steady = t[1].steady = t[0].in_cycle = t[1].in_cycle = true;
	t[0].s.in_syscall = t[1].s.in_syscall = t[3].s.in_syscall = true;
	t[0].s.nr = t[1].s.nr = 202;
	t[0].s.args[0] = 0x1000;
	t[1].s.args[0] = 0x2000;
	t[0].at_least_ns = 2000000000;
	t[0].since_why = "did not run between two samples";
	strcpy(t[0].s.kstack[0], "futex_wait");
	t[0].s.nkstack = 1;
	strcpy(t[0].s.cgroup, "/system.slice/app.service");
	t[2].kind = WS_OPEN_NONE; /* running, owns nothing: counted, not stored */
	t[2].s.state = 'R';
	t[3].s.nr = 230;
	t[3].at_least_ns = 5;
	cyc[0] = 0;
	cyc[1] = 1;
	cyclen[0] = 2;
	st->t = t;
	st->n = 4;
	st->cycles = cyc;
	st->cycle_len = cyclen;
	st->ncycles = 1;
	st->mono_ns = 42;
	st->wall_ns = 43;
	ws_stuck_describe(st, &fake);
}

static char *print(const struct ws_stuck *st, bool json)
{
	char *a = NULL;
	size_t al;
	FILE *f = open_memstream(&a, &al);

	cr_assert_eq(ws_stuck_print(f, st, 1, json, "open"), 1);
	fclose(f);
	return a;
}

Test(stuck_rec, round_trip)
{
	struct ws_stuck st, back;
	struct ws_stuck_thread t[4];
	size_t cyc[2], cyclen[1], len;
	void *buf;

	make(&st, t, cyc, cyclen);
	cr_assert_eq(ws_stuck_encode(&st, &buf, &len), 0);
	cr_assert_eq(ws_stuck_decode(buf, len, &back), 0);
	cr_assert_eq(back.n, 3, "the running thread that owns nothing is not stored");
	cr_assert_eq(back.n_total, 4);
	cr_assert_eq(back.mono_ns, 42);
	cr_assert_eq(back.ncycles, 1);
	cr_assert_eq(back.cycle_len[0], 2);
	cr_assert_eq(back.t[back.cycles[0]].s.tid, 100);
	cr_assert_eq(back.t[back.cycles[1]].s.tid, 101);
	cr_assert(back.t[0].in_cycle && back.t[1].in_cycle && !back.t[2].in_cycle);
	cr_assert_eq(back.t[0].owner.tid, 101);
	cr_assert(back.t[0].lock);
	cr_assert_str_eq(back.t[0].owner.evidence_key, "mutex_word");
	cr_assert_eq(back.t[0].owner.lock, 0x1000);
	cr_assert_eq(back.t[0].source, -1, "described by the report's sources, not the file");
	cr_assert_eq(back.t[0].at_least_ns, 2000000000);
	cr_assert_str_eq(back.t[0].since_why, "did not run between two samples");
	cr_assert_str_eq(back.t[0].s.kstack[0], "futex_wait");
	cr_assert_str_eq(back.t[0].s.comm, "th0");
	cr_assert_str_eq(back.t[0].s.cgroup, "/system.slice/app.service"); /* 1.9 */
	cr_assert_str_eq(back.t[1].s.cgroup, "", "not read: none");
	cr_assert_eq(back.t[0].s.args[0], 0x1000);
	cr_assert(back.t[0].steady && back.t[0].s.in_syscall);
	cr_assert_eq(back.t[2].s.tid, 103);
	cr_assert_eq(back.t[2].kind, WS_OPEN_BLOCKED);
	cr_assert(!back.t[2].lock);
	cr_assert_null(back.t[2].since_why);
	/* described again by the same sources, both print the same, in JSON and in text */
	ws_stuck_describe(&back, &fake);
	cr_assert_str_eq(back.t[0].claim.kind, "lockish");
	for (int json = 0; json < 2; json++) {
		char *a = print(&st, json), *b = print(&back, json);

		cr_assert_str_eq(a, b);
		cr_assert(strstr(a, json ? "\"kind\":\"lockish\",\"blocked_at_least_ns\""
					 : "blocked at least 2s so far on lockish 0x1000"),
			  "%s", a);
		cr_assert(
			strstr(a,
			       json ? "\"addr\":\"0x1000\",\"owner\":101,\"owner_evidence\":\"mutex_word\""
				    : "mutex 0x1000 held by tid 101 (th1)"),
			"%s", a);
		free(a);
		free(b);
	}
	ws_stuck_free(&back);
	free(buf);
}

Test(stuck_rec, hostile_payloads_refused)
{
	struct ws_stuck st, back;
	struct ws_stuck_thread t[4];
	size_t cyc[2], cyclen[1], len;
	unsigned char *buf;
	uint32_t v;

	make(&st, t, cyc, cyclen);
	cr_assert_eq(ws_stuck_encode(&st, (void **)&buf, &len), 0);
	/* every truncation is refused, never read past */
	for (size_t l = 0; l < len; l++) {
		unsigned char *cut = malloc(l ? l : 1);

		memcpy(cut, buf, l);
		cr_assert_eq(ws_stuck_decode(cut, l, &back), -EINVAL, "length %zu", l);
		free(cut);
	}
	/* a cycle index past the threads */
	v = 7;
	memcpy(buf + len - 4, &v, 4);
	cr_assert_eq(ws_stuck_decode(buf, len, &back), -EINVAL);
	v = 1;
	memcpy(buf + len - 4, &v, 4);
	cr_assert_eq(ws_stuck_decode(buf, len, &back), 0);
	ws_stuck_free(&back);
	/* a thread count that would size a huge loop */
	v = 0xffffffff;
	memcpy(buf + 16, &v, 4);
	cr_assert_eq(ws_stuck_decode(buf, len, &back), -EINVAL);
	v = 3;
	memcpy(buf + 16, &v, 4);
	/* a kind past the table kind_name() indexes, and a control byte as the state */
	buf[40 + 112 + 1] = 99;
	cr_assert_eq(ws_stuck_decode(buf, len, &back), -EINVAL);
	buf[40 + 112 + 1] = 5;
	buf[40 + 112] = 0x1b;
	cr_assert_eq(ws_stuck_decode(buf, len, &back), -EINVAL);
	buf[40 + 112] = 'S';
	/* a control byte in a name arrives as '?' */
	buf[40 + 8] = 0x1b;
	cr_assert_eq(ws_stuck_decode(buf, len, &back), 0);
	cr_assert_eq(back.t[0].s.comm[0], '?');
	ws_stuck_free(&back);
	free(buf);
}

/* An entry written before 1.3 (504 bytes, the lock's kind and evidence a fixed list). */
Test(stuck_rec, entries_before_1_3)
{
	struct ws_stuck st, back;
	struct ws_stuck_thread t[4];
	size_t cyc[2], cyclen[1], len, old_len, tsz, old_tsz = 504, n;
	unsigned char *buf, *old;
	uint32_t u;

	make(&st, t, cyc, cyclen);
	cr_assert_eq(ws_stuck_encode(&st, (void **)&buf, &len), 0);
	memcpy(&u, buf + 28, 4);
	tsz = u;
	memcpy(&u, buf + 16, 4);
	n = u;
	cr_assert_gt(tsz, old_tsz);
	old_len = len - n * (tsz - old_tsz);
	old = calloc(1, old_len);
	memcpy(old, buf, 40);
	u = (uint32_t)old_tsz;
	memcpy(old + 28, &u, 4);
	for (size_t i = 0; i < n; i++)
		memcpy(old + 40 + i * old_tsz, buf + 40 + i * tsz, old_tsz);
	memcpy(old + 40 + n * old_tsz, buf + 40 + n * tsz, len - 40 - n * tsz);
	/* thread 0 as 1.1 wrote it: kind 1 (a lock), evidence 2 (glibc mutex word) */
	old[40 + 113] = 1;
	old[40 + 114] = 2;
	cr_assert_eq(ws_stuck_decode(old, old_len, &back), 0);
	cr_assert(back.t[0].lock);
	cr_assert_eq(back.t[0].owner.tid, 101);
	cr_assert_str_eq(back.t[0].owner.evidence, "mutex word");
	cr_assert_str_eq(back.t[0].owner.lock_name, "mutex");
	cr_assert_eq(back.t[0].owner.lock, 0x1000);
	/* the 1.3 writer's evidence 0: no owner from an old entry */
	cr_assert(!back.t[1].lock);
	cr_assert_eq(back.t[1].owner.tid, 0);
	cr_assert_eq(back.t[0].s.arch, WS_ARCH_NATIVE);
	cr_assert_str_eq(back.t[0].s.cgroup, "", "an entry before 1.9 names no cgroup");
	/* an evidence past the old list is refused */
	old[40 + 114] = 3;
	ws_stuck_free(&back);
	cr_assert_eq(ws_stuck_decode(old, old_len, &back), -EINVAL);
	free(old);
	free(buf);
}
