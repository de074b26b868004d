// SPDX-License-Identifier: MIT
/*
 * The roots of a chain: what each link and each segment comes down to, named the way the
 * report groups them ("block I/O on vda", "CPU quota of ..."), and the one root the chain
 * settles on (ws_chain_settle_root()). Building the chain is chain.c.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <whyslow/syscall_names.h>

#include "chain.h"
#include "chain_impl.h"
#include "base/util.h"

/* The root of a stretch of a waker's timeline whyslow dropped (ws_chain_root_of()). */
#define BEFORE_KEPT "before the kept history (max_window, max_history)"

void chain_root_of_link(struct ws_graph *g, const struct ws_link *l, char *buf, size_t len)
{
	const struct ws_claim *cl = l->claim;

	/* a root its source names a resource for is grouped by it: "block I/O on vda" */
	if (cl && strcmp(l->kind, WS_CLAIM_QUOTA) == 0) {
		ws_quota_label(cl, buf, len);
	} else if (cl && ws_kind_memory(l->kind)) {
		ws_reclaim_label(cl, buf, len);
	} else if (cl && cl->root && ws_graph_resource(g, cl, buf, len) > 0) {
		return;
	} else if (strcmp(l->kind, WS_KIND_RUNQUEUE) == 0) {
		snprintf(buf, len, "runqueue on CPU %u", l->cpu);
	} else if (strcmp(l->kind, WS_KIND_WAKEUP_LATENCY) == 0) {
		snprintf(buf, len, "wakeup latency on CPU %u", l->cpu);
	} else if (strcmp(l->kind, WS_KIND_RUNNING) == 0 && l->shorts.nc) {
		char what[64];

		/* grouped by the costliest cause, never by counts (every chain's differ) */
		ws_short_cause_label(&l->shorts.c[0], what, sizeof(what));
		snprintf(buf, len, "CPU work and short waits (mostly %s) in %s", what, l->comm);
	} else if (strcmp(l->kind, WS_KIND_RUNNING) == 0) {
		ws_str_cat3(buf, len, ws_ival_work(l->flags), " in ", l->comm);
	} else if (cl && ws_graph_root_label(g, cl, l->comm, buf, len) > 0) {
		return; /* its source names it: "timer sleep in app", "untraced thread cron" */
	} else if (cl && strcmp(l->kind, "timeout") == 0 && ws_syscall_known(&cl->syscall) &&
		   ws_syscall_name(cl->syscall.arch, cl->syscall.nr)) {
		/* which call's own timeout: "poll timeout in curl", what the thread was doing */
		snprintf(buf, len, "%s timeout in %s",
			 ws_syscall_name(cl->syscall.arch, cl->syscall.nr), l->comm);
	} else {
		ws_str_cat3(buf, len, l->kind, " in ", l->comm);
	}
}

/* Every segment's root unknown yet; without room for them, none is kept. */
void chain_roots_reset(struct ws_chain *c)
{
	if (ws_grow((void **)&c->roots, &c->roots_cap, c->nsegs, sizeof(*c->roots)))
		return;
	for (size_t i = 0; i < c->nsegs; i++)
		c->roots[i].known = false;
	c->nroots = c->nsegs;
}

void ws_quota_label(const struct ws_claim *c, char *buf, size_t len)
{
	uint64_t quota = ws_claim_u64(c, "quota_us", 0), period = ws_claim_u64(c, "period_us", 0);
	const char *cg = ws_claim_str(c, "quota_cgroup", NULL);
	char q[32], p[32];
	int n;

	if (cg)
		n = snprintf(buf, len, "CPU quota of %s", cg);
	else if (ws_claim_field(c, "cgroup_id"))
		n = snprintf(buf, len, "CPU quota of cgroup id %" PRIu64,
			     ws_claim_u64(c, "cgroup_id", 0));
	else
		n = snprintf(buf, len, "CPU quota of a cgroup (not found)");
	if (quota && period && n >= 0 && (size_t)n < len) {
		ws_format_duration(quota * 1000, q, sizeof(q));
		ws_format_duration(period * 1000, p, sizeof(p));
		snprintf(buf + n, len - n, " (%s per %s)", q, p);
	}
}

