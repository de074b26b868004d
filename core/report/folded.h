/* SPDX-License-Identifier: MIT */
/* --format folded: reported chains as folded stacks for flame graph tools. */
#ifndef WS_FOLDED_H
#define WS_FOLDED_H

#include <stdio.h>

#include "engine/chain.h"

/*
 * One line per segment of @c, while @g still holds its history:
 * "victim;[its wait];[woken by W];[what W did];...;[root: R] ns".
 */
struct ws_stacks;
/* @stacks (may be NULL): the code each thread waited in, as frames before its link's frame. */
void ws_folded_chain(FILE *out, struct ws_graph *g, const struct ws_chain *c,
		     const struct ws_stacks *stacks);

struct ws_request;
/* --requests: one line per part of request @q, weighted by its time:
 * "comm;[request on 127.0.0.1:5432];[block I/O on vda] ns". */
void ws_folded_request(FILE *out, const struct ws_request *q);
#endif
