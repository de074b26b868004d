// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd_stuck.h"
#include "options.h"
#include "plugin_dir.h"
#include "base/log.h"
#include "base/util.h"
#include "hang/stuck.h"
#include "session/core_keys.h"
#include "session/session.h"

/* Two samples this far apart: a thread that did not run between them is really stuck. */
#define SAMPLE_GAP_NS 100000000ULL

/*
 * The sources put the waits in words (ws_plugin.describe_open): load every plugin, as report
 * does, without BPF. 0 or -errno (printed).
 */
static int open_sources(const struct ws_cli *c, struct ws_config *cfg, struct ws_session **s,
			struct ws_open_sources *src)
{
	struct ws_session_opts so = { .plugin_dir = c->plugin_dir, .verbose = c->verbose };
	int err;

	so.plugin_dir = ws_plugin_dir_pick(so.plugin_dir);
	if ((err = ws_session_open(s, &so, cfg)))
		return err;
	return ws_session_open_sources(*s, src);
}

int ws_cmd_stuck(const struct ws_cli *c)
{
	struct ws_config cfg = { 0 };
	struct ws_session *s = NULL;
	struct ws_open_sources src;
	struct ws_stuck st;
	uint64_t min_block = 0;
	uint32_t *pids = calloc(c->pids.n ? c->pids.n : 1, sizeof(*pids));
	int npids = c->pids.n, err, found;
	bool json = c->format_set && c->format == WS_FORMAT_JSON;

	if (!pids)
		return 1;
	if (!npids) {
		ws_log(WS_LOG_ERROR, "stuck needs a PID; see whyslow help stuck");
		free(pids);
		return 1;
	}
	/* any thread id names its process */
	for (int i = 0; i < npids; i++) {
		uint32_t tgid = ws_procsnap_tgid(c->pids.v[i]);

		if (!tgid) {
			ws_log(WS_LOG_ERROR, "no process or thread with PID %u", c->pids.v[i]);
			free(pids);
			return 1;
		}
		pids[i] = tgid;
	}
	/* --min-block, checked as the ini's is; its default is ws_core_keys' */
	for (int i = 0; i < c->ncore; i++)
		if (ws_config_set(&cfg, "core", c->core_key[i], c->core_val[i])) {
			free(pids);
			ws_config_free(&cfg);
			return 1;
		}
	ws_config_u64(&cfg, "core", ws_core_keys, "min_block", &min_block);
	if (open_sources(c, &cfg, &s, &src)) {
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
