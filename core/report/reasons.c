// SPDX-License-Identifier: MIT
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "lenhist.h"
#include "reasons.h"
#include "base/util.h"

/* Kinds along a chain, victim first: "futex<block_io". */
#define KINDS_LEN 128

/*
 * The percentiles: exact (every wait's length kept, nearest rank) for the first REASON_EXACT
 * waits of a reason, which every run of minutes stays within; past that the lengths go into a
 * log histogram (lenhist.h), so that a reason of an attach that runs for days costs 16 KiB, not
 * 8 bytes a wait, within 1.6% of the exact value (and never above the max, kept exactly).
 */
#define REASON_EXACT 4096

struct reason {
	char comm[WS_COMM];
	char kinds[KINDS_LEN];
	char root[96];
	uint64_t hash;
	uint64_t count, total, max;
	uint64_t *durs; /* every wait's length, for the percentiles (until @hist) */
	size_t ndurs, durs_cap;
	uint64_t *hist; /* WS_LENHIST_BUCKETS counts, past REASON_EXACT waits; NULL before */
	char *example;	/* the worst wait, rendered */
};

struct ws_reasons {
	struct reason *r;
	size_t n, cap;
	uint64_t all; /* blocked time of every chain counted */
	ws_render_fn render;
	void *ctx;
	int err;
	bool ranked; /* sorted since the last ws_reasons_add() (rank()) */
};

struct ws_reasons *ws_reasons_new(ws_render_fn render, void *ctx)
{
	struct ws_reasons *rs = calloc(1, sizeof(*rs));

	if (rs) {
		rs->render = render;
		rs->ctx = ctx;
	}
	return rs;
}

void ws_reasons_free(struct ws_reasons *rs)
{
	if (!rs)
		return;
	for (size_t i = 0; i < rs->n; i++) {
		free(rs->r[i].durs);
		free(rs->r[i].hist);
		free(rs->r[i].example);
	}
	free(rs->r);
	free(rs);
}

static void signature(const struct ws_chain *c, struct reason *k)
{
	size_t n = 0;

	memset(k, 0, sizeof(*k));
	snprintf(k->comm, sizeof(k->comm), "%s", c->victim->comm[0] ? c->victim->comm : "?");
	for (int i = 0; i < c->nlinks && n < sizeof(k->kinds); i++)
		n += snprintf(k->kinds + n, sizeof(k->kinds) - n, "%s%s", i ? "<" : "",
			      c->links[i].kind);
	snprintf(k->root, sizeof(k->root), "%s", c->root);
	k->hash = ws_hash_bytes(k->comm, strlen(k->comm)) ^
		  ws_hash_bytes(k->kinds, strlen(k->kinds)) * 31 ^
		  ws_hash_bytes(k->root, strlen(k->root)) * 131;
}

static struct reason *find_or_add(struct ws_reasons *rs, const struct reason *k)
{
	for (size_t i = 0; i < rs->n; i++) {
		struct reason *r = &rs->r[i];

		if (r->hash == k->hash && !strcmp(r->comm, k->comm) &&
		    !strcmp(r->kinds, k->kinds) && !strcmp(r->root, k->root))
			return r;
	}
	if (ws_grow((void **)&rs->r, &rs->cap, rs->n + 1, sizeof(*rs->r)))
		return NULL;
	rs->r[rs->n] = *k;
	return &rs->r[rs->n++];
}

/* Wait length @v into @r's lengths: kept while few, counted in the histogram past that. */
static int note_length(struct reason *r, uint64_t v)
{
	if (!r->hist && r->ndurs < REASON_EXACT) {
		if (ws_grow((void **)&r->durs, &r->durs_cap, r->ndurs + 1, sizeof(*r->durs)))
			return -ENOMEM;
		r->durs[r->ndurs++] = v;
		return 0;
	}
	if (!r->hist) {
		if (!(r->hist = calloc(WS_LENHIST_BUCKETS, sizeof(*r->hist))))
			return -ENOMEM;
		for (size_t i = 0; i < r->ndurs; i++)
			r->hist[ws_lenhist_bucket(r->durs[i])]++;
		free(r->durs);
		r->durs = NULL;
		r->ndurs = r->durs_cap = 0;
	}
	r->hist[ws_lenhist_bucket(v)]++;
	return 0;
}

int ws_reasons_add(struct ws_reasons *rs, const struct ws_chain *c)
{
	uint64_t blocked = c->end - c->start;
	struct reason k, *r;
	char *text;
	int err;

	signature(c, &k);
	r = find_or_add(rs, &k);
	rs->ranked = false;
	if (!r || note_length(r, blocked))
		return -ENOMEM;
	r->count++;
	r->total += blocked;
	rs->all += blocked;
	if (blocked > r->max || !r->example) {
		r->max = blocked > r->max ? blocked : r->max;
		if ((err = rs->render(rs->ctx, c, &text)))
			return err;
		free(r->example);
		r->example = text;
	}
	return 0;
}

static int by_total(const void *a, const void *b)
{
	const struct reason *x = a, *y = b;

	return x->total < y->total ? 1 : x->total > y->total ? -1 : 0;
}

