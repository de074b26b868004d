/* SPDX-License-Identifier: MIT */
/*
 * Perfetto / chrome://tracing export: Chrome trace-event JSON with one track
 * per thread (grouped by process), a slice for every link and segment of
 * every reported chain (running, runnable or blocked, labelled with its
 * reason), and flow arrows from each waker's wakeup to the thread it woke.
 *
 * Events are spooled to a temporary file as chains arrive, so memory holds
 * only the thread table and the set of slices already written.
 */
#ifndef WS_PERFETTO_H
#define WS_PERFETTO_H

#include <stdint.h>
#include <stdio.h>

#include "chain.h"

struct ws_perfetto;

/* NULL on failure (errno set). */
struct ws_perfetto *ws_perfetto_new(void);
void ws_perfetto_free(struct ws_perfetto *p);
/* Add the slices and flows of one chain. 0 or -errno. */
int ws_perfetto_chain(struct ws_perfetto *p, const struct ws_chain *c);
/* Name a thread (the recording's thread-name records); chains name their own. 0 or -errno. */
int ws_perfetto_thread(struct ws_perfetto *p, uint32_t tid, uint32_t pid, const char *comm);
/* Write the whole trace to @out. 0 or -errno. */
int ws_perfetto_write(struct ws_perfetto *p, FILE *out);

#endif
