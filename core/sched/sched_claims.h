/* SPDX-License-Identifier: MIT */
/* The scheduler model's claims on waits (ws_plugin.infer, describe, root_label): sched_claims.c. */
#ifndef WS_SCHED_CLAIMS_H
#define WS_SCHED_CLAIMS_H

#include <whyslow/plugin.h>

int ws_sched_infer(struct ws_plugin_ctx *ctx, const struct ws_wait *w, struct ws_claim *out);
int ws_sched_describe(struct ws_plugin_ctx *ctx, const struct ws_claim *c, char *buf, size_t len);
int ws_sched_root_label(struct ws_plugin_ctx *ctx, const struct ws_claim *c, const char *comm,
			char *buf, size_t len);

#endif
