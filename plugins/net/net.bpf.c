// SPDX-License-Identifier: GPL-2.0
/*
 * net source, kernel side: which task queued the packet whose delivery woke a
 * traced thread inside the NET_RX softirq.
 *
 * Three tracepoints, and one per-CPU note of what the softirq running on this
 * CPU delivered:
 *  - net_dev_queue (the sender's context): remember skb -> who queued it, in
 *    an LRU map, for packets leaving through a virtual device (loopback,
 *    veth), the only ones that can come back in on this machine;
 *  - netif_receive_skb (the softirq): the packet being delivered now, its
 *    addresses and ports, and its sender if remembered;
 *  - sk_data_ready (the softirq): the socket that packet made readable. Its
 *    wakeups follow at once, from the socket's wait queue: one record per
 *    traced thread waiting there (in a blocking call, in poll/select, or in
 *    epoll_wait on an epoll instance watching the socket), before the sched
 *    source's record of the wakeup itself.
 * No program runs on every wakeup of the machine: which thread a data-ready
 * wakes is read off the queue it wakes. Nothing is written for packets nobody
 * traced waits for, so the source costs a map update per packet sent through
 * a virtual device, a few loads per packet received and a walk of the
 * socket's queue per data-ready (a filter lookup per waiter), and no ring
 * traffic, when no traced thread waits on a socket.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_endian.h>
#include <whyslow/whyslow.bpf.h>
#include "net_rec.h"

char LICENSE[] SEC("license") = "GPL";

#define ETH_P_IP_ 0x0800
#define ETH_P_IPV6_ 0x86DD
#define AF_INET_ 2
#define AF_INET6_ 10
#define IPPROTO_TCP_ 6
#define IPPROTO_UDP_ 17
#define IFF_LOOPBACK_ 0x8
#define AF_UNIX_ 1
#define MSG_PEEK_ 0x2
#define SOCK_DGRAM_ 2

struct sent {
	struct ws_net_tuple pkt; /* to tell a reused skb address from the packet remembered */
	__u64 ts;
	__u32 tid, pid;
	char comm[16];
	__u8 sender; /* WS_NET_SENDER_TASK or _IRQ */
};

/* Packets queued on a virtual device, by skb address. LRU: most are never delivered here. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__type(key, __u64);
	__type(value, struct sent);
	__uint(max_entries, 8192);
} net_sent SEC(".maps");

/* What the softirq running on this CPU delivered last, and which socket it made readable. */
struct net_cpu {
	__u32 rx_ctx_id; /* the bracket that delivered pkt */
	__u64 rx_ts, ready_ts;
	struct ws_net_tuple pkt, sock;
	struct sent from; /* from.sender == NONE: not remembered */
	__u32 rx_ifindex;
	__u8 rx_loopback;
	__u8 rx_virtual;
	__u8 sock_type;
	/* the bracket in which a waiter record was written since its last delivery, or 0 */
	__u32 wrote_ctx_id;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct net_cpu);
	__uint(max_entries, 1);
} net_cpus SEC(".maps");

/* The innermost interrupt bracket if it is a softirq: its ctx_id, else 0. */
static __always_inline __u32 softirq_id(const struct ws_cpu_state *cs)
{
	__u32 d;

	if (!cs)
		return 0;
	d = cs->depth;
	if (d == 0 || d > WS_CTX_STACK)
		return 0;
	if (cs->kind[(d - 1) & (WS_CTX_STACK - 1)] != WS_CTX_SOFTIRQ)
		return 0;
	return cs->id[(d - 1) & (WS_CTX_STACK - 1)];
}

