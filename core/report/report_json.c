// SPDX-License-Identifier: MIT
/* The JSON Lines report: a chain per line as it is found, then the summary lines. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "report_impl.h"
#include "gil_holder.h"
#include "critpath.h"
#include "folded.h"
#include "idle.h"
#include "offcpu.h"
#include "reasons.h"
#include "short_text.h"
#include "base/syscall_fmt.h"
#include "base/util.h"
#include "stacks/stack_fmt.h"
#include "stacks/symfile.h"

/* Kinds about a CPU rather than a resource: the link says which CPU. */
static bool is_cpu_kind(const char *kind)
{
	return strcmp(kind, WS_KIND_RUNQUEUE) == 0 || strcmp(kind, WS_KIND_RUNNING) == 0 ||
	       strcmp(kind, WS_KIND_WAKEUP_LATENCY) == 0 || strcmp(kind, WS_CLAIM_QUOTA) == 0;
}

/* ,"cgroup":"/path" of thread @tid of @pid at @ts, null when not known (report.h) */
static void json_cgroup(struct ws_report *r, uint32_t tid, uint32_t pid, uint64_t ts, FILE *b)
{
	const char *cg = report_cgroup(r, tid, pid, ts);

	fprintf(b, ",\"cgroup\":");
	if (cg)
		ws_json_str(b, cg);
	else
		fprintf(b, "null");
}

/* The chain's own fields: when, who, how long, and what it came down to. */
static void chain_head_json(struct ws_report *r, const struct ws_chain *c, FILE *b)
{
	char ts[40];
	struct ws_thread *v = c->victim;

	ws_clock_iso(ws_clock_wall(r->o.clock, c->start), ts, sizeof(ts));
	fprintf(b, "{\"type\":\"chain\",\"ts\":\"%s\",\"tid\":%u,\"pid\":%u,\"comm\":", ts, v->tid,
		v->pid);
	ws_json_str(b, v->comm[0] ? v->comm : ws_graph_comm(r->g, v->tid));
	json_cgroup(r, v->tid, v->pid, c->start, b);
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
}

/* A link's wait: who waited, for how long, who woke or held it, on what. */
static void link_wait_json(struct ws_report *r, const struct ws_link *l, FILE *b)
{
	fprintf(b, ",\"tid\":%u,\"pid\":%u,\"comm\":", l->tid, l->pid);
	ws_json_str(b, l->comm);
	json_cgroup(r, l->tid, l->pid, l->start, b);
	fprintf(b, ",\"start_ns\":%" PRIu64 ",\"duration_ns\":%" PRIu64 ",\"woken_by\":", l->start,
		l->dur);
	if (l->has_woken_by)
		fprintf(b, "%u", l->woken_by);
	else
		fprintf(b, "null");
	if (l->held_by) {
		/* not a wakeup: the lock's holder, as the lock itself named it */
		fprintf(b, ",\"held_by\":%u,\"owner_evidence\":", l->held_by);
		ws_json_str(b, l->held_evidence ? l->held_evidence : "lock");
	}
	fprintf(b, ",\"waits\":%u,\"longest_ns\":%" PRIu64 ",\"evidence\":", l->waits, l->longest);
	ws_json_str(b, l->evidence ? l->evidence : "");
	if ((l->flags & WS_IVAL_SHORT_INSIDE))
		fprintf(b, ",\"short_waits_inside\":true");
	if ((l->flags & WS_IVAL_SHORT_INSIDE) && l->shorts.n) {
		fprintf(b,
			",\"short_waits\":{\"waits\":%" PRIu64 ",\"ns\":%" PRIu64
			",\"by_resource\":[",
			l->shorts.n, l->shorts.ns);
		ws_short_json(b, &l->shorts, true);
		fprintf(b, "]}");
	}
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
}

/*
 * A wait for the GIL: its holder as the interpreter's state named it when the wait ended
 * ("held_by", as a lock's owner is given, with "owner_evidence": "gil_last_holder"), that
 * nobody held it then ("gil_free_at_end"), or why none is named ("held_by_unknown"); with
 * the holder's Python frames as the waiter read them while it ran ("holder_stack").
 */
static void link_gil_json(struct ws_report *r, const struct ws_link *l,
			  const struct ws_link_stacks *st, FILE *b)
{
	struct ws_gil_holder h;

	if (l->held_by)
		return; /* the lock's own owner, said already */
	ws_link_gil_holder(r->g, l, st, &h);
	if (h.kind == WS_GH_HELD) {
		const struct ws_stack *parts[] = { &h.frames };

		fprintf(b, ",\"held_by\":%u,\"owner_evidence\":\"gil_last_holder\"", h.tid);
		ws_stack_json(b, "holder_stack", parts, 1);
	} else if (h.kind == WS_GH_FREE) {
		fprintf(b, ",\"gil_free_at_end\":true");
	} else if (h.kind == WS_GH_UNKNOWN) {
		fprintf(b, ",\"held_by_unknown\":");
		ws_json_str(b, h.why);
	}
}

