// SPDX-License-Identifier: MIT
/* The open waits as a recording record (core/stuck_rec.c): round trip and hostile payloads. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stuck_rec.h"

/* Two threads deadlocked on two mutexes, a running owner-less third, a sleeper. */
static void make(struct ws_stuck *st, struct ws_stuck_thread *t, size_t *cyc, size_t *cyclen)
{
	memset(st, 0, sizeof(*st));
	memset(t, 0, 4 * sizeof(*t));
	for (int i = 0; i < 4; i++) {
		t[i].s.tid = 100 + i;
		t[i].s.pid = 100;
		snprintf(t[i].s.comm, sizeof(t[i].s.comm), "th%d", i);
		t[i].s.state = 'S';
	}
	t[0].kind = t[1].kind = WS_OPEN_FUTEX;
	t[0].addr = 0x1000;
	t[1].addr = 0x2000;
	t[0].op = t[1].op = 128;
	t[0].owner = (struct ws_owner){ .evidence = WS_OWNER_MUTEX_WORD, .tid = 101 };
	t[1].owner = (struct ws_owner){ .evidence = WS_OWNER_MUTEX_WORD, .tid = 100 };
	t[0].steady = t[1].steady = t[0].in_cycle = t[1].in_cycle = true;
	t[0].s.in_syscall = t[1].s.in_syscall = true;
	t[0].s.nr = 202;
	t[0].s.args[0] = 0x1000;
	t[0].at_least_ns = 2000000000;
	t[0].since_why = "did not run between two samples";
	strcpy(t[0].s.kstack[0], "futex_wait");
	t[0].s.nkstack = 1;
	t[2].kind = WS_OPEN_NONE; /* running, owns nothing: counted, not stored */
	t[2].s.state = 'R';
	t[3].kind = WS_OPEN_SLEEP;
	t[3].owner.why = "no owner evidence";
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
	cr_assert_eq(back.t[0].owner.evidence, WS_OWNER_MUTEX_WORD);
	cr_assert_eq(back.t[0].at_least_ns, 2000000000);
	cr_assert_str_eq(back.t[0].since_why, "did not run between two samples");
	cr_assert_str_eq(back.t[0].s.kstack[0], "futex_wait");
	cr_assert_str_eq(back.t[0].s.comm, "th0");
	cr_assert_eq(back.t[0].s.args[0], 0x1000);
	cr_assert(back.t[0].steady && back.t[0].s.in_syscall);
	cr_assert_eq(back.t[2].s.tid, 103);
	cr_assert_eq(back.t[2].kind, WS_OPEN_SLEEP);
	cr_assert_str_eq(back.t[2].owner.why, "no owner evidence");
	cr_assert_null(back.t[2].since_why);
	/* both print the same */
	{
		char *a = NULL, *b = NULL;
		size_t al, bl;
		FILE *fa = open_memstream(&a, &al), *fb = open_memstream(&b, &bl);

		cr_assert_eq(ws_stuck_print(fa, &st, 1, true, NULL), 1);
		cr_assert_eq(ws_stuck_print(fb, &back, 1, true, NULL), 1);
		fclose(fa);
		fclose(fb);
		cr_assert_str_eq(a, b);
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
	buf[40 + 112 + 1] = WS_OPEN_FUTEX;
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