/* Addresses, protocol and ports of the IP packet whose header starts at @nh. */
static __always_inline void parse_ip(struct ws_net_tuple *t, const void *nh, __u16 eth_proto)
{
	const void *l4;
	__u16 ports[2];

	__builtin_memset(t, 0, sizeof(*t));
	if (eth_proto == bpf_htons(ETH_P_IP_)) {
		struct iphdr ip;

		if (bpf_probe_read_kernel(&ip, sizeof(ip), nh))
			return;
		t->family = AF_INET_;
		t->proto = ip.protocol;
		__builtin_memcpy(t->saddr, &ip.saddr, 4);
		__builtin_memcpy(t->daddr, &ip.daddr, 4);
		/* a later fragment carries no transport header */
		if (ip.frag_off & bpf_htons(0x1fff))
			return;
		l4 = nh + ip.ihl * 4;
	} else if (eth_proto == bpf_htons(ETH_P_IPV6_)) {
		struct ipv6hdr ip6;

		if (bpf_probe_read_kernel(&ip6, sizeof(ip6), nh))
			return;
		t->family = AF_INET6_;
		t->proto = ip6.nexthdr;
		__builtin_memcpy(t->saddr, &ip6.saddr, 16);
		__builtin_memcpy(t->daddr, &ip6.daddr, 16);
		l4 = nh + sizeof(ip6);
	} else {
		return;
	}
	if (t->proto != IPPROTO_TCP_ && t->proto != IPPROTO_UDP_)
		return;
	/* TCP and UDP both begin with source and destination port */
	if (bpf_probe_read_kernel(ports, sizeof(ports), l4))
		return;
	t->sport = bpf_ntohs(ports[0]);
	t->dport = bpf_ntohs(ports[1]);
}

static __always_inline int same_tuple(const struct ws_net_tuple *a, const struct ws_net_tuple *b)
{
	const __u64 *x = (const __u64 *)a, *y = (const __u64 *)b;
	int i;

	/* the tuple is 40 bytes, 8-aligned in both maps; clang has no BPF memcmp */
	for (i = 0; i < (int)(sizeof(*a) / 8); i++)
		if (x[i] != y[i])
			return 0;
	return 1;
}

SEC("tp_btf/net_dev_queue")
int BPF_PROG(ws_net_queue, struct sk_buff *skb)
{
	struct ws_cpu_state *cs;
	struct net_device *dev = skb->dev;
	struct sent s = {};
	__u64 key = (__u64)skb, id;

	/*
	 * A device with a parent (a PCI or virtio NIC) sends the packet off the
	 * machine: it never comes back in, so remembering it only risks a stale
	 * entry matching a reused skb address later.
	 */
	if (!dev || BPF_CORE_READ(dev, dev.parent))
		return 0;
	parse_ip(&s.pkt, skb->head + skb->network_header, skb->protocol);
	if (!s.pkt.family)
		return 0;
	cs = ws_cpu_state();
	s.ts = bpf_ktime_get_ns();
	if (cs && cs->depth) {
		/* inside an interrupt, current did not send it */
		s.sender = WS_NET_SENDER_IRQ;
	} else {
		id = bpf_get_current_pid_tgid();
		s.sender = WS_NET_SENDER_TASK;
		s.tid = (__u32)id;
		s.pid = id >> 32;
		bpf_get_current_comm(s.comm, sizeof(s.comm));
	}
	bpf_map_update_elem(&net_sent, &key, &s, BPF_ANY);
	return 0;
}

SEC("tp_btf/netif_receive_skb")
int BPF_PROG(ws_net_receive, struct sk_buff *skb)
{
	__u32 zero = 0, id = softirq_id(ws_cpu_state());
	struct net_cpu *nc;
	struct sent *s;
	__u64 key = (__u64)skb;

	if (!id)
		return 0;
	nc = bpf_map_lookup_elem(&net_cpus, &zero);
	if (!nc)
		return 0;
	if (nc->wrote_ctx_id == id) {
		/*
		 * A waiter record of this bracket is followed by another delivery: a wakeup
		 * after this point is not that data-ready's, and the user side must know.
		 */
		struct ws_rec_hdr *m = ws_reserve(sizeof(*m), WS_NET_RX);

		if (m)
			ws_submit(m);
		nc->wrote_ctx_id = 0;
	}
	nc->rx_ctx_id = id;
	nc->rx_ts = bpf_ktime_get_ns();
	/* the stack has pulled the link-layer header: data is at the network header */
	parse_ip(&nc->pkt, skb->data, skb->protocol);
	nc->rx_ifindex = BPF_CORE_READ(skb, dev, ifindex);
	nc->rx_loopback = (BPF_CORE_READ(skb, dev, flags) & IFF_LOOPBACK_) != 0;
	nc->rx_virtual = !BPF_CORE_READ(skb, dev, dev.parent);
	nc->from.sender = WS_NET_SENDER_NONE;
	s = bpf_map_lookup_elem(&net_sent, &key);
	if (!s)
		return 0;
	/* the same address with other headers is a reused skb, not the packet remembered */
	if (same_tuple(&s->pkt, &nc->pkt))
		__builtin_memcpy(&nc->from, s, sizeof(nc->from));
	bpf_map_delete_elem(&net_sent, &key);
	return 0;
}

