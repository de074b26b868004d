// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdlib.h>

#include "waitfor.h"

long ws_waitfor_next(const struct ws_waitfor_node *nodes, size_t n, size_t i)
{
	if (!nodes[i].owner)
		return -1;
	for (size_t k = 0; k < n; k++)
		if (nodes[k].tid == nodes[i].owner)
			return (long)k;
	return -1;
}

/*
 * Each node has at most one successor, so every walk either ends or enters
 * exactly one cycle. Colour the nodes by the walk that first reached them: a
 * walk that meets its own colour has found a new cycle; one that meets an
 * older colour joins a path already explored.
 */
int ws_waitfor_cycles(const struct ws_waitfor_node *nodes, size_t n, size_t *cycles, size_t *lens,
		      int max_cycles)
{
	size_t *walk = calloc(n ? n : 1, sizeof(*walk)), used = 0;
	int found = 0;

	if (!walk)
		return -ENOMEM;
	for (size_t start = 0; start < n && found < max_cycles; start++) {
		long i = (long)start;

		if (walk[start])
			continue;
		while (i >= 0 && !walk[i]) {
			walk[i] = start + 1;
			i = ws_waitfor_next(nodes, n, (size_t)i);
		}
		if (i < 0 || walk[i] != start + 1)
			continue;
		/* a new cycle through i: write it from its lowest index */
		size_t low = (size_t)i, len = 0;
		long j = i;

		do {
			if ((size_t)j < low)
				low = (size_t)j;
			j = ws_waitfor_next(nodes, n, (size_t)j);
		} while (j != i);
		j = (long)low;
		do {
			cycles[used + len++] = (size_t)j;
			j = ws_waitfor_next(nodes, n, (size_t)j);
		} while ((size_t)j != low);
		lens[found++] = len;
		used += len;
	}
	free(walk);
	return found;
}
