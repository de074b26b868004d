// SPDX-License-Identifier: MIT
/*
 * Several hosts' chains joined and printed: a chain that ends at a TCP socket goes on in the
 * recording that sent the bytes its thread then received (xhost.c found the pairs), into the
 * chain of the sender's wait before that send; each crossing says its evidence. Where no
 * recording sent those bytes, the join is said not proven, and why; nothing is guessed.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "xhost.h"
#include "base/util.h"

#define MAX_STEPS (2 * WS_XHOST_MAX)

/* One recording's part of a joined chain, and how the chain left it. */
struct step {
	int host;
	const struct ws_xchain *chain;
	const struct ws_xio *recv, *send; /* the crossing to the next step; NULL: none */
	/* the sender's time before the send is not a reported wait in this one's (or unproven) */
	const char *stop;
};

struct walk {
	struct step steps[MAX_STEPS];
	int n;
	char why[512]; /* the join that was not proven, and why; "" */
};

/*
 * Host @h's first receive by thread @tid at or after @ts on the connection the packet @src ->
 * @dst that ended its wait came by, or NULL: the bytes it read are that packet's stream's.
 */
static const struct ws_xio *recv_after(const struct ws_xhost *h, uint32_t tid, uint64_t ts,
				       const char *src, const char *dst)
{
	size_t lo = 0, hi = h->nios;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct ws_xio *x = &h->ios[mid];

		if (x->tid < tid || (x->tid == tid && x->ts < ts))
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < h->nios && h->ios[lo].tid == tid; lo++)
		if (!h->ios[lo].send && !strcmp(h->ios[lo].peer, src) &&
		    !strcmp(h->ios[lo].local, dst))
			return &h->ios[lo];
	return NULL;
}

/* Host @h's chain of thread @tid's last wait that ended by @ts, or NULL. */
static struct ws_xchain *wait_before(struct ws_xhost *h, uint32_t tid, uint64_t ts)
{
	size_t lo = 0, hi = h->nchains;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct ws_xchain *c = &h->chains[mid];

		if (c->tid < tid || (c->tid == tid && c->end <= ts))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo && h->chains[lo - 1].tid == tid ? &h->chains[lo - 1] : NULL;
}

static void not_proven(const struct ws_xjoin *j, const struct ws_xio *r, char *buf, size_t len)
{
	if (xjoin_sends_from(j, r->peer))
		snprintf(
			buf, len,
			"join not proven: no recording sent bytes [%" PRIu32 ", %" PRIu32
			") of %s -> %s (a recording sent from that endpoint, not those bytes: before it began, or they were lost from it)",
			r->seq_end - r->bytes, r->seq_end, r->peer, r->local);
	else
		snprintf(
			buf, len,
			"join not proven: no recording has the peer's end of %s -> %s (it was not recorded, or a NAT, proxy or load balancer between the hosts changed the addresses)",
			r->peer, r->local);
}

/* Follow chain @c of host @h across the recordings. */
static void walk(struct ws_xjoin *j, int h, struct ws_xchain *c, struct walk *w)
{
	w->n = 0;
	w->why[0] = 0;
	while (c && w->n < MAX_STEPS) {
		struct step *s = &w->steps[w->n++];
		const struct ws_xlink *last = &c->links[c->nlinks - 1];
		struct ws_xchain *next;
		int64_t lo, hi;

		*s = (struct step){ .host = h, .chain = c };
		if (!last->tcp_root)
			return;
		s->recv = recv_after(&j->hosts[h], last->tid, last->start + last->dur, last->src,
				     last->dst);
		if (!s->recv) {
			snprintf(
				w->why, sizeof(w->why),
				"join not proven: no TCP receive of tid %u on %s -> %s after this wait is in %s (recorded without the net source's sequence numbers, before net 1.3?)",
				last->tid, last->src, last->dst, j->hosts[h].file);
			return;
		}
		s->send = xjoin_sender(j, s->recv);
		if (!s->send) {
			not_proven(j, s->recv, w->why, sizeof(w->why));
			return;
		}
		next = wait_before(&j->hosts[s->send->host], s->send->tid, s->send->ts);
		if (!next) {
			s->stop = "no wait of it before the send is among its recording's chains";
			return;
		}
		if (!xjoin_offset(j, h, s->send->host, &lo, &hi)) {
			s->stop =
				"its wait before the send is not followed: the two hosts' clock offset is not bounded (no sends matched both ways)";
			return;
		}
		/*
		 * The sender's wait explains this one only if it was still going on when this one
		 * began, at any clock offset within the bound; else what the sender did since (CPU
		 * work, short waits) held the bytes back, and no reported wait says what.
		 */
		if ((int64_t)ws_clock_wall(&j->hosts[s->send->host].clock, next->end) - hi <
		    (int64_t)ws_clock_wall(&j->hosts[h].clock, last->start)) {
			s->stop =
				"its last reported wait before the send had ended before this wait began: its time since (CPU work or short waits) held the bytes back";
			return;
		}
		for (int i = 0; i < w->n; i++)
			if (w->steps[i].chain == next) {
				s->stop =
					"its wait before the send is already in this chain (a loop)";
				return;
			}
		if (w->n == MAX_STEPS) {
			s->stop = "the chain is cut here: too many crossings";
			return;
		}
		h = s->send->host;
		next->used = true;
		c = next;
	}
}