/*
 * A socket's wait queue holds three kinds of entries, told apart by their
 * shape, not by their wake function (its address would need /proc/kallsyms,
 * ~60 ms to read at every start here):
 *  - a blocking caller's: private is the task;
 *  - epoll's (struct eppoll_entry): private is NULL, and the entry's whead,
 *    right after it, is this very queue; the tasks wait on the epoll
 *    instance's own queue;
 *  - poll/select's (struct poll_table_entry): its wait_address, right after
 *    it, is this very queue, and private is the table naming the task.
 * Every task found must pass ws_net_add_waiter()'s group-leader test. A
 * misread entry loses its waiter; to make one up it would have to lead to
 * another traced task, asleep, that the same bracket then wakes before any
 * other delivery (the user side's rule).
 */

/* Entries read on a socket's queue, and on each epoll instance's queue it leads to. */
#define SOCK_WAITERS 8
#define EPOLL_WAITERS 4
#define MAX_WAITERS 16

struct waiters {
	__u32 n;
	struct task_struct *task[MAX_WAITERS];
};

/* sched_entity.sched_delayed (6.12+), through a CO-RE flavor: older vmlinux.h lack it */
struct sched_entity___delayed {
	unsigned char sched_delayed;
} __attribute__((preserve_access_index));

/*
 * Is @t asleep? A waiter still queued to run (on its way to sleep, or not yet gone: it
 * checks the socket once more after joining the queue) is not woken by the callback, only
 * kept running, and the sched source writes no wakeup for it. Except one whose dequeue the
 * scheduler merely delayed (EEVDF, 6.12+): it did sleep. The same test as the sched
 * source's, so no record is written that no wakeup could use; a waiter that falls asleep
 * in the instants between this test and the callback's wakeup loses its evidence, never
 * gains a false one.
 */
static __always_inline bool asleep(struct task_struct *t)
{
	struct sched_entity___delayed *se = (void *)&t->se;

	if (BPF_CORE_READ(t, on_rq) != 1)
		return true;
	return bpf_core_field_exists(se->sched_delayed) && BPF_CORE_READ(se, sched_delayed);
}

/*
 * The two helpers below are global functions: the verifier checks each once, not once per
 * call inside the walk's loops (that took it half a second at every start).
 */

/*
 * Keep waiter @task if it is a traced thread asleep (the callback is about to wake it). A
 * pointer that is not a task fails the group-leader test: its "leader" does not name the
 * same process.
 */
__noinline int ws_net_add_waiter(struct waiters *w, __u64 task)
{
	struct task_struct *t = (struct task_struct *)task, *leader;
	__u32 pid;

	if (!w || !t || w->n >= MAX_WAITERS)
		return 0;
	pid = BPF_CORE_READ(t, tgid);
	if (!pid || !ws_traced_tgid(pid))
		return 0;
	leader = BPF_CORE_READ(t, group_leader);
	if (leader && BPF_CORE_READ(leader, tgid) == pid && asleep(t))
		w->task[w->n++ & (MAX_WAITERS - 1)] = t;
	return 0;
}

/*
 * If entry @entry of queue @queue is epoll's, the tasks in epoll_wait on the epoll instance it
 * feeds.
 */