/* A link's stacks, its own and its waker's, with where they were cut or why they are missing. */
static void link_stacks_json(struct ws_report *r, const struct ws_link *l, FILE *b)
{
	struct ws_link_stacks st;
	const char *cut;

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
	link_gil_json(r, l, &st, b);
}

/* A CPU link's CPU, its idle time and the threads that ran there meanwhile. */
static void link_cpu_json(struct ws_report *r, const struct ws_link *l, FILE *b)
{
	if (is_cpu_kind(l->kind))
		fprintf(b, ",\"cpu\":%u", l->cpu);
	if (l->idle_ns)
		fprintf(b, ",\"idle_ns\":%" PRIu64, l->idle_ns);
	if (l->nran) {
		fprintf(b, ",\"ran\":[");
		for (int k = 0; k < l->nran; k++) {
			fprintf(b, "%s{\"tid\":%u,\"comm\":", k ? "," : "", l->ran[k].tid);
			ws_json_str(b, ws_graph_comm(r->g, l->ran[k].tid));
			json_cgroup(r, l->ran[k].tid, l->ran[k].pid, l->start, b);
			fprintf(b, ",\"ns\":%" PRIu64 "}", l->ran[k].ns);
		}
		fprintf(b, "]");
	}
	if (l->ran_more)
		fprintf(b, ",\"ran_more\":{\"threads\":%u,\"ns\":%" PRIu64 "}", l->ran_more,
			l->ran_more_ns);
}

static void segment_json(const struct ws_chain *c, size_t i, FILE *b)
{
	const struct ws_segment *s = &c->segs[i];

	fprintf(b, "%s{\"kind\":", i ? "," : "");
	ws_json_str(b, s->kind);
	fprintf(b, ",\"tid\":%u,\"start_ns\":%" PRIu64 ",\"duration_ns\":%" PRIu64, s->tid,
		s->start, s->dur);
	if (i < c->nroots && c->roots[i].known) {
		fprintf(b, ",\"root\":");
		ws_json_str(b, c->roots[i].key);
	}
	if (!s->nmix) /* a merged piece's kinds are in its mix; no one claim stands for it */
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

void report_json_chain(struct ws_report *r, const struct ws_chain *c, FILE *b)
{
	chain_head_json(r, c, b);
	fprintf(b, ",\"links\":[");
	for (int i = 0; i < c->nlinks; i++) {
		const struct ws_link *l = &c->links[i];

		fprintf(b, "%s{\"kind\":", i ? "," : "");
		ws_json_str(b, l->kind);
		link_wait_json(r, l, b);
		link_stacks_json(r, l, b);
		link_cpu_json(r, l, b);
		fprintf(b, "}");
	}
	fprintf(b, "],\"segments\":[");
	for (size_t i = 0; i < c->nsegs; i++)
		segment_json(c, i, b);
	fprintf(b, "]}\n");
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

/* Records each source wrote, by its name: {"sched":120,"futex":8} */
static void by_source_json(const struct ws_summary *s, FILE *b)
{
	fputc('{', b);
	for (int i = 0; i < s->nsources; i++) {
		fprintf(b, "%s", i ? "," : "");
		ws_json_str(b, s->by_source[i].name);
		fprintf(b, ":%" PRIu64, s->by_source[i].events);
	}
	fputc('}', b);
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

/* The JSON run's last lines: the critical path, the reasons, threads' time off CPU, the summary. */
void report_json_summary(struct ws_report *r, const struct ws_summary *s, uint64_t lost,
			 uint64_t untraced)
{
	FILE *b = r->o.out;

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
		s->duration_ns, s->records, lost, s->lost_recursion, s->records_late, s->threads,
		r->chains, s->waits_unexplained, untraced);
	ws_json_str(b, s->sources);
	fprintf(b, ",\"events_by_source\":");
	by_source_json(s, b);
	fprintf(b, ",\"malformed_records\":%" PRIu64 ",\"lost_by_cpu_kind\":", s->bad_records);
	ws_losses_json(s->losses, b);
	fprintf(b,
		",\"history_trimmed\":%" PRIu64 ",\"shortest_history_ns\":%" PRIu64
		",\"out_of_memory\":%" PRIu64 ",\"idle_waits\":%" PRIu64 ",\"idle_ns\":%" PRIu64
		",\"idle_included\":%s,\"switch_ins_unseen\":%" PRIu64 ",\"root_causes\":[",
		s->history_trims, s->shortest_history_ns, s->out_of_memory, r->idle_waits,
		r->idle_ns, r->o.include_idle ? "true" : "false", s->switch_ins_unseen);
	for (size_t i = 0; i < r->nroots; i++) {
		uint64_t tot = report_comm_total(r, r->roots[i].comm);

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
}
