// SPDX-License-Identifier: MIT
/*
 * net source, user side: explains a wait as a socket wakeup when the wakeup
 * ran inside the NET_RX softirq, right after the delivery of a packet to the
 * socket it made readable; the chain goes on into the task that queued that
 * packet, or ends at the remote peer when the packet came from a NIC.
 *
 * The evidence rule (docs/DESIGN.md, "Sockets"): in one softirq bracket on
 * one CPU, (1) a packet P was delivered, (2) then socket S's data-ready ran
 * with no other delivery in between, with the sleeper on S's wait queue (the
 * kernel side writes a record per traced waiter then), (3) then the sleeper
 * was woken, still before any other delivery (the kernel side writes a
 * WS_NET_RX record for a delivery after a waiter record); and P's addresses
 * and ports are S's, seen from the other end. P's sender is the task that
 * queued the very same skb (same address and same headers) in task context.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <bpf/libbpf.h>
#include <whyslow/plugin.h>
#include <whyslow/recent.h>

#include "net_io.h"
#include "net_rec.h"
#include "net.skel.h"

#define NAME "net"

/* Wakeups kept per CPU: a bracket wakes a few readers at most before the core asks. */
#define WAKES_PER_CPU 16

static const void *net_bpf_object(size_t *size)
{
	return net_bpf__elf_bytes(size);
}

/* The state: the last packet wakeups on each CPU (struct ws_net_wake), the clients' ports. */
struct net_state {
	struct ws_recent wakes;
	struct net_ports eph;
};

static int net_init(struct ws_plugin_ctx *ctx)
{
	struct net_state *st = malloc(sizeof(*st));

	if (!st)
		return -ENOMEM;
	ws_recent_init(&st->wakes, sizeof(struct ws_net_wake), WAKES_PER_CPU);
	st->eph = (struct net_ports){ .loaded = false };
	ctx->priv = st;
	return 0;
}

static void net_fini(struct ws_plugin_ctx *ctx)
{
	struct net_state *st = ctx->priv;

	if (st)
		ws_recent_free(&st->wakes);
	free(st);
	ctx->priv = NULL;
}

static int net_decode(struct ws_plugin_ctx *ctx, const struct ws_rec_hdr *rec)
{
	switch (rec->kind) {
	case WS_NET_WAKE:
		if (rec->size < sizeof(struct ws_net_wake))
			return -EINVAL;
		break;
	case WS_NET_RX:
		/* kept among the waiter records: it ends theirs (see net_rec.h) */
		break;
	case WS_NET_IO:
		/* not evidence of a wakeup: the marks of requests, the core's */
		return net_io_decode(ctx, rec, &((struct net_state *)ctx->priv)->eph);
	default:
		ctx->host->log(ctx, WS_LOG_DEBUG, "unknown record kind %#x", rec->kind);
		return 0;
	}
	return ws_recent_push(&((struct net_state *)ctx->priv)->wakes, rec) ? 0 : -ENOMEM;
}

/*
 * A record of the softirq bracket of the wait @arg's wakeup, not later than
 * it, that tells about it: a data-ready that had its thread waiting, or a
 * delivery after which no earlier data-ready explains it.
 */
static bool same_wakeup(const void *rec, const void *arg)
{
	const struct ws_net_wake *x = rec;
	const struct ws_wait *w = arg;

	return x->hdr.ctx_id == w->wake->ctx_id && x->hdr.ts <= w->wake->ts &&
	       (x->hdr.ctx & WS_CTX_SOFTIRQ) &&
	       (x->hdr.kind == WS_NET_RX || x->wakee_tid == w->tid);
}

static const struct ws_net_wake *record_of(const struct ws_recent *wakes, const struct ws_wait *w)
{
	const struct ws_wake *wk = w->wake;
	const struct ws_net_wake *r;

	if (!(wk->ctx & WS_CTX_SOFTIRQ) || (wk->ctx & WS_CTX_HARDIRQ))
		return NULL;
	r = ws_recent_newest(wakes, wk->cpu, 0, same_wakeup, w, NULL);
	return r && r->hdr.kind == WS_NET_WAKE ? r : NULL;
}

