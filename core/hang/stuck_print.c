// SPDX-License-Identifier: MIT
/*
 * stuck_print.c — a snapshot of open waits (stuck.h) as text or JSON: who is blocked on what,
 * since when, the chain of owners and any cycle. Apart from stuck.c (which reads /proc and the
 * threads' stacks) so that a recording's snapshot prints without the sampler: the recording
 * reader and its fuzzer link only this.
 */
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include <whyslow/syscall_names.h>

#include "stuck.h"
#include "base/util.h"
#include "stacks/stack_fmt.h"

/* frames of a user stack the text shows (JSON has them all) */
#define TEXT_FRAMES 32
/* owners a printed chain follows at most */
#define MAX_HOPS 16

/* "at least" must not round up: keep three significant digits, rounded down. */
static void fmt_at_least(uint64_t ns, char *buf, size_t len)
{
	uint64_t p = 1;

	while (ns / p >= 1000)
		p *= 10;
	ws_format_duration(ns / p * p, buf, len);
}

static const char *kind_name(const struct ws_stuck_thread *t)
{
	switch (t->kind) {
	case WS_OPEN_NONE:
		return "running";
	case WS_OPEN_STOPPED:
		return "stopped";
	default:
		return t->source >= 0 ? t->claim.kind : "unknown";
	}
}

/* "clock_nanosleep"; "syscall 451" when this build's table does not know it */
static const char *syscall_name(const struct ws_task_snap *s, char *buf, size_t len)
{
	struct ws_syscall sys = { .nr = (int32_t)s->nr, .arch = s->arch };

	return ws_syscall_label(&sys, buf, len);
}

/* The words after "blocked on": its source's ("futex 0x7f.. (FUTEX_WAIT)"), or the core's. */
static void describe(const struct ws_stuck_thread *t, char *buf, size_t len)
{
	if (t->kind == WS_OPEN_STOPPED)
		snprintf(buf, len, "a stop (state %c: a signal or a debugger)", t->s.state);
	else if (t->source >= 0)
		snprintf(buf, len, "%s", t->what);
	else
		snprintf(buf, len, "an unknown wait (state %c%s)", t->s.state,
			 t->s.syscall_denied ? "; its syscall is not readable without ptrace access"
					     : "");
}

/* A join waits for its thread to exit: that thread is named as the "holder" of the join (the
 * futex source's lock_name), and said so, not as a lock's holder. */
static bool is_join(const struct ws_stuck_thread *t)
{
	return !strcmp(t->owner.lock_name, "thread join");
}

/* " held by tid 5 (comm)" or, for a join, " the exit of tid 5 (comm)" */
static void print_holder(FILE *f, const struct ws_stuck_thread *t, const char *comm)
{
	fprintf(f, " %s tid %u", is_join(t) ? "the exit of" : "held by", t->owner.tid);
	if (comm)
		fprintf(f, " (%s)", comm);
}

/* What named @t's lock holder, for "owner from the ...". */
static const char *evidence_of(const struct ws_stuck_thread *t)
{
	return t->owner.evidence[0] ? t->owner.evidence : "lock itself";
}

/* "SIGINT" (in @buf), for a wait a signal ended by killing its thread */
static const char *signal_name(uint32_t sig, char *buf, size_t len)
{
	const char *abbrev = sigabbrev_np((int)sig);

	if (abbrev)
		snprintf(buf, len, "SIG%s", abbrev);
	else
		snprintf(buf, len, "signal %u", sig);
	return buf;
}

static void print_blocked(FILE *f, const struct ws_stuck_thread *t)
{
	char what[160], d[32], e[WS_ESC_LEN], sb[24];

	describe(t, what, sizeof(what));
	fprintf(f, "tid %u (%s) blocked ", t->s.tid, ws_text_esc(t->s.comm, e, sizeof(e)));
	if (t->killed_by) {
		ws_format_duration(t->at_least_ns, d, sizeof(d));
		fprintf(f, "%s on %s %s until %s killed it", d, what, ws_dash(),
			signal_name(t->killed_by, sb, sizeof(sb)));
		return;
	}
	if (t->at_least_ns) {
		fmt_at_least(t->at_least_ns, d, sizeof(d));
		fprintf(f, "at least %s so far ", d);
	}
	fprintf(f, "on %s %s still waiting", what, ws_dash());
}

