// SPDX-License-Identifier: MIT
/*
 * Several hosts' recordings: what each kept for the join (chains in words, TCP calls with their
 * sequence ranges), the sends matched with their receives, and each host's clock offset bounded
 * from those pairs.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <whyslow/plugin.h>

#include "requests.h"
#include "xhost.h"
#include "base/util.h"

/*
 * A recording's words (a host or thread name, a source's description) printed to a terminal:
 * control characters (C0, DEL, C1 as UTF-8) become '?', so none can forge lines or send escape
 * sequences; kept so, the text and JSON say the same.
 */
static void clean(char *s)
{
	for (unsigned char *p = (unsigned char *)s; *p; p++)
		if (*p < 0x20 || *p == 0x7f)
			*p = '?';
		else if (*p == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f)
			p[0] = p[1] = '?';
}

int ws_xjoin_add_host(struct ws_xjoin *j, const char *file, const char *name, const char *boot_id,
		      const struct ws_clock *clock)
{
	struct ws_xhost *h;

	if (j->nhosts >= WS_XHOST_MAX)
		return -E2BIG;
	h = &j->hosts[j->nhosts++];
	memset(h, 0, sizeof(*h));
	h->file = file;
	snprintf(h->name, sizeof(h->name), "%s", name[0] ? name : file);
	clean(h->name);
	/* two recordings of one name (no --host given on hosts named alike): told apart by number
	 */
	for (int i = 0, n = 2; i < j->nhosts - 1; i++)
		if (!strcmp(j->hosts[i].name, h->name)) {
			snprintf(h->name, sizeof(h->name), "%.50s#%d", name[0] ? name : file, n++);
			clean(h->name);
			i = -1; /* that one may be taken too: look again */
		}
	snprintf(h->boot_id, sizeof(h->boot_id), "%s", boot_id);
	clean(h->boot_id);
	h->clock = *clock;
	return 0;
}

/*
 * An endpoint as text, an IPv4-mapped IPv6 one ("[::ffff:10.0.0.1]:80") as the IPv4 it is: a
 * packet names it so, a dual-stack socket the other way.
 */
static void endpoint(char *dst, size_t len, const char *src)
{
	const char *end;

	if (!strncmp(src, "[::ffff:", 8) && (end = strstr(src, "]:")) &&
	    !memchr(src + 8, ':', (size_t)(end - (src + 8)))) {
		snprintf(dst, len, "%.*s%s", (int)(end - src - 8), src + 8, end + 1);
		return;
	}
	snprintf(dst, len, "%s", src);
}

static void copy_comm(char *dst, const char *src)
{
	snprintf(dst, 16, "%s", src ? src : "");
	clean(dst);
}

/* A root at a TCP socket: its bytes came from a peer this recording does not follow. */
static bool tcp_root(const struct ws_link *l)
{
	const struct ws_claim *c = l->claim;

	if (!c || !c->root || (strcmp(c->kind, "socket") && strcmp(c->kind, "network")))
		return false;
	return !strcmp(ws_claim_str(c, "proto", ""), "TCP");
}

int ws_xjoin_chain(struct ws_xjoin *j, const struct ws_chain *c,
		   void (*describe)(void *ctx, const struct ws_claim *cl, char *buf, size_t len),
		   void *ctx)
{
	struct ws_xhost *h = &j->hosts[j->nhosts - 1];
	struct ws_xchain *x;

	if (!c->nlinks)
		return 0;
	if (h->nchains >= WS_XHOST_CHAINS) {
		h->chains_dropped++;
		return 0;
	}
	if (ws_grow((void **)&h->chains, &h->chains_cap, h->nchains + 1, sizeof(*h->chains)))
		return -ENOMEM;
	x = &h->chains[h->nchains++];
	memset(x, 0, sizeof(*x));
	x->tid = c->links[0].tid;
	x->pid = c->links[0].pid;
	copy_comm(x->comm, c->victim ? c->victim->comm : c->links[0].comm);
	x->start = c->start;
	x->end = c->end;
	snprintf(x->root, sizeof(x->root), "%s", c->root);
	clean(x->root);
	for (int i = 0; i < c->nlinks && i < WS_CHAIN_MAX_LINKS; i++) {
		const struct ws_link *l = &c->links[i];
		struct ws_xlink *y = &x->links[x->nlinks++];

		y->tid = l->tid;
		y->pid = l->pid;
		copy_comm(y->comm, l->comm);
		y->start = l->start;
		y->dur = l->dur;
		snprintf(y->kind, sizeof(y->kind), "%s", l->claim ? l->claim->kind : l->kind);
		if (l->claim && describe)
			describe(ctx, l->claim, y->what, sizeof(y->what));
		else
			snprintf(y->what, sizeof(y->what), "%s", l->kind);
		clean(y->what);
		y->tcp_root = tcp_root(l);
		if (y->tcp_root) {
			endpoint(y->src, sizeof(y->src), ws_claim_str(l->claim, "src", ""));
			endpoint(y->dst, sizeof(y->dst), ws_claim_str(l->claim, "dst", ""));
		}
	}
	return 0;
}

