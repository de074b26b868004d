// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd_stuck.h"
#include "base/log.h"
#include "base/util.h"
#include "hang/stuck.h"
#include "session/session.h"

/* Two samples this far apart: a thread that did not run between them is really stuck. */
#define SAMPLE_GAP_NS 100000000ULL

static const char usage[] =
	"Usage: whyslow stuck [--format text|json] [--min-block DUR] PID...\n"
	"\n"
	"A snapshot of what every thread of the processes waits for, now, without tracing:\n"
	"the syscall it sleeps in, how long it has been off CPU at least, its user stack, who\n"
	"holds the mutex it waits for (read from the mutex itself), the chain of holders, and\n"
	"deadlocks.\n"
	"Exit status 3 when a deadlock is found, 0 otherwise, 1 on error.\n"
	"Needs ptrace access to the processes (their user, or root), not BPF.\n"
	"\n"
	"  --format FMT     text (default) or json (JSON Lines: deadlock and open_wait objects)\n"
	"  --min-block DUR  show waits off CPU at least this long (default 10ms)\n";

/*
 * The sources put the waits in words (ws_plugin.describe_open): load every plugin, as report
 * does, without BPF. 0 or -errno (printed).
 */
static int open_sources(const struct ws_report_globals *g, struct ws_config *cfg,
			struct ws_session **s, struct ws_open_sources *src)
{
	struct ws_session_opts so = { .plugin_dir = g->plugin_dir, .verbose = g->verbose };
	int err;

	if (!so.plugin_dir)
		so.plugin_dir = getenv("WHYSLOW_PLUGIN_DIR");
	if (!so.plugin_dir)
		so.plugin_dir = WS_PLUGINDIR;
	if ((err = ws_session_open(s, &so, cfg)))
		return err;
	return ws_session_open_sources(*s, src);
}

int ws_cmd_stuck(int argc, char **argv, const struct ws_report_globals *g)
{
	struct ws_config cfg = { 0 };
	struct ws_session *s = NULL;
	struct ws_open_sources src;
	struct ws_stuck st;
	uint64_t min_block = 10000000ULL, v;
	uint32_t *pids = calloc(argc ? argc : 1, sizeof(*pids));
	int npids = 0, err, found;
	bool json = false;

	if (!pids)
		return 1;
	for (int i = 0; i < argc; i++) {
		const char *a = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			fputs(usage, stdout);
			free(pids);
			return 0;
		} else if (!strcmp(a, "--format") && val &&
			   (!strcmp(val, "text") || !strcmp(val, "json"))) {
			json = !strcmp(val, "json");
			i++;
		} else if (!strcmp(a, "--min-block") && val &&
			   !ws_parse_duration(val, &min_block)) {
			i++;
		} else if (a[0] != '-' && !ws_parse_u64(a, &v) && v > 0 && v <= 4194304) {
			pids[npids++] = (uint32_t)v;
		} else {
			ws_log(WS_LOG_ERROR,
			       "stuck: bad argument '%s' (expected --format text|json, --min-block DUR or a PID); see whyslow stuck --help",
			       a);
			free(pids);
			return 1;
		}
	}
	if (!npids) {
		ws_log(WS_LOG_ERROR, "stuck needs a PID; see whyslow stuck --help");
		free(pids);
		return 1;
	}
	/* any thread id names its process */
	for (int i = 0; i < npids; i++) {
		uint32_t tgid = ws_procsnap_tgid(pids[i]);

		if (!tgid) {
			ws_log(WS_LOG_ERROR, "no process or thread with PID %u", pids[i]);
			free(pids);
			return 1;
		}
		pids[i] = tgid;
	}
	if (open_sources(g, &cfg, &s, &src)) {
		ws_session_free(s);
		ws_config_free(&cfg);
		free(pids);
		return 1;
	}
	err = ws_stuck_take_flags(&st, pids, npids, SAMPLE_GAP_NS, NULL, &src, WS_STUCK_STACKS);
	free(pids);
	if (err) {
		ws_session_free(s);
		ws_config_free(&cfg);
		ws_log(WS_LOG_ERROR, "stuck: cannot read the processes: %s", strerror(-err));
		return 1;
	}
	found = ws_stuck_print(stdout, &st, min_block, json, NULL);
	if (!json && !found && !st.n)
		puts("no threads");
	ws_stuck_free(&st);
	ws_session_free(s);
	ws_config_free(&cfg);
	if (fflush(stdout)) {
		ws_log(WS_LOG_ERROR, "writing the output: %s", strerror(errno));
		return 1;
	}
	return found ? WS_EXIT_DEADLOCK : 0;
}