/* @ts of host @h on the first recording's clock when its offset is known, else its own. */
static uint64_t ref_wall(const struct ws_xjoin *j, int h, uint64_t ts)
{
	const struct ws_xhost *x = &j->hosts[h];

	return ws_clock_wall(&x->clock, ts) - (x->offset_known ? (uint64_t)x->offset_ns : 0);
}

static void text_hosts(const struct ws_xjoin *j, FILE *f)
{
	char off[32], err[32];

	fprintf(f, "Across %d recordings (%" PRIu64 " TCP sends matched with their receives):\n",
		j->nhosts, j->pairs);
	for (int h = 0; h < j->nhosts; h++) {
		const struct ws_xhost *x = &j->hosts[h];

		fprintf(f, "  host %s: %s", x->name, x->file);
		if (!h) {
			fprintf(f, ", whose clock the times are told on\n");
			continue;
		}
		if (!x->offset_known) {
			fprintf(f,
				", clock offset not bounded (no sends matched both ways with a bounded host): its own clock\n");
			continue;
		}
		ws_format_duration((uint64_t)(x->offset_ns < 0 ? -x->offset_ns : x->offset_ns), off,
				   sizeof(off));
		ws_format_duration(x->offset_err_ns, err, sizeof(err));
		fprintf(f, ", clock %s%s ± %s from %s's\n", x->offset_ns < 0 ? "-" : "+", off, err,
			j->hosts[0].name);
	}
	for (int h = 0; h < j->nhosts; h++) {
		const struct ws_xhost *x = &j->hosts[h];

		if (x->chains_dropped || x->ios_dropped)
			fprintf(f,
				"  %s: only the first %d chains and %d TCP calls were kept for the join (%zu and %zu more left out)\n",
				x->file, WS_XHOST_CHAINS, WS_XHOST_IOS, x->chains_dropped,
				x->ios_dropped);
	}
}

static void text_crossing(const struct ws_xjoin *j, const struct step *s, FILE *f)
{
	const struct ws_xio *r = s->recv, *x = s->send;
	const struct ws_xreq *q = xjoin_request_of(j, x);
	char hms[32], took[32];

	ws_clock_hms(ref_wall(j, x->host, x->ts), hms, sizeof(hms));
	fprintf(f,
		"     -> its next receive got bytes [%" PRIu32 ", %" PRIu32
		") of %s -> %s; host %s sent them: tid %u at %s (evidence: mirrored endpoints, same TCP sequence numbers)\n",
		r->seq_end - r->bytes, r->seq_end, r->peer, r->local, j->hosts[x->host].name,
		x->tid, hms);
	if (!q)
		return;
	/* the request view: the sender answered a request, found from its own socket calls */
	ws_format_duration(q->end - q->start, took, sizeof(took));
	fprintf(f, "     -> as the answer of its request on %s from %s (%s; %s%s)\n", q->local,
		q->peer, took, q->cause[0] ? "cause: " : "its own CPU work",
		q->cause[0] ? q->cause : "");
}