void ws_reclaim_label(const struct ws_claim *c, char *buf, size_t len)
{
	uint64_t limit = ws_claim_u64(c, "limit_bytes", 0);
	const char *cg = ws_claim_str(c, "reclaim_cgroup", NULL);
	const char *which = strcmp(ws_claim_str(c, "limit", "max"), "high") == 0
				    ? "memory.high"
				    : "the memory limit";
	/* the memory.high throttle's sleep (a wait, no reclaim): named as a reclaim at a limit is
	 */
	bool high = strcmp(ws_claim_str(c, "reclaim", ""), "high_throttle") == 0;
	char size[32];
	int n;

	if (strcmp(ws_claim_str(c, "reclaim", ""), "compaction") == 0) {
		snprintf(buf, len, "direct memory compaction (an allocation of order %" PRIu64 ")",
			 ws_claim_u64(c, "order", 0));
		return;
	}
	if (!high && strcmp(ws_claim_str(c, "reclaim", ""), "memcg") != 0) {
		snprintf(buf, len, "direct memory reclaim (the machine's free memory ran low)");
		return;
	}
	if (!ws_claim_field(c, "reclaim_cgroup_id")) {
		/* memory.reclaim (v2) or a shrinking limit reclaims with no group at its limit */
		snprintf(buf, len, "memory reclaim in a memory cgroup (none found at its limit)");
		return;
	}
	if (high && cg)
		n = snprintf(buf, len, "the memory.high throttle of %s", cg);
	else if (high)
		n = snprintf(buf, len, "the memory.high throttle of cgroup id %" PRIu64,
			     ws_claim_u64(c, "reclaim_cgroup_id", 0));
	else if (cg)
		n = snprintf(buf, len, "memory reclaim for %s of %s", which, cg);
	else
		n = snprintf(buf, len, "memory reclaim for %s of cgroup id %" PRIu64, which,
			     ws_claim_u64(c, "reclaim_cgroup_id", 0));
	if (limit && n >= 0 && (size_t)n < len) {
		if (limit % (1024 * 1024) == 0)
			snprintf(size, sizeof(size), "%" PRIu64 " MB", limit / (1024 * 1024));
		else
			snprintf(size, sizeof(size), "%" PRIu64 " KB", limit / 1024);
		snprintf(buf + n, len - n, " (%s)", size);
	}
}

/* The blocked interval the wait @d began with, into @out; false when it has none. */
bool ws_chain_root_kind_of(struct ws_graph *g, const struct ws_segment *s, char *buf, size_t len,
			   char *kind, size_t kind_len)
{
	struct ws_chain tmp;

	if (ws_chain_walk_segment(g, s, &tmp)) {
		const struct ws_link *root = &tmp.links[tmp.nlinks - 1];

		ws_str_copy(kind, kind_len, root->kind);
		chain_root_of_link(g, root, buf, len);
		return strcmp(root->kind, WS_KIND_UNKNOWN) != 0;
	}
	ws_str_copy(kind, kind_len, s->kind);
	if (s->thread && strcmp(s->kind, WS_KIND_UNKNOWN) == 0 &&
	    s->start + s->dur <= s->thread->evicted_to) {
		/*
		 * Not an unknown cause: whyslow dropped this stretch of the waker's timeline
		 * (a wait longer than max_window); saying "unknown" would blame the program.
		 */
		ws_str_copy(buf, len, BEFORE_KEPT);
		return false;
	}
	ws_str_copy(buf, len, s->kind);
	return strcmp(s->kind, WS_KIND_UNKNOWN) != 0;
}

bool ws_chain_root_of(struct ws_graph *g, const struct ws_segment *s, char *buf, size_t len)
{
	char kind[16];

	return ws_chain_root_kind_of(g, s, buf, len, kind, sizeof(kind));
}

