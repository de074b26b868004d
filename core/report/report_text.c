// SPDX-License-Identifier: MIT
/* The text report: the longest chains kept as text, then the critical path, reasons and summary. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "report_impl.h"
#include "critpath.h"
#include "folded.h"
#include "gil_holder.h"
#include "idle.h"
#include "offcpu.h"
#include "reasons.h"
#include "short_text.h"
#include "base/syscall_fmt.h"
#include "base/util.h"
#include "stacks/stack_fmt.h"
#include "stacks/symfile.h"

static void describe(struct ws_report *r, const struct ws_link *l, char *buf, size_t len)
{
	if (l->claim && r->o.describe)
		r->o.describe(r->o.describe_ctx, l->claim, buf, len);
	else
		snprintf(buf, len, "%s", l->kind);
}

static int by_blocked(const void *a, const void *b)
{
	const struct kept *x = a, *y = b;

	return x->blocked < y->blocked ? 1 : x->blocked > y->blocked ? -1 : 0;
}

/* " (0.4ms on average, longest 1.2ms)" after a link that stands for @n separate intervals. */
static void text_many(FILE *b, uint32_t n, uint64_t total, uint64_t longest, const char *what)
{
	char avg[32], lng[32];

	ws_format_duration(total / n, avg, sizeof(avg));
	ws_format_duration(longest, lng, sizeof(lng));
	if (what)
		fprintf(b, " in %u %s (%s on average, longest %s)", n, what, avg, lng);
	else
		fprintf(b, " (%s on average, longest %s)", avg, lng);
}

static const char *graph_comm(void *g, uint32_t tid)
{
	return ws_graph_comm(g, tid);
}

/*
 * "; held by 2 threads of /system.slice/backup.service (180ms), 1 thread of /user.slice (2ms)":
 * a runqueue link's CPU holders (ran[], the threads named before it) by their cgroup, in the
 * order of the longest first, so a noisy neighbour is seen as the group it is. Nothing when no
 * holder's cgroup was read; those not read are counted as such, never put in a group.
 */
static void text_holder_cgroups(struct ws_report *r, const struct ws_link *l, FILE *b)
{
	struct {
		const char *cg; /* NULL: not read */
		int n;
		uint64_t ns;
	} g[WS_CHAIN_MAX_RAN];
	int ng = 0;
	bool any = false;
	char d[32], e[4 * 256];

	for (int k = 0; k < l->nran; k++) {
		const char *cg = report_cgroup(r, l->ran[k].tid, l->ran[k].pid, l->start);
		int i;

		any |= cg != NULL;
		for (i = 0; i < ng && !(cg ? g[i].cg && !strcmp(g[i].cg, cg) : !g[i].cg); i++)
			;
		if (i == ng)
			g[ng++] = (typeof(g[0])){ .cg = cg };
		g[i].n++;
		g[i].ns += l->ran[k].ns;
	}
	if (!any)
		return;
	for (int i = 0; i < ng; i++) {
		ws_format_duration(g[i].ns, d, sizeof(d));
		fprintf(b, "%s %d thread%s of %s (%s)", i ? "," : "; held by", g[i].n,
			g[i].n > 1 ? "s" : "",
			g[i].cg ? ws_text_esc(g[i].cg, e, sizeof(e)) : "a cgroup not read", d);
	}
}