__noinline int ws_net_epoll_waiters(struct waiters *w, __u64 entry, __u64 queue)
{
	struct eppoll_entry *pwq =
		container_of((struct wait_queue_entry *)entry, struct eppoll_entry, wait);
	struct list_head *head, *node;
	struct eventpoll *ep;
	int i;

	if (!w || (__u64)BPF_CORE_READ(pwq, whead) != queue)
		return 0;
	ep = BPF_CORE_READ(pwq, base, ep);
	if (!ep)
		return 0;
	head = &ep->wq.head;
	node = BPF_CORE_READ(ep, wq.head.next);
	for (i = 0; i < EPOLL_WAITERS && node && node != head; i++) {
		struct wait_queue_entry x;

		if (bpf_probe_read_kernel(&x, sizeof(x),
					  container_of(node, struct wait_queue_entry, entry)))
			return 0;
		ws_net_add_waiter(w, (__u64)x.private);
		node = x.entry.next;
	}
	return 0;
}

/* The tasks waiting on @sk's wait queue, which its data-ready callback is about to wake. */
static __always_inline void socket_waiters(struct waiters *w, const struct sock *sk)
{
	struct socket_wq *wq = BPF_CORE_READ(sk, sk_wq);
	struct list_head *head, *node;
	int i;

	if (!wq)
		return;
	head = &wq->wait.head;
	node = BPF_CORE_READ(wq, wait.head.next);
	for (i = 0; i < SOCK_WAITERS && node && node != head; i++) {
		struct wait_queue_entry *e = container_of(node, struct wait_queue_entry, entry);
		struct poll_table_entry *pt = container_of(e, struct poll_table_entry, wait);
		struct wait_queue_entry x;

		/* one read for the three fields: an entry has kept this layout since 4.13 */
		if (bpf_probe_read_kernel(&x, sizeof(x), e))
			return;
		if (!x.private) {
			ws_net_epoll_waiters(w, (__u64)e, (__u64)&wq->wait);
		} else if ((__u64)BPF_CORE_READ(pt, wait_address) == (__u64)&wq->wait) {
			struct poll_wqueues *pw = x.private;

			ws_net_add_waiter(w, (__u64)BPF_CORE_READ(pw, polling_task));
		} else {
			ws_net_add_waiter(w, (__u64)x.private);
		}
		node = x.entry.next;
	}
}

/* The record for waiter @t: the data-ready about to wake it, both sides. */
static __noinline void waiter_record(struct net_cpu *nc, struct task_struct *t, __u32 id)
{
	struct ws_net_wake *r = ws_reserve(sizeof(*r), WS_NET_WAKE);

	if (!r)
		return;
	r->wakee_tid = BPF_CORE_READ(t, pid);
	r->wakee_pid = BPF_CORE_READ(t, tgid);
	r->ready_ts = nc->ready_ts;
	r->sock_type = nc->sock_type;
	__builtin_memcpy(&r->sock, &nc->sock, sizeof(r->sock));
	if (nc->rx_ctx_id == id) {
		r->rx_ts = nc->rx_ts;
		r->rx_ifindex = nc->rx_ifindex;
		r->rx_loopback = nc->rx_loopback;
		r->rx_virtual = nc->rx_virtual;
		__builtin_memcpy(&r->pkt, &nc->pkt, sizeof(r->pkt));
		r->sender = nc->from.sender;
		r->sender_tid = nc->from.tid;
		r->sender_pid = nc->from.pid;
		r->queued_ts = nc->from.ts;
		__builtin_memcpy(r->sender_comm, nc->from.comm, sizeof(r->sender_comm));
	} else {
		/* no delivery in this bracket: the socket was made readable otherwise */
		r->rx_ts = 0;
		r->rx_ifindex = 0;
		r->rx_loopback = 0;
		r->rx_virtual = 0;
		__builtin_memset(&r->pkt, 0, sizeof(r->pkt));
		r->sender = WS_NET_SENDER_NONE;
		r->sender_tid = 0;
		r->sender_pid = 0;
		r->queued_ts = 0;
		__builtin_memset(r->sender_comm, 0, sizeof(r->sender_comm));
	}
	ws_submit(r);
	nc->wrote_ctx_id = id;
}

