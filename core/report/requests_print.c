// SPDX-License-Identifier: MIT
/* Requests as text and as JSON: each request (JSON), and what they came to (both). */
#include <inttypes.h>
#include <string.h>

#include "report_impl.h"
#include "requests.h"
#include "base/util.h"

static const char *proto_name(uint32_t proto)
{
	switch (proto) {
	case WS_SOCK_TCP:
		return "tcp";
	case WS_SOCK_UDP:
		return "udp";
	case WS_SOCK_UNIX:
		return "unix";
	default:
		return "?";
	}
}

/*
 * One request's JSON line, built in memory and written with one call: thousands a second on a
 * busy service, where printf's format parsing and the stream's lock on every call were a fifth
 * of `report --format json`. The line is byte for byte what printf would have written.
 */
struct line {
	FILE *f;
	size_t n;
	char b[4096];
};

static void line_flush(struct line *l)
{
	fwrite_unlocked(l->b, 1, l->n, l->f);
	l->n = 0;
}

static void line_put(struct line *l, const char *s, size_t n)
{
	if (l->n + n > sizeof(l->b)) {
		line_flush(l);
		if (n > sizeof(l->b)) {
			fwrite_unlocked(s, 1, n, l->f);
			return;
		}
	}
	memcpy(l->b + l->n, s, n);
	l->n += n;
}

static void line_str(struct line *l, const char *s)
{
	line_put(l, s, strlen(s));
}

/* ",\"key\":N": @key as written here, with its comma, quotes and colon */
static void line_num(struct line *l, const char *key, uint64_t v)
{
	char d[20];

	line_str(l, key);
	line_put(l, d, ws_u64_dec(d, v));
}

/* @s as a JSON string: printable ASCII as it is, anything else through ws_json_str */
static void line_json(struct line *l, const char *s)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");

	while (*p >= 0x20 && *p < 0x7f && *p != '"' && *p != '\\')
		p++;
	if (*p) {
		line_flush(l);
		ws_json_str(l->f, s);
		return;
	}
	line_put(l, "\"", 1);
	line_put(l, s ? s : "", (size_t)(p - (const unsigned char *)(s ? s : "")));
	line_put(l, "\"", 1);
}

void report_request_json(void *ctx, const struct ws_request *q)
{
	struct ws_report *r = ctx;
	struct line l = { .f = r->o.out };
	char ts[40];

	ws_clock_iso(ws_clock_wall(r->o.clock, q->start), ts, sizeof(ts));
	flockfile(l.f);
	line_str(&l, "{\"type\":\"request\",\"ts\":\"");
	line_str(&l, ts);
	line_num(&l, "\",\"tid\":", q->tid);
	line_num(&l, ",\"pid\":", q->pid);
	line_str(&l, ",\"comm\":");
	line_json(&l, q->comm);
	line_str(&l, ",\"proto\":\"");
	line_str(&l, proto_name(q->proto));
	line_str(&l, "\",\"local\":");
	line_json(&l, q->local);
	line_str(&l, ",\"peer\":");
	line_json(&l, q->peer);
	line_num(&l, ",\"conn\":", q->conn);
	line_num(&l, ",\"start_ns\":", q->start);
	line_num(&l, ",\"duration_ns\":", q->end - q->start);
	line_num(&l, ",\"recvs\":", q->recvs);
	line_num(&l, ",\"sends\":", q->sends);
	line_num(&l, ",\"bytes_in\":", q->bytes_in);
	line_num(&l, ",\"bytes_out\":", q->bytes_out);
	line_str(&l, q->other_sender ? ",\"other_sender\":true" : ",\"other_sender\":false");
	line_str(&l, q->incomplete ? ",\"incomplete\":true" : ",\"incomplete\":false");
	line_num(&l, ",\"own_cpu_ns\":", q->own_cpu_ns);
	line_num(&l, ",\"other_calls\":", q->other_calls);
	line_num(&l, ",\"queued_ns\":", q->queued_ns);
	line_str(&l, ",\"parts\":[");
	for (int i = 0; i < q->nparts; i++) {
		line_str(&l, i ? ",{\"what\":" : "{\"what\":");
		line_json(&l, q->parts[i].what);
		line_num(&l, ",\"ns\":", q->parts[i].ns);
		line_put(&l, "}", 1);
	}
	line_str(&l, "],\"cause\":");
	if (q->cause)
		line_json(&l, q->cause);
	else
		line_str(&l, "null");
	line_str(&l, "}\n");
	line_flush(&l);
	funlockfile(l.f);
}

void report_requests_json(struct ws_report *r, const struct ws_requests_summary *s)
{
	FILE *b = r->o.out;

	fprintf(b,
		"{\"type\":\"requests\",\"count\":%" PRIu64 ",\"connections\":%" PRIu64
		",\"processes\":%" PRIu64 ",\"p50_ns\":%" PRIu64 ",\"p90_ns\":%" PRIu64
		",\"p99_ns\":%" PRIu64 ",\"max_ns\":%" PRIu64 ",\"total_ns\":%" PRIu64
		",\"incomplete\":%" PRIu64 ",\"unanswered\":%" PRIu64 ",\"client_calls\":%" PRIu64
		",\"unknown_role_calls\":%" PRIu64 ",\"filtered\":%" PRIu64 ",\"reasons\":[",
		s->count, s->connections, s->processes, s->p50, s->p90, s->p99, s->max, s->total_ns,
		s->incomplete, s->unanswered, s->client_calls, s->unknown_role, s->filtered);
	for (size_t i = 0; i < s->nreasons; i++) {
		const struct ws_request_reason *x = &s->reasons[i];

		fprintf(b, "%s{\"what\":", i ? "," : "");
		ws_json_str(b, x->what);
		fprintf(b,
			",\"ns\":%" PRIu64
			",\"share\":%.4f,\"slowest_share\":%.4f,\"requests\":%" PRIu64 "}",
			x->ns, s->total_ns ? (double)x->ns / s->total_ns : 0.0,
			s->slowest_total_ns ? (double)x->slowest_ns / s->slowest_total_ns : 0.0,
			x->requests);
	}
	fputs("]}\n", b);
}

