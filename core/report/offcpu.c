// SPDX-License-Identifier: MIT
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <whyslow/table.h>

#include "offcpu.h"
#include "short_text.h"
#include "base/util.h"

#define RES_LEN 96
#define RES_KEPT 4 /* resources named per thread; the rest are summed as "other" */
/*
 * Threads gone (exited, out of the graph) whose own lines are kept: a program that churns
 * threads must not make the report hold every thread that ever lived (issue 36). Past twice
 * this, the gone threads with the least time in short waits are summed into one entry and
 * counted; those kept are the largest, so the text's top list is the same.
 */
#define GONE_KEPT 4096

struct res_total {
	char res[RES_LEN];
	uint64_t n, ns;
};

struct thr {
	uint32_t tid, pid;
	uint64_t born;
	char comm[WS_COMM];
	uint64_t off_ns, reported_ns, reported_n, short_ns, short_n;
	uint64_t cur_off;      /* the off-CPU period being summed (intervals so far) */
	char cur_res[RES_LEN]; /* what its first blocked interval waited for */
	struct res_total res[RES_KEPT];
	struct res_total other;
	struct ws_short_waits summ; /* the kernel's counters for this thread, cumulative */
	/* what they waited for (the graph's whole-life sums, sched 1.6), and the wakers' names */
	uint32_t summ_nc;
	uint64_t summ_at; /* summ.n when they were copied */
	struct ws_short_cause summ_c[WS_SHORT_KEPT];
	struct waker_name {
		uint32_t tid;
		char comm[WS_COMM];
	} summ_wk[WS_SHORT_KEPT];
	uint32_t older; /* index + 1 of this tid's previous incarnation in the array; 0: none */
	bool gone;	/* its thread left the graph: no interval of it comes again */
	uint64_t short_taken; /* short_total() at the last ws_offcpu_short_since() */
};

struct ws_offcpu {
	uint64_t min_block;
	struct thr *t; /* in the order threads were first seen */
	size_t n, cap;
	struct ws_table by_tid; /* tid -> uint32_t: index + 1 of its newest incarnation in t */
	size_t ngone;		/* entries of t that are gone */
	struct thr dropped;	/* the sums of the gone threads no longer kept one by one */
	uint64_t ndropped;	/* how many */
	uint64_t chains_ns, unexplained_ns, idle_ns, idle_n;
	/*
	 * res_of()'s last answer, for @res_claim during the graph's pass @res_pass: a thread waits
	 * on the same claim again and again, and building its words for every blocked interval
	 * was 3% of `report`'s instructions.
	 */
	const struct ws_claim *res_claim;
	uint64_t res_pass;
	char res[RES_LEN];
};

struct ws_offcpu *ws_offcpu_new(uint64_t min_block_ns)
{
	struct ws_offcpu *oc = calloc(1, sizeof(*oc));

	if (!oc)
		return NULL;
	oc->min_block = min_block_ns;
	ws_table_init(&oc->by_tid, sizeof(uint32_t));
	return oc;
}

void ws_offcpu_free(struct ws_offcpu *oc)
{
	if (!oc)
		return;
	ws_table_free(&oc->by_tid);
	free(oc->t);
	free(oc);
}

/* The entry of @t's incarnation (tid and birth), or NULL when it has none. */
static struct thr *thr_find(struct ws_offcpu *oc, const struct ws_thread *t)
{
	const uint32_t *newest;

	/* the last one asked for is usually asked again */
	if (oc->n && oc->t[oc->n - 1].tid == t->tid && oc->t[oc->n - 1].born == t->born)
		return &oc->t[oc->n - 1];
	newest = ws_table_get(&oc->by_tid, t->tid);
	for (uint32_t i = newest ? *newest : 0; i; i = oc->t[i - 1].older)
		if (oc->t[i - 1].born == t->born)
			return &oc->t[i - 1];
	return NULL;
}

/* Entry @i (of the array) becomes the newest incarnation of its tid. 0 or -ENOMEM. */
static int thr_index(struct ws_offcpu *oc, size_t i)
{
	uint32_t *newest = ws_table_put(&oc->by_tid, oc->t[i].tid, NULL);

	if (!newest)
		return -ENOMEM;
	oc->t[i].older = *newest;
	*newest = i + 1;
	return 0;
}

/* @t's entry, added when it has none; NULL without memory. */
static struct thr *thr_of(struct ws_offcpu *oc, const struct ws_thread *t)
{
	struct thr *e = thr_find(oc, t);

