// SPDX-License-Identifier: MIT
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "report.h"
#include "report_impl.h"
#include "critpath.h"
#include "folded.h"
#include "idle.h"
#include "link_stacks.h"
#include "offcpu.h"
#include "pprof.h"
#include "reasons.h"
#include "base/syscall_fmt.h"
#include "base/util.h"
#include "stacks/stack_fmt.h"
#include "stacks/symfile.h"

void ws_report_set_stacks(struct ws_report *r, const struct ws_stacks *stacks, uint64_t depth)
{
	r->stacks = stacks;
	r->stack_depth = depth > 64 ? 64 : (int)depth;
}

/* A request ended: its JSON line, and whoever else asked (a Perfetto export). */
static void on_request(void *ctx, const struct ws_request *q)
{
	struct ws_report *r = ctx;

	if (r->o.format == WS_FORMAT_JSON)
		report_request_json(r, q);
	/* a flame graph weighted by what the requests waited for, asked for with --requests */
	if (r->o.format == WS_FORMAT_FOLDED && r->o.requests == WS_REQUESTS_ON)
		ws_folded_request(r->o.out, q);
	if (r->request_sink)
		r->request_sink(r->request_sink_ctx, q);
}

/* The pprof buffer closed, if it is open; 0 or -ENOMEM (its last write failed). */
static int pprof_close(struct ws_report *r)
{
	int err = 0;

	if (r->pprof_out && r->o.out != r->pprof_out) {
		err = fclose(r->o.out) ? -ENOMEM : 0;
		r->o.out = r->pprof_out;
	}
	return err;
}

/* The folded lines collected, as a profile to where the report goes. 0 or a negative errno. */
static int pprof_finish(struct ws_report *r, const struct ws_summary *s, uint64_t lost)
{
	char comment[160];
	struct ws_pprof_info info = { .duration_ns = s->duration_ns, .comment = comment };
	int err = pprof_close(r);

	/* a profile has no summary: what was lost is said where pprof -comments shows it */
	snprintf(comment, sizeof(comment),
		 "whyslow: off-CPU time of causal chains, each stack root first; %" PRIu64
		 " records lost",
		 lost);
	if (!err)
		err = ws_pprof_write(r->o.out, r->pprof_text, r->pprof_len, &info);
	free(r->pprof_text);
	r->pprof_text = NULL;
	return err;
}