/* @t's user stack, innermost first, one frame a line under its wait. */
static void text_ustack(FILE *f, const struct ws_stuck_thread *t)
{
	char buf[1024], e[4 * sizeof(buf)];
	const struct ws_stack *parts[1];
	const char *cut;
	uint32_t n;

	if (!t->ustack) {
		if (t->ustack_why)
			fprintf(f, "    (no user stack: %s)\n", t->ustack_why);
		return;
	}
	parts[0] = t->ustack;
	n = t->ustack->n;
	for (uint32_t i = 0; i < n && i < TEXT_FRAMES; i++) {
		ws_sframe_format(&t->ustack->frames[i], buf, sizeof(buf));
		fprintf(f, "    %s\n", ws_text_esc(buf, e, sizeof(e)));
	}
	if (n > TEXT_FRAMES)
		fprintf(f, "    ... %u more frames (--format json has them all)\n",
			n - TEXT_FRAMES);
	else if ((cut = ws_stack_cut(parts, 1)))
		fprintf(f, "    ... (the walk ended: %s)\n", cut);
}

/*
 * Asleep, with files its process has open locked by others: it may poll for one of those locks
 * (SQLite's busy handler), which nothing in its own wait names. Said as what /proc/locks shows.
 */
static void text_file_locks(FILE *f, const struct ws_stuck_thread *t)
{
	char e[WS_ESC_LEN], e2[WS_ESC_LEN];

	for (uint32_t i = 0; i < t->nflocks; i++) {
		const struct ws_file_lock *l = &t->flocks[i];

		fprintf(f,
			" %s while it sleeps, pid %u (%s) holds a %s %s lock on %s (fd %d), from /proc/locks",
			ws_arrow(), l->holder, ws_text_esc(l->holder_comm, e, sizeof(e)), l->kind,
			l->type, ws_text_esc(l->path, e2, sizeof(e2)), l->fd);
		if (t->polls_in)
			fprintf(f, ": it polls for a lock (%s on its stack)\n",
				ws_text_esc(t->polls_in, e, sizeof(e)));
		else
			fputs(": it may be polling for that lock (not proven)\n", f);
	}
}

static void text_chain(FILE *f, const struct ws_stuck *st, const struct ws_stuck_thread *t)
{
	const struct ws_stuck_thread *seen[MAX_HOPS + 1];
	char e[WS_ESC_LEN];
	int nseen = 0;

	print_blocked(f, t);
	fputc('\n', f);
	text_ustack(f, t);
	text_file_locks(f, t);
	if (t->in_cycle) { /* its owners are the DEADLOCK line above */
		fprintf(f, " %s", ws_arrow());
		print_holder(f, t, NULL);
		fprintf(f, " (owner from the %s): the DEADLOCK above\n", evidence_of(t));
		return;
	}
	seen[nseen++] = t;
	while (nseen <= MAX_HOPS) {
		const struct ws_stuck_thread *o;

		if (t->lock && !t->owner.tid) {
			fprintf(f, " %s holder unknown: %s\n", ws_arrow(),
				t->owner.why[0] ? t->owner.why : "no owner evidence");
			return;
		}
		if (!t->owner.tid)
			return;
		o = ws_stuck_find(st->t, st->n, t->owner.tid);
		fprintf(f, " %s", ws_arrow());
		print_holder(f, t, o ? ws_text_esc(o->s.comm, e, sizeof(e)) : "?");
		fprintf(f, " (owner from the %s)\n", evidence_of(t));
		if (!o)
			return;
		for (int i = 0; i < nseen; i++)
			if (seen[i] == o) {
				fprintf(f, " %s which waits as above: a cycle (deadlock)\n",
					ws_arrow());
				return;
			}
		if (o->kind == WS_OPEN_NONE) {
			fprintf(f, " %s tid %u (%s) is running (state %c)\n", ws_arrow(), o->s.tid,
				ws_text_esc(o->s.comm, e, sizeof(e)), o->s.state);
			return;
		}
		fprintf(f, " %s ", ws_arrow());
		print_blocked(f, o);
		fputc('\n', f);
		seen[nseen++] = o;
		t = o;
	}
}

