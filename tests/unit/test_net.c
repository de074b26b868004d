// SPDX-License-Identifier: MIT
/*
 * The net plugin, loaded as the core loads it (dlopen + entry symbol) and
 * driven through a fake host with synthetic wakeup records: which softirq
 * wakeups it claims, as what, and which it must leave alone.
 */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include <whyslow/plugin.h>

#include "fake_host.h"

#include "../../plugins/net/net_rec.h"

#define CLIENT 100   /* the blocked reader, pid 100 */
#define SERVER 200   /* the sender, pid 200 (traced) */
#define OUTSIDER 300 /* a sender of an untraced process */

static const struct ws_plugin *pl;

static bool traced(uint32_t pid)
{
	return pid == CLIENT || pid == SERVER;
}

static void load(void)
{
	pl = fake_load("net.so", false);
	cr_assert_str_eq(pl->name, "net");
	cr_assert_eq(pl->kind_base, WS_KIND_NET);
	fake.pid_traced = traced;
}

static void unload(void)
{
	fake_unload();
	pl = NULL;
}

TestSuite(net, .init = load, .fini = unload);

static void v4(uint8_t *a, const char *s)
{
	cr_assert_eq(inet_pton(AF_INET, s, a), 1);
}

/*
 * A wakeup of @wakee in softirq bracket (1, @ctx_id) at @ts, after packet
 * @src:@sport -> @dst:@dport (TCP) made the client's connected socket
 * 127.0.0.1:41234 <-> 127.0.0.1:5432 readable.
 */
static struct ws_net_wake rec(uint32_t ctx_id, uint64_t ts, uint32_t wakee, const char *src,
			      uint16_t sport, const char *dst, uint16_t dport)
{
	struct ws_net_wake r;

	memset(&r, 0, sizeof(r));
	r.hdr.size = sizeof(r);
	r.hdr.kind = WS_NET_WAKE;
	r.hdr.cpu = 1;
	r.hdr.ctx = WS_CTX_SOFTIRQ;
	r.hdr.ctx_id = ctx_id;
	r.hdr.ts = ts;
	r.wakee_tid = wakee;
	r.wakee_pid = CLIENT;
	r.sender = WS_NET_SENDER_TASK;
	r.sender_tid = SERVER + 1;
	r.sender_pid = SERVER;
	snprintf(r.sender_comm, sizeof(r.sender_comm), "server");
	r.queued_ts = ts - 50000;
	r.rx_ts = ts - 20000;
	r.ready_ts = ts - 5000;
	r.rx_ifindex = 1;
	r.rx_loopback = 1;
	r.rx_virtual = 1;
	r.sock_type = SOCK_STREAM;
	r.pkt.family = AF_INET;
	r.pkt.proto = 6;
	v4(r.pkt.saddr, src);
	v4(r.pkt.daddr, dst);
	r.pkt.sport = sport;
	r.pkt.dport = dport;
	r.sock.family = AF_INET;
	r.sock.proto = 6;
	v4(r.sock.saddr, "127.0.0.1");
	v4(r.sock.daddr, "127.0.0.1");
	r.sock.sport = 41234;
	r.sock.dport = 5432;
	return r;
}

static struct ws_net_wake reply(uint32_t ctx_id, uint64_t ts)
{
	return rec(ctx_id, ts, CLIENT, "127.0.0.1", 5432, "127.0.0.1", 41234);
}

static void feed(const struct ws_net_wake *r)
{
	cr_assert_eq(pl->decode(&fake.ctx, &r->hdr), 0);
}

/* Ask about @tid (pid 100), blocked since 1000, woken at @ts on @cpu in (@ctx, @ctx_id). */
static int ask(uint32_t tid, uint16_t cpu, uint8_t ctx, uint32_t ctx_id, uint64_t ts,
	       struct ws_claim *out)
{
	struct ws_wake wk = {
		.sz = sizeof(wk),
		.ts = ts,
		.cpu = cpu,
		.ctx = ctx,
		.ctx_id = ctx_id,
		.waker_tid = 7, /* whatever the softirq interrupted */
		.wakee_tid = tid,
		.wakee_pid = CLIENT,
	};
	struct ws_wait w = {
		.sz = sizeof(w),
		.tid = tid,
		.pid = CLIENT,
		.start_ns = 1000,
		.off_state = 1,
		.wake = &wk,
	};

	memset(out, 0, sizeof(*out));
	out->sz = sizeof(*out);
	return pl->infer(&fake.ctx, &w, out);
}

