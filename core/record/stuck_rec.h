/* SPDX-License-Identifier: MIT */
/*
 * The open waits at the end of tracing (struct ws_stuck) as a recording's
 * OPEN_WAITS record (docs/trace-format.md), so that `report` prints the
 * same "still waiting" chains and deadlocks the live run did. The snapshot
 * is stored as analysed (owners, bounds, cycles), not re-derived: the
 * processes it describes are gone by the time anyone reports.
 */
#ifndef WS_STUCK_REC_H
#define WS_STUCK_REC_H

#include <stddef.h>

#include "hang/stuck.h"

/* Threads one record holds at most (bounds the reader; ~1.2 MiB at 608 bytes each). */
#define WS_STUCK_REC_MAX_THREADS 2000

/* @st as a record payload in *@buf (malloc'd, *@len bytes). 0 or -errno (-E2BIG: too many). */
int ws_stuck_encode(const struct ws_stuck *st, void **buf, size_t *len);

/*
 * The snapshot in payload @p of @len bytes into @st (ws_stuck_free() frees
 * it). Every count and index is checked against the payload. 0, or -EINVAL
 * for a malformed payload, -ENOMEM.
 */
int ws_stuck_decode(const void *p, size_t len, struct ws_stuck *st);

#endif
