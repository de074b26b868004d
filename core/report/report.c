// SPDX-License-Identifier: MIT
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "report.h"
#include "critpath.h"
#include "folded.h"
#include "idle.h"
#include "link_stacks.h"
#include "offcpu.h"
#include "reasons.h"
#include "base/syscall_fmt.h"
#include "base/util.h"
#include "stacks/stack_fmt.h"
#include "stacks/symfile.h"

struct kept {
	uint64_t blocked;
	char *text;
};

struct root_total {
	char comm[WS_COMM];
	char root[96];
	uint64_t ns;
};

struct ws_report {
	struct ws_report_opts o;
	struct ws_graph *g;
	struct kept *top;
	int ntop;
	struct root_total *roots;
	size_t nroots, roots_cap;
	uint64_t chains, blocked_total;
	uint64_t idle_waits, idle_ns; /* idle.h: counted whether ranked or not */
	struct ws_reasons *reasons;
	struct ws_critpath *cp; /* run: the command's main thread, or NULL */
	struct ws_offcpu *oc;	/* every thread's time off CPU, conserved */
	const struct ws_stacks *stacks;
	int stack_depth;
	uint64_t stacks_missing[WS_SM_COUNT]; /* links of ranked chains without user frames, by why
					       */
};

void ws_report_set_stacks(struct ws_report *r, const struct ws_stacks *stacks, uint64_t depth)
{
	r->stacks = stacks;
	r->stack_depth = depth > 64 ? 64 : (int)depth;
}

static int render_text(void *ctx, const struct ws_chain *c, char **text);

struct ws_report *ws_report_new(const struct ws_report_opts *o, struct ws_graph *g)
{
	struct ws_report *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->o = *o;
	r->g = g;
	r->reasons = ws_reasons_new(render_text, r);
	r->oc = ws_offcpu_new(o->min_block_ns);
	if (r->o.top > 0)
		r->top = calloc(r->o.top, sizeof(*r->top));
	if (!r->reasons || !r->oc || (r->o.top > 0 && !r->top)) {
		ws_offcpu_free(r->oc);
		ws_reasons_free(r->reasons);
		free(r->top);
		free(r);
		return NULL;
	}
	return r;
}

static void describe(struct ws_report *r, const struct ws_link *l, char *buf, size_t len)
{
	if (l->claim && r->o.describe)
		r->o.describe(r->o.describe_ctx, l->claim, buf, len);
	else
		snprintf(buf, len, "%s", l->kind);
}

/* Kinds about a CPU rather than a resource: the link says which CPU. */
static bool is_cpu_kind(const char *kind)
{
	return strcmp(kind, WS_KIND_RUNQUEUE) == 0 || strcmp(kind, WS_KIND_RUNNING) == 0 ||
	       strcmp(kind, WS_KIND_WAKEUP_LATENCY) == 0 || strcmp(kind, WS_CLAIM_QUOTA) == 0;
}