static const char *get_str(const struct ws_claim *c, const char *key)
{
	for (unsigned int i = 0; i < c->nfields; i++)
		if (!strcmp(c->fields[i].key, key) && c->fields[i].type == WS_FIELD_STR)
			return c->fields[i].s;
	cr_assert_fail("claim has no string field %s", key);
	return NULL;
}

Test(net, loopback_reply_is_socket_woken_by_sender)
{
	struct ws_net_wake r = reply(10, 5000000);
	struct ws_claim c;
	char text[160];

	feed(&r);
	cr_assert_eq(ask(CLIENT, 1, WS_CTX_SOFTIRQ, 10, 5000000, &c), 1);
	cr_assert_eq(c.strength, WS_CLAIM_SPECIFIC);
	cr_assert_str_eq(c.kind, "socket");
	cr_assert_eq(c.woken_by, SERVER + 1);
	cr_assert(!c.root, "a traced sender's timeline is followed");
	cr_assert_str_eq(get_str(&c, "proto"), "TCP");
	cr_assert_str_eq(get_str(&c, "src"), "127.0.0.1:5432");
	cr_assert_str_eq(get_str(&c, "dst"), "127.0.0.1:41234");
	pl->describe(&fake.ctx, &c, text, sizeof(text));
	cr_assert_str_eq(text, "socket (TCP 127.0.0.1:5432 -> 127.0.0.1:41234)");
}

Test(net, untraced_sender_ends_the_chain)
{
	struct ws_net_wake r = reply(11, 5000000);
	struct ws_claim c;

	r.sender_tid = OUTSIDER;
	r.sender_pid = OUTSIDER;
	feed(&r);
	cr_assert_eq(ask(CLIENT, 1, WS_CTX_SOFTIRQ, 11, 5000000, &c), 1);
	cr_assert_eq(c.woken_by, OUTSIDER);
	cr_assert(c.root);
}

Test(net, packet_for_another_socket_is_no_evidence)
{
	/* the last delivery before the wakeup was for port 6000, not the client's 41234 */
	struct ws_net_wake r = rec(12, 5000000, CLIENT, "127.0.0.1", 5432, "127.0.0.1", 6000);
	struct ws_claim c;

	feed(&r);
	cr_assert_eq(ask(CLIENT, 1, WS_CTX_SOFTIRQ, 12, 5000000, &c), 0);
	/* nor from another peer port to the client's port */
	r = rec(13, 6000000, CLIENT, "127.0.0.1", 5433, "127.0.0.1", 41234);
	feed(&r);
	cr_assert_eq(ask(CLIENT, 1, WS_CTX_SOFTIRQ, 13, 6000000, &c), 0);
}

Test(net, needs_same_cpu_bracket_wakee_and_softirq)
{
	struct ws_net_wake r = reply(14, 5000000);
	struct ws_claim c;

	feed(&r);
	cr_assert_eq(ask(CLIENT, 0, WS_CTX_SOFTIRQ, 14, 5000000, &c), 0, "another CPU");
	cr_assert_eq(ask(CLIENT, 1, WS_CTX_SOFTIRQ, 15, 5000000, &c), 0, "another bracket");
	cr_assert_eq(ask(CLIENT + 1, 1, WS_CTX_SOFTIRQ, 14, 5000000, &c), 0, "another wakee");
	cr_assert_eq(ask(CLIENT, 1, WS_CTX_TASK, 14, 5000000, &c), 0, "task context");
	cr_assert_eq(ask(CLIENT, 1, WS_CTX_SOFTIRQ, 14, 4999999, &c), 0, "record after wakeup");
}

Test(net, two_readers_in_one_bracket_each_get_their_sender)
{
	struct ws_net_wake a = reply(16, 5000000);
	struct ws_net_wake b = rec(16, 5000100, CLIENT + 1, "127.0.0.1", 7000, "127.0.0.1", 7001);
	struct ws_claim c;

	b.sender_tid = SERVER + 2;
	b.sock.sport = 7001;
	b.sock.dport = 7000;
	feed(&a);
	feed(&b);
	cr_assert_eq(ask(CLIENT, 1, WS_CTX_SOFTIRQ, 16, 5000000, &c), 1);
	cr_assert_eq(c.woken_by, SERVER + 1);
	cr_assert_eq(ask(CLIENT + 1, 1, WS_CTX_SOFTIRQ, 16, 5000100, &c), 1);
	cr_assert_eq(c.woken_by, SERVER + 2);
}

/* Another delivery in bracket @ctx_id on CPU 1 at @ts, after a waiter record of it. */
static void feed_rx(uint32_t ctx_id, uint64_t ts)
{
	struct ws_rec_hdr h = {
		.size = sizeof(h),
		.kind = WS_NET_RX,
		.cpu = 1,
		.ctx = WS_CTX_SOFTIRQ,
		.ctx_id = ctx_id,
		.ts = ts,
	};

	cr_assert_eq(pl->decode(&fake.ctx, &h), 0);
}