static void text_walk(const struct ws_xjoin *j, const struct walk *w, int rank, FILE *f)
{
	const struct step *first = &w->steps[0], *end = &w->steps[w->n - 1];
	const struct ws_xchain *c = first->chain;
	char blocked[32], hms[32], d[32];

	ws_format_duration(c->end - c->start, blocked, sizeof(blocked));
	ws_clock_hms(ref_wall(j, first->host, c->start), hms, sizeof(hms));
	fprintf(f, "\nChain %d: %s (tid %u) on host %s blocked %s from %s\n", rank, c->comm, c->tid,
		j->hosts[first->host].name, blocked, hms);
	for (int i = 0; i < w->n; i++) {
		const struct step *s = &w->steps[i];

		for (int k = 0; k < s->chain->nlinks; k++) {
			const struct ws_xlink *l = &s->chain->links[k];

			ws_format_duration(l->dur, d, sizeof(d));
			fprintf(f, "  [%s] tid %u %s %s: %s\n", j->hosts[s->host].name, l->tid,
				l->comm, d, l->what);
		}
		if (s->send && i + 1 < w->n)
			text_crossing(j, s, f);
		else if (s->send) {
			text_crossing(j, s, f);
			fprintf(f, "     -> tid %u on host %s: %s\n", s->send->tid,
				j->hosts[s->send->host].name, s->stop);
		}
	}
	if (w->why[0])
		fprintf(f, "     -> %s\n", w->why);
	if (end->send)
		fprintf(f, "  root: tid %u on host %s before its send\n", end->send->tid,
			j->hosts[end->send->host].name);
	else
		fprintf(f, "  root: %s (host %s)\n", end->chain->root, j->hosts[end->host].name);
}

static void json_link(const struct ws_xjoin *j, int h, const struct ws_xlink *l, FILE *f)
{
	char iso[40];

	ws_clock_iso(ref_wall(j, h, l->start), iso, sizeof(iso));
	fprintf(f, "{\"host\":");
	ws_json_str(f, j->hosts[h].name);
	fprintf(f, ",\"tid\":%u,\"pid\":%u,\"comm\":", l->tid, l->pid);
	ws_json_str(f, l->comm);
	fprintf(f, ",\"kind\":");
	ws_json_str(f, l->kind);
	fprintf(f, ",\"what\":");
	ws_json_str(f, l->what);
	fprintf(f, ",\"start\":\"%s\",\"dur_ns\":%" PRIu64 "}", iso, l->dur);
}

/* The request view of crossing send @s: ,"request":{...}, or nothing. */
static void json_request(const struct ws_xjoin *j, const struct ws_xio *s, FILE *f)
{
	const struct ws_xreq *q = xjoin_request_of(j, s);
	char iso[40];

	if (!q)
		return;
	ws_clock_iso(ref_wall(j, s->host, q->start), iso, sizeof(iso));
	fprintf(f, ",\"request\":{\"local\":");
	ws_json_str(f, q->local);
	fprintf(f, ",\"peer\":");
	ws_json_str(f, q->peer);
	fprintf(f, ",\"start\":\"%s\",\"duration_ns\":%" PRIu64 ",\"cause\":", iso,
		q->end - q->start);
	if (q->cause[0])
		ws_json_str(f, q->cause);
	else
		fputs("null", f);
	fputc('}', f);
}

