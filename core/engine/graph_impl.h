/* SPDX-License-Identifier: MIT */
/*
 * The graph's insides, shared by its files and by nothing else: graph.c (timelines),
 * graph_claims.c (interned explanations), graph_cpus.c (who ran where, and names),
 * graph_evict.c (what history is kept), graph_life.c (making and freeing a graph).
 */
#ifndef WS_GRAPH_IMPL_H
#define WS_GRAPH_IMPL_H

#include <whyslow/table.h>

#include "graph.h"

#define CLAIM_NONE 0
#define RECENT_THREADS 64

/*
 * An interned claim. Its copy holds the claim's used bytes only (claim_used(): the head and
 * its nfields fields), not the 12 fields a claim has room for: most use three to six, and a
 * claim per packet or sector made the full 1.2 KB slots half of a busy report's memory.
 */
struct claim_slot {
	struct ws_claim *c; /* NULL while the slot is free */
	uint64_t hash;
	uint64_t group;	    /* see ws_graph_claim_group */
	uint32_t refs;	    /* 0: free */
	uint32_t next_same; /* next live claim with the same hash (0: none) */
};

/* Every thread seen, traced or not, by tid: what to call it. */
struct graph_name {
	uint32_t pid;
	char comm[WS_COMM];
	uint64_t seen; /* last record naming it, so names of long-gone tids can go */
};

struct cpu_run {
	uint64_t ts;
	uint32_t tid, pid;
};

struct cpu_hist {
	struct cpu_run *r;
	size_t head, n, cap;
	uint64_t evicted_to; /* runs before this were dropped */
	bool listed;	     /* in ws_graph.used */
	/* a run was pushed before the one kept last (a late record): not in time order */
	bool unsorted;
	size_t near; /* where ws_graph_cpu_users' last search ended, a place to start the next */
};

struct loss {
	uint64_t from, to;
};

struct ws_graph {
	struct ws_graph_ops ops;
	uint64_t min_block, max_window;
	uint64_t max_history; /* bytes of intervals and CPU runs kept at most */
	size_t live_runs;     /* CPU run entries kept, all CPUs */

	struct ws_table threads; /* tid -> struct ws_thread *: current incarnations */
	/*
	 * Current incarnations looked up lately, at tid % RECENT_THREADS: a switch names two
	 * threads and a wakeup one, nearly always threads named a moment ago, and probing the
	 * table for them was 3% of `report`'s instructions. thread_unlink() drops an entry.
	 */
	struct ws_thread *recent[RECENT_THREADS];
	struct ws_thread *dead; /* exited threads still kept, the latest first */
	size_t ndead;
	struct ws_table dead_by_tid; /* tid -> struct ws_thread *: its latest in dead */
	uint64_t dead_dropped_to;    /* the latest death among those dropped early */
	uint64_t helpers; /* threads marked helpers: followed, not counted among the program's */

	struct ws_table names; /* tid -> struct graph_name */
	/*
	 * Names looked up lately, at tid % RECENT_THREADS: every record names a thread, nearly
	 * always one named a moment ago. Forgotten whenever the table moves its entries (it
	 * grows, or graph_names_evict() rebuilds it; names are never deleted one by one).
	 */
	struct graph_name *names_recent[RECENT_THREADS];

	struct claim_slot *claims; /* id = index; 0 unused */
	size_t nclaims, claims_cap, claims_live;
	struct ws_table claim_index; /* hash -> id of the first claim with that hash */
	uint32_t *claim_free;
	size_t nfree, free_cap;
	/*
	 * The core's own claims asked for lately, by the addresses of their texts (constants),
	 * each with its bytes to check the id against: a late switch-out asks for the same one
	 * at every period the kernel summarised, and hashing it each time was 1% of `report`.
	 */
	struct core_claim_memo {
		const char *kind, *evidence;
		uint32_t id;
		struct ws_claim c;
	} core_recent[4];
	unsigned int core_recent_next;

	struct cpu_hist *cpus;
	size_t ncpus;
	bool ncpus_known; /* ws_graph_set_ncpus(): no CPU is added past ncpus */
	/*
	 * The CPU ids seen, in first-seen order: the loops over every CPU walk
	 * these, so one record with cpu = 65535 costs one slot, not 65,536 per pass.
	 */
	uint16_t *used;
	size_t nused, used_cap;

	struct loss *losses;
	size_t nlosses, losses_cap;