	if (e)
		return e;
	if (oc->n >= UINT32_MAX - 1 || !t->tid ||
	    ws_grow((void **)&oc->t, &oc->cap, oc->n + 1, sizeof(*oc->t)))
		return NULL;
	e = &oc->t[oc->n];
	memset(e, 0, sizeof(*e));
	e->tid = t->tid;
	e->pid = t->pid;
	e->born = t->born;
	if (thr_index(oc, oc->n))
		return NULL;
	oc->n++;
	return e;
}

static uint64_t short_total(const struct thr *e);

/* Add what @e counted into @sum (the dropped threads' entry). */
static void thr_fold(struct thr *sum, const struct thr *e)
{
	sum->off_ns += e->off_ns;
	sum->reported_ns += e->reported_ns;
	sum->reported_n += e->reported_n;
	sum->short_ns += e->short_ns;
	sum->short_n += e->short_n;
	sum->cur_off += e->cur_off;
	sum->summ.n += e->summ.n;
	sum->summ.blocked_ns += e->summ.blocked_ns;
	sum->summ.runnable_ns += e->summ.runnable_ns;
}

/* Gone entries by time in short waits, largest first; then first seen first (deterministic). */
static int by_gone_short(const void *a, const void *b)
{
	const struct thr *x = *(const struct thr *const *)a, *y = *(const struct thr *const *)b;
	uint64_t sx = short_total(x), sy = short_total(y);

	return sx < sy ? 1 : sx > sy ? -1 : x < y ? -1 : x > y;
}

/*
 * Keep GONE_KEPT gone threads (those with the most time in short waits), fold the rest into
 * oc->dropped, and close the array up, in its order. The tid index is rebuilt: newer
 * incarnations come later in the array. 0 or -ENOMEM (then nothing changed).
 */
static int thr_drop_gone(struct ws_offcpu *oc)
{
	struct thr **gone = malloc(oc->ngone * sizeof(*gone));
	struct ws_table idx;
	size_t ng = 0, k = 0;

	if (!gone)
		return -ENOMEM;
	for (size_t i = 0; i < oc->n; i++)
		if (oc->t[i].gone)
			gone[ng++] = &oc->t[i];
	qsort(gone, ng, sizeof(*gone), by_gone_short);
	for (size_t i = GONE_KEPT; i < ng; i++) {
		thr_fold(&oc->dropped, gone[i]);
		gone[i]->tid = 0; /* marks it dropped for the pass below */
	}
	free(gone);
	oc->ndropped += ng > GONE_KEPT ? ng - GONE_KEPT : 0;
	oc->ngone = ng < GONE_KEPT ? ng : GONE_KEPT;
	for (size_t i = 0; i < oc->n; i++)
		if (oc->t[i].tid)
			oc->t[k++] = oc->t[i];
	oc->n = k;
	idx = oc->by_tid;
	ws_table_init(&oc->by_tid, sizeof(uint32_t));
	ws_table_free(&idx);
	for (size_t i = 0; i < oc->n; i++)
		if (thr_index(oc, i))
			return -ENOMEM; /* the rest are not found again: each starts a new entry */
	ws_shrink((void **)&oc->t, &oc->cap, oc->n, sizeof(*oc->t));
	return 0;
}

int ws_offcpu_gone(struct ws_offcpu *oc, const struct ws_thread *t)
{
	struct thr *e = thr_find(oc, t);

	if (!e || e->gone)
		return 0;
	e->gone = true;
	oc->ngone++;
	/* each pass drops at least half of what it walks: linear in the threads overall */
	if (oc->ngone < 2 * GONE_KEPT || oc->ngone * 2 < oc->n)
		return 0;
	return thr_drop_gone(oc);
}

uint64_t ws_offcpu_dropped(const struct ws_offcpu *oc)
{
	return oc->ndropped;
}

static void res_add(struct thr *e, const char *res, uint64_t ns)
{
	int i;

	for (i = 0; i < RES_KEPT && e->res[i].n; i++)
		if (!strcmp(e->res[i].res, res))
			break;
	if (i == RES_KEPT) {
		e->other.n++;
		e->other.ns += ns;
		return;
	}
	if (!e->res[i].n)
		snprintf(e->res[i].res, sizeof(e->res[i].res), "%s", res);
	e->res[i].n++;
	e->res[i].ns += ns;
}