/* "blocked 412ms on futex 0x7f2a3c001000" and friends. */
static void text_phrase(struct ws_report *r, const struct ws_link *l, const char *fd_path, FILE *b)
{
	char dur[32], what[256], e[4 * 256], sys[384], e2[WS_ESC_LEN * 2];

	ws_format_duration(l->dur, dur, sizeof(dur));
	if (l->claim && strcmp(l->kind, WS_CLAIM_QUOTA) == 0) {
		ws_quota_label(l->claim, what, sizeof(what));
		/* "CPU quota of /batch (10ms per 100ms)": the label after its first 13 bytes */
		fprintf(b, "was throttled %s by the CPU quota %s", dur,
			ws_text_esc(what + strlen("CPU quota "), e, sizeof(e)));
		if (l->waits > 1)
			text_many(b, l->waits, l->dur, l->longest, "throttles");
	} else if (l->claim && ws_kind_memory(l->kind)) {
		const char *on = ws_claim_str(l->claim, "waited_on", NULL);

		ws_reclaim_label(l->claim, what, sizeof(what));
		/* the reclaim's own work, or a wait inside it and what ended that wait */
		if (on)
			fprintf(b, "blocked %s inside %s (what ended it: %s)", dur,
				ws_text_esc(what, e, sizeof(e)), on);
		else
			fprintf(b, "was on CPU %s in %s", dur, ws_text_esc(what, e, sizeof(e)));
		if (l->waits > 1)
			text_many(b, l->waits, l->dur, l->longest, on ? "waits" : "stretches");
	} else if (strcmp(l->kind, WS_KIND_WAKEUP_LATENCY) == 0) {
		fprintf(b, "waited %s for CPU %u to wake up (it was idle: IPI, C-state exit)", dur,
			l->cpu);
		if (l->waits > 1)
			text_many(b, l->waits, l->dur, l->longest, "waits");
	} else if (strcmp(l->kind, WS_KIND_RUNQUEUE) == 0) {
		fprintf(b, "waited %s for CPU %u", dur, l->cpu);
		/* 2,588 short turns in the runqueue are not one 5.7s wait (sqlite3 under load) */
		if (l->waits > 1)
			text_many(b, l->waits, l->dur, l->longest, "waits");
		for (int k = 0; k < l->nran; k++) {
			char d2[32];

			ws_format_duration(l->ran[k].ns, d2, sizeof(d2));
			/* with several waits, ran[] is the longest one's (as woken_by is) */
			fprintf(b, "%s tid %u (%s) %s",
				k	       ? ","
				: l->waits > 1 ? ", the longest held by"
					       : ", held by",
				l->ran[k].tid,
				ws_text_esc(ws_graph_comm(r->g, l->ran[k].tid), e, sizeof(e)), d2);
		}
		if (l->ran_more) {
			ws_format_duration(l->ran_more_ns, what, sizeof(what));
			fprintf(b, ", %u other thread%s %s", l->ran_more,
				l->ran_more > 1 ? "s" : "", what);
		}
		if (l->idle_ns) {
			ws_format_duration(l->idle_ns, what, sizeof(what));
			fprintf(b, "%s idle %s", l->nran ? "," : ", it was", what);
		}
		/* its switch-out was summarised in the kernel: what ran next went unrecorded */
		if (!l->nran && !l->ran_more && !l->idle_ns)
			fputs(" (who held it was not recorded)", b);
		text_holder_cgroups(r, l, b);
	} else if (strcmp(l->kind, WS_KIND_RUNNING) == 0) {
		fprintf(b, "was running (on CPU) for %s of it", dur);
		if (l->waits > 1)
			text_many(b, l->waits, l->dur, l->longest, "stretches");
		if ((l->flags & WS_IVAL_SHORT_INSIDE) && l->shorts.n) {
			fprintf(b,
				", with %" PRIu64
				" short wait%s in between (each under the resolution, summed in the kernel): ",
				l->shorts.n, ws_plural(l->shorts.n, "", "s"));
			ws_short_text(b, &l->shorts, graph_comm, r->g);
		} else if ((l->flags & WS_IVAL_SHORT_INSIDE)) {
			fprintf(b,
				", with short waits in between (each under the resolution: causes not recorded)");
		}
	} else if (!l->claim) {
		fprintf(b, "not observed for %s", dur);
	} else if (l->waits > 1) {
		/* several separate waits: never print their sum as if it were one */
		if (ws_graph_resource(r->g, l->claim, what, sizeof(what)) <= 0)
			describe(r, l, what, sizeof(what));
		fprintf(b, "blocked %s in %u waits for %s", dur, l->waits, what);
		text_many(b, l->waits, l->dur, l->longest, NULL);
	} else {
		describe(r, l, what, sizeof(what));
		fprintf(b, "blocked %s on %s", dur, ws_text_esc(what, e, sizeof(e)));
		if (ws_syscall_format_path(&l->claim->syscall, fd_path, sys, sizeof(sys)) > 0)
			fprintf(b, ", in %s", ws_text_esc(sys, e2, sizeof(e2)));
	}
}