static void json_chain(struct ws_report *r, const struct ws_chain *c, FILE *b)
{
	char ts[40];
	struct ws_thread *v = c->victim;

	ws_clock_iso(ws_clock_wall(r->o.clock, c->start), ts, sizeof(ts));
	fprintf(b, "{\"type\":\"chain\",\"ts\":\"%s\",\"tid\":%u,\"pid\":%u,\"comm\":", ts, v->tid,
		v->pid);
	ws_json_str(b, v->comm[0] ? v->comm : ws_graph_comm(r->g, v->tid));
	fprintf(b,
		",\"start_ns\":%" PRIu64 ",\"blocked_ns\":%" PRIu64 ",\"woken_after_ns\":%" PRIu64
		",\"incomplete\":%s",
		c->start, c->end - c->start, c->wake - c->start, c->incomplete ? "true" : "false");
	fprintf(b, ",\"idle\":%s", ws_idle_chain(c) ? "true" : "false");
	if (c->why_incomplete) {
		fprintf(b, ",\"why_incomplete\":");
		ws_json_str(b, c->why_incomplete);
	}
	fprintf(b, ",\"root\":");
	ws_json_str(b, c->root);
	fprintf(b, ",\"root_ns\":%" PRIu64, c->root_ns);
	if (c->links_root[0]) {
		fprintf(b, ",\"links_root\":");
		ws_json_str(b, c->links_root);
	}
	fprintf(b, ",\"links\":[");
	for (int i = 0; i < c->nlinks; i++) {
		const struct ws_link *l = &c->links[i];
		struct ws_link_stacks st;
		const char *cut;

		fprintf(b, "%s{\"kind\":", i ? "," : "");
		ws_json_str(b, l->kind);
		fprintf(b, ",\"tid\":%u,\"pid\":%u,\"comm\":", l->tid, l->pid);
		ws_json_str(b, l->comm);
		fprintf(b, ",\"start_ns\":%" PRIu64 ",\"duration_ns\":%" PRIu64 ",\"woken_by\":",
			l->start, l->dur);
		if (l->has_woken_by)
			fprintf(b, "%u", l->woken_by);
		else
			fprintf(b, "null");
		if (l->held_by) {
			/* not a wakeup: the lock's holder, as the lock itself named it */
			fprintf(b, ",\"held_by\":%u,\"owner_evidence\":", l->held_by);
			ws_json_str(b, l->held_evidence ? l->held_evidence : "lock");
		}
		fprintf(b, ",\"waits\":%u,\"longest_ns\":%" PRIu64 ",\"evidence\":", l->waits,
			l->longest);
		ws_json_str(b, l->evidence ? l->evidence : "");
		if ((l->flags & WS_IVAL_SHORT_INSIDE))
			fprintf(b, ",\"short_waits_inside\":true");
		if (l->waits > 1) {
			char res[128];

			/* what the waits share; the fields after it are the longest wait's */
			if (l->claim && ws_graph_resource(r->g, l->claim, res, sizeof(res)) > 0) {
				fprintf(b, ",\"resource\":");
				ws_json_str(b, res);
			}
		}
		ws_json_claim_fields(b, l->claim);
		if (l->claim)
			ws_syscall_json(b, &l->claim->syscall);
		ws_link_stacks(r->stacks, l, &st);
		if (ws_link_fd_path(l, &st)) {
			fprintf(b, ",\"fd_path\":");
			ws_json_str(b, ws_link_fd_path(l, &st));
		}
		ws_stack_json(b, "stack", st.own, st.nown);
		ws_stack_json(b, "waker_stack", st.waker, st.nwaker);
		if ((cut = ws_stack_cut(st.own, st.nown))) {
			fprintf(b, ",\"stack_cut\":");
			ws_json_str(b, cut);
		}
		if ((cut = ws_stack_cut(st.waker, st.nwaker))) {
			fprintf(b, ",\"waker_stack_cut\":");
			ws_json_str(b, cut);
		}
		if (st.own_missing) {
			fprintf(b, ",\"stack_missing\":");
			ws_json_str(b, ws_stack_missing_str(st.own_missing));
		}
		if (st.waker_missing) {
			fprintf(b, ",\"waker_stack_missing\":");
			ws_json_str(b, ws_stack_missing_str(st.waker_missing));
		}
		if (is_cpu_kind(l->kind))
			fprintf(b, ",\"cpu\":%u", l->cpu);
		if (l->idle_ns)
			fprintf(b, ",\"idle_ns\":%" PRIu64, l->idle_ns);
		if (l->nran) {
			fprintf(b, ",\"ran\":[");
			for (int k = 0; k < l->nran; k++) {
				fprintf(b, "%s{\"tid\":%u,\"comm\":", k ? "," : "", l->ran[k].tid);
				ws_json_str(b, ws_graph_comm(r->g, l->ran[k].tid));
				fprintf(b, ",\"ns\":%" PRIu64 "}", l->ran[k].ns);
			}
			fprintf(b, "]");
		}
		if (l->ran_more)
			fprintf(b, ",\"ran_more\":{\"threads\":%u,\"ns\":%" PRIu64 "}", l->ran_more,
				l->ran_more_ns);
		fprintf(b, "}");
	}
	fprintf(b, "],\"segments\":[");
	for (size_t i = 0; i < c->nsegs; i++) {
		const struct ws_segment *s = &c->segs[i];

		fprintf(b, "%s{\"kind\":", i ? "," : "");
		ws_json_str(b, s->kind);
		fprintf(b, ",\"tid\":%u,\"start_ns\":%" PRIu64 ",\"duration_ns\":%" PRIu64, s->tid,
			s->start, s->dur);
		if (i < c->nroots && c->roots[i].known) {
			fprintf(b, ",\"root\":");
			ws_json_str(b, c->roots[i].key);
		}
		if (!s->nmix) /* a merged piece's kinds are in its mix; no one claim stands for it
			       */
			ws_json_claim_fields(b, s->claim);
		if (s->nmix) {
			fprintf(b, ",\"mix\":[");
			for (int k = 0; k < s->nmix; k++) {
				fprintf(b, "%s{\"kind\":", k ? "," : "");
				ws_json_str(b, s->mix[k].kind);
				fprintf(b, ",\"ns\":%" PRIu64 "}", s->mix[k].ns);
			}
			fprintf(b, "]");
		}
		fprintf(b, "}");
	}
	fprintf(b, "]}\n");
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

/* "blocked 412ms on futex 0x7f2a3c001000" and friends. */
static void text_phrase(struct ws_report *r, const struct ws_link *l, const char *fd_path, FILE *b)
{
	char dur[32], what[160], e[4 * 160], sys[384], e2[WS_ESC_LEN * 2];

	ws_format_duration(l->dur, dur, sizeof(dur));
	if (l->claim && strcmp(l->kind, WS_CLAIM_QUOTA) == 0) {
		ws_quota_label(l->claim, what, sizeof(what));
		/* "CPU quota of /batch (10ms per 100ms)": the label after its first 13 bytes */
		fprintf(b, "was throttled %s by the CPU quota %s", dur,
			ws_text_esc(what + strlen("CPU quota "), e, sizeof(e)));
		if (l->waits > 1)
			text_many(b, l->waits, l->dur, l->longest, "throttles");
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
	} else if (strcmp(l->kind, WS_KIND_RUNNING) == 0) {
		fprintf(b, "was running (on CPU) for %s of it", dur);
		if (l->waits > 1)
			text_many(b, l->waits, l->dur, l->longest, "stretches");
		if ((l->flags & WS_IVAL_SHORT_INSIDE))
			fprintf(b,
				", with short waits in between (each under the resolution: causes not recorded)");
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
static int render_text(void *ctx, const struct ws_chain *c, char **text)
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

static void add_root(struct ws_report *r, const char *comm, const char *root, uint64_t ns)
{
	for (size_t i = 0; i < r->nroots; i++) {
		if (strcmp(r->roots[i].comm, comm) == 0 && strcmp(r->roots[i].root, root) == 0) {
			r->roots[i].ns += ns;
			return;
		}
	}
	if (ws_grow((void **)&r->roots, &r->roots_cap, r->nroots + 1, sizeof(*r->roots)))
		return;
	memset(&r->roots[r->nroots], 0, sizeof(r->roots[0]));
	snprintf(r->roots[r->nroots].comm, WS_COMM, "%s", comm);
	snprintf(r->roots[r->nroots].root, sizeof(r->roots[0].root), "%s", root);
	r->roots[r->nroots++].ns = ns;
}

/* Every link of a reported chain without user frames is counted by why: JSON's per-link
 * "stack_missing" add up to the summary's "stacks_missing". */
static void count_missing(struct ws_report *r, const struct ws_chain *c)
{
	for (int i = 0; i < c->nlinks; i++) {
		struct ws_link_stacks st;

		ws_link_stacks(r->stacks, &c->links[i], &st);
		r->stacks_missing[st.own_missing]++;
		r->stacks_missing[st.waker_missing]++;
	}
}

static void stacks_missing_json(const struct ws_report *r, FILE *b)
{
	bool first = true;

	fprintf(b, ",\"stacks_missing\":{");
	for (int i = WS_SM_NONE + 1; i < WS_SM_COUNT; i++) {
		if (!r->stacks_missing[i])
			continue;
		fprintf(b, "%s", first ? "" : ",");
		ws_json_str(b, ws_stack_missing_str(i));
		fprintf(b, ":%" PRIu64, r->stacks_missing[i]);
		first = false;
	}
	fprintf(b, "}");
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

int ws_report_chain(struct ws_report *r, struct ws_chain *c)
{
	const char *comm = c->victim->comm[0] ? c->victim->comm : "?";
	uint64_t unexplained = 0;
	char *text = NULL;
	int err;

	if (ws_idle_chain(c)) {
		r->idle_waits++;
		r->idle_ns += c->end - c->start;
		if (!r->o.include_idle) {
			/* not ranked, but still part of the command's wall time */
			ws_report_follow_chain(r, c);
			ws_offcpu_chain(r->oc, c, false, 0);
			return 0;
		}
	}
	r->chains++;
	count_missing(r, c);
	/* the root its reason, its text and the summary give: its segments' (not an idle one's) */
	ws_chain_settle_root(r->g, c);
	if ((err = ws_reasons_add(r->reasons, c)))
		return err;
	ws_report_follow_chain(r, c);
	r->blocked_total += c->end - c->start;
	for (size_t i = 0; i < c->nsegs; i++) {
		struct ws_seg_root scratch;
		const struct ws_seg_root *root = ws_chain_seg_root(r->g, c, i, &scratch);

		if (!root->named)
			unexplained += c->segs[i].dur;
		add_root(r, comm, root->key, c->segs[i].dur);
	}
	ws_offcpu_chain(r->oc, c, true, unexplained);
	if (r->o.format == WS_FORMAT_JSON) {
		json_chain(r, c, r->o.out);
		return ferror(r->o.out) ? -EIO : 0;
	}
	if (r->o.format == WS_FORMAT_FOLDED) {
		ws_folded_chain(r->o.out, r->g, c, r->stacks);
		return ferror(r->o.out) ? -EIO : 0;
	}
	/* text: keep the N longest, rendered now while the graph still holds them */
	uint64_t blocked = c->end - c->start;
	int slot = -1;

	if (r->ntop < r->o.top) {
		slot = r->ntop++;
	} else {
		for (int i = 0; i < r->ntop; i++)
			if (r->top[i].blocked < blocked &&
			    (slot < 0 || r->top[i].blocked < r->top[slot].blocked))
				slot = i;
		if (slot < 0)
			return 0;
	}
	if ((err = render_text(r, c, &text)))
		return err;
	free(r->top[slot].text);
	r->top[slot].blocked = blocked;
	r->top[slot].text = text;
	return 0;
}

int ws_report_follow(struct ws_report *r, uint32_t tid)
{
	ws_critpath_free(r->cp);
	r->cp = ws_critpath_new(tid);
	return r->cp ? 0 : -ENOMEM;
}

void ws_report_follow_chain(struct ws_report *r, const struct ws_chain *c)
{
	if (r->cp && c->victim->tid == ws_critpath_tid(r->cp))
		ws_critpath_chain(r->cp, r->g, c);
}

void ws_report_open_wait(struct ws_report *r, uint32_t tid, const char *what)
{
	if (r->cp && tid == ws_critpath_tid(r->cp))
		ws_critpath_open(r->cp, what);
}

void ws_report_ival(struct ws_report *r, const struct ws_thread *t, const struct ws_ival *iv,
		    const struct ws_claim *claim)
{
	ws_offcpu_ival(r->oc, r->g, t, iv, claim);
	if (r->cp && t->tid == ws_critpath_tid(r->cp))
		ws_critpath_ival(r->cp, t, iv, claim);
}

void ws_report_gone(struct ws_report *r, const struct ws_thread *t)
{
	/* without memory, its entry is kept: nothing is lost but the bound */
	ws_offcpu_gone(r->oc, t);
}

static int by_blocked(const void *a, const void *b)
{
	const struct kept *x = a, *y = b;

	return x->blocked < y->blocked ? 1 : x->blocked > y->blocked ? -1 : 0;
}

static int by_comm_then_ns(const void *a, const void *b)
{
	const struct root_total *x = a, *y = b;
	int c = strcmp(x->comm, y->comm);

	if (c)
		return c;
	return x->ns < y->ns ? 1 : x->ns > y->ns ? -1 : 0;
}

static uint64_t comm_total(struct ws_report *r, const char *comm)
{
	uint64_t t = 0;

	for (size_t i = 0; i < r->nroots; i++)
		if (strcmp(r->roots[i].comm, comm) == 0)
			t += r->roots[i].ns;
	return t;
}

/*
 * Processes not traced because the filter was full: counted in ws_lost under
 * WS_KIND_UNTRACED_PROC ({"cpu0":{"0x4":2},...}), so a recording's summary
 * carries them too. They are not records, so not in "lost".
 */
static uint64_t untraced_procs(const char *lost_detail)
{
	char key[16];
	uint64_t n = 0;
	const char *p = lost_detail;

	snprintf(key, sizeof(key), "\"0x%x\":", WS_KIND_UNTRACED_PROC);
	while (p && (p = strstr(p, key))) {
		p += strlen(key);
		n += strtoull(p, NULL, 10);
	}
	return n;
}

/* Files the traced programs named whose symbols were not read (useropen.h's rules). */
static void symbols_refused_json(const struct ws_symfile_log *l, FILE *b)
{
	fprintf(b, ",\"symbols_unavailable_files\":%" PRIu64 ",\"symbols_unavailable\":[",
		l ? l->total : 0);
	for (size_t i = 0; l && i < l->n; i++) {
		fprintf(b, "%s{\"path\":", i ? "," : "");
		ws_json_str(b, l->items[i].path);
		fprintf(b, ",\"why\":");
		ws_json_str(b, ws_useropen_strerror(l->items[i].err));
		fprintf(b, "}");
	}
	fprintf(b, "]");
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

int ws_report_finish(struct ws_report *r, const struct ws_summary *s)
{
	uint64_t untraced = untraced_procs(s->lost_detail),
		 lost = s->lost > untraced ? s->lost - untraced : 0;
	FILE *b = r->o.out;
	char dur[32], e[4 * 96];
	int err = 0;

	if (r->nroots) /* qsort(NULL, 0, ...) is undefined */
		qsort(r->roots, r->nroots, sizeof(*r->roots), by_comm_then_ns);
	if (r->o.format == WS_FORMAT_FOLDED) {
		/* nothing but stacks: flame graph tools read every line */
	} else if (r->o.format == WS_FORMAT_JSON) {
		if (r->cp)
			ws_critpath_json(r->cp, b);
		ws_reasons_json(r->reasons, b);
		ws_offcpu_json_threads(r->oc, b);
		fprintf(b,
			"{\"type\":\"summary\",\"duration_ns\":%" PRIu64 ",\"events\":%" PRIu64
			",\"events_lost\":%" PRIu64 ",\"events_lost_recursion\":%" PRIu64
			",\"events_late\":%" PRIu64 ",\"threads\":%d,\"chains\":%" PRIu64
			",\"waits_without_wakeup\":%" PRIu64 ",\"processes_untraced\":%" PRIu64
			",\"sources\":",
			s->duration_ns, s->records, lost, s->lost_recursion, s->records_late,
			s->threads, r->chains, s->waits_unexplained, untraced);
		ws_json_str(b, s->sources);
		fprintf(b,
			",\"events_by_source\":%s,\"malformed_records\":%" PRIu64
			",\"lost_by_cpu_kind\":%s,\"history_trimmed\":%" PRIu64
			",\"shortest_history_ns\":%" PRIu64 ",\"out_of_memory\":%" PRIu64
			",\"idle_waits\":%" PRIu64 ",\"idle_ns\":%" PRIu64
			",\"idle_included\":%s,\"switch_ins_unseen\":%" PRIu64 ",\"root_causes\":[",
			s->events_by_source ? s->events_by_source : "{}", s->bad_records,
			s->lost_detail ? s->lost_detail : "{}", s->history_trims,
			s->shortest_history_ns, s->out_of_memory, r->idle_waits, r->idle_ns,
			r->o.include_idle ? "true" : "false", s->switch_ins_unseen);
		for (size_t i = 0; i < r->nroots; i++) {
			uint64_t tot = comm_total(r, r->roots[i].comm);

			fprintf(b, "%s{\"comm\":", i ? "," : "");
			ws_json_str(b, r->roots[i].comm);
			fprintf(b, ",\"root\":");
			ws_json_str(b, r->roots[i].root);
			fprintf(b, ",\"ns\":%" PRIu64 ",\"share\":%.4f}", r->roots[i].ns,
				tot ? (double)r->roots[i].ns / tot : 0.0);
		}
		fprintf(b, "]");
		symbols_refused_json(s->symbols_refused, b);
		stacks_missing_json(r, b);
		ws_offcpu_json_totals(r->oc, b);
		fprintf(b,
			",\"cpus\":%" PRIu32 ",\"records_cpu_refused\":%" PRIu64
			",\"exited_threads_dropped\":%" PRIu64 "}\n",
			s->ncpus, s->cpu_refused, s->dead_dropped);
	} else {
		if (r->ntop)
			qsort(r->top, r->ntop, sizeof(*r->top), by_blocked);
		if (r->cp)
			ws_critpath_text(r->cp, b);
		if (!r->ntop)
			fprintf(b, "No wait reached the --min-block threshold.\n");
		ws_reasons_text(r->reasons, b, r->o.top);
		if (r->ntop)
			fprintf(b, "The longest single waits:\n");
		for (int i = 0; i < r->ntop; i++)
			top_text(b, r, i);
		ws_format_duration(s->duration_ns, dur, sizeof(dur));
		fprintf(b,
			"\nSummary: %s traced, %d thread%s, %" PRIu64 " record%s, %" PRIu64
			" wait%s reported; sources %s\n",
			dur, s->threads, ws_plural(s->threads, "", "s"), s->records,
			ws_plural(s->records, "", "s"), r->chains, ws_plural(r->chains, "", "s"),
			s->sources);
		for (size_t i = 0; i < r->nroots;) {
			const char *comm = r->roots[i].comm;
			uint64_t tot = comm_total(r, comm);
			int shown = 0;

			ws_format_duration(tot, dur, sizeof(dur));
			fprintf(b, "  %s: %s blocked;", ws_text_esc(comm, e, sizeof(e)), dur);
			for (; i < r->nroots && strcmp(r->roots[i].comm, comm) == 0; i++) {
				if (tot && r->roots[i].ns * 100 >= tot && shown++ < 3)
					fprintf(b, "%s %.0f%% traces back to %s",
						shown > 1 ? "," : "", 100.0 * r->roots[i].ns / tot,
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
				ws_plural(untraced, "it", "them"),
				ws_plural(untraced, "its", "their"));
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
	if ((fflush(r->o.out) == EOF || ferror(r->o.out)) && !err)
		err = errno ? -errno : -EIO;
	return err;
}

void ws_report_free(struct ws_report *r)
{
	if (!r)
		return;
	for (int i = 0; i < r->ntop; i++)
		free(r->top[i].text);
	free(r->top);
	free(r->roots);
	ws_reasons_free(r->reasons);
	ws_offcpu_free(r->oc);
	ws_critpath_free(r->cp);
	free(r);
}
