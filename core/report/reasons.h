/* SPDX-License-Identifier: MIT */
/*
 * Reasons: reported chains grouped by what they have in common — the victim's name, the kinds
 * along the chain and its root cause — and ranked by the time they cost. A person reads the few
 * reasons first (count, total, p50/p90/max, one worst example), then single chains.
 */
#ifndef WS_REASONS_H
#define WS_REASONS_H

#include <stdio.h>

#include "engine/chain.h"

struct ws_reasons;

/* Renders @c as the text report does, into a malloc'd string; 0 or -errno. */
typedef int (*ws_render_fn)(void *ctx, const struct ws_chain *c, char **text);

/* NULL on failure (errno set). */
struct ws_reasons *ws_reasons_new(ws_render_fn render, void *ctx);
void ws_reasons_free(struct ws_reasons *rs);
/* Count @c under its reason (keeping its text if it is that reason's worst yet). 0 or -errno. */
int ws_reasons_add(struct ws_reasons *rs, const struct ws_chain *c);
/* The @top costliest reasons, most first, with each one's worst example. */
void ws_reasons_text(struct ws_reasons *rs, FILE *out, int top);
/*
 * Of the @top reasons ws_reasons_text() printed, the rank (1 = costliest) of the one whose
 * example is the chain @text, or 0: a chain is printed once, later sections refer to it.
 */
int ws_reasons_shown(struct ws_reasons *rs, const char *text, int top);
/* Every reason as a {"type":"reason",...} line, most costly first. */
void ws_reasons_json(struct ws_reasons *rs, FILE *out);
/*
 * The bytes the reasons' wait lengths take (for the percentiles): bounded per reason whatever
 * the run's length (32 KiB at most before its histogram, 16 KiB after).
 */
size_t ws_reasons_lengths_bytes(const struct ws_reasons *rs);

#endif
