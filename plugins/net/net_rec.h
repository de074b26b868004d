/* SPDX-License-Identifier: MIT */
/* Records of the net source; shared by net.bpf.c and net.c only. */
#ifndef WHYSLOW_NET_REC_H
#define WHYSLOW_NET_REC_H

#include <whyslow/record.h>

/* The net source's kinds, in its range (WS_KIND_NET, <whyslow/record.h>'s registry). */
/* Numbers are never reused. */
#define WS_NET_WAKE (WS_KIND_NET + 1)
#define WS_NET_RX (WS_KIND_NET + 2) /* a struct ws_rec_hdr alone: see below */
#define WS_NET_IO (WS_KIND_NET + 3) /* struct ws_net_io */

/* ws_net_wake.sender */
#define WS_NET_SENDER_NONE 0 /* the delivered packet was not seen being queued */
#define WS_NET_SENDER_TASK 1 /* queued in task context: sender_* name the task */
#define WS_NET_SENDER_IRQ 2  /* queued inside an interrupt (an ACK, a retransmit): no task */

/* An IP endpoint as seen in a packet or a socket; addresses in network order. */
struct ws_net_tuple {
	__u8 saddr[16]; /* IPv4: first 4 bytes */
	__u8 daddr[16];
	__u16 sport, dport; /* host order */
	__u8 family;	    /* AF_INET 2, AF_INET6 10; 0 = not seen */
	__u8 proto;	    /* IPPROTO_TCP 6, IPPROTO_UDP 17, ... */
	__u16 reserved;
};

/*
 * A socket's data-ready callback ran inside a softirq bracket (hdr.cpu,
 * hdr.ctx_id), and traced thread wakee_* was waiting on its queue (in a
 * blocking call, in poll/select, or in epoll_wait on an epoll instance that
 * watches the socket): the callback is about to wake it. One per such thread,
 * written before the wakeups, so before the sched source's records of them.
 * Both sides of the evidence travel in it, so the user side decides (and a
 * replay decides the same): the packet the bracket delivered last (pkt: its
 * own source and destination) and the socket whose data became ready (sock:
 * saddr/sport = its local end, daddr/dport = its peer, 0 when unconnected or
 * listening). It explains a wakeup of that thread in the same bracket only if
 * no WS_NET_RX record of the bracket came in between.
 *
 * Recordings of net 1.0 wrote it at the wakeup itself, only for a thread woken
 * after the bracket's last delivery; it reads the same way.
 *
 * WS_NET_RX: the bracket (hdr.cpu, hdr.ctx_id) delivered another packet after
 * a WS_NET_WAKE was written in it; later wakeups are not that data-ready's.
 */
struct ws_net_wake {
	struct ws_rec_hdr hdr;
	__u32 wakee_tid, wakee_pid;
	__u32 sender_tid, sender_pid; /* who queued the packet, when sender == TASK */
	char sender_comm[16];
	__u64 queued_ts;  /* when it was queued (0 unknown) */
	__u64 rx_ts;	  /* when it was delivered (netif_receive_skb) */
	__u64 ready_ts;	  /* when the socket's data-ready ran */
	__u32 rx_ifindex; /* device the packet arrived on */
	__u8 sender;	  /* WS_NET_SENDER_* */
	__u8 rx_loopback; /* it arrived on a loopback device */
	__u8 sock_type;	  /* SOCK_STREAM 1, SOCK_DGRAM 2, ... */
	__u8 rx_virtual;  /* that device has no parent (loopback, veth): not a NIC */
	struct ws_net_tuple pkt;
	struct ws_net_tuple sock;
};

/* ws_net_io: hdr.flags */
#define WS_NET_IO_SEND 0x1 /* a send; a receive without it */
#define WS_NET_IO_SEQ 0x2  /* TCP (net 1.3): tcp.seq_end is read from the socket */
/* ws_net_io.unix_bound (its name is older than its TCP meanings) */
#define WS_NET_IO_BOUND 0x1	 /* unix: this end has an address (a path) */
#define WS_NET_IO_PEER_BOUND 0x2 /* unix: its peer has one */
#define WS_NET_IO_ACCEPTED 0x4	 /* TCP: this end was accepted while tracing (the server's) */
#define WS_NET_IO_CONNECTED 0x8	 /* TCP: this end connected while tracing (the client's) */

#define WS_NET_IO_PATH 48

/*
 * A receive that returned data, or a send, by a traced thread on a socket (the kernel's
 * sock_recv_length / sock_send_length, which read()/write() on a socket reach too): the marks
 * requests are found from (the core's requests), and on TCP the bytes' place in their stream,
 * which joins recordings of several hosts. A receive of 0 bytes on a stream is the peer's end.
 * Nothing is written for peeks and failed calls, nor for unix ends known in the kernel not to
 * serve (without an address, or whose peer has one). A TCP end that connected while tracing
 * (WS_NET_IO_CONNECTED) was not written before net 1.3: it is a client's, and its records are
 * join evidence only. An IP socket's record is WS_NET_IO_IP_SIZE bytes (no unix_path); from net
 * 1.3 with tcp (WS_NET_IO_TCP_SIZE), and a shorter one reads as without sequence numbers.
 */
struct ws_net_io {
	struct ws_rec_hdr hdr;
	__u64 sock;	 /* the socket's address in the kernel: its id while it lives */
	__s32 ret;	 /* bytes moved */
	__u8 family;	 /* AF_UNIX 1, AF_INET 2, AF_INET6 10 */
	__u8 sock_type;	 /* SOCK_STREAM 1, SOCK_DGRAM 2, SOCK_SEQPACKET 5 */
	__u8 unix_bound; /* WS_NET_IO_*BOUND (unix), WS_NET_IO_ACCEPTED / _CONNECTED (TCP) */
	__u8 path_len;	 /* bytes of unix_path that are the address (abstract: from a 0 byte) */
	struct ws_net_tuple addr; /* IP: this end (saddr, sport) and the peer (daddr, dport) */
	union {
		/* unix: the address of this end, or of the peer when only the peer has one */
		char unix_path[WS_NET_IO_PATH];
		/*
		 * TCP, with WS_NET_IO_SEQ: the sequence number just past the bytes moved (a send:
		 * the socket's write_seq after queueing them; a receive: its copied_seq after
		 * copying them), so they are [seq_end - ret, seq_end). Both ends number a
		 * direction alike: a sender's range and its receiver's match byte for byte.
		 */
		struct {
			__u32 seq_end;
			__u32 reserved;
		} tcp;
	};
};

/* An IP socket's record ends before unix_path (net 1.0 to 1.2), or after tcp (1.3). */
#define WS_NET_IO_IP_SIZE (__builtin_offsetof(struct ws_net_io, unix_path))
#define WS_NET_IO_TCP_SIZE (WS_NET_IO_IP_SIZE + 8)

#endif
