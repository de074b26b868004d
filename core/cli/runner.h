/* SPDX-License-Identifier: MIT */
/* Starting a traced command or attaching to processes, and the event loop. */
#ifndef WS_RUNNER_H
#define WS_RUNNER_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "hang/stuck.h"
#include "report/metrics.h"
#include "session/session.h"

/* run: how long what the command left behind is still traced, without --wait */
#define WS_RUN_GRACE_NS 10000000000ULL

struct ws_run_opts {
	char **argv;	  /* run: the command */
	const char *user; /* run: -u USER */
	bool as_root;	  /* run: keep root even under sudo */
	bool wait;	  /* run: after the command, trace what it left behind until it exits */
	uint32_t *pids;	  /* attach: targets */
	int npids;
	uint64_t duration_ns; /* 0 = until Ctrl-C or exit; run: then the command is killed */
	const char *output;   /* -o FILE, NULL = stdout */
	/* the waits still open at the end (stuck.h) are reported like chains */
	uint64_t min_block_ns;
	bool open_waits; /* report them (text and json) */
	bool json;
	/*
	 * record / --perfetto (cmd_trace.c): on_start once analysis has started,
	 * with the traced pids, before the command runs; 0 or -errno (printed).
	 * on_finish after the report, @complete false when the run failed.
	 */
	int (*on_start)(void *ctx, struct ws_session *s, const uint32_t *pids, int npids);
	int (*on_finish)(void *ctx, struct ws_session *s, bool complete);
	/*
	 * record: the open waits at the end (stuck.h), before on_finish; they are
	 * taken for it even when not reported (@open_waits false).
	 */
	void (*on_open_waits)(void *ctx, const struct ws_stuck *open);
	/* watch: after each poll of the ring (about every POLL_MS), with @hook_ctx */
	void (*on_tick)(void *ctx, struct ws_session *s);
	void *hook_ctx;
	/* watch -a: a process that exits before it is attached to is left out, not an error */
	bool all;
	/* runs until stopped, even while no process is traced (watch --comm: one may start) */
	bool stay;
	/* --metrics: fed every reported wait and, each second, the session's counts; NULL: off */
	struct ws_metrics *metrics;
};

/*
 * Exit status for main(): the command's (run), 0 (attach), 3 (WS_EXIT_DEADLOCK)
 * when a deadlock was still there at the end, or 1/126/127 on error.
 */
int ws_run_command(struct ws_session *s, const struct ws_run_opts *o);
/* @o->npids shrinks when @o->all and a target has gone (it is left out of @o->pids) */
int ws_attach(struct ws_session *s, struct ws_run_opts *o);

/* Can this process load and attach BPF? 0, or -EPERM having said what is missing. */
int ws_check_privilege(void);

#endif
