/* SPDX-License-Identifier: MIT */
/* The net source's socket calls (WS_NET_IO records), handed to the core for its requests. */
#ifndef WHYSLOW_NET_IO_H
#define WHYSLOW_NET_IO_H

#include <stdbool.h>

#include <whyslow/plugin.h>

#include "net_rec.h"

/* "127.0.0.1:5432" or "[::1]:5432": @addr and @port of tuple @t's family. */
void net_endpoint(const struct ws_net_tuple *t, const uint8_t *addr, uint16_t port, char *buf,
		  size_t len);
/* The ephemeral port range of the traced machine (net.ipv4.ip_local_port_range): clients'. */
struct net_ports {
	uint16_t lo, hi; /* 0, 0: not known */
	bool loaded;
};

/*
 * Read it from the live system and keep it in the name table, or, in a replay, from there: a
 * recording is told about as the machine it was made on. Done at the first socket call, when a
 * replay has read the recording's names.
 */
void net_ports_load(struct ws_plugin_ctx *ctx, struct net_ports *p);
/* Hand WS_NET_IO record @rec to the core (ws_host.sock_io). 0, or -EINVAL (malformed). */
int net_io_decode(struct ws_plugin_ctx *ctx, const struct ws_rec_hdr *rec, struct net_ports *eph);

#endif
