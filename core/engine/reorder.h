/* SPDX-License-Identifier: MIT */
/*
 * Restores timestamp order. Records reach the ring in reservation order, and a
 * CPU may stamp a record a little after another CPU reserved a later one;
 * holding records for a bounded window before dispatch puts them back in order.
 */
#ifndef WS_REORDER_H
#define WS_REORDER_H

#include <stddef.h>
#include <stdint.h>

#include <whyslow/record.h>

struct ws_reorder;
typedef void (*ws_dispatch_fn)(void *ctx, const struct ws_rec_hdr *rec);

struct ws_reorder *ws_reorder_new(uint64_t window_ns, ws_dispatch_fn fn, void *ctx);
void ws_reorder_free(struct ws_reorder *r);
/* Copy @rec in (rec->size bytes). 0 or -ENOMEM. */
int ws_reorder_push(struct ws_reorder *r, const struct ws_rec_hdr *rec);
/* Dispatch every record older than (newest seen - window), or than @now - window if later. */
void ws_reorder_flush(struct ws_reorder *r, uint64_t now);
/* Dispatch everything held. */
void ws_reorder_drain(struct ws_reorder *r);
/* Records that arrived older than one already dispatched (dispatched anyway). */
uint64_t ws_reorder_late(const struct ws_reorder *r);
size_t ws_reorder_held(const struct ws_reorder *r);

#endif