static size_t addr_len(uint8_t family)
{
	return family == AF_INET6 ? 16 : 4;
}

static bool addr_any(const struct ws_net_tuple *t, const uint8_t *a)
{
	static const uint8_t zero[16];

	return !memcmp(a, zero, addr_len(t->family));
}

/*
 * Packet @p was for socket @s: same family and protocol, its destination is
 * the socket's local end (any local address when the socket is bound to
 * none), and its source is the socket's peer (any peer when the socket has
 * none: a listener or an unconnected UDP socket).
 */
static bool packet_for_socket(const struct ws_net_tuple *p, const struct ws_net_tuple *s)
{
	struct ws_net_tuple mapped;
	size_t n;

	/* an IPv6 socket receives IPv4 packets as ::ffff:a.b.c.d */
	if (p->family == AF_INET && s->family == AF_INET6) {
		mapped = *p;
		mapped.family = AF_INET6;
		memset(mapped.saddr, 0, 16);
		memset(mapped.daddr, 0, 16);
		mapped.saddr[10] = mapped.saddr[11] = mapped.daddr[10] = mapped.daddr[11] = 0xff;
		memcpy(mapped.saddr + 12, p->saddr, 4);
		memcpy(mapped.daddr + 12, p->daddr, 4);
		p = &mapped;
	}
	n = addr_len(p->family);
	if (!p->family || p->family != s->family || p->proto != s->proto)
		return false;
	if (p->dport != s->sport || (!addr_any(s, s->saddr) && memcmp(p->daddr, s->saddr, n)))
		return false;
	if (s->dport == 0 && addr_any(s, s->daddr))
		return true;
	return p->sport == s->dport && !memcmp(p->saddr, s->daddr, n);
}

static const char *proto_name(uint8_t proto)
{
	switch (proto) {
	case 6:
		return "TCP";
	case 17:
		return "UDP";
	default:
		return "IP";
	}
}

static void add_packet_fields(const struct ws_host *host, const struct ws_net_wake *r,
			      struct ws_claim *out)
{
	char src[64], dst[64];

	net_endpoint(&r->pkt, r->pkt.saddr, r->pkt.sport, src, sizeof(src));
	net_endpoint(&r->pkt, r->pkt.daddr, r->pkt.dport, dst, sizeof(dst));
	host->claim_str(out, "proto", proto_name(r->pkt.proto));
	host->claim_str(out, "src", src);
	host->claim_str(out, "dst", dst);
}