const struct ws_seg_root *ws_chain_seg_root(struct ws_graph *g, const struct ws_chain *c, size_t i,
					    struct ws_seg_root *scratch)
{
	struct ws_seg_root *r = i < c->nroots ? &c->roots[i] : scratch;

	if (r == scratch || !r->known) {
		r->named = ws_chain_root_kind_of(g, &c->segs[i], r->key, sizeof(r->key), r->kind,
						 sizeof(r->kind));
		r->known = true;
	}
	return r;
}

/*
 * A chain's root is the root that explains most of its time, read off its segments the way the
 * summary's root causes are: each segment's root (ws_chain_seg_root()), their time summed per
 * root, the largest sum wins (on a tie, the root met first in the wait). The chain, its reason
 * and the summary then say the same. The links follow the dominant activity hop by hop, into
 * the longest wait of the largest group, and that one wait can have another cause than most of
 * the wait (a server's 249 ms of CPU work after seconds of waits on the disk): where they end
 * is kept in @links_root, and the report says so. Time whose root names no cause (not
 * observed, no wakeup recorded, before the kept history) is a root like any other; when it is
 * more than half of the wait, or the root itself, the chain is incomplete: a named root would
 * say more than the evidence.
 */
void ws_chain_settle_root(struct ws_graph *g, struct ws_chain *c)
{
	static const char *const why[2][2] = {
		{ "the largest part of this wait has no recorded cause (not observed, or no wakeup recorded)",
		  "the largest part of this wait lies before the kept history (max_window, max_history)" },
		{ "most of this wait has no recorded cause (not observed, or no wakeup recorded)",
		  "most of this wait lies before the kept history (max_window, max_history)" },
	};
	uint64_t best_ns = 0, unnamed = 0, before = 0, blocked = c->end - c->start;
	struct ws_seg_root scratch;
	size_t best = 0;

	if (!c->nsegs)
		return;
	if (c->nroots < c->nsegs) {
		/* no room to keep the segments' roots (chain_roots_reset()): the links' root stays
		 */
		c->incomplete = true;
		c->why_incomplete = "whyslow ran out of memory during this wait";
		return;
	}
	for (size_t i = 0; i < c->nsegs; i++) {
		const struct ws_seg_root *r = ws_chain_seg_root(g, c, i, &scratch);

		if (!r->named) {
			unnamed += c->segs[i].dur;
			before += strcmp(r->key, BEFORE_KEPT) == 0 ? c->segs[i].dur : 0;
		}
	}
	/* a chain has a few dozen segments and fewer roots: summed by each root's first segment */
	for (size_t i = 0; i < c->nsegs; i++) {
		const char *key = c->roots[i].key;
		uint64_t ns = 0;
		size_t j = 0;

		while (j < i && strcmp(c->roots[j].key, key))
			j++;
		if (j < i)
			continue;
		for (size_t k = i; k < c->nsegs; k++)
			ns += k == i || strcmp(c->roots[k].key, key) == 0 ? c->segs[k].dur : 0;
		if (i == 0 || ns > best_ns) {
			best = i;
			best_ns = ns;
		}
	}
	if (strcmp(c->roots[best].key, c->root)) {
		/* "unknown" and "unknown in app" (an unknown waker the links reach) say the same */
		if (c->roots[best].named ||
		    (c->nlinks && strcmp(c->links[c->nlinks - 1].kind, WS_KIND_UNKNOWN)))
			memcpy(c->links_root, c->root, sizeof(c->links_root));
		ws_str_copy(c->root, sizeof(c->root), c->roots[best].key);
	}
	c->root_ns = best_ns;
	if (!c->incomplete && (!c->roots[best].named || unnamed * 2 > blocked)) {
		c->incomplete = true;
		c->why_incomplete = why[unnamed * 2 > blocked][before * 2 > unnamed];
	}
}
