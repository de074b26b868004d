/* SPDX-License-Identifier: MIT */
/*
 * The wait-for graph of one snapshot: each blocked thread points at the
 * thread that holds what it waits for (when evidence named one). Following
 * the pointers gives the chain of owners; a cycle is a deadlock.
 */
#ifndef WS_WAITFOR_H
#define WS_WAITFOR_H

#include <stddef.h>
#include <stdint.h>

struct ws_waitfor_node {
	uint32_t tid;
	uint32_t owner; /* tid holding what @tid waits for, 0 = none known */
};

/*
 * Index of the node for the owner of @nodes[@i], or -1 (no owner, or the
 * owner is not among the nodes).
 */
long ws_waitfor_next(const struct ws_waitfor_node *nodes, size_t n, size_t i);

/*
 * Find every cycle. Each is written to @cycles as node indices in waiting
 * order (node k waits for node k+1, the last for the first), starting at its
 * lowest index, one cycle after another, with @lens[c] its length. Returns the
 * number of cycles (at most @max_cycles; @cycles holds at least @n entries)
 * or -ENOMEM.
 */
int ws_waitfor_cycles(const struct ws_waitfor_node *nodes, size_t n, size_t *cycles, size_t *lens,
		      int max_cycles);

#endif
