// SPDX-License-Identifier: MIT
/*
 * A traced thread's receive or send on a socket, as the core's requests need it: which end of
 * its connection the socket is (the server's end answers), and the two ends' names.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "net_io.h"

void net_endpoint(const struct ws_net_tuple *t, const uint8_t *addr, uint16_t port, char *buf,
		  size_t len)
{
	char a[INET6_ADDRSTRLEN] = "?";

	inet_ntop(t->family == AF_INET6 ? AF_INET6 : AF_INET, addr, a, sizeof(a));
	snprintf(buf, len, t->family == AF_INET6 ? "[%s]:%u" : "%s:%u", a, port);
}

/* The name table's key for the port range (the net source keeps no other name). */
#define PORTS_KEY 1

void net_ports_load(struct ws_plugin_ctx *ctx, struct net_ports *p)
{
	char buf[64] = "";
	unsigned lo, hi;

	if (!ctx->replay) {
		FILE *f = fopen("/proc/sys/net/ipv4/ip_local_port_range", "re");

		if (f) {
			if (!fgets(buf, sizeof(buf), f))
				buf[0] = 0;
			fclose(f);
		}
		if (buf[0])
			ctx->host->name_set(ctx, PORTS_KEY, buf);
	} else if (ctx->host->name_get(ctx, PORTS_KEY, buf, sizeof(buf))) {
		buf[0] = 0;
	}
	p->lo = p->hi = 0;
	p->loaded = true;
	if (sscanf(buf, "%u %u", &lo, &hi) == 2 && lo <= hi && hi <= 65535) {
		p->lo = (uint16_t)lo;
		p->hi = (uint16_t)hi;
	}
}

static bool ephemeral(const struct net_ports *eph, uint16_t port)
{
	return eph->hi && port >= eph->lo && port <= eph->hi;
}

/*
 * Which end answers. TCP: the end that was accepted, when its handshake was seen. Otherwise,
 * for TCP and connected UDP: a client's port is an ephemeral one (the machine's
 * ip_local_port_range), a service's is not; when both or neither are, the lower port (services
 * listen low). Unix: a server's accepted socket shares its listener's address, a client's end
 * has none (a socketpair: neither; both bound: not told).
 */
static uint32_t io_role(const struct ws_net_io *r, const struct net_ports *eph)
{
	uint16_t mine = r->addr.sport, peer = r->addr.dport;

	if (r->family == AF_UNIX) {
		switch (r->unix_bound & (WS_NET_IO_BOUND | WS_NET_IO_PEER_BOUND)) {
		case WS_NET_IO_BOUND:
			return WS_SOCK_SERVER;
		case WS_NET_IO_PEER_BOUND:
			return WS_SOCK_CLIENT;
		default:
			return WS_SOCK_ROLE_UNKNOWN;
		}
	}
	/* its own handshake, seen while tracing, says it best */
	if (r->unix_bound & WS_NET_IO_ACCEPTED)
		return WS_SOCK_SERVER;
	if (r->unix_bound & WS_NET_IO_CONNECTED)
		return WS_SOCK_CLIENT;
	if (!mine || !peer || mine == peer)
		return WS_SOCK_ROLE_UNKNOWN;
	if (ephemeral(eph, peer) != ephemeral(eph, mine))
		return ephemeral(eph, peer) ? WS_SOCK_SERVER : WS_SOCK_CLIENT;
	return mine < peer ? WS_SOCK_SERVER : WS_SOCK_CLIENT;
}

/* @pre (0 or 1 byte), then @p up to its NUL or @n bytes, cut to @len: snprintf's "%s%.*s" */
static void name_copy(char *buf, size_t len, const char *pre, const char *p, size_t n)
{
	size_t k = strnlen(p, n), at = 0;

	if (!len)
		return;
	if (*pre && len > 1)
		buf[at++] = *pre;
	if (k > len - 1 - at)
		k = len - 1 - at;
	memcpy(buf + at, p, k);
	buf[at + k] = 0;
}

/*
 * A unix address: its path, or "@name" for an abstract one (it begins with a 0 byte). Made
 * for every call on a unix socket: copied, not formatted (printf was 3% of `report` of a
 * database's requests).
 */
static void unix_name(const struct ws_net_io *r, char *buf, size_t len)
{
	size_t n = r->path_len < sizeof(r->unix_path) ? r->path_len : sizeof(r->unix_path);
	const char *p = r->unix_path;

	if (!n) {
		buf[0] = 0;
		return;
	}
	if (!p[0]) {
		name_copy(buf, len, "@", p + 1, n - 1);
		return;
	}
	name_copy(buf, len, "", p, n);
}

int net_io_decode(struct ws_plugin_ctx *ctx, const struct ws_rec_hdr *rec, struct net_ports *eph)
{
	const struct ws_net_io *r = (const void *)rec;
	char local[WS_NET_IO_PATH + 2] = "", peer[WS_NET_IO_PATH + 2] = "";
	struct ws_sock_io io = { .sz = sizeof(io) };

	if (rec->size < WS_NET_IO_IP_SIZE || r->ret < 0 ||
	    (r->family == AF_UNIX && rec->size < sizeof(*r)))
		return -EINVAL;
	if (!ctx->host->sock_io)
		return 0;
	if (!eph->loaded)
		net_ports_load(ctx, eph);
	io.ts = rec->ts;
	io.tid = rec->tid;
	io.pid = rec->pid;
	io.sock = r->sock;
	io.bytes = (uint64_t)r->ret;
	io.dir = rec->flags & WS_NET_IO_SEND ? WS_SOCK_SEND : WS_SOCK_RECV;
	io.role = io_role(r, eph);
	/* a client's end (net 1.3 writes it for the join): never a request's */
	if (r->family != AF_UNIX && (r->unix_bound & WS_NET_IO_CONNECTED))
		io.flags |= WS_SOCK_NOT_SERVED;
	if (r->family != AF_UNIX && (rec->flags & WS_NET_IO_SEQ) &&
	    rec->size >= WS_NET_IO_TCP_SIZE) {
		io.flags |= WS_SOCK_SEQ;
		io.seq_end = r->tcp.seq_end;
	}
	if (r->family == AF_UNIX) {
		io.proto = WS_SOCK_UNIX;
		/* the one address a unix connection has names its server's end */
		unix_name(r, io.role == WS_SOCK_CLIENT ? peer : local, sizeof(local));
	} else {
		io.proto = r->sock_type == SOCK_DGRAM ? WS_SOCK_UDP : WS_SOCK_TCP;
		net_endpoint(&r->addr, r->addr.saddr, r->addr.sport, local, sizeof(local));
		if (r->addr.dport)
			net_endpoint(&r->addr, r->addr.daddr, r->addr.dport, peer, sizeof(peer));
	}
	io.local = local;
	io.peer = peer;
	ctx->host->sock_io(ctx, &io);
	return 0;
}
