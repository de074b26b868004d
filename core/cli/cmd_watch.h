/* SPDX-License-Identifier: MIT */
/*
 * `whyslow watch`: an attach that runs until stopped and keeps the recent past in a flight
 * recorder (record/flight.h), written out as a recording into a spool directory
 * (record/spool.h) on SIGUSR1, on `whyslow dump`, and when a wait reaches --trigger (rate
 * limited: the triggers of one --min-interval make one dump, which says how many it stands
 * for). `whyslow dump` finds the running watch through its pid file.
 */
#ifndef WS_CMD_WATCH_H
#define WS_CMD_WATCH_H

#include <stdbool.h>
#include <stdint.h>

#include "report/metrics.h"
#include "session/config.h"
#include "session/session.h"

struct ws_cli;
struct ws_watch;

struct ws_watch_opts {
	uint64_t keep_ns, keep_bytes;
	uint64_t trigger_ns; /* 0: no trigger, dumps on demand only */
	uint64_t min_interval_ns;
	const char *spool_dir;
	uint64_t spool_bytes;
	const char *plugin_dir;
	const struct ws_config *cfg;
	struct ws_metrics *metrics; /* --metrics: its wait sink is fed too */
	const char *what; /* "-a", "--cgroup PATH", "pids": for the dumps' command field */
};

/* The watch options: [core] watch_* of the ini file, with the command line's over them (checked
 * as they were set). 0 or -EINVAL. */
int ws_watch_opts_from_config(const struct ws_config *cfg, struct ws_watch_opts *o);
/*
 * Before anything is loaded: the spool made or checked, no other watch running, the flight
 * recorder allocated. 0 or -errno, said.
 */
int ws_watch_new(struct ws_watch **out, const struct ws_watch_opts *o);
/* struct ws_run_opts hooks, @ctx the struct ws_watch. */
int ws_watch_start(void *ctx, struct ws_session *s, const uint32_t *pids, int npids);
void ws_watch_tick(void *ctx, struct ws_session *s);
int ws_watch_finish(void *ctx, struct ws_session *s, bool complete);
void ws_watch_free(struct ws_watch *w);

/* `whyslow dump`: ask the running watch for a dump. Exit status. */
int ws_cmd_dump(const struct ws_cli *c);
/* watch -a: every process but whyslow's own and kernel threads, into *@pids. 0 or -errno. */
int ws_watch_all_pids(uint32_t **pids, int *n);

#endif
