/* SPDX-License-Identifier: MIT */
/*
 * The causal cone a triggered dump of `whyslow watch` keeps instead of its whole window: the
 * threads of the triggers' chains (every link's thread, the wakers, who held a runqueue), the
 * CPUs of their runqueue links, and the time from a margin before the earliest state those
 * threads were in as the triggers' waits began. Several triggers make one cone, the union.
 *
 * A dump keeps whole processes, from the cone's start: those of the chains' threads, and (found
 * in a first pass over the flight recorder, ws_cone_near()) those of the threads that woke them.
 * They are the dump's traced processes: a thread of another that
 * a kept record names (a switch's other side) is not followed, as in any recording of some
 * processes, so no timeline is cut where it met the cone. Then ws_cone_keeps() decides each
 * record: those of the kept processes, the switches and wakeups that name one, the switches on
 * a runqueue link's CPU over it, what interrupts wrote, losses; forks, exits and names of the
 * kept processes whatever their time. A cone that would grow past its bounds is given up: the
 * dump keeps the whole window, and says so.
 */
#ifndef WS_WATCH_CONE_H
#define WS_WATCH_CONE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <whyslow/record.h>

#include "engine/chain.h"

/* Before the earliest state of the cone's threads: the claims written just before it (a
 * futex's word, a block request issued) */
#define WS_CONE_MARGIN_NS 1000000000ULL
#define WS_CONE_MAX_THREADS 1024 /* of the chains themselves */
#define WS_CONE_MAX_NEAR 8192	 /* the threads they met */
#define WS_CONE_MAX_CPUS 64	 /* runqueue links' CPU stretches */

struct ws_cone;

/* 0 or -ENOMEM. */
int ws_cone_new(struct ws_cone **out);
void ws_cone_free(struct ws_cone *c);
/* Empty again, for the next dump. */
void ws_cone_reset(struct ws_cone *c);
/* Chain @ch (built in @g, which still holds its threads' timelines) joins the cone. */
void ws_cone_add(struct ws_cone *c, struct ws_graph *g, const struct ws_chain *ch);
/* Pass one, each record held (oldest first): its threads join the cone's near ones. */
void ws_cone_near(struct ws_cone *c, const struct ws_rec_hdr *rec);
/* Pass two: does the dump keep @rec? */
bool ws_cone_keeps(const struct ws_cone *c, const struct ws_rec_hdr *rec);

/* false: nothing added, or the cone was given up (too many threads or CPUs). */
bool ws_cone_usable(const struct ws_cone *c);
/* The cone's start (its records from then on), its chains' threads, the threads they met. */
uint64_t ws_cone_from(const struct ws_cone *c);
size_t ws_cone_threads(const struct ws_cone *c, uint32_t *tids, size_t max);
size_t ws_cone_nthreads(const struct ws_cone *c);
size_t ws_cone_npids(const struct ws_cone *c);
/* The processes the dump keeps whole (the chains', then those they met): its traced ones. */
size_t ws_cone_pids(const struct ws_cone *c, uint32_t *pids, size_t max);

#endif