/* Socket @sk's own end (saddr, sport) and its peer (daddr, dport), IP only. */
static __always_inline void sock_tuple(struct ws_net_tuple *t, const struct sock *sk, __u16 family)
{
	__builtin_memset(t, 0, sizeof(*t));
	t->family = family;
	t->proto = sk->sk_protocol;
	if (family == AF_INET_) {
		__builtin_memcpy(t->saddr, &sk->__sk_common.skc_rcv_saddr, 4);
		__builtin_memcpy(t->daddr, &sk->__sk_common.skc_daddr, 4);
	} else {
		__builtin_memcpy(t->saddr, &sk->__sk_common.skc_v6_rcv_saddr, 16);
		__builtin_memcpy(t->daddr, &sk->__sk_common.skc_v6_daddr, 16);
	}
	t->sport = sk->__sk_common.skc_num;
	t->dport = bpf_ntohs(sk->__sk_common.skc_dport);
}

SEC("tp_btf/sk_data_ready")
int BPF_PROG(ws_net_ready, const struct sock *sk)
{
	__u16 family = sk->__sk_common.skc_family;
	struct waiters w = {};
	struct net_cpu *nc;
	__u32 zero = 0, id, i;

	/*
	 * Every socket of the machine made readable comes here, unix sockets too (a database's
	 * clients on its local socket: tens of thousands a second). Only IP is this source's, and
	 * the socket was just written: its family is in cache, the per-CPU state may not be.
	 */
	if (family != AF_INET_ && family != AF_INET6_)
		return 0;
	id = softirq_id(ws_cpu_state());
	if (!id)
		return 0;
	/* most sockets have no traced thread waiting: nothing more to do for them */
	socket_waiters(&w, sk);
	if (!w.n)
		return 0;
	nc = bpf_map_lookup_elem(&net_cpus, &zero);
	if (!nc)
		return 0;
	nc->ready_ts = bpf_ktime_get_ns();
	nc->sock_type = sk->sk_type;
	sock_tuple(&nc->sock, sk, family);
	for (i = 0; i < MAX_WAITERS && i < w.n; i++)
		waiter_record(nc, w.task[i], id);
	return 0;
}

#define TCP_ESTABLISHED_ 1
#define TCP_SYN_SENT_ 2
#define TCP_SYN_RECV_ 3

/*
 * Which end of a TCP connection each socket is, from its own handshake: a socket that reached
 * ESTABLISHED from SYN_RECV was accepted (the server's end), from SYN_SENT it connected (the
 * client's). Written once per connection made while tracing, read at each socket call of a
 * traced thread; LRU: sockets that close are not seen going. Connections older than the trace
 * have no entry, and user space tells their ends by their ports.
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__type(key, __u64);
	__type(value, __u8);
	__uint(max_entries, 16384);
} net_tcp_role SEC(".maps");

SEC("tp_btf/inet_sock_set_state")
int BPF_PROG(ws_net_tcp_state, const struct sock *sk, const int oldstate, const int newstate)
{
	__u64 key = (__u64)sk;
	__u8 role;

	if (newstate != TCP_ESTABLISHED_ ||
	    (oldstate != TCP_SYN_RECV_ && oldstate != TCP_SYN_SENT_))
		return 0;
	role = oldstate == TCP_SYN_RECV_ ? WS_NET_IO_ACCEPTED : WS_NET_IO_CONNECTED;
	bpf_map_update_elem(&net_tcp_role, &key, &role, BPF_ANY);
	return 0;
}

/* The fields of a WS_NET_IO record every family has. */
static __always_inline void io_head(struct ws_net_io *r, const struct sock *sk, int ret, bool send,
				    __u16 family)
{
	r->hdr.flags = send ? WS_NET_IO_SEND : 0;
	r->sock = (__u64)sk;
	r->ret = ret;
	r->family = family;
	r->sock_type = sk->sk_type;
	r->unix_bound = 0;
	r->path_len = 0;
}

/*
 * A call on an IP socket. A TCP end that connected while tracing is a client's: its record is
 * join evidence only (user space keeps it from the requests); the rest go to user space, which
 * tells older connections' ends by their ports. A TCP record carries where the bytes end in
 * their stream (one load: the socket was just used, its line is in cache); the record stops
 * before unix_path, or after that sequence number.
 */
