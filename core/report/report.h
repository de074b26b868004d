/* SPDX-License-Identifier: MIT */
/* Text and JSON Lines output: chains as they are found, then the summary. */
#ifndef WS_REPORT_H
#define WS_REPORT_H

#include <stdbool.h>
#include <stdio.h>

#include "base/clock.h"
#include "base/losses.h"
#include "engine/chain.h"
#include "format.h"

/* Whether the report is about requests (requests.h) rather than every thread's waits. */
enum ws_requests_mode {
	WS_REQUESTS_AUTO = 0, /* when a traced thread served a request */
	WS_REQUESTS_ON = 1,
	WS_REQUESTS_OFF = 2,
};

/* "auto", "on" or "true", "off" or "false" into @m; -EINVAL for anything else. */
int ws_requests_mode_parse(const char *s, enum ws_requests_mode *m);

/* Renders a claim as "futex 0x7f..." (the owning source's describe callback). */
typedef void (*ws_describe_fn)(void *ctx, const struct ws_claim *c, char *buf, size_t len);

struct ws_report_opts {
	enum ws_format format;
	FILE *out;
	int top;
	const struct ws_clock *clock;
	ws_describe_fn describe;
	void *describe_ctx;
	/*
	 * Optional: thread @tid of @pid's cgroup path at @ts as far as it was read
	 * (ws_session_cgroup(); NULL: not known), with describe_ctx: a chain names its victim's
	 * at the wait's start, a link its thread's at the link's start, a runqueue link its CPU
	 * holders' at the link's start.
	 */
	const char *(*cgroup_of)(void *ctx, uint32_t tid, uint32_t pid, uint64_t ts);
	uint64_t min_block_ns; /* waits shorter than this are counted, not chained */
	bool include_idle;     /* rank idle waits (idle.h) too, not only count them */
	enum ws_requests_mode requests;
	/* a connection quiet this long has its request ended (within the kept history); > 0 */
	uint64_t requests_idle_ns;
	uint64_t request_min_latency_ns; /* requests shorter than this are left out (0: none) */
	uint32_t request_port;		 /* only requests on this local port (0: any) */
};

/* Records one source wrote. */
struct ws_source_count {
	const char *name;
	uint64_t events;
};

/* What the run saw, for the summary. */
struct ws_summary {
	uint64_t records, records_late, lost, lost_recursion, duration_ns;
	const char *sources;		/* "sched,futex,blkio" */
	const struct ws_losses *losses; /* by CPU and kind (NULL: none known) */
	uint64_t waits_unexplained, wake_races, bad_records, switch_ins_unseen;
	uint64_t history_trims, shortest_history_ns; /* max_history reached; least kept then */
	uint64_t out_of_memory;			     /* allocations that failed in the analysis */
	uint64_t dead_dropped; /* exited threads' timelines dropped early: too many kept */
	uint32_t ncpus;	       /* CPUs the analysis kept state for */
	uint64_t cpu_refused;  /* records naming a CPU past those: not analysed */
	const struct ws_source_count *by_source; /* records each source wrote */
	int nsources;
	int threads;
	/* files whose symbols were not read, and why (NULL: none refused) */
	const struct ws_symfile_log *symbols_refused;
};

struct ws_report;
struct ws_stacks;
struct ws_symfile_log;

struct ws_report *ws_report_new(const struct ws_report_opts *o, struct ws_graph *g);
/* Where the links' stacks are found; @depth user frames per link in text (0: none). */
void ws_report_set_stacks(struct ws_report *r, const struct ws_stacks *stacks, uint64_t depth);
/*
 * Report one chain (JSON: written at once; text: kept if among the top N). A ranked chain's root
 * is settled first (ws_chain_settle_root()), hence not const.
 */
int ws_report_chain(struct ws_report *r, struct ws_chain *c);
/* Account thread @tid's whole life as the run's critical path. 0 or -ENOMEM. */
int ws_report_follow(struct ws_report *r, uint32_t tid);
/* A wait of the followed thread below the reporting threshold: critical path only. */
void ws_report_follow_chain(struct ws_report *r, const struct ws_chain *c);
/*
 * Tracing ended with thread @tid still blocked, on @what (the words after "blocked on"; ""
 * when nothing said): the critical path names its open wait so.
 */
void ws_report_open_wait(struct ws_report *r, uint32_t tid, const char *what);
/* A final interval of a traced thread's timeline (see ws_graph_ops.on_ival). */
void ws_report_ival(struct ws_report *r, const struct ws_thread *t, const struct ws_ival *iv,
		    const struct ws_claim *claim);
/* Thread @t left the graph's history (ws_graph_ops.on_gone). */
void ws_report_gone(struct ws_report *r, const struct ws_thread *t);
/* A traced thread's socket call (ws_host.sock_io): requests. */
void ws_report_sock_io(struct ws_report *r, const struct ws_sock_io *io);
/* Hand every request, as it ends, to @fn too (NULL: to none). */
struct ws_request;
void ws_report_set_request_sink(struct ws_report *r,
				void (*fn)(void *ctx, const struct ws_request *q), void *ctx);
/* Whoever else counts the reported waits (the metrics: report/metrics.h). */
struct ws_wait_sink {
	/*
	 * A wait, after the report counted it: @ranked when it is ranked (its root settled,
	 * ws_chain_settle_root()), false for an idle wait only counted. @c is valid only
	 * during the call.
	 */
	void (*wait)(void *ctx, struct ws_graph *g, const struct ws_chain *c, bool ranked);
	/*
	 * Thread @t spent @ns more in waits shorter than min_block (seen one by one, or summarised
	 * in the kernel), counted as its intervals leave the history (up to max_window late).
	 */
	void (*short_waits)(void *ctx, struct ws_graph *g, const struct ws_thread *t, uint64_t ns);
	/* Thread @t, exited, left the history (ws_graph_ops.on_gone): no wait of it comes again. */
	void (*gone)(void *ctx, const struct ws_thread *t);
	void *ctx;
	/*
	 * The report keeps nothing of the waits (no reasons, roots, longest chains): they go to
	 * the sink alone. For watch, whose report nobody reads and which runs for good: the
	 * report's tallies would grow with every wait (a reason keeps each wait's length).
	 */
	bool only;
};
/* Hand every reported wait to @sink too (copied; NULL: to none). */
void ws_report_set_wait_sink(struct ws_report *r, const struct ws_wait_sink *sink);
/* The records have ended: requests still open end now, while the timelines are kept. */
void ws_report_requests_end(struct ws_report *r);
/* Text: the critical path, reasons, top N chains and root causes; JSON: the same objects. */
int ws_report_finish(struct ws_report *r, const struct ws_summary *s);
void ws_report_free(struct ws_report *r);

#endif