static void json_thread_fields(FILE *f, const struct ws_stuck_thread *t)
{
	char nb[32];

	fprintf(f, "\"tid\":%u,\"pid\":%u,\"comm\":", t->s.tid, t->s.pid);
	ws_json_str(f, t->s.comm);
	/* its cgroup as sampled (null: not read, e.g. a thread a signal killed) */
	fputs(",\"cgroup\":", f);
	if (t->s.cgroup[0])
		ws_json_str(f, t->s.cgroup);
	else
		fputs("null", f);
	fprintf(f, ",\"state\":\"%c\",\"kind\":", t->s.state);
	ws_json_str(f, kind_name(t));
	fprintf(f, ",\"blocked_at_least_ns\":%" PRIu64, t->at_least_ns);
	fputs(",\"blocked_evidence\":", f);
	if (t->since_why)
		ws_json_str(f, t->since_why);
	else
		fputs("null", f);
	if (t->s.in_syscall) {
		fputs(",\"syscall\":", f);
		ws_json_str(f, syscall_name(&t->s, nb, sizeof(nb)));
		fprintf(f, ",\"nr\":%ld,\"args\":[", t->s.nr);
		for (int i = 0; i < 6; i++)
			fprintf(f, "%s\"0x%" PRIx64 "\"", i ? "," : "", t->s.args[i]);
		fputc(']', f);
	}
	if (t->source >= 0)
		ws_json_claim_fields(f, &t->claim);
	if (t->gil.waits) { /* as a recorded GIL wait says it (the futex source's lock_name) */
		fputs(",\"lock\":\"gil\",\"lock_name\":", f);
		ws_json_str(f, t->gil.name);
	}
	if (t->lock && t->owner.tid) {
		fprintf(f, ",\"owner\":%u,\"owner_evidence\":", t->owner.tid);
		ws_json_str(f, t->owner.evidence_key);
	} else if (t->lock) {
		fputs(",\"owner\":null,\"owner_unknown\":", f);
		ws_json_str(f, t->owner.why[0] ? t->owner.why : "no owner evidence");
	}
	fputs(",\"kstack\":[", f);
	for (int i = 0; i < t->s.nkstack; i++) {
		if (i)
			fputc(',', f);
		ws_json_str(f, t->s.kstack[i]);
	}
	fputc(']', f);
	if (t->ustack) {
		const struct ws_stack *parts[1] = { t->ustack };
		const char *cut = ws_stack_cut(parts, 1);

		ws_stack_json(f, "ustack", parts, 1);
		if (cut) {
			fputs(",\"ustack_cut\":", f);
			ws_json_str(f, cut);
		}
	} else if (t->ustack_why) {
		fputs(",\"ustack_unavailable\":", f);
		ws_json_str(f, t->ustack_why);
	}
	for (uint32_t i = 0; i < t->nflocks; i++) {
		const struct ws_file_lock *l = &t->flocks[i];

		fprintf(f, "%s{\"fd\":%d,\"path\":", i ? "," : ",\"file_locks\":[", l->fd);
		ws_json_str(f, l->path);
		fprintf(f, ",\"holder_pid\":%u,\"holder_comm\":", l->holder);
		ws_json_str(f, l->holder_comm);
		fputs(",\"kind\":", f);
		ws_json_str(f, l->kind);
		fputs(",\"type\":", f);
		ws_json_str(f, l->type);
		fputs(",\"evidence\":\"/proc/locks\"}", f);
		if (i + 1 == t->nflocks)
			fputc(']', f);
	}
	if (t->nflocks && t->polls_in) {
		fputs(",\"polls_in\":", f);
		ws_json_str(f, t->polls_in);
	}
}

static void json_chain(FILE *f, const struct ws_stuck *st, const struct ws_stuck_thread *t)
{
	const struct ws_stuck_thread *hop = t;

	char sb[24];

	/* a wait its thread's kill ended is reported as it was then, and is no longer open */
	if (t->killed_by)
		fprintf(f, "{\"type\":\"open_wait\",\"open\":false,\"killed_by\":\"%s\",",
			signal_name(t->killed_by, sb, sizeof(sb)));
	else
		fputs("{\"type\":\"open_wait\",\"open\":true,", f);
	json_thread_fields(f, t);
	fprintf(f, ",\"deadlock\":%s,\"links\":[", t->in_cycle ? "true" : "false");
	/* the owners, in order, each once */
	for (int n = 0; n < MAX_HOPS && hop->owner.tid; n++) {
		const struct ws_stuck_thread *o = ws_stuck_find(st->t, st->n, hop->owner.tid);

		if (!o || o == t)
			break;
		if (n)
			fputc(',', f);
		fputc('{', f);
		json_thread_fields(f, o);
		fputc('}', f);
		hop = o;
	}
	fputs("]}\n", f);
}

