/* SPDX-License-Identifier: MIT */
/*
 * The periods summarised in the kernel below the resolution, by cause (engine/graph.h's
 * struct ws_short_summary), as the text and JSON reports show them: in a chain's running link
 * and in each thread's short_waits line.
 */
#ifndef WS_SHORT_TEXT_H
#define WS_SHORT_TEXT_H

#include <stdio.h>

#include "engine/graph.h"

/* The name of thread @tid for @ctx, or NULL when it is not known. */
typedef const char *(*ws_short_comm_fn)(void *ctx, uint32_t tid);

/*
 * "300 on futex 0x7f… (woken by tid 12 (writer)) = 12ms, 100 on read fd 5 = 3ms, 12 on other
 * things = 1ms": each shown cause, then the rest.
 */
void ws_short_text(FILE *b, const struct ws_short_summary *s, ws_short_comm_fn comm, void *ctx);
/*
 * @s's causes as members of a JSON array (no brackets), each
 * {"resource":…,"waits":…,"ns":…,"summarised":true,"woken_by":tid|null}, the rest with a null
 * resource; @first: no comma before the first.
 */
void ws_short_json(FILE *b, const struct ws_short_summary *s, bool first);

#endif