static void json_walk(const struct ws_xjoin *j, const struct walk *w, FILE *f)
{
	const struct step *first = &w->steps[0], *end = &w->steps[w->n - 1];
	const struct ws_xchain *c = first->chain;
	char iso[40];
	bool comma = false;

	ws_clock_iso(ref_wall(j, first->host, c->start), iso, sizeof(iso));
	fprintf(f, "{\"type\":\"xhost_chain\",\"host\":");
	ws_json_str(f, j->hosts[first->host].name);
	fprintf(f, ",\"tid\":%u,\"pid\":%u,\"comm\":", c->tid, c->pid);
	ws_json_str(f, c->comm);
	fprintf(f, ",\"start\":\"%s\",\"blocked_ns\":%" PRIu64 ",\"links\":[", iso,
		c->end - c->start);
	for (int i = 0; i < w->n; i++)
		for (int k = 0; k < w->steps[i].chain->nlinks; k++) {
			fputs(comma ? "," : "", f);
			json_link(j, w->steps[i].host, &w->steps[i].chain->links[k], f);
			comma = true;
		}
	fprintf(f, "],\"crossings\":[");
	for (int i = 0; i < w->n && w->steps[i].send; i++) {
		const struct ws_xio *r = w->steps[i].recv, *s = w->steps[i].send;

		ws_clock_iso(ref_wall(j, s->host, s->ts), iso, sizeof(iso));
		fprintf(f, "%s{\"from_host\":", i ? "," : "");
		ws_json_str(f, j->hosts[s->host].name);
		fprintf(f, ",\"to_host\":");
		ws_json_str(f, j->hosts[w->steps[i].host].name);
		fprintf(f, ",\"src\":");
		ws_json_str(f, r->peer);
		fprintf(f, ",\"dst\":");
		ws_json_str(f, r->local);
		fprintf(f,
			",\"seq_start\":%" PRIu32 ",\"seq_end\":%" PRIu32
			",\"recv_tid\":%u,\"send_tid\":%u,\"send_time\":\"%s\",\"followed\":%s",
			r->seq_end - r->bytes, r->seq_end, r->tid, s->tid, iso,
			i + 1 < w->n ? "true" : "false");
		json_request(j, s, f);
		fputc('}', f);
	}
	fprintf(f, "],\"root\":");
	if (end->send) {
		char root[96];

		snprintf(root, sizeof(root), "tid %u before its send", end->send->tid);
		ws_json_str(f, root);
		fprintf(f, ",\"root_host\":");
		ws_json_str(f, j->hosts[end->send->host].name);
		fprintf(f, ",\"stopped\":");
		ws_json_str(f, end->stop);
	} else {
		ws_json_str(f, end->chain->root);
		fprintf(f, ",\"root_host\":");
		ws_json_str(f, j->hosts[end->host].name);
	}
	if (w->why[0]) {
		fprintf(f, ",\"not_proven\":");
		ws_json_str(f, w->why);
	}
	fprintf(f, "}\n");
}

static void json_hosts(const struct ws_xjoin *j, FILE *f)
{
	for (int h = 0; h < j->nhosts; h++) {
		const struct ws_xhost *x = &j->hosts[h];

		fprintf(f, "{\"type\":\"host\",\"host\":");
		ws_json_str(f, x->name);
		fprintf(f, ",\"file\":");
		ws_json_str(f, x->file);
		fprintf(f, ",\"boot_id\":");
		ws_json_str(f, x->boot_id);
		fprintf(f, ",\"offset_known\":%s", x->offset_known ? "true" : "false");
		if (x->offset_known)
			fprintf(f, ",\"offset_ns\":%" PRId64 ",\"offset_error_ns\":%" PRIu64,
				x->offset_ns, x->offset_err_ns);
		fprintf(f, ",\"pairs\":%" PRIu64 "}\n", j->pairs);
	}
}

struct ranked {
	int host;
	struct ws_xchain *chain;
};

static int by_blocked(const void *a, const void *b)
{
	const struct ws_xchain *x = ((const struct ranked *)a)->chain,
			       *y = ((const struct ranked *)b)->chain;
	uint64_t dx = x->end - x->start, dy = y->end - y->start;

	return dx < dy ? 1 : dx > dy ? -1 : 0;
}

void ws_xjoin_print(struct ws_xjoin *j, FILE *out, enum ws_format format, int top)
{
	struct ranked *all;
	struct walk w;
	size_t n = 0, total = 0;
	int shown = 0;

	for (int h = 0; h < j->nhosts; h++)
		total += j->hosts[h].nchains;
	all = calloc(total ? total : 1, sizeof(*all));
	/* every walk first: a chain shown inside another host's is not ranked on its own */
	for (int h = 0; h < j->nhosts; h++)
		for (size_t i = 0; i < j->hosts[h].nchains; i++)
			walk(j, h, &j->hosts[h].chains[i], &w);
	for (int h = 0; all && h < j->nhosts; h++)
		for (size_t i = 0; i < j->hosts[h].nchains; i++)
			if (!j->hosts[h].chains[i].used)
				all[n++] = (struct ranked){ h, &j->hosts[h].chains[i] };
	if (all)
		qsort(all, n, sizeof(*all), by_blocked);
	if (format == WS_FORMAT_JSON)
		json_hosts(j, out);
	else
		text_hosts(j, out);
	for (size_t i = 0; i < n; i++) {
		if (format != WS_FORMAT_JSON && shown >= top)
			break;
		walk(j, all[i].host, all[i].chain, &w);
		if (format == WS_FORMAT_JSON)
			json_walk(j, &w, out);
		else
			text_walk(j, &w, ++shown, out);
	}
	if (!all)
		fprintf(out, "(out of memory: no chains listed)\n");
	free(all);
}