Test(net, wakeup_after_a_later_delivery_is_not_the_data_ready_s)
{
	/*
	 * The client waited on the socket when its data-ready ran (the record), but
	 * its wakeup came after the bracket had delivered another packet: whatever
	 * woke it then, that data-ready is no evidence for it.
	 */
	struct ws_net_wake r = reply(22, 5000000);
	struct ws_claim c;

	feed(&r);
	feed_rx(22, 5000050);
	cr_assert_eq(ask(CLIENT, 1, WS_CTX_SOFTIRQ, 22, 5000100, &c), 0);
	/* the wakeup before that delivery is the data-ready's */
	cr_assert_eq(ask(CLIENT, 1, WS_CTX_SOFTIRQ, 22, 5000040, &c), 1);
	cr_assert_eq(c.woken_by, SERVER + 1);
	/* a delivery of another bracket ends nothing in this one */
	r = reply(23, 6000000);
	feed(&r);
	feed_rx(24, 6000050);
	cr_assert_eq(ask(CLIENT, 1, WS_CTX_SOFTIRQ, 23, 6000100, &c), 1);
	/* a data-ready after the delivery explains the wakeup again */
	r = reply(22, 5000060);
	feed(&r);
	cr_assert_eq(ask(CLIENT, 1, WS_CTX_SOFTIRQ, 22, 5000100, &c), 1);
}

Test(net, nic_packet_names_the_remote_peer)
{
	struct ws_net_wake r = rec(17, 5000000, CLIENT, "10.0.0.5", 5432, "10.0.0.2", 41234);
	struct ws_claim c;
	char text[160];

	r.sender = WS_NET_SENDER_NONE;
	r.sender_tid = r.sender_pid = 0;
	r.rx_loopback = r.rx_virtual = 0;
	r.rx_ifindex = 2;
	v4(r.sock.saddr, "10.0.0.2");
	v4(r.sock.daddr, "10.0.0.5");
	feed(&r);
	cr_assert_eq(ask(CLIENT, 1, WS_CTX_SOFTIRQ, 17, 5000000, &c), 1);
	cr_assert_eq(c.strength, WS_CLAIM_SPECIFIC);
	cr_assert_str_eq(c.kind, "network");
	cr_assert_eq(c.woken_by, 0);
	cr_assert(c.root);
	pl->describe(&fake.ctx, &c, text, sizeof(text));
	cr_assert_str_eq(text, "data from 10.0.0.5:5432 (remote, TCP to 10.0.0.2:41234)");
}

Test(net, local_packet_without_a_seen_sender_is_only_a_fallback)
{
	struct ws_net_wake r = reply(18, 5000000);
	struct ws_claim c;

	r.sender = WS_NET_SENDER_NONE;
	feed(&r);
	cr_assert_eq(ask(CLIENT, 1, WS_CTX_SOFTIRQ, 18, 5000000, &c), 1);
	cr_assert_eq(c.strength, WS_CLAIM_FALLBACK);
	cr_assert_str_eq(c.kind, "socket");
	cr_assert_eq(c.woken_by, 0, "never a local peer by guess");
	r = reply(19, 6000000);
	r.sender = WS_NET_SENDER_IRQ;
	feed(&r);
	cr_assert_eq(ask(CLIENT, 1, WS_CTX_SOFTIRQ, 19, 6000000, &c), 1);
	cr_assert_eq(c.strength, WS_CLAIM_FALLBACK);
	cr_assert_eq(c.woken_by, 0);
}

Test(net, listener_and_v4_mapped_socket_match_by_local_end)
{
	struct ws_net_wake r = reply(20, 5000000);
	struct ws_claim c;

	/* an IPv6 listener on [::]:41234 takes an IPv4 connection */
	memset(&r.sock, 0, sizeof(r.sock));
	r.sock.family = AF_INET6;
	r.sock.proto = 6;
	r.sock.sport = 41234;
	feed(&r);
	cr_assert_eq(ask(CLIENT, 1, WS_CTX_SOFTIRQ, 20, 5000000, &c), 1);
	cr_assert_eq(c.woken_by, SERVER + 1);
}

Test(net, short_record_is_malformed)
{
	struct ws_net_wake r = reply(21, 5000000);

	r.hdr.size = sizeof(r.hdr) + 8;
	cr_assert_lt(pl->decode(&fake.ctx, &r.hdr), 0);
}

