// SPDX-License-Identifier: MIT
/* Reasons: chains grouped by victim name, kinds along the chain and root; ranked by total. */
#include <criterion/criterion.h>
#include <errno.h>
#include <locale.h>
#include <stdlib.h>
#include <string.h>

#include "report/reasons.h"

static int renders;

static int render(void *ctx, const struct ws_chain *c, char **text)
{
	(void)ctx;
	renders++;
	return asprintf(text, "chain of %u blocked %llu\n", c->victim->tid,
			(unsigned long long)(c->end - c->start)) < 0
		       ? -ENOMEM
		       : 0;
}

/* A chain of @victim (named @comm) blocked @ns, links of @kinds ("futex,block_io"), @root. */
static void chain(struct ws_chain *c, struct ws_thread *victim, const char *comm, uint64_t ns,
		  const char *kinds, const char *root)
{
	static char kbuf[8][16][32];
	static int slot;
	char *save, *k, *dup = strdup(kinds);

	memset(c, 0, sizeof(*c));
	memset(victim, 0, sizeof(*victim));
	victim->tid = 100;
	snprintf(victim->comm, sizeof(victim->comm), "%s", comm);
	c->victim = victim;
	c->start = 1000;
	c->end = 1000 + ns;
	slot = (slot + 1) % 8;
	for (k = strtok_r(dup, ",", &save); k; k = strtok_r(NULL, ",", &save)) {
		snprintf(kbuf[slot][c->nlinks], sizeof(kbuf[0][0]), "%s", k);
		c->links[c->nlinks].kind = kbuf[slot][c->nlinks];
		c->nlinks++;
	}
	snprintf(c->root, sizeof(c->root), "%s", root);
	free(dup);
}

static char *run_text(struct ws_reasons *rs, int top)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	ws_reasons_text(rs, f, top);
	fclose(f);
	return buf;
}

Test(reasons, groups_by_signature_and_ranks_by_total)
{
	struct ws_reasons *rs = ws_reasons_new(render, NULL);
	struct ws_thread v;
	struct ws_chain c;
	char *text, *a, *b;

	cr_assert_not_null(rs);
	/* ten futex waits that reach the disk: 12, 14, ... 30ms = 210ms */
	for (int i = 1; i <= 10; i++) {
		chain(&c, &v, "db", i * 2000000ULL + 10000000ULL, "futex,block_io",
		      "block I/O on vda");
		cr_assert_eq(ws_reasons_add(rs, &c), 0);
	}
	/* one longer timer sleep of another thread: 150ms, and a 100ms one of the same name */
	chain(&c, &v, "cron", 150000000ULL, "sleep", "timer sleep in cron");
	cr_assert_eq(ws_reasons_add(rs, &c), 0);
	/* same victim and root but different kinds: a reason of its own */
	chain(&c, &v, "db", 100000000ULL, "futex,running", "block I/O on vda");
	cr_assert_eq(ws_reasons_add(rs, &c), 0);

	/* the arrow follows the locale's character set, as whyslow's main() selects it */
	cr_assert_not_null(setlocale(LC_CTYPE, "C.UTF-8"));
	text = run_text(rs, 5);
	a = strstr(text, "in 10 waits of db: futex ← block_io; root: block I/O on vda");
	b = strstr(text, "in 1 wait of cron: sleep; root: timer sleep in cron");
	cr_assert_not_null(a, "%s", text);
	cr_assert_not_null(b, "%s", text);
	cr_assert_lt(a, b, "the 210ms reason ranks above the 150ms one:\n%s", text);
	cr_assert_not_null(strstr(text, "3 for 460ms"), "%s", text);
	/* nearest-rank percentiles of 12,14,...,30 ms: p50 = 20ms, p90 = 28ms, max 30ms */
	cr_assert_not_null(strstr(text, "each p50 20ms, p90 28ms, max 30ms"), "%s", text);
	/* the example is the worst wait of the reason */
	cr_assert_not_null(strstr(text, "chain of 100 blocked 30000000"), "%s", text);
	free(text);
	ws_reasons_free(rs);
}