/* An off-CPU period ended (the thread got a CPU back): reported, or a short wait. */
static void period_end(struct ws_offcpu *oc, struct thr *e)
{
	if (!e->cur_off)
		return;
	if (e->cur_off >= oc->min_block) {
		e->reported_n++;
		e->reported_ns += e->cur_off;
	} else {
		e->short_n++;
		e->short_ns += e->cur_off;
		res_add(e, e->cur_res[0] ? e->cur_res : "runqueue", e->cur_off);
	}
	e->cur_off = 0;
	e->cur_res[0] = 0;
}

/* Append @s to the string of *@at bytes in @buf, cut as snprintf cuts at @len - 1 bytes. */
static void put(char *buf, size_t len, size_t *at, const char *s)
{
	size_t n = strlen(s);

	if (n > len - 1 - *at)
		n = len - 1 - *at;
	memcpy(buf + *at, s, n);
	*at += n;
	buf[*at] = 0;
}

/*
 * What the blocked period beginning with @claim waited for, as snprintf would have written
 * it; built by hand, since it is asked for every blocked interval of a long history (a
 * million snprintf calls on a 3M-record recording).
 */
static void res_of(struct ws_graph *g, const struct ws_claim *claim, char *buf, size_t len)
{
	size_t at = 0;

	buf[0] = 0;
	if (!claim) {
		put(buf, len, &at, "cause not recorded");
	} else if (strcmp(claim->kind, WS_CLAIM_QUOTA) == 0) {
		ws_quota_label(claim, buf, len);
	} else if (ws_kind_memory(claim->kind)) {
		ws_reclaim_label(claim, buf, len);
	} else if (ws_graph_resource(g, claim, buf, len) > 0) {
		return;
	} else if (claim->woken_by) {
		put(buf, len, &at, claim->kind);
		put(buf, len, &at, " (woken by ");
		put(buf, len, &at, ws_graph_comm(g, claim->woken_by));
		put(buf, len, &at, ")");
	} else {
		put(buf, len, &at, claim->kind);
	}
}

/*
 * res_of() into @buf (RES_LEN bytes), remembered for the claim: within one pass of the graph
 * handing intervals out, what a claim names stays the same (ws_graph_ival_pass()).
 */
static void res_of_claim(struct ws_offcpu *oc, struct ws_graph *g, const struct ws_claim *claim,
			 char *buf)
{
	uint64_t pass;

	if (!claim) {
		res_of(g, claim, buf, RES_LEN);
		return;
	}
	pass = ws_graph_ival_pass(g);
	if (claim != oc->res_claim || pass != oc->res_pass) {
		res_of(g, claim, oc->res, sizeof(oc->res));
		oc->res_claim = claim;
		oc->res_pass = pass;
	}
	memcpy(buf, oc->res, RES_LEN);
}

/*
 * @e takes the graph's sums of its summarised periods by cause, and the names of their wakers
 * now, while the graph still knows them (the report is printed after it is gone).
 */
static void causes_copy(struct thr *e, struct ws_graph *g, const struct ws_short_sum *s)
{
	e->summ_nc = s->nkept;
	memcpy(e->summ_c, s->kept, s->nkept * sizeof(*e->summ_c));
	for (uint32_t i = 0; i < s->nkept; i++) {
		e->summ_wk[i].tid = s->kept[i].waker;
		snprintf(e->summ_wk[i].comm, sizeof(e->summ_wk[i].comm), "%s",
			 s->kept[i].waker && g ? ws_graph_comm(g, s->kept[i].waker) : "");
	}
}

/* The name of waker @tid that causes_copy() kept in @ctx (a struct thr). */
static const char *waker_comm(void *ctx, uint32_t tid)
{
	const struct thr *e = ctx;

	for (uint32_t i = 0; i < e->summ_nc; i++)
		if (e->summ_wk[i].tid == tid && e->summ_wk[i].comm[0])
			return e->summ_wk[i].comm;
	return NULL;
}

/* @e's summarised periods, their costliest causes first (nc 0: no cause said). */
static void summ_top(const struct thr *e, struct ws_short_summary *s)
{
	memset(s, 0, sizeof(*s));
	s->n = e->summ.n;
	s->ns = e->summ.blocked_ns + e->summ.runnable_ns;
	ws_short_top(s, e->summ_c, e->summ_nc);
}

