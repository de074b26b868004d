/* SPDX-License-Identifier: MIT */
/*
 * Records lost, by CPU and record kind: what the kernel's per-CPU loss counters said at the end of
 * a live run, or what a recording's summary kept. Counts stay typed while whyslow runs; they become
 * text only in a recording and in the JSON summary ({"cpu0":{"0x101":3},...}), and a recording's
 * text is parsed back strictly, since a crafted file could put anything there.
 */
#ifndef WS_LOSSES_H
#define WS_LOSSES_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct ws_loss {
	uint32_t cpu, kind;
	uint64_t n;
};

struct ws_losses {
	struct ws_loss *v; /* by CPU, then kind, once ws_losses_settle() ran */
	size_t n, cap;
};

/* Appends @n records of @kind lost on @cpu (0 counts are dropped). 0 or -ENOMEM. */
int ws_losses_add(struct ws_losses *l, uint32_t cpu, uint32_t kind, uint64_t n);
/* Sorts by CPU and kind and merges repeats: what the writers below need. */
void ws_losses_settle(struct ws_losses *l);
uint64_t ws_losses_total(const struct ws_losses *l);
uint64_t ws_losses_of_kind(const struct ws_losses *l, uint32_t kind);
/* {"cpu0":{"0x101":3},...} of a settled @l ({} when NULL or empty). */
void ws_losses_json(const struct ws_losses *l, FILE *f);
/* The same as a malloc'd string (a recording's summary), NULL without memory. */
char *ws_losses_text(const struct ws_losses *l);
/*
 * @text as ws_losses_json() writes it into @l (settled). 0; -EINVAL for anything else (@l is
 * then empty); -ENOMEM.
 */
int ws_losses_parse(const char *text, struct ws_losses *l);
int ws_losses_copy(struct ws_losses *dst, const struct ws_losses *src);
void ws_losses_free(struct ws_losses *l);

#endif
