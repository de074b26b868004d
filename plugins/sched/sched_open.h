/* SPDX-License-Identifier: MIT */
/* The sched source on waits still open (ws_plugin.describe_open): see sched_open.c. */
#ifndef SCHED_OPEN_H
#define SCHED_OPEN_H

#include <whyslow/plugin.h>

int sched_describe_open(struct ws_plugin_ctx *ctx, const struct ws_open_wait *w,
			struct ws_claim *out, char *what, size_t len);

#endif