int ws_offcpu_ival(struct ws_offcpu *oc, struct ws_graph *g, const struct ws_thread *t,
		   const struct ws_ival *iv, const struct ws_claim *claim)
{
	struct thr *e = thr_of(oc, t);
	uint64_t len;

	if (!e)
		return -ENOMEM;
	memcpy(e->comm, t->comm, WS_COMM);
	e->comm[WS_COMM - 1] = 0;
	e->summ = t->short_waits;
	/* the sums change only with the counters: not copied again for every interval */
	if (t->shs && e->summ_at != e->summ.n) {
		causes_copy(e, g, t->shs);
		e->summ_at = e->summ.n;
	}
	if (iv->end == WS_NO_END || iv->end < iv->start)
		return 0;
	len = iv->end - iv->start;
	switch (iv->state) {
	case WS_STATE_RUNNING:
	/*
	 * Not observed: the wait before it ended there as far as the graph knows (it hands that
	 * wait out so: a switch-in that was never traced), not later.
	 */
	case WS_STATE_UNKNOWN:
		period_end(oc, e);
		break;
	case WS_STATE_BLOCKED:
		if (!e->cur_res[0])
			res_of_claim(oc, g, claim, e->cur_res);
		/* fallthrough */
	case WS_STATE_RUNNABLE:
		/* kept off the CPU by a quota, not waiting for one: named as a wait's cause is */
		if (iv->state == WS_STATE_RUNNABLE && (iv->flags & WS_IVAL_THROTTLED) &&
		    !e->cur_res[0])
			res_of_claim(oc, g, claim, e->cur_res);
		e->off_ns += len;
		e->cur_off += len;
		break;
	default:
		break;
	}
	return 0;
}

int ws_offcpu_chain(struct ws_offcpu *oc, const struct ws_chain *c, bool ranked,
		    uint64_t unexplained_ns)
{
	uint64_t ns = c->end - c->start;

	if (!ranked) {
		oc->idle_ns += ns;
		oc->idle_n++;
		return 0;
	}
	oc->chains_ns += ns;
	oc->unexplained_ns += unexplained_ns < ns ? unexplained_ns : ns;
	return 0;
}

void ws_offcpu_totals(const struct ws_offcpu *oc, struct ws_offcpu_totals *o)
{
	memset(o, 0, sizeof(*o));
	for (size_t i = 0; i <= oc->n; i++) {
		const struct thr *e = i < oc->n ? &oc->t[i] : &oc->dropped;

		o->off_ns += e->off_ns;
		o->reported_ns += e->reported_ns;
		o->reported_n += e->reported_n;
		o->short_ns += e->short_ns;
		o->short_n += e->short_n;
		o->open_ns += e->cur_off;
		o->summarised_n += e->summ.n;
		o->summarised_causes |= e->summ_nc > 0;
		o->summarised_ns += e->summ.blocked_ns + e->summ.runnable_ns;
	}
	o->chains_ns = oc->chains_ns;
	o->unexplained_ns = oc->unexplained_ns;
	o->explained_ns = oc->chains_ns - oc->unexplained_ns;
	o->idle_ns = oc->idle_ns;
	o->idle_n = oc->idle_n;
	/* chains and intervals count the same periods: nothing is negative unless they disagree,
	 * which the JSON's sums then show */
	if (o->reported_ns > oc->chains_ns + oc->idle_ns)
		o->not_reported_ns = o->reported_ns - oc->chains_ns - oc->idle_ns;
}

static int by_ns(const void *a, const void *b)
{
	const struct res_total *x = a, *y = b;

	return x->ns < y->ns ? 1 : x->ns > y->ns ? -1 : 0;
}

static uint64_t short_total(const struct thr *e)
{
	return e->short_ns + e->summ.blocked_ns + e->summ.runnable_ns;
}

uint64_t ws_offcpu_short_since(struct ws_offcpu *oc, const struct ws_thread *t)
{
	struct thr *e = thr_find(oc, t);
	uint64_t total, ns;

	if (!e)
		return 0;
	total = short_total(e);
	ns = total > e->short_taken ? total - e->short_taken : 0;
	e->short_taken = total;
	return ns;
}

static int by_short(const void *a, const void *b)
{
	uint64_t x = short_total(*(const struct thr *const *)a),
		 y = short_total(*(const struct thr *const *)b);

	return x < y ? 1 : x > y ? -1 : 0;
}

