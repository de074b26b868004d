// SPDX-License-Identifier: MIT
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "critpath.h"
#include "base/util.h"

struct part {
	char what[WS_CRITPATH_WHAT + 48]; /* "still blocked when tracing ended, on " + that */
	uint64_t ns;
	bool open; /* a wait still going on when tracing ended */
};

/* A stretch a chain explained: intervals inside it are not counted again. */
struct covered {
	uint64_t start, end;
};

struct ws_critpath {
	uint32_t tid;
	uint64_t first, last; /* the thread's observed life */
	struct part *p;
	size_t n, cap;
	struct covered *cov;
	size_t ncov, cov_cap;
	char open_what[WS_CRITPATH_WHAT]; /* ws_critpath_open(): what its wait at the end was on */
	int err;
};

struct ws_critpath *ws_critpath_new(uint32_t tid)
{
	struct ws_critpath *cp = calloc(1, sizeof(*cp));

	if (cp) {
		cp->tid = tid;
		cp->first = UINT64_MAX;
	}
	return cp;
}

void ws_critpath_free(struct ws_critpath *cp)
{
	if (!cp)
		return;
	free(cp->p);
	free(cp->cov);
	free(cp);
}

uint32_t ws_critpath_tid(const struct ws_critpath *cp)
{
	return cp->tid;
}

static void add(struct ws_critpath *cp, const char *what, uint64_t ns, bool open)
{
	for (size_t i = 0; i < cp->n; i++) {
		if (cp->p[i].open == open && !strcmp(cp->p[i].what, what)) {
			cp->p[i].ns += ns;
			return;
		}
	}
	if (ws_grow((void **)&cp->p, &cp->cap, cp->n + 1, sizeof(*cp->p))) {
		cp->err = -ENOMEM;
		return;
	}
	ws_str_copy(cp->p[cp->n].what, sizeof(cp->p[0].what), what);
	cp->p[cp->n].open = open;
	cp->p[cp->n++].ns = ns;
}

static void seen(struct ws_critpath *cp, uint64_t start, uint64_t end)
{
	if (start < cp->first)
		cp->first = start;
	if (end > cp->last)
		cp->last = end;
}

void ws_critpath_chain(struct ws_critpath *cp, struct ws_graph *g, const struct ws_chain *c)
{
	for (size_t i = 0; i < c->nsegs; i++) {
		struct ws_seg_root scratch;

		add(cp, ws_chain_seg_root(g, c, i, &scratch)->key, c->segs[i].dur, false);
	}
	seen(cp, c->start, c->end);
	if (ws_grow((void **)&cp->cov, &cp->cov_cap, cp->ncov + 1, sizeof(*cp->cov))) {
		cp->err = -ENOMEM;
		return;
	}
	cp->cov[cp->ncov++] = (struct covered){ c->start, c->end };
}

/* Is [start, end] inside a stretch a chain explained? Chains come in time order. */
static bool is_covered(const struct ws_critpath *cp, uint64_t start, uint64_t end)
{
	size_t lo = 0, hi = cp->ncov;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (cp->cov[mid].end < end)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < cp->ncov && cp->cov[lo].start <= start;
}

void ws_critpath_open(struct ws_critpath *cp, const char *what)
{
	snprintf(cp->open_what, sizeof(cp->open_what), "%s", what ? what : "");
}

void ws_critpath_ival(struct ws_critpath *cp, const struct ws_thread *t, const struct ws_ival *iv,
		      const struct ws_claim *claim)
{
	char what[sizeof(cp->p[0].what)];
	bool open = iv->state == WS_STATE_BLOCKED && (iv->flags & WS_IVAL_OPEN);

	if (iv->end <= iv->start)
		return;
	seen(cp, iv->start, iv->end);
	if (open && cp->open_what[0]) {
		/* what /proc showed it blocked on when tracing ended */
		snprintf(what, sizeof(what), "still blocked when tracing ended, on %s",
			 cp->open_what);
	} else if (open) {
		snprintf(what, sizeof(what),
			 "still blocked when tracing ended: an open wait of unknown cause");
	} else if (is_covered(cp, iv->start, iv->end)) {
		return; /* a chain has accounted for it, root by root */
	} else {
		ws_stretch_label(t, iv, claim, what, sizeof(what));
	}
	add(cp, what, iv->end - iv->start, open);
}

/* "CPU work and short waits (mostly futex 0x…) in app", as a chain's root says it; false: none */
static bool work_with_causes(const struct ws_thread *t, const struct ws_ival *iv, char *what,
			     size_t len)
{
	struct ws_short_summary sh;
	char cause[64];

	if (!(iv->flags & WS_IVAL_SHORT_INSIDE) || !ws_graph_short_in(t, iv->start, iv->end, &sh) ||
	    !sh.nc)
		return false;
	ws_short_cause_label(&sh.c[0], cause, sizeof(cause));
	snprintf(what, len, "CPU work and short waits (mostly %s) in %s", cause,
		 t->comm[0] ? t->comm : "?");
	return true;
}

