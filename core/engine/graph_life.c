// SPDX-License-Identifier: MIT
/*
 * A graph's life: made, told which thread to follow closely, counted, and freed with all its
 * threads. The timelines themselves are graph.c.
 */
#include <stdlib.h>

#include "graph_impl.h"

struct ws_graph *ws_graph_new(const struct ws_graph_ops *ops, uint64_t min_block_ns,
			      uint64_t max_window_ns, uint64_t max_history_bytes)
{
	struct ws_graph *g = calloc(1, sizeof(*g));

	if (!g)
		return NULL;
	g->ops = *ops;
	g->min_block = min_block_ns;
	g->max_window = max_window_ns;
	g->max_history = max_history_bytes;
	ws_table_init(&g->threads, sizeof(struct ws_thread *));
	ws_table_init(&g->names, sizeof(struct graph_name));
	ws_table_init(&g->dead_by_tid, sizeof(struct ws_thread *));
	ws_table_init(&g->claim_index, sizeof(uint32_t));
	return g;
}

void ws_graph_follow(struct ws_graph *g, uint32_t tid, uint64_t min_ns)
{
	g->follow_tid = tid;
	g->follow_min = min_ns ? min_ns : 1;
}

/*
 * Everything goes: no interval needs its claim released one by one (graph_thread_free()),
 * the claims go all at once. That walk read every interval of the history again, millions
 * of them, only to count references down.
 */
static void thread_drop(struct ws_thread *t)
{
	graph_short_free(NULL, t);
	free(t->iv);
	free(t);
}

void ws_graph_free(struct ws_graph *g)
{
	if (!g)
		return;
	for (size_t i = 0; i < g->threads.cap; i++) {
		struct ws_thread *t = graph_thread_at(g, i);

		if (t)
			thread_drop(t);
	}
	while (g->dead) {
		struct ws_thread *t = g->dead;

		g->dead = t->next_dead;
		thread_drop(t);
	}
	ws_table_free(&g->threads);
	ws_table_free(&g->dead_by_tid);
	graph_cpus_free(g);
	graph_claims_free(g);
	free(g->losses);
	free(g);
}

void ws_graph_stats(struct ws_graph *g, struct ws_graph_stats *st)
{
	*st = g->st;
	st->threads -= g->helpers; /* the program's threads */
	st->claims = g->claims_live;
	st->history_bytes = graph_history_bytes(g);
}