/* A TCP WS_NET_IO record of net 1.3 (@with_seq) or older (none: the record ends earlier). */
static void tcp_io(struct ws_net_io *r, bool send, uint8_t role, bool with_seq)
{
	memset(r, 0, sizeof(*r));
	r->hdr.size = with_seq ? WS_NET_IO_TCP_SIZE : WS_NET_IO_IP_SIZE;
	r->hdr.kind = WS_NET_IO;
	r->hdr.flags = (send ? WS_NET_IO_SEND : 0) | (with_seq ? WS_NET_IO_SEQ : 0);
	r->hdr.tid = r->hdr.pid = CLIENT;
	r->hdr.ts = 1000;
	r->sock = 0xffff888812345678ull;
	r->ret = 100;
	r->family = AF_INET;
	r->sock_type = SOCK_STREAM;
	r->unix_bound = role;
	r->addr.family = AF_INET;
	r->addr.proto = 6;
	v4(r->addr.saddr, "10.0.0.1");
	v4(r->addr.daddr, "10.0.0.2");
	r->addr.sport = 41234;
	r->addr.dport = 80;
	if (with_seq)
		r->tcp.seq_end = 40; /* the bytes were [2^32 - 60, 40) */
}

Test(net, tcp_call_carries_its_sequence_range)
{
	struct ws_net_io r;

	tcp_io(&r, true, WS_NET_IO_ACCEPTED, true);
	cr_assert_eq(pl->decode(&fake.ctx, &r.hdr), 0);
	cr_assert_eq(fake.sock_ios, 1);
	cr_assert_eq(fake.last_io.dir, WS_SOCK_SEND);
	cr_assert_eq(fake.last_io.flags, WS_SOCK_SEQ);
	cr_assert_eq(fake.last_io.seq_end, 40);
	cr_assert_eq(fake.last_io.bytes, 100);
	cr_assert_str_eq(fake.io_local, "10.0.0.1:41234");
	cr_assert_str_eq(fake.io_peer, "10.0.0.2:80");
}

Test(net, client_end_is_join_evidence_only)
{
	struct ws_net_io r;

	tcp_io(&r, false, WS_NET_IO_CONNECTED, true);
	cr_assert_eq(pl->decode(&fake.ctx, &r.hdr), 0);
	cr_assert_eq(fake.last_io.role, WS_SOCK_CLIENT);
	cr_assert_eq(fake.last_io.flags, WS_SOCK_SEQ | WS_SOCK_NOT_SERVED);
}

Test(net, older_tcp_record_reads_without_sequence_numbers)
{
	struct ws_net_io r;

	tcp_io(&r, false, 0, false);
	cr_assert_eq(pl->decode(&fake.ctx, &r.hdr), 0);
	cr_assert_eq(fake.sock_ios, 1);
	cr_assert_eq(fake.last_io.flags, 0);
	cr_assert_eq(fake.last_io.seq_end, 0);
}

/* A unix socket's address as the request view names it: the path, "@name" for an abstract one
 * (up to its first 0 byte, as printf's "%.*s" would stop), the whole field when it has no 0. */
Test(net, unix_address_is_named_like_printf)
{
	static const struct {
		const char *path;
		uint8_t len;
	} cases[] = {
		{ "/run/s.sock", 12 },
		{ "\0name\0x", 7 },
		{ "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", 48 },
		{ "\0bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb", 48 },
		{ "\0", 1 },
		{ "", 0 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct ws_net_io r;
		char want[64] = "";
		const char *p = cases[i].path;
		size_t n = cases[i].len;

		memset(&r, 0, sizeof(r));
		r.hdr.size = sizeof(r);
		r.hdr.kind = WS_NET_IO;
		r.hdr.tid = r.hdr.pid = CLIENT;
		r.hdr.ts = 1000;
		r.sock = 0xffff888812345678ull;
		r.ret = 10;
		r.family = AF_UNIX;
		r.sock_type = SOCK_STREAM;
		r.unix_bound = WS_NET_IO_BOUND; /* the server's end: its address is local */
		r.path_len = cases[i].len;
		memcpy(r.unix_path, p, n);
		if (n && !p[0])
			snprintf(want, WS_NET_IO_PATH + 2, "@%.*s", (int)(n - 1), p + 1);
		else if (n)
			snprintf(want, WS_NET_IO_PATH + 2, "%.*s", (int)strnlen(p, n), p);
		cr_assert_eq(pl->decode(&fake.ctx, &r.hdr), 0);
		cr_assert_str_eq(fake.io_local, want, "case %zu", i);
		cr_assert_eq(fake.last_io.proto, WS_SOCK_UNIX);
	}
}
