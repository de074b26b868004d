/* SPDX-License-Identifier: MIT */
/*
 * Private to report/: the report's state, shared by what collects the chains (report.c) and the
 * two renderers that print them, text (report_text.c) and JSON (report_json.c).
 */
#ifndef WS_REPORT_IMPL_H
#define WS_REPORT_IMPL_H

#include <stdint.h>
#include <stdio.h>

#include "link_stacks.h"
#include "report.h"
#include "requests.h"

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
	struct ws_requests *rq; /* NULL: --no-requests */
	void (*request_sink)(void *ctx, const struct ws_request *q);
	void *request_sink_ctx;
	struct ws_wait_sink wait_sink; /* .wait NULL: none */
	bool request_view;	       /* the summary ranks what cost requests, not thread waits */
	struct ws_requests_summary rs;
	uint64_t stacks_missing[WS_SM_COUNT]; /* links of ranked chains without user frames, by why
					       */
	/* --format pprof: the folded lines go to a buffer (o.out), encoded at the end */
	FILE *pprof_out; /* where the profile goes (NULL: not pprof) */
	char *pprof_text;
	size_t pprof_len;
};

/* Thread @tid of @pid's cgroup at @ts (report.h, ws_report_opts.cgroup_of), or NULL. */
static inline const char *report_cgroup(const struct ws_report *r, uint32_t tid, uint32_t pid,
					uint64_t ts)
{
	return r->o.cgroup_of && tid ? r->o.cgroup_of(r->o.describe_ctx, tid, pid, ts) : NULL;
}

/* Blocked time of @comm over every root it traces back to. */
uint64_t report_comm_total(struct ws_report *r, const char *comm);

/* JSON: one chain, on one line; the summary lines at the end. */
void report_json_chain(struct ws_report *r, const struct ws_chain *c, FILE *b);
void report_json_summary(struct ws_report *r, const struct ws_summary *s, uint64_t lost,
			 uint64_t untraced);

/* Text: one chain into malloc'd *@text (0 or -ENOMEM); the report's end. */
int report_render_text(void *ctx, const struct ws_chain *c, char **text);
void report_text_summary(struct ws_report *r, const struct ws_summary *s, uint64_t lost,
			 uint64_t untraced);

/* Requests: each one as JSON (a ws_requests_ops.on_request); what they came to. */
void report_request_json(void *ctx, const struct ws_request *q);
void report_requests_json(struct ws_report *r, const struct ws_requests_summary *s);
void report_requests_text(struct ws_report *r, const struct ws_requests_summary *s);
#endif
