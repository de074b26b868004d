/* SPDX-License-Identifier: MIT */
/* The scheduler model on waits still open (ws_plugin.describe_open): see sched_open.c. */
#ifndef WS_SCHED_OPEN_H
#define WS_SCHED_OPEN_H

#include <whyslow/plugin.h>

int ws_sched_describe_open(struct ws_plugin_ctx *ctx, const struct ws_open_wait *w,
			   struct ws_claim *out, char *what, size_t len);

#endif