int ws_xjoin_io(struct ws_xjoin *j, const struct ws_sock_io *io)
{
	struct ws_xhost *h = &j->hosts[j->nhosts - 1];
	struct ws_xio *x;

	if (io->proto != WS_SOCK_TCP || !(io->flags & WS_SOCK_SEQ) || !io->bytes ||
	    io->bytes > UINT32_MAX || !io->local || !io->peer || !io->peer[0])
		return 0;
	if (h->nios >= WS_XHOST_IOS) {
		h->ios_dropped++;
		return 0;
	}
	if (ws_grow((void **)&h->ios, &h->ios_cap, h->nios + 1, sizeof(*h->ios)))
		return -ENOMEM;
	x = &h->ios[h->nios++];
	x->ts = io->ts;
	x->tid = io->tid;
	x->pid = io->pid;
	x->seq_end = io->seq_end;
	x->bytes = (uint32_t)io->bytes;
	x->send = io->dir == WS_SOCK_SEND;
	x->host = (uint16_t)(j->nhosts - 1);
	endpoint(x->local, sizeof(x->local), io->local);
	endpoint(x->peer, sizeof(x->peer), io->peer);
	return 0;
}

int ws_xjoin_request(struct ws_xjoin *j, const struct ws_request *q)
{
	struct ws_xhost *h = &j->hosts[j->nhosts - 1];
	struct ws_xreq *x;

	if (q->proto != WS_SOCK_TCP || !q->local || !q->peer)
		return 0;
	if (h->nreqs >= WS_XHOST_REQS) {
		h->reqs_dropped++;
		return 0;
	}
	if (ws_grow((void **)&h->reqs, &h->reqs_cap, h->nreqs + 1, sizeof(*h->reqs)))
		return -ENOMEM;
	x = &h->reqs[h->nreqs++];
	x->start = q->start;
	x->end = q->end;
	endpoint(x->local, sizeof(x->local), q->local);
	endpoint(x->peer, sizeof(x->peer), q->peer);
	snprintf(x->cause, sizeof(x->cause), "%s", q->cause ? q->cause : "");
	clean(x->cause);
	return 0;
}

/* Requests by connection, then arrival. */
static int req_cmp(const struct ws_xreq *q, const char *local, const char *peer, uint64_t ts)
{
	int c = strcmp(q->local, local);

	if (!c)
		c = strcmp(q->peer, peer);
	return c ? c : q->start < ts ? -1 : q->start > ts;
}

static int by_req(const void *a, const void *b)
{
	const struct ws_xreq *y = b;

	return req_cmp(a, y->local, y->peer, y->start);
}

