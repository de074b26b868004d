/* SPDX-License-Identifier: MIT */
/*
 * `whyslow record` (a run or attach whose records go to a file), `run
 * --perfetto FILE`, and `whyslow report` (the analysis of a recording,
 * without root or BPF).
 */
#ifndef WS_CMD_TRACE_H
#define WS_CMD_TRACE_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "access/outfile.h"
#include "hang/stuck.h"
#include "record/trace.h"
#include "report/perfetto.h"
#include "session/config.h"
#include "session/session.h"

/* What a run or attach writes besides its report; the runner's hooks. */
struct ws_trace_job {
	const char *record_path;   /* record: -o FILE; NULL: not recording */
	const char *perfetto_path; /* run/attach/record --perfetto FILE; NULL: none */
	const char *plugin_dir;
	const struct ws_config *cfg;
	char **argv; /* run: the command, for the metadata */
	bool attach;
	enum ws_trace_compress compress; /* record --compress */
	const char *host;		 /* record --host; NULL: the nodename */
	uint64_t clock_shift_ns;	 /* record --clock-shift: added to the wall-clock anchor */

	/* private */
	FILE *f;
	struct ws_outfile out;
	struct ws_trace_writer w;
	size_t nnames_written;	 /* the session's names (ws_session_names) written so far */
	size_t ncgroups_written; /* and its threads' cgroups (ws_session_cgroups) */
	struct ws_session *s;
	struct ws_perfetto *pf;
	/* --perfetto FILE, opened at start: a bad path stops the run before the command */
	struct ws_outfile pf_out;
	uint64_t flushed_at; /* CLOCK_MONOTONIC of the last flush of the recording */
	void *open_waits;    /* the OPEN_WAITS record's payload, written before the summary */
	size_t open_waits_len;
	int err;
};

/* struct ws_run_opts.on_start / on_finish with @ctx a struct ws_trace_job. */
int ws_trace_job_start(void *ctx, struct ws_session *s, const uint32_t *pids, int npids);
int ws_trace_job_finish(void *ctx, struct ws_session *s, bool complete);
/* struct ws_run_opts.on_open_waits: a recording keeps them for report. */
void ws_trace_job_open_waits(void *ctx, const struct ws_stuck *open);

/* A recording's metadata for session @s tracing @pids (the command is the caller's). */
void ws_trace_meta_fill(struct ws_trace_meta *m, struct ws_session *s, const struct ws_config *cfg,
			const char *plugin_dir, const uint32_t *pids, int npids);

/* The names the threads of process @pid have now, as thread records stamped @ts. */
void ws_trace_write_threads(struct ws_trace_writer *w, uint32_t pid, uint64_t ts);

struct ws_cli;

/* `whyslow report [FILE]` with the options @cli holds. Exit status for main(). */
int ws_cmd_report(const struct ws_cli *cli);

/* "sched=0.1.0,futex=0.1.0": each source's own version, read from its plugin file. */
void ws_source_versions(const char *dir, const char *sources, char *buf, size_t len);

#endif