void ws_stretch_label(const struct ws_thread *t, const struct ws_ival *iv,
		      const struct ws_claim *claim, char *what, size_t len)
{
	/* inside direct memory reclaim, on CPU or not: the root a chain gives such time */
	if ((iv->flags & WS_IVAL_RECLAIM) && iv->state != WS_STATE_UNKNOWN && claim &&
	    ws_kind_memory(claim->kind)) {
		ws_reclaim_label(claim, what, len);
		return;
	}
	if (iv->state == WS_STATE_RUNNING && work_with_causes(t, iv, what, len))
		return;
	if (iv->state == WS_STATE_RUNNING)
		ws_str_cat3(what, len, ws_ival_work(iv->flags), " in ", t->comm[0] ? t->comm : "?");
	else if (iv->state == WS_STATE_RUNNABLE && (iv->flags & WS_IVAL_THROTTLED) && claim)
		/* the root a chain gives such time: parts with the same name add up */
		ws_quota_label(claim, what, len);
	else if (iv->state == WS_STATE_RUNNABLE)
		snprintf(what, len, "waiting for a CPU (short waits)");
	else if (iv->state == WS_STATE_BLOCKED && !claim)
		/* a wait gets its claim when it ends: this one's end was not seen */
		snprintf(what, len, "blocked, cause not recorded");
	else if (iv->state == WS_STATE_BLOCKED)
		snprintf(what, len, "short waits: %.*s", (int)sizeof(claim->kind), claim->kind);
	else
		snprintf(what, len, "not observed");
}

static int by_ns(const void *a, const void *b)
{
	const struct part *x = a, *y = b;

	return x->ns < y->ns ? 1 : x->ns > y->ns ? -1 : 0;
}

static uint64_t total(struct ws_critpath *cp)
{
	uint64_t sum = 0;

	if (cp->n)
		qsort(cp->p, cp->n, sizeof(*cp->p), by_ns);
	for (size_t i = 0; i < cp->n; i++)
		sum += cp->p[i].ns;
	return sum;
}

void ws_critpath_text(struct ws_critpath *cp, FILE *out)
{
	uint64_t sum = total(cp), shown = 0;
	char wall[32], d[32], e[4 * sizeof(cp->p[0].what)];

	if (!sum)
		return;
	ws_format_duration(cp->last - cp->first, wall, sizeof(wall));
	fprintf(out,
		"Critical path of the command (tid %u, %s from its first to its last moment):\n",
		cp->tid, wall);
	for (size_t i = 0; i < cp->n; i++) {
		if (i >= 6 && cp->p[i].ns * 100 < sum) {
			ws_format_duration(sum - shown, d, sizeof(d));
			fprintf(out, "  %5.1f%%  %-9s in %zu smaller part%s\n",
				100.0 * (sum - shown) / sum, d, cp->n - i,
				cp->n - i > 1 ? "s" : "");
			break;
		}
		ws_format_duration(cp->p[i].ns, d, sizeof(d));
		fprintf(out, "  %5.1f%%  %-9s %s\n", 100.0 * cp->p[i].ns / sum, d,
			ws_text_esc(cp->p[i].what, e, sizeof(e)));
		shown += cp->p[i].ns;
	}
	if (sum != cp->last - cp->first) {
		ws_format_duration(sum, d, sizeof(d));
		fprintf(out, "  (the parts add up to %s: part of its timeline was lost)\n", d);
	}
	fputc('\n', out);
}

void ws_critpath_json(struct ws_critpath *cp, FILE *out)
{
	uint64_t sum = total(cp);

	if (!sum)
		return;
	fprintf(out,
		"{\"type\":\"critical_path\",\"tid\":%u,\"start_ns\":%" PRIu64
		",\"wall_ns\":%" PRIu64 ",\"accounted_ns\":%" PRIu64 ",\"parts\":[",
		cp->tid, cp->first, cp->last - cp->first, sum);
	for (size_t i = 0; i < cp->n; i++) {
		fprintf(out, "%s{\"what\":", i ? "," : "");
		ws_json_str(out, cp->p[i].what);
		fprintf(out, ",\"ns\":%" PRIu64 ",\"share\":%.4f,\"open\":%s}", cp->p[i].ns,
			(double)cp->p[i].ns / sum, cp->p[i].open ? "true" : "false");
	}
	fputs("]}\n", out);
}