static int by_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The nearest-rank percentile @p (0..100) of @r's waits (past REASON_EXACT: lenhist.h). */
static uint64_t percentile(struct reason *r, unsigned int p)
{
	size_t i;

	if (!r->hist) {
		i = (r->ndurs * p + 99) / 100;
		return r->durs[i ? i - 1 : 0];
	}
	return ws_lenhist_percentile(r->hist, r->count, p, r->max);
}

static void rank(struct ws_reasons *rs)
{
	/* the text report asks again for every one of its longest waits (ws_reasons_shown()) */
	if (!rs->n || rs->ranked)
		return;
	rs->ranked = true;
	qsort(rs->r, rs->n, sizeof(*rs->r), by_total);
	for (size_t i = 0; i < rs->n; i++)
		if (!rs->r[i].hist && rs->r[i].ndurs)
			qsort(rs->r[i].durs, rs->r[i].ndurs, sizeof(uint64_t), by_u64);
}

/* "futex<block_io" as the text report says it: "futex ← block_io". */
static void kinds_text(const char *kinds, FILE *out)
{
	for (const char *p = kinds; *p; p++) {
		if (*p == '<')
			fprintf(out, " %s ", ws_arrow());
		else
			fputc(*p, out);
	}
}

void ws_reasons_text(struct ws_reasons *rs, FILE *out, int top)
{
	char tot[32], all[32], p50[32], p90[32], max[32], e[WS_ESC_LEN], e2[4 * 128];

	rank(rs);
	if (!rs->n)
		return;
	ws_format_duration(rs->all, all, sizeof(all));
	fprintf(out, "Reasons, costliest first (%zu for %s of reported waiting):\n", rs->n, all);
	for (size_t i = 0; i < rs->n && (int)i < top; i++) {
		struct reason *r = &rs->r[i];

		ws_format_duration(r->total, tot, sizeof(tot));
		ws_format_duration(percentile(r, 50), p50, sizeof(p50));
		ws_format_duration(percentile(r, 90), p90, sizeof(p90));
		ws_format_duration(r->max, max, sizeof(max));
		fprintf(out, "%2zu. %s (%.0f%%) in %" PRIu64 " wait%s of %s: ", i + 1, tot,
			rs->all ? 100.0 * r->total / rs->all : 0.0, r->count,
			r->count == 1 ? "" : "s", ws_text_esc(r->comm, e, sizeof(e)));
		kinds_text(r->kinds, out);
		fprintf(out, "; root: %s\n",
			r->root[0] ? ws_text_esc(r->root, e2, sizeof(e2)) : "?");
		if (r->count > 1)
			fprintf(out, "    each p50 %s, p90 %s, max %s; the longest:\n", p50, p90,
				max);
		for (const char *l = r->example; l && *l;) {
			const char *e = strchr(l, '\n');
			int len = e ? (int)(e - l) : (int)strlen(l);

			fprintf(out, "    %.*s\n", len, l);
			l += len + (e ? 1 : 0);
		}
	}
	if ((int)rs->n > top)
		fprintf(out, "    (%zu more reasons: --format json lists them all)\n",
			rs->n - (size_t)top);
	fputc('\n', out);
}

int ws_reasons_shown(struct ws_reasons *rs, const char *text, int top)
{
	rank(rs);
	for (size_t i = 0; i < rs->n && (int)i < top; i++)
		if (rs->r[i].example && text && !strcmp(rs->r[i].example, text))
			return (int)i + 1;
	return 0;
}

void ws_reasons_json(struct ws_reasons *rs, FILE *out)
{
	rank(rs);
	for (size_t i = 0; i < rs->n; i++) {
		struct reason *r = &rs->r[i];
		const char *k = r->kinds;

		fprintf(out, "{\"type\":\"reason\",\"rank\":%zu,\"comm\":", i + 1);
		ws_json_str(out, r->comm);
		fputs(",\"kinds\":[", out);
		while (*k) {
			char kind[KINDS_LEN];
			size_t len = strcspn(k, "<");

			snprintf(kind, sizeof(kind), "%.*s", (int)len, k);
			fputs(k == r->kinds ? "" : ",", out);
			ws_json_str(out, kind);
			k += len + (k[len] ? 1 : 0);
		}
		fputs("],\"root\":", out);
		ws_json_str(out, r->root);
		fprintf(out,
			",\"count\":%" PRIu64 ",\"total_ns\":%" PRIu64 ",\"p50_ns\":%" PRIu64
			",\"p90_ns\":%" PRIu64 ",\"max_ns\":%" PRIu64 ",\"share\":%.4f}\n",
			r->count, r->total, percentile(r, 50), percentile(r, 90), r->max,
			rs->all ? (double)r->total / rs->all : 0.0);
	}
}

size_t ws_reasons_lengths_bytes(const struct ws_reasons *rs)
{
	size_t n = 0;

	for (size_t i = 0; i < rs->n; i++)
		n += rs->r[i].hist ? WS_LENHIST_BUCKETS * sizeof(uint64_t)
				   : rs->r[i].durs_cap * sizeof(uint64_t);
	return n;
}
