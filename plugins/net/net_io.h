/* SPDX-License-Identifier: MIT */
/* The net source's socket calls (WS_NET_IO records), handed to the core for its requests. */
#ifndef WHYSLOW_NET_IO_H
#define WHYSLOW_NET_IO_H

#include <whyslow/plugin.h>

#include "net_rec.h"

/* "127.0.0.1:5432" or "[::1]:5432": @addr and @port of tuple @t's family. */
void net_endpoint(const struct ws_net_tuple *t, const uint8_t *addr, uint16_t port, char *buf,
		  size_t len);
/* Hand WS_NET_IO record @rec to the core (ws_host.sock_io). 0, or -EINVAL (malformed). */
int net_io_decode(struct ws_plugin_ctx *ctx, const struct ws_rec_hdr *rec);

#endif