/* "68.0ms block I/O on loop0, 2.10ms CPU work in srv, ..." */
static void parts_text(FILE *b, const struct ws_request *q, int most)
{
	char d[32], e[4 * 256];

	for (int i = 0; i < q->nparts && i < most; i++) {
		ws_format_duration(q->parts[i].ns, d, sizeof(d));
		fprintf(b, "%s%s %s", i ? ", " : "", d,
			ws_text_esc(q->parts[i].what, e, sizeof(e)));
	}
	if (q->nparts > most)
		fprintf(b, ", and %d smaller part%s", q->nparts - most,
			ws_plural(q->nparts - most, "", "s"));
}

static void slowest_text(struct ws_report *r, const struct ws_requests_summary *s)
{
	FILE *b = r->o.out;
	char hms[32], d[32], e[4 * 64], l[4 * 64], p[4 * 64];

	if (s->nslowest)
		fprintf(b, "The slowest requests:\n");
	for (size_t i = 0; i < s->nslowest; i++) {
		const struct ws_request *q = &s->slowest[i];

		ws_clock_hms(ws_clock_wall(r->o.clock, q->start), hms, sizeof(hms));
		ws_format_duration(q->end - q->start, d, sizeof(d));
		fprintf(b, "  %s  %-8s tid %u (%s) on %s", hms, d, q->tid,
			ws_text_esc(q->comm, e, sizeof(e)), ws_text_esc(q->local, l, sizeof(l)));
		if (q->peer[0])
			fprintf(b, " from %s", ws_text_esc(q->peer, p, sizeof(p)));
		fprintf(b, "%s: ", q->incomplete ? " (INCOMPLETE: records lost)" : "");
		parts_text(b, q, 4);
		fputc('\n', b);
	}
}

/* A reason's example chain, indented under it. */
static void example_text(FILE *b, const char *text)
{
	for (const char *p = text; p && *p;) {
		const char *nl = strchr(p, '\n');
		int n = nl ? (int)(nl - p) : (int)strlen(p);

		if (n)
			fprintf(b, "         %.*s\n", n, p);
		p = nl ? nl + 1 : NULL;
	}
}

void report_requests_text(struct ws_report *r, const struct ws_requests_summary *s)
{
	FILE *b = r->o.out;
	char d[5][32], e[4 * 256];
	int top = r->o.top > 0 ? r->o.top : 5;

	if (!s->count && s->filtered) {
		fprintf(b, "No request passed --min-latency / --port (%" PRIu64 " left out).\n\n",
			s->filtered);
		return;
	}
	if (!s->count) {
		fprintf(b,
			"No request was seen: no traced thread answered on the server's end of a connection.\n\n");
		return;
	}
	fprintf(b,
		"Requests, found from socket traffic: %" PRIu64 " on %" PRIu64
		" connection%s, served by %" PRIu64 " process%s\n",
		s->count, s->connections, ws_plural(s->connections, "", "s"), s->processes,
		ws_plural(s->processes, "", "es"));
	ws_format_duration(s->p50, d[0], sizeof(d[0]));
	ws_format_duration(s->p90, d[1], sizeof(d[1]));
	ws_format_duration(s->p99, d[2], sizeof(d[2]));
	ws_format_duration(s->max, d[3], sizeof(d[3]));
	fprintf(b, "  latency p50 %s, p90 %s, p99 %s, max %s\n", d[0], d[1], d[2], d[3]);
	fprintf(b,
		"  (the server's time, from a request's arrival at a thread waiting in its receive, or from that receive's return, to the last send: not the time it waited to be read)\n");
	if (s->filtered)
		fprintf(b, "  %" PRIu64 " more left out by --min-latency / --port\n", s->filtered);
	if (s->incomplete)
		fprintf(b,
			"  INCOMPLETE: %" PRIu64
			" of them overlap records lost (LOST below): each may be two merged, or cut short, and the count may be low\n",
			s->incomplete);
	fprintf(b,
		"Where the requests' time went (share of all their time; of the slowest tenth's):\n");
	for (size_t i = 0; i < s->nreasons && (int)i < top; i++) {
		const struct ws_request_reason *x = &s->reasons[i];

		ws_format_duration(x->ns, d[4], sizeof(d[4]));
		fprintf(b, "  %2zu. %5.1f%% %5.1f%%  %-8s %s, in %" PRIu64 " request%s\n", i + 1,
			s->total_ns ? 100.0 * x->ns / s->total_ns : 0.0,
			s->slowest_total_ns ? 100.0 * x->slowest_ns / s->slowest_total_ns : 0.0,
			d[4], ws_text_esc(x->what, e, sizeof(e)), x->requests,
			ws_plural(x->requests, "", "s"));
		/* an example where one wait stands for much of the reason, or is one a person would
		 * look at (1 ms): a reason made of many tiny pieces (a thread's own CPU work) has
		 * none that shows it */
		if (i < 3 && x->example &&
		    (x->example_ns * 10 >= x->ns || x->example_ns >= 1000000)) {
			ws_format_duration(x->example_ns, d[4], sizeof(d[4]));
			fprintf(b, "         its longest piece, %s, in:\n", d[4]);
			example_text(b, x->example);
		}
	}
	slowest_text(r, s);
	fputc('\n', b);
}
