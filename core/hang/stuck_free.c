// SPDX-License-Identifier: MIT
/* Freeing a snapshot of open waits: apart from the sampler (stuck.c), so the recording's decoder
 * and its fuzzer link without /proc sampling. */
#include <stdlib.h>
#include <string.h>

#include "stuck.h"

void ws_stuck_free_threads(struct ws_stuck_thread *t, size_t n)
{
	for (size_t i = 0; t && i < n; i++) {
		ws_stack_free(t[i].ustack);
		free(t[i].flocks);
	}
	free(t);
}

void ws_stuck_free(struct ws_stuck *st)
{
	ws_stuck_free_threads(st->t, st->n);
	free(st->cycles);
	free(st->cycle_len);
	free(st->texts);
	memset(st, 0, sizeof(*st));
}