/* Bold victims on a terminal, unless NO_COLOR is set (no-color.org); never in a file. */
static bool colour(const struct ws_report *r)
{
	const char *no = getenv("NO_COLOR");
	int fd = r->o.out ? fileno(r->o.out) : -1;

	return fd >= 0 && isatty(fd) && !(no && *no);
}

/* A link's own or waker stack as text, and why it has no user frames when that failed. */
static void stack_text(FILE *b, const struct ws_link_stacks *st, bool waker, int depth)
{
	enum ws_stack_missing why = waker ? st->waker_missing : st->own_missing;
	int shown = waker ? ws_stack_text(b, st->waker, st->nwaker, depth)
			  : ws_stack_text(b, st->own, st->nown, depth);

	const char *cut =
		waker ? ws_stack_cut(st->waker, st->nwaker) : ws_stack_cut(st->own, st->nown);

	if (why >= WS_SM_FAILURES)
		fprintf(b, "%s(no user stack: %s)", shown ? " " : "", ws_stack_missing_str(why));
	/* a stack cut short is said to be one: its outer frames, where the program's own code
	 * usually is, are missing (a frame limit cuts only what the text leaves out anyway) */
	else if (shown && cut && strcmp(cut, ws_unwind_stop_str(WS_UNWIND_MAX_FRAMES)))
		fprintf(b, " (the walk ended: %s)", cut);
}

/* " ← held by tid 4242 (app) (owner from the mutex word)": not a wakeup, the lock's holder */
static void text_held_by(struct ws_report *r, const struct ws_link *l, FILE *b)
{
	char ev[32], e[WS_ESC_LEN], e2[WS_ESC_LEN];

	/* "mutex_word" said as the stuck report says it: "owner from the mutex word" */
	snprintf(ev, sizeof(ev), "%s", l->held_evidence ? l->held_evidence : "lock");
	for (char *u = ev; (u = strchr(u, '_'));)
		*u = ' ';
	fprintf(b, " %s held by tid %u (%s) (owner from the %s)\n", ws_arrow(), l->held_by,
		ws_text_esc(ws_graph_comm(r->g, l->held_by), e2, sizeof(e2)),
		ws_text_esc(ev, e, sizeof(e)));
}

/*
 * " ← held by tid 4242 (python3.11) (the GIL's last_holder as the wait ended)": a wait for
 * the GIL names the thread that held it, or says it could not.
 */
static void text_gil_holder(struct ws_report *r, const struct ws_link *l,
			    const struct ws_link_stacks *st, FILE *b)
{
	struct ws_gil_holder h;
	char e[WS_ESC_LEN];

	ws_link_gil_holder(r->g, l, st, &h);
	if (h.kind == WS_GH_HELD) {
		const struct ws_stack *parts[] = { &h.frames };

		fprintf(b, " %s held by tid %u (%s) (the GIL's last_holder as the wait ended)\n",
			ws_arrow(), h.tid, ws_text_esc(ws_graph_comm(r->g, h.tid), e, sizeof(e)));
		if (h.frames.n && r->stack_depth > 0) {
			fputs("       which ran ", b);
			ws_stack_text(b, parts, 1, r->stack_depth);
			fputs(" (read then, while it ran)\n", b);
		}
	} else if (h.kind == WS_GH_FREE && !l->has_woken_by)
		fprintf(b, " %s held by: nobody as the wait ended (the GIL was free)\n",
			ws_arrow());
	else if (h.kind == WS_GH_UNKNOWN)
		fprintf(b, " %s held by: unknown (%s)\n", ws_arrow(), h.why);
}