static int net_infer(struct ws_plugin_ctx *ctx, const struct ws_wait *w, struct ws_claim *out)
{
	const struct ws_host *host = ctx->host;
	const struct ws_net_wake *r;
	char comm[17];

	if (!w->wake)
		return 0;
	r = record_of(&((struct net_state *)ctx->priv)->wakes, w);
	/* no delivery before the data-ready, or a packet for another socket: no evidence */
	if (!r || !packet_for_socket(&r->pkt, &r->sock))
		return 0;
	switch (r->sender) {
	case WS_NET_SENDER_TASK:
		out->strength = WS_CLAIM_SPECIFIC;
		snprintf(out->kind, sizeof(out->kind), "socket");
		out->woken_by = r->sender_tid;
		/* an untraced sender has no timeline to follow */
		out->root = !host->pid_traced(ctx, r->sender_pid);
		snprintf(
			out->evidence, sizeof(out->evidence),
			"woken by the delivery of a packet tid %u queued (same softirq, same socket)",
			r->sender_tid);
		add_packet_fields(host, r, out);
		memcpy(comm, r->sender_comm, 16);
		comm[16] = 0;
		host->claim_str(out, "sender_comm", comm);
		host->claim_u64(out, "queued_to_wake_ns",
				r->queued_ts && w->wake->ts > r->queued_ts
					? w->wake->ts - r->queued_ts
					: 0);
		return 1;
	case WS_NET_SENDER_IRQ:
		out->strength = WS_CLAIM_FALLBACK;
		snprintf(out->kind, sizeof(out->kind), "socket");
		out->woken_by = 0;
		out->root = true;
		snprintf(
			out->evidence, sizeof(out->evidence),
			"woken by the delivery of a local packet queued inside an interrupt (no task)");
		add_packet_fields(host, r, out);
		return 1;
	default:
		break;
	}
	if (r->rx_virtual) {
		/* loopback or veth: from this machine, but its queueing was not seen */
		out->strength = WS_CLAIM_FALLBACK;
		snprintf(out->kind, sizeof(out->kind), "socket");
		out->woken_by = 0;
		out->root = true;
		snprintf(out->evidence, sizeof(out->evidence),
			 "woken by the delivery of a local packet whose sender was not seen");
		add_packet_fields(host, r, out);
		return 1;
	}
	out->strength = WS_CLAIM_SPECIFIC;
	snprintf(out->kind, sizeof(out->kind), "network");
	out->woken_by = 0;
	out->root = true;
	snprintf(out->evidence, sizeof(out->evidence),
		 "woken by the delivery of a packet that arrived from network device %u",
		 r->rx_ifindex);
	add_packet_fields(host, r, out);
	host->claim_u64(out, "ifindex", r->rx_ifindex);
	return 1;
}

static int net_describe(struct ws_plugin_ctx *ctx, const struct ws_claim *c, char *buf, size_t len)
{
	(void)ctx;
	if (!strcmp(c->kind, "network"))
		return snprintf(buf, len, "data from %s (remote, %s to %s)",
				ws_claim_str(c, "src", "?"), ws_claim_str(c, "proto", "?"),
				ws_claim_str(c, "dst", "?"));
	return snprintf(buf, len, "socket (%s %s -> %s)", ws_claim_str(c, "proto", "?"),
			ws_claim_str(c, "src", "?"), ws_claim_str(c, "dst", "?"));
}

static const struct ws_config_key net_keys[] = {
	{ "requests", WS_CFG_BOOL, "true", 0, 0,
	  "write each traced thread's socket receives and sends, which requests are found from; false: no program on socket calls (no requests)" },
	{ NULL },
};

/* Without requests, the programs on every socket call of the machine are not even loaded. */
static int net_configure(struct ws_plugin_ctx *ctx, struct bpf_object *obj)
{
	static const char *const progs[] = { "ws_net_recv", "ws_net_send", "ws_net_tcp_state" };
	bool on = true;

	if (ctx->host->config_bool(ctx, "requests", &on) || on)
		return 0;
	for (size_t i = 0; i < sizeof(progs) / sizeof(progs[0]); i++) {
		struct bpf_program *p = bpf_object__find_program_by_name(obj, progs[i]);
		int err = p ? bpf_program__set_autoload(p, false) : -ENOENT;

		if (err) {
			ctx->host->log(ctx, WS_LOG_ERROR, "cannot leave out %s: %s", progs[i],
				       strerror(-err));
			return err;
		}
	}
	return 0;
}

static const struct ws_plugin net_plugin = {
	.sz = sizeof(struct ws_plugin),
	.abi_major = WS_ABI_MAJOR,
	.abi_minor = WS_ABI_MINOR,
	.name = NAME,
	.description =
		"TCP/UDP sockets: the task that queued the packet whose delivery woke a reader",
	.version = "1.3",
	.kind_base = WS_KIND_NET,
	.bpf_object = net_bpf_object,
	.config_keys = net_keys,
	.init = net_init,
	.configure = net_configure,
	.decode = net_decode,
	.infer = net_infer,
	.describe = net_describe,
	.fini = net_fini,
};

WS_PLUGIN_DEFINE(net_plugin)
