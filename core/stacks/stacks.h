/* SPDX-License-Identifier: MIT */
/*
 * The resolved stacks of a run, kept while a chain may still name the waits they belong to, and
 * found again by thread and time: "the stack thread T slept on during [from, to]", "the stack of
 * whoever woke thread T during [from, to]".
 */
#ifndef WS_STACKS_H
#define WS_STACKS_H

#include <stdint.h>

#include "stackrec.h"

struct ws_stacks;

struct ws_stacks *ws_stacks_new(void);
void ws_stacks_free(struct ws_stacks *s);
/* Keep the stack of WS_KIND_STACK record @rec. 0, -EINVAL (malformed) or -ENOMEM. */
int ws_stacks_add(struct ws_stacks *s, const struct ws_rec_hdr *rec);
/*
 * Keep @st (malloc'd, ws_stack_dup() or ws_stackrec_decode()): it is the store's now, freed on
 * failure too. A stack may come before the analysis reaches its time (the tracer keeps them as
 * they arrive): eviction goes by the end of its wait against a time that only grows, so it leaves
 * as late as it would have; lookups go by its wait's interval, which no earlier wait of its thread
 * overlaps, so they find what they found. 0 or -ENOMEM.
 */
int ws_stacks_keep(struct ws_stacks *s, struct ws_stack *st);
/*
 * Stacks were captured for waits of at least @min_ns (0: not at all, [core] stacks = false).
 * Until this is called, the threshold is not known (UINT64_MAX).
 */
void ws_stacks_set_capture(struct ws_stacks *s, uint64_t min_ns);
uint64_t ws_stacks_capture(const struct ws_stacks *s);
/* Forget stacks of waits that ended before @ts. */
void ws_stacks_evict(struct ws_stacks *s, uint64_t ts);

/*
 * A stack of @role for the wait of thread @wait_tid that overlaps [@from, @to] most (a waiter's
 * kernel and user halves arrive as two records: both are returned, NULL when absent). Returns
 * the number found (0..2).
 */
#define WS_STACK_PARTS 2
int ws_stacks_find(const struct ws_stacks *s, uint8_t role, uint32_t wait_tid, uint64_t from,
		   uint64_t to, const struct ws_stack *out[WS_STACK_PARTS]);

#endif
