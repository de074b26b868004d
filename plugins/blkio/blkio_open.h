/* SPDX-License-Identifier: MIT */
/* The blkio source on waits still open (ws_plugin.describe_open): see blkio_open.c. */
#ifndef BLKIO_OPEN_H
#define BLKIO_OPEN_H

#include <whyslow/plugin.h>

int blkio_describe_open(struct ws_plugin_ctx *ctx, const struct ws_open_wait *w,
			struct ws_claim *out, char *what, size_t len);

#endif