/* What goes before the next term of the summary's sum: " = " before the first, " + " after. */
static const char *sum_sep(int *nterm)
{
	return (*nterm)++ ? " + " : " = ";
}

/* ", 412 of 41us summarised in the kernel = 17ms: 300 on futex 0x… = 12ms, …" */
static void summ_text(FILE *out, const struct thr *h, bool more)
{
	struct ws_short_summary s;
	char a[32], b[32];

	summ_top(h, &s);
	ws_format_duration(s.ns, a, sizeof(a));
	ws_format_duration(s.ns / h->summ.n, b, sizeof(b));
	fprintf(out, "%s %" PRIu64 " of %s summarised in the kernel = %s", more ? "," : "",
		h->summ.n, b, a);
	if (!s.nc) {
		fprintf(out, " (cause not recorded)");
		return;
	}
	fprintf(out, ": ");
	ws_short_text(out, &s, waker_comm, (void *)h);
}

void ws_offcpu_text(const struct ws_offcpu *oc, FILE *out, int top)
{
	struct ws_offcpu_totals t;
	const struct thr **v;
	char a[32], b[32], c[32], d[32], mb[32], e[4 * 96];
	size_t nv = 0;
	int nterm = 0;

	ws_offcpu_totals(oc, &t);
	ws_format_duration(t.off_ns + t.summarised_ns, a, sizeof(a));
	ws_format_duration(t.explained_ns, b, sizeof(b));
	ws_format_duration(t.unexplained_ns, c, sizeof(c));
	ws_format_duration(t.idle_ns, d, sizeof(d));
	ws_format_duration(oc->min_block, mb, sizeof(mb));
	/*
	 * The parts of the sum, each left out when it is zero (a "+ 0ns" term says nothing); the
	 * first one follows " = ", the rest " + ".
	 */
	fprintf(out, "  Off CPU %s in all", a);
	if (t.explained_ns)
		fprintf(out, "%s%s explained by the reasons above", sum_sep(&nterm), b);
	if (t.unexplained_ns)
		fprintf(out, "%s%s unexplained (no wakeup or cause recorded)", sum_sep(&nterm), c);
	/* none when there were none, or --include-idle ranked them with the rest */
	if (t.idle_n)
		fprintf(out, "%s%s in %" PRIu64 " idle wait%s (not ranked)", sum_sep(&nterm), d,
			t.idle_n, ws_plural(t.idle_n, "", "s"));
	if (t.not_reported_ns) {
		ws_format_duration(t.not_reported_ns, a, sizeof(a));
		fprintf(out, "%s%s in waits of at least %s not reported (filtered out)",
			sum_sep(&nterm), a, mb);
	}
	ws_format_duration(t.short_ns, c, sizeof(c));
	ws_format_duration(t.summarised_ns, d, sizeof(d));
	if (t.short_n)
		fprintf(out, "%s%s in %" PRIu64 " wait%s shorter than %s", sum_sep(&nterm), c,
			t.short_n, ws_plural(t.short_n, "", "s"), mb);
	/* none without a resolution ([core] resolution = 0) */
	if (t.summarised_n)
		fprintf(out, "%s%s in %" PRIu64 " wait%s summarised in the kernel (%s)",
			sum_sep(&nterm), d, t.summarised_n, ws_plural(t.summarised_n, "", "s"),
			t.summarised_causes ? "by cause below" : "cause not recorded");
	if (t.open_ns) {
		ws_format_duration(t.open_ns, a, sizeof(a));
		fprintf(out, "%s%s still off CPU at the end", sum_sep(&nterm), a);
	}
	fprintf(out, "\n");
	v = malloc(oc->n * sizeof(*v) + 1);
	if (!v)
		return;
	for (size_t i = 0; i < oc->n; i++)
		if (short_total(&oc->t[i]))
			v[nv++] = &oc->t[i];
	if (nv)
		qsort(v, nv, sizeof(*v), by_short);
	for (size_t i = 0; i < nv && (int)i < top; i++) {
		struct thr sorted = *v[i], *h = &sorted;
		int nres = 0;

		while (nres < RES_KEPT && h->res[nres].n)
			nres++;
		qsort(h->res, nres, sizeof(h->res[0]), by_ns);

		ws_format_duration(short_total(h), a, sizeof(a));
		fprintf(out, "  %s (tid %u): %" PRIu64 " wait%s shorter than %s = %s:",
			ws_text_esc(h->comm, e, sizeof(e)), h->tid, h->short_n + h->summ.n,
			ws_plural(h->short_n + h->summ.n, "", "s"), mb, a);
		for (int k = 0; k < RES_KEPT && h->res[k].n; k++) {
			ws_format_duration(h->res[k].ns, a, sizeof(a));
			ws_format_duration(h->res[k].ns / h->res[k].n, b, sizeof(b));
			fprintf(out, "%s %" PRIu64 " of %s on %s = %s", k ? "," : "", h->res[k].n,
				b, ws_text_esc(h->res[k].res, e, sizeof(e)), a);
		}
		if (h->other.n) {
			ws_format_duration(h->other.ns, a, sizeof(a));
			fprintf(out, ", %" PRIu64 " on other things = %s", h->other.n, a);
		}
		if (h->summ.n)
			summ_text(out, h, h->res[0].n || h->other.n);
		fprintf(out, "\n");
	}
	free(v);
	if (oc->ndropped)
		fprintf(out,
			"  THREADS: %" PRIu64
			" threads that exited were too many to list one by one; their waits are in the totals above\n",
			oc->ndropped);
}