Test(reasons, json_lists_every_reason_with_shares)
{
	struct ws_reasons *rs = ws_reasons_new(render, NULL);
	struct ws_thread v;
	struct ws_chain c;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	chain(&c, &v, "a", 300, "futex,block_io", "block I/O on vda");
	ws_reasons_add(rs, &c);
	chain(&c, &v, "b", 100, "runqueue", "runqueue on CPU 1");
	ws_reasons_add(rs, &c);
	f = open_memstream(&buf, &len);
	ws_reasons_json(rs, f);
	fclose(f);
	cr_assert_not_null(
		strstr(buf, "{\"type\":\"reason\",\"rank\":1,\"comm\":\"a\","
			    "\"kinds\":[\"futex\",\"block_io\"],\"root\":\"block I/O on vda\","
			    "\"count\":1,\"total_ns\":300,\"p50_ns\":300,\"p90_ns\":300,"
			    "\"max_ns\":300,\"share\":0.7500}"),
		"%s", buf);
	cr_assert_not_null(strstr(buf, "\"rank\":2,\"comm\":\"b\""), "%s", buf);
	free(buf);
	ws_reasons_free(rs);
}

Test(reasons, renders_only_a_new_worst)
{
	struct ws_reasons *rs = ws_reasons_new(render, NULL);
	struct ws_thread v;
	struct ws_chain c;

	renders = 0;
	chain(&c, &v, "a", 500, "futex", "x");
	ws_reasons_add(rs, &c);
	chain(&c, &v, "a", 400, "futex", "x");
	ws_reasons_add(rs, &c);
	chain(&c, &v, "a", 600, "futex", "x");
	ws_reasons_add(rs, &c);
	cr_assert_eq(renders, 2, "rendered %d times", renders);
	ws_reasons_free(rs);
}

/* The p50, p90 and max one reason's JSON line says, after @n waits of i * 1000 + 7 ns (i = 1..@n,
 * in a scrambled order). */
static size_t lengths_bytes;

static void percentiles_of(unsigned long n, unsigned long long *p50, unsigned long long *p90,
			   unsigned long long *max)
{
	struct ws_reasons *rs = ws_reasons_new(render, NULL);
	struct ws_thread v;
	struct ws_chain c;
	char *buf = NULL, *p;
	size_t len = 0;
	FILE *f;

	for (unsigned long k = 0; k < n; k++) {
		/* 7919 is prime to every n used here: a permutation of 1..n */
		chain(&c, &v, "a", (k * 7919 % n + 1) * 1000 + 7, "futex", "r");
		cr_assert_eq(ws_reasons_add(rs, &c), 0);
	}
	lengths_bytes = ws_reasons_lengths_bytes(rs);
	f = open_memstream(&buf, &len);
	ws_reasons_json(rs, f);
	fclose(f);
	p = strstr(buf, "\"p50_ns\":");
	cr_assert_not_null(p, "%s", buf);
	cr_assert_eq(sscanf(p, "\"p50_ns\":%llu,\"p90_ns\":%llu,\"max_ns\":%llu", p50, p90, max), 3,
		     "%s", buf);
	free(buf);
	ws_reasons_free(rs);
}

/* A run of up to 4096 waits of a reason: its percentiles exact, nearest rank, as always. */
Test(reasons, percentiles_exact_for_small_runs)
{
	unsigned long long p50, p90, max;

	percentiles_of(4096, &p50, &p90, &max);
	cr_expect_eq(p50, 2048 * 1000ULL + 7);
	cr_expect_eq(p90, 3687 * 1000ULL + 7); /* rank ceil(4096 * 0.9) = 3687 */
	cr_expect_eq(max, 4096 * 1000ULL + 7);
}

/* Past that the lengths are a histogram (bounded memory): within 1.6% (its stated error). */
Test(reasons, percentiles_bounded_for_long_runs)
{
	unsigned long long p50, p90, max, t50 = 100000 * 1000ULL + 7, t90 = 180000 * 1000ULL + 7;

	percentiles_of(200000, &p50, &p90, &max);
	cr_expect_leq(p50 > t50 ? p50 - t50 : t50 - p50, t50 / 64, "p50 %llu, true %llu", p50, t50);
	cr_expect_leq(p90 > t90 ? p90 - t90 : t90 - p90, t90 / 64, "p90 %llu, true %llu", p90, t90);
	cr_expect_eq(max, 200000 * 1000ULL + 7);
	/* not 8 bytes a wait (1.6 MB here): the histogram's 16 KiB */
	cr_expect_leq(lengths_bytes, 16384, "%zu bytes of lengths", lengths_bytes);
}
