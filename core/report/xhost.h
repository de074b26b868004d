/* SPDX-License-Identifier: MIT */
/*
 * Several hosts' recordings joined (`whyslow report A.data B.data ...`): a chain that ends at a
 * TCP socket wait in one recording goes on in the recording whose send of those very bytes is
 * found (mirrored endpoints, the same TCP sequence numbers), into the chain of the sending
 * thread's wait before it. No clock agreement is assumed: each pair of hosts' clock offset is
 * bounded from the joined pairs of both directions, as NTP does (docs/DESIGN.md, "Across hosts").
 */
#ifndef WS_XHOST_H
#define WS_XHOST_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "base/clock.h"
#include "engine/chain.h"
#include "format.h"

struct ws_sock_io;

#define WS_XHOST_MAX 16 /* recordings in one report */
/* bounds on memory: about 60 MB of chains and 170 MB of calls per recording at most */
#define WS_XHOST_CHAINS 10000 /* chains kept per recording for the join */
#define WS_XHOST_IOS 1000000  /* TCP calls kept per recording */
#define WS_XHOST_REQS 100000  /* TCP requests kept per recording */
#define WS_XHOST_WHAT 160     /* a link's words */
#define WS_XHOST_ENDPOINT 64

/* A link of a kept chain, in words (the recording's session is gone by the join). */
struct ws_xlink {
	uint32_t tid, pid;
	char comm[16];
	uint64_t start, dur; /* the recording's CLOCK_MONOTONIC */
	char kind[16];
	char what[WS_XHOST_WHAT];
	bool tcp_root; /* a root at a TCP socket: the bytes came from a peer not traced here */
	/* tcp_root: the packet that ended the wait, from @src to @dst (IPv4-mapped: as IPv4) */
	char src[WS_XHOST_ENDPOINT], dst[WS_XHOST_ENDPOINT];
};

struct ws_xchain {
	uint32_t tid, pid;
	char comm[16];
	uint64_t start, end; /* the victim's wait */
	char root[96];
	int nlinks;
	struct ws_xlink links[WS_CHAIN_MAX_LINKS];
	bool used; /* shown inside another recording's chain: not again on its own */
};

/* A TCP send or receive with its bytes' sequence range. */
struct ws_xio {
	uint64_t ts;
	uint32_t tid, pid;
	uint32_t seq_end, bytes;
	bool send;
	uint16_t host;
	char local[WS_XHOST_ENDPOINT], peer[WS_XHOST_ENDPOINT];
};

/* A TCP request a traced server answered (report/requests.h), for the request view. */
struct ws_xreq {
	uint64_t start, end; /* its arrival, its last send */
	char local[WS_XHOST_ENDPOINT], peer[WS_XHOST_ENDPOINT];
	char cause[96]; /* "" the request was its own thread's CPU work */
};

struct ws_xhost {
	const char *file;
	char name[64], boot_id[40];
	struct ws_clock clock;
	struct ws_xchain *chains;
	size_t nchains, chains_cap, chains_dropped;
	struct ws_xio *ios;
	size_t nios, ios_cap, ios_dropped;
	const struct ws_xio **sends; /* its sends by connection (local, peer), then time */
	size_t nsends;
	struct ws_xreq *reqs;
	size_t nreqs, reqs_cap, reqs_dropped;
	/* the clock offset from the first recording's: this host's clock minus that one's */
	bool offset_known;
	int64_t offset_ns;
	uint64_t offset_err_ns; /* the true offset is within offset_ns ± this */
};

struct ws_xjoin {
	struct ws_xhost hosts[WS_XHOST_MAX];
	int nhosts;
	uint64_t pairs; /* sends matched with their receives, over all hosts */
	/* b's clock minus a's is within [lo[a][b], hi[a][b]] when known[a][b] */
	bool known[WS_XHOST_MAX][WS_XHOST_MAX];
	int64_t lo[WS_XHOST_MAX][WS_XHOST_MAX], hi[WS_XHOST_MAX][WS_XHOST_MAX];
};

/* Add recording @file of host @name (@clock: its anchor). 0, or -E2BIG (too many). */
int ws_xjoin_add_host(struct ws_xjoin *j, const char *file, const char *name, const char *boot_id,
		      const struct ws_clock *clock);
/* Keep chain @c of the last host added, its links put in words by @describe. 0 or -ENOMEM. */
int ws_xjoin_chain(struct ws_xjoin *j, const struct ws_chain *c,
		   void (*describe)(void *ctx, const struct ws_claim *cl, char *buf, size_t len),
		   void *ctx);
/* Keep TCP call @io of the last host added (those without sequence numbers are not). */
int ws_xjoin_io(struct ws_xjoin *j, const struct ws_sock_io *io);
struct ws_request;
/* Keep TCP request @q of the last host added. 0 or -ENOMEM. */
int ws_xjoin_request(struct ws_xjoin *j, const struct ws_request *q);
/* All recordings read: match sends with receives and estimate the clock offsets. 0 or -ENOMEM. */
int ws_xjoin_match(struct ws_xjoin *j);
/* Text or JSON: the hosts, their offsets, and the @top longest chains, joined across hosts. */
void ws_xjoin_print(struct ws_xjoin *j, FILE *out, enum ws_format format, int top);
void ws_xjoin_free(struct ws_xjoin *j);

/*
 * Internal to xhost*.c: host @b's clock minus host @a's within [*@lo, *@hi], from their own
 * pairs or through the first recording's; false when not bounded.
 */
bool xjoin_offset(const struct ws_xjoin *j, int a, int b, int64_t *lo, int64_t *hi);
/* Internal to xhost*.c: the request of host @h whose answer send @s was part of, or NULL. */
const struct ws_xreq *xjoin_request_of(const struct ws_xjoin *j, const struct ws_xio *s);
/* Internal to xhost*.c: whether a recording sent from endpoint @local. */
bool xjoin_sends_from(const struct ws_xjoin *j, const char *local);
/* Internal to xhost*.c: the send in another recording whose bytes receive @r got first; NULL. */
const struct ws_xio *xjoin_sender(const struct ws_xjoin *j, const struct ws_xio *r);

#endif