/* "tid 101 (a) waits for mutex 0x.. held by tid 102 (b), which waits for ... held by tid 101 (a)"
 */
static void text_deadlock(FILE *f, const struct ws_stuck *st, const size_t *cyc, size_t len)
{
	char e[WS_ESC_LEN];

	fputs("DEADLOCK: ", f);
	for (size_t k = 0; k < len; k++) {
		const struct ws_stuck_thread *t = &st->t[cyc[k]], *o = &st->t[cyc[(k + 1) % len]];

		if (k)
			fputs(", which waits for ", f);
		else
			fprintf(f, "tid %u (%s) waits for ", t->s.tid,
				ws_text_esc(t->s.comm, e, sizeof(e)));
		if (is_join(t))
			fprintf(f, "the exit of tid %u (%s) (thread join 0x%" PRIx64 ")", o->s.tid,
				ws_text_esc(o->s.comm, e, sizeof(e)), t->owner.lock);
		else
			fprintf(f, "%s 0x%" PRIx64 " held by tid %u (%s)", t->owner.lock_name,
				t->owner.lock, o->s.tid, ws_text_esc(o->s.comm, e, sizeof(e)));
		if (o->s.pid != t->s.pid)
			fprintf(f, " in pid %u", o->s.pid);
	}
	fputc('\n', f);
}

static void json_deadlock(FILE *f, const struct ws_stuck *st, const size_t *cyc, size_t len)
{
	char nb[32];

	fputs("{\"type\":\"deadlock\",\"threads\":[", f);
	for (size_t k = 0; k < len; k++) {
		const struct ws_stuck_thread *t = &st->t[cyc[k]], *o = &st->t[cyc[(k + 1) % len]];

		fprintf(f, "%s{\"tid\":%u,\"pid\":%u,\"comm\":", k ? "," : "", t->s.tid, t->s.pid);
		ws_json_str(f, t->s.comm);
		/* as an open wait's: sampled with the thread, null when not read */
		fputs(",\"cgroup\":", f);
		if (t->s.cgroup[0])
			ws_json_str(f, t->s.cgroup);
		else
			fputs("null", f);
		fprintf(f, ",\"waits_for\":\"0x%" PRIx64 "\",\"lock\":", t->owner.lock);
		ws_json_str(f, t->owner.lock_name);
		if (t->s.in_syscall) {
			fputs(",\"syscall\":", f);
			ws_json_str(f, syscall_name(&t->s, nb, sizeof(nb)));
		}
		if (t->source >= 0)
			ws_json_claim_fields(f, &t->claim);
		fprintf(f, ",\"held_by\":%u,\"owner_evidence\":", o->s.tid);
		ws_json_str(f, t->owner.evidence_key);
		fputc('}', f);
	}
	fputs("]}\n", f);
}

static bool reported(const struct ws_stuck_thread *t, uint64_t min_block_ns)
{
	return t->kind != WS_OPEN_NONE && (t->in_cycle || t->at_least_ns >= min_block_ns);
}

int ws_stuck_print(FILE *f, const struct ws_stuck *st, uint64_t min_block_ns, bool json,
		   const char *heading)
{
	size_t shown = 0;
	char d[32];

	for (size_t i = 0; i < st->n; i++)
		shown += reported(&st->t[i], min_block_ns);
	if (!json && heading) {
		size_t all = st->n_total > st->n ? st->n_total : st->n;

		ws_format_duration(min_block_ns, d, sizeof(d));
		fprintf(f, "\n%s: %zu of %zu thread%s blocked at least %s\n", heading, shown, all,
			ws_plural(all, "", "s"), d);
	}
	for (size_t c = 0, at = 0; c < (size_t)st->ncycles; at += st->cycle_len[c++]) {
		if (json)
			json_deadlock(f, st, st->cycles + at, st->cycle_len[c]);
		else
			text_deadlock(f, st, st->cycles + at, st->cycle_len[c]);
	}
	for (size_t i = 0; i < st->n; i++) {
		if (!reported(&st->t[i], min_block_ns))
			continue;
		if (json)
			json_chain(f, st, &st->t[i]);
		else
			text_chain(f, st, &st->t[i]);
	}
	if (!json && st->no_syscall_access)
		fputs("(some threads' syscalls were not readable: run as the process's user or with sudo for ptrace access)\n",
		      f);
	return st->ncycles;
}