void ws_offcpu_json_threads(const struct ws_offcpu *oc, FILE *out)
{
	for (size_t i = 0; i < oc->n; i++) {
		const struct thr *h = &oc->t[i];
		struct ws_short_summary s;

		if (!short_total(h))
			continue;
		fprintf(out, "{\"type\":\"short_waits\",\"tid\":%u,\"pid\":%u,\"comm\":", h->tid,
			h->pid);
		ws_json_str(out, h->comm);
		fprintf(out, ",\"waits\":%" PRIu64 ",\"ns\":%" PRIu64 ",\"by_resource\":[",
			h->short_n, h->short_ns);
		for (int k = 0; k < RES_KEPT && h->res[k].n; k++) {
			fprintf(out, "%s{\"resource\":", k ? "," : "");
			ws_json_str(out, h->res[k].res);
			fprintf(out, ",\"waits\":%" PRIu64 ",\"ns\":%" PRIu64 "}", h->res[k].n,
				h->res[k].ns);
		}
		if (h->other.n)
			fprintf(out,
				"%s{\"resource\":null,\"waits\":%" PRIu64 ",\"ns\":%" PRIu64 "}",
				h->res[0].n ? "," : "", h->other.n, h->other.ns);
		summ_top(h, &s);
		/* the summarised ones by cause, marked: "waits" and "ns" above do not count them */
		if (s.nc)
			ws_short_json(out, &s, !h->res[0].n && !h->other.n);
		fprintf(out,
			"],\"summarised_waits\":%" PRIu64 ",\"summarised_blocked_ns\":%" PRIu64
			",\"summarised_runnable_ns\":%" PRIu64 "}\n",
			h->summ.n, h->summ.blocked_ns, h->summ.runnable_ns);
	}
}

void ws_offcpu_json_totals(const struct ws_offcpu *oc, FILE *out)
{
	struct ws_offcpu_totals t;

	ws_offcpu_totals(oc, &t);
	fprintf(out,
		",\"off_cpu_ns\":%" PRIu64 ",\"off_cpu_reported_ns\":%" PRIu64
		",\"off_cpu_reported_waits\":%" PRIu64 ",\"off_cpu_short_ns\":%" PRIu64
		",\"off_cpu_short_waits\":%" PRIu64 ",\"off_cpu_summarised_ns\":%" PRIu64
		",\"off_cpu_summarised_waits\":%" PRIu64 ",\"off_cpu_open_ns\":%" PRIu64
		",\"chains_blocked_ns\":%" PRIu64 ",\"off_cpu_explained_ns\":%" PRIu64
		",\"off_cpu_unexplained_ns\":%" PRIu64 ",\"off_cpu_idle_ns\":%" PRIu64
		",\"off_cpu_idle_waits\":%" PRIu64 ",\"off_cpu_not_reported_ns\":%" PRIu64
		",\"short_waits_threads_dropped\":%" PRIu64,
		t.off_ns + t.summarised_ns, t.reported_ns, t.reported_n, t.short_ns, t.short_n,
		t.summarised_ns, t.summarised_n, t.open_ns, t.chains_ns, t.explained_ns,
		t.unexplained_ns, t.idle_ns, t.idle_n, t.not_reported_ns, oc->ndropped);
}