static void text_chain(struct ws_report *r, const struct ws_chain *c, FILE *b)
{
	/* arrows and dashes only where the locale can show them (LC_ALL=C gets ASCII) */
	const char *dash = ws_dash(), *from = ws_arrow();
	const bool bold = colour(r);
	char hms[32], rest[32], e[WS_ESC_LEN], e2[WS_ESC_LEN];

	/* names and strings from the traced programs and plugins: escaped (ws_text_esc) */
	ws_clock_hms(ws_clock_wall(r->o.clock, c->start), hms, sizeof(hms));
	for (int i = 0; i < c->nlinks; i++) {
		const struct ws_link *l = &c->links[i];
		struct ws_link_stacks st;

		if (i == 0)
			fprintf(b, "%s%s %s tid %u (%s) ", bold ? "\033[1m" : "", hms, dash, l->tid,
				ws_text_esc(l->comm, e, sizeof(e)));
		else
			fprintf(b, " %s tid %u (%s) ", from, l->tid,
				ws_text_esc(l->comm, e, sizeof(e)));
		ws_link_stacks(r->stacks, l, &st);
		text_phrase(r, l, ws_link_fd_path(l, &st), b);
		fprintf(b, "%s\n", bold && i == 0 ? "\033[0m" : "");
		if ((st.nown || st.own_missing >= WS_SM_FAILURES) && r->stack_depth > 0) {
			fputs("     ", b);
			stack_text(b, &st, false, r->stack_depth);
			fputs("\n", b);
		}
		if (l->held_by)
			text_held_by(r, l, b);
		else
			text_gil_holder(r, l, &st, b);
		if (l->has_woken_by) {
			/* of several waits, the walk goes on through the longest one's waker */
			fprintf(b, " %s %swoken by tid %u (%s)%s\n", from,
				l->waits > 1 ? "the longest " : "", l->woken_by,
				ws_text_esc(ws_graph_comm(r->g, l->woken_by), e2, sizeof(e2)),
				i + 1 == c->nlinks && l->claim && l->claim->root
					? ", not traced: not explained further"
					: "");
			if (st.nwaker && r->stack_depth > 0) {
				fputs("       who was ", b);
				stack_text(b, &st, true, r->stack_depth);
				fputs("\n", b);
			}
		}
	}
	/* say so when the thread waited noticeably longer than its first link explains */
	if (c->nlinks && (c->end - c->start) - c->links[0].dur >= 1000000) {
		ws_format_duration(c->end - c->start, rest, sizeof(rest));
		fprintf(b, "   (off CPU %s in all; breakdown in --format json \"segments\")\n",
			rest);
	}
	if (c->links_root[0]) {
		char e3[WS_ESC_LEN];

		fprintf(b,
			"   (root: %s, %.0f%% of this wait; the links above follow one wait, the longest, to %s)\n",
			ws_text_esc(c->root, e, sizeof(e)),
			c->end > c->start ? 100.0 * c->root_ns / (c->end - c->start) : 0.0,
			ws_text_esc(c->links_root, e3, sizeof(e3)));
	}
	if (c->incomplete)
		fprintf(b, "   (incomplete: %s)\n", ws_text_esc(c->why_incomplete, e, sizeof(e)));
	if (r->o.include_idle && ws_idle_chain(c))
		fprintf(b, "   (idle: nobody was working to end this wait)\n");
}

/* The text of one chain, as the report prints it, into a malloc'd string. */
int report_render_text(void *ctx, const struct ws_chain *c, char **text)
{
	size_t len = 0;
	FILE *b;

	*text = NULL;
	b = open_memstream(text, &len);
	if (!b)
		return -ENOMEM;
	text_chain(ctx, c, b);
	if (fclose(b)) {
		free(*text);
		*text = NULL;
		return -ENOMEM;
	}
	return 0;
}