	uint64_t last_ts;     /* the latest record's time: where open intervals end at a flush */
	uint64_t ival_passes; /* see ws_graph_ival_pass() */
	/*
	 * A source wrote a switch-out late (it summarises short periods): a thread seen running
	 * may have left the CPU since, in a wait the graph learns of only when it ends.
	 */
	bool late_outs;
	uint32_t follow_tid; /* every wait of this thread goes to on_wait (ws_graph_follow) */
	/* out of memory: what could not be kept spans [oom_from, oom_to]; chains there are
	 * incomplete */
	uint64_t oom_from, oom_to;
	uint64_t follow_min;
	uint64_t live_batches; /* struct ws_short_batch kept, counted in the history's bytes */
	struct ws_graph_stats st;
};

/* The thread in slot @i of the thread table, or NULL (iterate i < g->threads.cap). */
static inline struct ws_thread *graph_thread_at(struct ws_graph *g, size_t i)
{
	struct ws_thread **t = ws_table_at(&g->threads, i);

	return t ? *t : NULL;
}

void graph_oom(struct ws_graph *g, uint64_t ts);
/* When @t's current running stretch began; 0 when it is not running. */
uint64_t graph_running_since(struct ws_thread *t);

/* graph_claims.c */
uint32_t graph_claim_intern(struct ws_graph *g, const struct ws_claim *c);
uint32_t graph_claim_intern_near(struct ws_graph *g, const struct ws_claim *c, uint32_t *hint);
/* A whole claim, the rest zeroed, from an interned copy (its used bytes only): to add fields to */
void graph_claim_unpack(const struct ws_claim *in, struct ws_claim *out);
/* The core's claim @kind, @evidence (string constants: they are remembered by address). */
uint32_t graph_core_claim(struct ws_graph *g, const char *kind, const char *evidence);
void graph_claim_put(struct ws_graph *g, uint32_t id);
/* One more holder of claim @id (0: none): @id. */
uint32_t graph_claim_ref(struct ws_graph *g, uint32_t id);
/*
 * graph_reclaim.c: the claim of @t's reclaim that @ev begins (held; 0 on ENOMEM), and the claim
 * of a wait inside it (held) from the reclaim's and the one that ended the wait (@wait, let go).
 */
uint32_t graph_reclaim_claim(struct ws_graph *g, const struct ws_thread *t,
			     const struct ws_thread_event *ev);
uint32_t graph_reclaim_wait(struct ws_graph *g, uint32_t reclaim, uint32_t wait);
/*
 * graph_reclaim.c: the claim of a wait (@wait, let go) that is a swap-in (a block_io claim
 * with "fault" "swap_in"), named with the memory cgroup of reclaim claim @reclaim (held) and its
 * limit; any other wait's claim is @wait itself.
 */
uint32_t graph_swapin_limit(struct ws_graph *g, uint32_t reclaim, uint32_t wait);
void graph_claims_free(struct ws_graph *g);

/* graph_short.c */
void graph_short_causes(struct ws_graph *g, struct ws_thread *t, const struct ws_thread_event *ev);
void graph_short_evict(struct ws_graph *g, struct ws_thread *t);
uint64_t graph_short_kept(const struct ws_thread *t, uint64_t before);
/* @g NULL: the whole graph goes, nothing is counted down */
void graph_short_free(struct ws_graph *g, struct ws_thread *t);

/* graph_cpus.c */
/*
 * Name thread @tid (@comm cut at WS_COMM - 1 bytes, as strncpy does; NULL: keep the name).
 * Returns the name as the table keeps it (WS_COMM bytes, the last one 0), valid until the next
 * name is set, or NULL without memory.
 */
const char *graph_name_set(struct ws_graph *g, uint32_t tid, uint32_t pid, const char *comm,
			   uint64_t ts);
const struct graph_name *graph_name(struct ws_graph *g, uint32_t tid);
void graph_names_evict(struct ws_graph *g, uint64_t before);
void graph_cpu_push(struct ws_graph *g, uint16_t cpu, uint64_t ts, uint32_t tid, uint32_t pid);
uint64_t graph_cpu_last_ts(struct ws_graph *g, uint16_t cpu);
/* @tid left @cpu at @off, reported late: if it is still @cpu's last holder, it was until @off. */
void graph_cpu_left(struct ws_graph *g, uint16_t cpu, uint32_t tid, uint64_t off);
uint64_t graph_cpu_run_start(struct ws_graph *g, uint16_t cpu, uint64_t ts);
size_t graph_cpus_evict(struct ws_graph *g, uint64_t before);
uint64_t graph_runs_kept(struct ws_graph *g, uint64_t before);
void graph_cpus_free(struct ws_graph *g);

/* graph_evict.c */
uint64_t graph_history_bytes(struct ws_graph *g);
/* @t exited: kept for chains that need it, within DEAD_KEPT threads (graph_evict.c). */
void graph_dead_add(struct ws_graph *g, struct ws_thread *t);
/* Drop the exited threads past the DEAD_KEPT latest to die, counted. */
void graph_dead_trim(struct ws_graph *g);

#endif /* WS_GRAPH_IMPL_H */