static __always_inline int ip_io(const struct sock *sk, int ret, bool send, __u16 family)
{
	__u64 key = (__u64)sk;
	__u8 *role = bpf_map_lookup_elem(&net_tcp_role, &key);
	__u8 known = role ? *role : 0;
	const struct tcp_sock *tp = (const void *)sk;
	struct ws_net_io *r;

	/* each size in its own branch: the ring's reserve takes constants, and the verifier then
	 * knows which record it writes */
	if (sk->sk_protocol != IPPROTO_TCP_) {
		r = ws_reserve(WS_NET_IO_IP_SIZE, WS_NET_IO);
		if (!r)
			return 0;
		io_head(r, sk, ret, send, family);
		r->unix_bound = known;
		sock_tuple(&r->addr, sk, family);
		ws_submit(r);
		return 0;
	}
	r = ws_reserve(WS_NET_IO_TCP_SIZE, WS_NET_IO);
	if (!r)
		return 0;
	io_head(r, sk, ret, send, family);
	r->hdr.flags |= WS_NET_IO_SEQ;
	r->unix_bound = known;
	sock_tuple(&r->addr, sk, family);
	r->tcp.seq_end = send ? BPF_CORE_READ(tp, write_seq) : BPF_CORE_READ(tp, copied_seq);
	r->tcp.reserved = 0;
	ws_submit(r);
	return 0;
}

/*
 * A call on a unix socket: only on the end that serves, the one with an address whose peer has
 * none (a server's accepted socket shares its listener's path; a client's end and both ends of a
 * socketpair have no server to find). The address is read only then.
 */
static __always_inline int unix_io(const struct sock *sk, int ret, bool send)
{
	const struct unix_sock *u = (const void *)sk;
	const struct unix_address *a = BPF_CORE_READ(u, addr);
	const struct sock *peer = BPF_CORE_READ(u, peer);
	struct ws_net_io *r;
	int len;

	if (!a || (peer && BPF_CORE_READ((const struct unix_sock *)peer, addr)))
		return 0;
	r = ws_reserve(sizeof(*r), WS_NET_IO);
	if (!r)
		return 0;
	io_head(r, sk, ret, send, AF_UNIX_);
	r->unix_bound = WS_NET_IO_BOUND;
	__builtin_memset(&r->addr, 0, sizeof(r->addr));
	__builtin_memset(r->unix_path, 0, sizeof(r->unix_path));
	/* the name's length counts sun_family (2 bytes) */
	len = BPF_CORE_READ(a, len) - 2;
	if (len > WS_NET_IO_PATH)
		len = WS_NET_IO_PATH;
	if (len > 0) {
		r->path_len = len;
		bpf_probe_read_kernel(r->unix_path, sizeof(r->unix_path),
				      (const char *)a->name + 2);
	}
	ws_submit(r);
	return 0;
}

/*
 * What a traced thread received or sent on a socket (the marks requests are found from). The
 * tracepoints fire for every socket call of the machine: the filter comes first, and peeks and
 * failed calls (a non-blocking read's EAGAIN) write nothing.
 */
static __always_inline int sock_io(const struct sock *sk, int ret, int flags, bool send)
{
	__u32 pid = bpf_get_current_pid_tgid() >> 32;
	__u16 family;

	if (ret < 0 || (flags & MSG_PEEK_) || !ws_traced_tgid(pid))
		return 0;
	family = sk->__sk_common.skc_family;
	/* a 0-byte receive is the peer's end on a stream only; a 0-byte send moved nothing */
	if (!ret && (send || sk->sk_type == SOCK_DGRAM_))
		return 0;
	if (family == AF_INET_ || family == AF_INET6_)
		return ip_io(sk, ret, send, family);
	if (family == AF_UNIX_)
		return unix_io(sk, ret, send);
	return 0;
}

SEC("tp_btf/sock_recv_length")
int BPF_PROG(ws_net_recv, struct sock *sk, int ret, int flags)
{
	return sock_io(sk, ret, flags, false);
}

SEC("tp_btf/sock_send_length")
int BPF_PROG(ws_net_send, struct sock *sk, int ret, int flags)
{
	return sock_io(sk, ret, flags, true);
}