/* One line when stacks failed (stacks off, short waits and kernel threads are by design). */
static void stacks_missing_text(const struct ws_report *r, FILE *b)
{
	uint64_t n = 0;
	bool first = true;

	for (int i = WS_SM_FAILURES; i < WS_SM_COUNT; i++)
		n += r->stacks_missing[i];
	if (!n)
		return;
	fprintf(b, "  STACKS: %" PRIu64 " %s without user frames:", n,
		ws_plural(n, "stack", "stacks"));
	for (int i = WS_SM_FAILURES; i < WS_SM_COUNT; i++) {
		if (!r->stacks_missing[i])
			continue;
		fprintf(b, "%s %s (%" PRIu64 ")", first ? "" : ";", ws_stack_missing_str(i),
			r->stacks_missing[i]);
		first = false;
	}
	fprintf(b, "\n");
}

/*
 * The @i-th longest wait: its chain, or when a reason above printed that very chain as its
 * example, its first line and a reference (a small program's report used to print each chain
 * two or three times).
 */
static void top_text(FILE *b, struct ws_report *r, int i)
{
	const char *t = r->top[i].text;
	int rank = ws_reasons_shown(r->reasons, t, r->o.top);
	int len = (int)strcspn(t, "\n");

	if (i)
		fputc('\n', b);
	if (!rank)
		fputs(t, b);
	else
		fprintf(b, "%.*s %s the example of reason %d above\n", len, t, ws_dash(), rank);
}

static void symbols_refused_text(const struct ws_symfile_log *l, FILE *b)
{
	char e[512];

	if (!l || !l->total)
		return;
	fprintf(b, "  SYMBOLS: unavailable from %" PRIu64 " file%s the traced programs named:",
		l->total, l->total == 1 ? "" : "s");
	for (size_t i = 0; i < l->n; i++)
		fprintf(b, "%s %s (%s)", i ? ";" : "", ws_text_esc(l->items[i].path, e, sizeof(e)),
			ws_useropen_strerror(l->items[i].err));
	fprintf(b, "%s; their frames show file offsets\n", l->total > l->n ? "; ..." : "");
}

/* The text report's end: the critical path, the reasons, the longest waits, the summary. */
/* What the run could not see or keep, each said once: losses, the unseen, the refused. */
static void warnings_text(struct ws_report *r, const struct ws_summary *s, uint64_t lost,
			  uint64_t untraced)
{
	FILE *b = r->o.out;
	char dur[32];

	if (lost || s->lost_recursion)
		fprintf(b,
			"  LOST: %" PRIu64 " record%s (ring full) and %" PRIu64
			" event%s skipped by the kernel; chains touching them are marked incomplete\n",
			lost, ws_plural(lost, "", "s"), s->lost_recursion,
			ws_plural(s->lost_recursion, "", "s"));
	else
		fprintf(b, "  No records lost.\n");
	if (s->switch_ins_unseen)
		fprintf(b,
			"  UNSEEN: %" PRIu64
			" time%s a thread left the CPU though its return to it was never reported (usually: it got the CPU from a thread whose switches the kernel does not trace); its wait ends at the earliest it can have, the stretch after is not observed and chains over it are incomplete\n",
			s->switch_ins_unseen, s->switch_ins_unseen == 1 ? "" : "s");
	symbols_refused_text(s->symbols_refused, b);
	stacks_missing_text(r, b);
	if (untraced)
		fprintf(b,
			"  UNTRACED: %" PRIu64
			" new %s of traced ones did not fit the process filter ([core] max_processes were in it already): the scheduler still follows %s, but sources that filter by process (net, klock) and the early read of %s maps did not; chains over those moments are marked incomplete\n",
			untraced, ws_plural(untraced, "process", "processes"),
			ws_plural(untraced, "it", "them"), ws_plural(untraced, "its", "their"));
	if (s->history_trims) {
		ws_format_duration(s->shortest_history_ns, dur, sizeof(dur));
		fprintf(b,
			"  HISTORY: max_history was reached %" PRIu64
			" time%s (as little as %s kept); chains reaching back further are marked incomplete: raise [core] max_history to keep more\n",
			s->history_trims, ws_plural(s->history_trims, "", "s"), dur);
	}
	if (s->out_of_memory)
		fprintf(b,
			"  MEMORY: the analysis ran out of memory %" PRIu64
			" time%s; chains over those moments are marked incomplete\n",
			s->out_of_memory, ws_plural(s->out_of_memory, "", "s"));
	if (s->cpu_refused)
		fprintf(b,
			"  REFUSED: %" PRIu64
			" record%s named a CPU the traced machine does not have (it has %" PRIu32
			"); %s not analysed\n",
			s->cpu_refused, ws_plural(s->cpu_refused, "", "s"), s->ncpus,
			ws_plural(s->cpu_refused, "it was", "they were"));
	if (s->dead_dropped)
		fprintf(b,
			"  EXITED: %" PRIu64
			" exited %s timeline%s dropped early (too many threads exited to keep them all); chains reaching into them are marked incomplete\n",
			s->dead_dropped, ws_plural(s->dead_dropped, "thread's", "threads'"),
			ws_plural(s->dead_dropped, " was", "s were"));
}

