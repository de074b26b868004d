/* SPDX-License-Identifier: MIT */
/* The futex source on waits still open (ws_plugin.describe_open / open_owner): see futex_open.c. */
#ifndef FUTEX_OPEN_H
#define FUTEX_OPEN_H

#include <whyslow/plugin.h>

int futex_describe_open(struct ws_plugin_ctx *ctx, const struct ws_open_wait *w,
			struct ws_claim *out, char *what, size_t len);
int futex_open_owner(struct ws_plugin_ctx *ctx, const struct ws_open_wait *w,
		     const struct ws_claim *c, ws_tid_live_fn is_live, void *live_ctx,
		     struct ws_open_owner *out);

#endif