struct ws_report *ws_report_new(const struct ws_report_opts *o, struct ws_graph *g)
{
	struct ws_report *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->o = *o;
	r->g = g;
	if (o->format == WS_FORMAT_PPROF) {
		/* the towers are folded's: collected as such, encoded by ws_report_finish */
		r->o.format = WS_FORMAT_FOLDED;
		r->pprof_out = o->out;
		r->o.out = open_memstream(&r->pprof_text, &r->pprof_len);
		if (!r->o.out) {
			free(r);
			return NULL;
		}
	}
	r->reasons = ws_reasons_new(report_render_text, r);
	r->oc = ws_offcpu_new(o->min_block_ns);
	if (r->o.top > 0)
		r->top = calloc(r->o.top, sizeof(*r->top));
	if (o->requests != WS_REQUESTS_OFF) {
		struct ws_requests_ops ops = {
			.on_request = on_request,
			.render = report_render_text,
			.ctx = r,
			/* as the critical path: shorter waits are named by the thread's state */
			.walk_min_ns = o->min_block_ns / WS_CHAIN_SEG_PARTS,
			.idle_after_ns = o->requests_idle_ns,
			.top = o->top,
			.min_latency_ns = o->request_min_latency_ns,
			.port = o->request_port,
		};

		r->rq = ws_requests_new(g, &ops);
	}
	if (!r->reasons || !r->oc || (r->o.top > 0 && !r->top) ||
	    (o->requests != WS_REQUESTS_OFF && !r->rq)) {
		pprof_close(r);
		free(r->pprof_text);
		ws_requests_free(r->rq);
		ws_offcpu_free(r->oc);
		ws_reasons_free(r->reasons);
		free(r->top);
		free(r);
		return NULL;
	}
	return r;
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

int ws_report_chain(struct ws_report *r, struct ws_chain *c)
{
	const char *comm = c->victim->comm[0] ? c->victim->comm : "?";
	uint64_t unexplained = 0;
	char *text = NULL;
	int err;

	if (r->wait_sink.only) {
		bool ranked = r->o.include_idle || !ws_idle_chain(c);

		if (ranked)
			ws_chain_settle_root(r->g, c);
		if (r->wait_sink.wait)
			r->wait_sink.wait(r->wait_sink.ctx, r->g, c, ranked);
		return 0;
	}
	if (ws_idle_chain(c)) {
		r->idle_waits++;
		r->idle_ns += c->end - c->start;
		if (!r->o.include_idle) {
			/* not ranked, but still part of the command's wall time */
			ws_report_follow_chain(r, c);
			ws_offcpu_chain(r->oc, c, false, 0);
			if (r->wait_sink.wait)
				r->wait_sink.wait(r->wait_sink.ctx, r->g, c, false);
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
	if (r->wait_sink.wait)
		r->wait_sink.wait(r->wait_sink.ctx, r->g, c, true);
	if (r->o.format == WS_FORMAT_JSON) {
		report_json_chain(r, c, r->o.out);
		return ferror(r->o.out) ? -EIO : 0;
	}
	if (r->o.format == WS_FORMAT_FOLDED) {
		/* --requests: the requests' parts instead, one weight for one time */
		if (r->o.requests != WS_REQUESTS_ON)
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
	if ((err = report_render_text(r, c, &text)))
		return err;
	free(r->top[slot].text);
	r->top[slot].blocked = blocked;
	r->top[slot].text = text;
	return 0;
}

void ws_report_set_wait_sink(struct ws_report *r, const struct ws_wait_sink *sink)
{
	if (sink)
		r->wait_sink = *sink;
	else
		memset(&r->wait_sink, 0, sizeof(r->wait_sink));
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
	if (r->wait_sink.short_waits) {
		uint64_t ns = ws_offcpu_short_since(r->oc, t);

		if (ns)
			r->wait_sink.short_waits(r->wait_sink.ctx, r->g, t, ns);
	}
	if (r->cp && t->tid == ws_critpath_tid(r->cp))
		ws_critpath_ival(r->cp, t, iv, claim);
}

void ws_report_gone(struct ws_report *r, const struct ws_thread *t)
{
	/* without memory, its entry is kept: nothing is lost but the bound */
	ws_offcpu_gone(r->oc, t);
	if (r->wait_sink.gone)
		r->wait_sink.gone(r->wait_sink.ctx, t);
}

static int by_comm_then_ns(const void *a, const void *b)
{
	const struct root_total *x = a, *y = b;
	int c = strcmp(x->comm, y->comm);

	if (c)
		return c;
	return x->ns < y->ns ? 1 : x->ns > y->ns ? -1 : 0;
}

int ws_report_finish(struct ws_report *r, const struct ws_summary *s)
{
	/*
	 * Processes not traced because the filter was full are counted with the losses (kind
	 * WS_KIND_UNTRACED_PROC), so a recording's summary carries them too. They are not
	 * records, so not in "lost".
	 */
	uint64_t untraced = ws_losses_of_kind(s->losses, WS_KIND_UNTRACED_PROC),
		 lost = s->lost > untraced ? s->lost - untraced : 0;

	if (r->nroots) /* qsort(NULL, 0, ...) is undefined */
		qsort(r->roots, r->nroots, sizeof(*r->roots), by_comm_then_ns);
	if (r->rq) {
		int err = ws_requests_summary(r->rq, &r->rs);

		if (err)
			return err;
		r->request_view = r->o.requests == WS_REQUESTS_ON || r->rs.count || r->rs.filtered;
	}
	/* folded: nothing but stacks, flame graph tools read every line */
	if (r->o.format == WS_FORMAT_JSON) {
		if (r->request_view)
			report_requests_json(r, &r->rs);
		report_json_summary(r, s, lost, untraced);
	} else if (r->o.format == WS_FORMAT_TEXT)
		report_text_summary(r, s, lost, untraced);
	if (r->pprof_out) {
		int err = pprof_finish(r, s, lost);

		if (err)
			return err;
	}
	if (fflush(r->o.out) == EOF || ferror(r->o.out))
		return errno ? -errno : -EIO;
	return 0;
}

void ws_report_free(struct ws_report *r)
{
	if (!r)
		return;
	pprof_close(r);
	free(r->pprof_text);
	for (int i = 0; i < r->ntop; i++)
		free(r->top[i].text);
	free(r->top);
	free(r->roots);
	ws_reasons_free(r->reasons);
	ws_offcpu_free(r->oc);
	ws_critpath_free(r->cp);
	ws_requests_free(r->rq);
	free(r);
}

int ws_requests_mode_parse(const char *s, enum ws_requests_mode *m)
{
	if (!strcmp(s, "auto"))
		*m = WS_REQUESTS_AUTO;
	else if (!strcmp(s, "on") || !strcmp(s, "true"))
		*m = WS_REQUESTS_ON;
	else if (!strcmp(s, "off") || !strcmp(s, "false"))
		*m = WS_REQUESTS_OFF;
	else
		return -EINVAL;
	return 0;
}

void ws_report_set_request_sink(struct ws_report *r,
				void (*fn)(void *ctx, const struct ws_request *q), void *ctx)
{
	r->request_sink = fn;
	r->request_sink_ctx = ctx;
}

void ws_report_sock_io(struct ws_report *r, const struct ws_sock_io *io)
{
	/* a client's end is join evidence only: no request is served on it */
	if (r->rq && !(io->flags & WS_SOCK_NOT_SERVED))
		ws_requests_io(r->rq, io);
}

void ws_report_requests_end(struct ws_report *r)
{
	if (r->rq)
		ws_requests_end(r->rq);
}

uint64_t report_comm_total(struct ws_report *r, const char *comm)
{
	uint64_t t = 0;

	for (size_t i = 0; i < r->nroots; i++)
		if (strcmp(r->roots[i].comm, comm) == 0)
			t += r->roots[i].ns;
	return t;
}