const struct ws_xreq *xjoin_request_of(const struct ws_xjoin *j, const struct ws_xio *s)
{
	const struct ws_xhost *h = &j->hosts[s->host];
	const struct ws_xreq *q;
	size_t lo = 0, hi = h->nreqs;

	/* the last request on the send's connection that arrived by the send */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (req_cmp(&h->reqs[mid], s->local, s->peer, s->ts) <= 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	q = &h->reqs[lo - 1];
	if (strcmp(q->local, s->local) || strcmp(q->peer, s->peer) || s->ts > q->end)
		return NULL;
	return q;
}

/* Each host's calls by thread, then time: a thread's receive after a wait is a search. */
static int by_tid_ts(const void *a, const void *b)
{
	const struct ws_xio *x = a, *y = b;

	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return x->ts < y->ts ? -1 : x->ts > y->ts;
}

static int by_tid_end(const void *a, const void *b)
{
	const struct ws_xchain *x = a, *y = b;

	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return x->end < y->end ? -1 : x->end > y->end;
}

/* Does send @s hold the first byte receive @r got? Sequence numbers wrap at 2^32. */
static bool holds_first_byte(const struct ws_xio *s, const struct ws_xio *r)
{
	uint32_t first = r->seq_end - r->bytes, s_first = s->seq_end - s->bytes;

	return (uint32_t)(first - s_first) < s->bytes;
}

static int conn_cmp(const struct ws_xio *x, const char *local, const char *peer)
{
	int c = strcmp(x->local, local);

	return c ? c : strcmp(x->peer, peer);
}

static int by_conn(const void *a, const void *b)
{
	const struct ws_xio *x = *(const struct ws_xio *const *)a,
			    *y = *(const struct ws_xio *const *)b;
	int c = conn_cmp(x, y->local, y->peer);

	return c ? c : x->ts < y->ts ? -1 : x->ts > y->ts;
}

/*
 * The first of @o's sends on connection (@local, @peer) (@after: the first past them), by
 * index; @local alone when @peer is NULL.
 */
static size_t send_bound(const struct ws_xhost *o, const char *local, const char *peer, bool after)
{
	size_t lo = 0, hi = o->nsends;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = peer ? conn_cmp(o->sends[mid], local, peer)
			     : strcmp(o->sends[mid]->local, local);

		if (c < 0 || (after && !c))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

bool xjoin_sends_from(const struct ws_xjoin *j, const char *local)
{
	for (int h = 0; h < j->nhosts; h++) {
		size_t i = send_bound(&j->hosts[h], local, NULL, false);

		if (i < j->hosts[h].nsends && !strcmp(j->hosts[h].sends[i]->local, local))
			return true;
	}
	return false;
}

/* Sends looked at around the one the sequence numbers point to: a bound on the work. */
#define NEAR_SENDS 2048

/*
 * Of sends [@lo, @hi) of one connection, in time order, the one holding receive @r's first byte.
 * Their sequence numbers grow with time from the first's: a search finds it, unless the
 * connection moved over 4 GiB or its endpoints were reused by another connection (numbers start
 * again), when the sends near where it pointed are looked at. NULL: none holds it.
 */
static const struct ws_xio *holder(const struct ws_xhost *o, size_t lo, size_t hi,
				   const struct ws_xio *r)
{
	uint32_t base = o->sends[lo]->seq_end - o->sends[lo]->bytes;
	uint32_t want = r->seq_end - r->bytes - base;
	size_t a = lo, b = hi, from, to;

	while (a < b) {
		size_t mid = a + (b - a) / 2;
		const struct ws_xio *s = o->sends[mid];

		if ((uint32_t)(s->seq_end - s->bytes - base) <= want)
			a = mid + 1;
		else
			b = mid;
	}
	/* a - 1: the last send that began at or before the byte */
	from = a > lo + NEAR_SENDS ? a - NEAR_SENDS : lo;
	to = hi - a > NEAR_SENDS ? a + NEAR_SENDS : hi;
	if (a > lo && holds_first_byte(o->sends[a - 1], r))
		return o->sends[a - 1];
	for (size_t i = from; i < to; i++)
		if (holds_first_byte(o->sends[i], r))
			return o->sends[i];
	return NULL;
}

const struct ws_xio *xjoin_sender(const struct ws_xjoin *j, const struct ws_xio *r)
{
	/* the connection seen from the other end: its local end is this one's peer */
	for (int h = 0; h < j->nhosts; h++) {
		const struct ws_xhost *o = &j->hosts[h];
		const struct ws_xio *s;
		size_t lo, hi;

		if (h == r->host)
			continue;
		lo = send_bound(o, r->peer, r->local, false);
		hi = send_bound(o, r->peer, r->local, true);
		if (lo < hi && (s = holder(o, lo, hi, r)))
			return s;
	}
	return NULL;
}

/* Index @h's sends by connection. 0 or -ENOMEM. */
static int index_sends(struct ws_xhost *h)
{
	h->sends = calloc(h->nios ? h->nios : 1, sizeof(*h->sends));
	if (!h->sends)
		return -ENOMEM;
	h->nsends = 0;
	for (size_t i = 0; i < h->nios; i++)
		if (h->ios[i].send)
			h->sends[h->nsends++] = &h->ios[i];
	qsort(h->sends, h->nsends, sizeof(*h->sends), by_conn);
	return 0;
}

static uint64_t wall(const struct ws_xjoin *j, const struct ws_xio *x)
{
	return ws_clock_wall(&j->hosts[x->host].clock, x->ts);
}

/*
 * Clocks further apart than this are not two hosts' (a recording's anchor is its own word):
 * its pairs bound nothing, and every sum of bounds below stays far from int64's end.
 */
#define XHOST_MAX_SKEW_NS (86400ULL * 1000000000ULL)

/*
 * lo[a][b]: the greatest (b's send time - a's receive time) of bytes b sent and a received.
 * The send came first, so b's clock minus a's is at least that; a's sends to b bound it from
 * above the same way (-lo[b][a]).
 */
struct bounds {
	bool have[WS_XHOST_MAX][WS_XHOST_MAX];
	int64_t lo[WS_XHOST_MAX][WS_XHOST_MAX];
};

bool xjoin_offset(const struct ws_xjoin *j, int a, int b, int64_t *lo, int64_t *hi)
{
	const struct ws_xhost *x = &j->hosts[a], *y = &j->hosts[b];
	int64_t mid, err;

	if (j->known[a][b]) {
		*lo = j->lo[a][b];
		*hi = j->hi[a][b];
		return true;
	}
	if (!x->offset_known || !y->offset_known)
		return false;
	mid = y->offset_ns - x->offset_ns;
	err = (int64_t)(x->offset_err_ns + y->offset_err_ns);
	*lo = mid - err;
	*hi = mid + err;
	return true;
}

static void offsets(struct ws_xjoin *j, const struct bounds *b)
{
	int queue[WS_XHOST_MAX], head = 0, tail = 0;

	if (!j->nhosts)
		return;
	for (int a = 0; a < j->nhosts; a++)
		for (int c = 0; c < j->nhosts; c++)
			if (a != c && b->have[a][c] && b->have[c][a] &&
			    b->lo[a][c] <= -b->lo[c][a]) {
				j->known[a][c] = true;
				j->lo[a][c] = b->lo[a][c];
				j->hi[a][c] = -b->lo[c][a];
			}
	j->hosts[0].offset_known = true;
	queue[tail++] = 0;
	/* outward from the first recording, over pairs of hosts bounded both ways */
	while (head < tail) {
		int a = queue[head++];

		for (int c = 0; c < j->nhosts; c++) {
			int64_t lo, hi;

			if (j->hosts[c].offset_known || !b->have[a][c] || !b->have[c][a])
				continue;
			lo = b->lo[a][c];
			hi = -b->lo[c][a];
			if (lo > hi)
				continue; /* contradicting pairs: no bound from them */
			j->hosts[c].offset_known = true;
			j->hosts[c].offset_ns = j->hosts[a].offset_ns + lo + (hi - lo) / 2;
			j->hosts[c].offset_err_ns =
				j->hosts[a].offset_err_ns + (uint64_t)(hi - lo + 1) / 2;
			queue[tail++] = c;
		}
	}
}

int ws_xjoin_match(struct ws_xjoin *j)
{
	struct bounds *b = calloc(1, sizeof(*b));

	if (!b)
		return -ENOMEM;
	for (int h = 0; h < j->nhosts; h++) {
		struct ws_xhost *x = &j->hosts[h];

		/* qsort's array may not be NULL, even of none: a recording may have no calls */
		if (x->nios)
			qsort(x->ios, x->nios, sizeof(*x->ios), by_tid_ts);
		if (x->nchains)
			qsort(x->chains, x->nchains, sizeof(*x->chains), by_tid_end);
		if (x->nreqs)
			qsort(x->reqs, x->nreqs, sizeof(*x->reqs), by_req);
		if (index_sends(x)) {
			free(b);
			return -ENOMEM;
		}
	}
	for (int a = 0; a < j->nhosts; a++) {
		const struct ws_xhost *x = &j->hosts[a];

		for (size_t i = 0; i < x->nios; i++) {
			const struct ws_xio *r = &x->ios[i], *s;
			int64_t d;

			if (r->send || !(s = xjoin_sender(j, r)))
				continue;
			j->pairs++;
			if (__builtin_sub_overflow(wall(j, s), wall(j, r), &d) ||
			    (d < 0 ? -(uint64_t)d : (uint64_t)d) > XHOST_MAX_SKEW_NS)
				continue;
			if (!b->have[a][s->host] || d > b->lo[a][s->host])
				b->lo[a][s->host] = d;
			b->have[a][s->host] = true;
		}
	}
	offsets(j, b);
	free(b);
	return 0;
}

void ws_xjoin_free(struct ws_xjoin *j)
{
	for (int h = 0; h < j->nhosts; h++) {
		free(j->hosts[h].chains);
		free(j->hosts[h].ios);
		free(j->hosts[h].sends);
		free(j->hosts[h].reqs);
	}
	j->nhosts = 0;
}