void report_text_summary(struct ws_report *r, const struct ws_summary *s, uint64_t lost,
			 uint64_t untraced)
{
	FILE *b = r->o.out;
	char dur[32], e[4 * 96];

	if (r->ntop)
		qsort(r->top, r->ntop, sizeof(*r->top), by_blocked);
	if (r->cp)
		ws_critpath_text(r->cp, b);
	if (r->request_view) {
		report_requests_text(r, &r->rs);
		/* a thread's wait outside every request cost no one anything: idle by construction
		 */
		fprintf(b,
			"Waits are ranked by what they cost the requests; %" PRIu64
			" thread wait%s over --min-block, inside requests or not, are not ranked here (--no-requests ranks them)\n",
			r->chains, ws_plural(r->chains, "", "s"));
	} else {
		if (!r->ntop)
			fprintf(b, "No wait reached the --min-block threshold.\n");
		ws_reasons_text(r->reasons, b, r->o.top);
		if (r->ntop)
			fprintf(b, "The longest single waits:\n");
		for (int i = 0; i < r->ntop; i++)
			top_text(b, r, i);
	}
	ws_format_duration(s->duration_ns, dur, sizeof(dur));
	fprintf(b,
		"\nSummary: %s traced, %d thread%s, %" PRIu64 " record%s, %" PRIu64
		" wait%s reported; sources %s\n",
		dur, s->threads, ws_plural(s->threads, "", "s"), s->records,
		ws_plural(s->records, "", "s"), r->chains, ws_plural(r->chains, "", "s"),
		s->sources);
	for (size_t i = 0; i < r->nroots;) {
		const char *comm = r->roots[i].comm;
		uint64_t tot = report_comm_total(r, comm);
		int shown = 0;

		ws_format_duration(tot, dur, sizeof(dur));
		fprintf(b, "  %s: %s blocked;", ws_text_esc(comm, e, sizeof(e)), dur);
		for (; i < r->nroots && strcmp(r->roots[i].comm, comm) == 0; i++) {
			if (tot && r->roots[i].ns * 100 >= tot && shown++ < 3)
				fprintf(b, "%s %.0f%% traces back to %s", shown > 1 ? "," : "",
					100.0 * r->roots[i].ns / tot,
					ws_text_esc(r->roots[i].root, e, sizeof(e)));
		}
		fprintf(b, "\n");
	}
	ws_offcpu_text(r->oc, b, r->o.top);
	if (r->idle_waits) {
		ws_format_duration(r->idle_ns, dur, sizeof(dur));
		fprintf(b,
			"  Idle: %" PRIu64
			" wait%s, %s in all, that nobody was working to end (%s)\n",
			r->idle_waits, r->idle_waits == 1 ? "" : "s", dur,
			r->o.include_idle ? "ranked with the rest: --include-idle"
					  : "not ranked; --include-idle shows them");
	}
	warnings_text(r, s, lost, untraced);
}
