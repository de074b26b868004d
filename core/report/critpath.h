/* SPDX-License-Identifier: MIT */
/*
 * The critical path of a `run`: the command's main thread from its first to its last moment,
 * every stretch accounted for — its own CPU time, and each wait broken down (as chains are)
 * along its wakers to the root causes — so the parts add up to its wall time.
 */
#ifndef WS_CRITPATH_H
#define WS_CRITPATH_H

#include <stdio.h>

#include "engine/chain.h"

/* The longest words of an open wait the path names (ws_critpath_open()): what it was blocked on
 * and where in the code */
#define WS_CRITPATH_WHAT 256

struct ws_critpath;

/* Follow thread @tid. NULL on failure (errno set). */
struct ws_critpath *ws_critpath_new(uint32_t tid);
void ws_critpath_free(struct ws_critpath *cp);
uint32_t ws_critpath_tid(const struct ws_critpath *cp);
/* A wait of the followed thread, explained: its segments' roots, while @g holds them. */
void ws_critpath_chain(struct ws_critpath *cp, struct ws_graph *g, const struct ws_chain *c);
/*
 * Tracing ended with the followed thread still blocked on @what (the words after "blocked on",
 * from /proc; "": nothing said on what): its open wait is named so.
 */
void ws_critpath_open(struct ws_critpath *cp, const char *what);
/*
 * An interval of the followed thread's timeline, final (any order, each once): its running
 * time, and what no chain explained (short waits, the wait still open when tracing ended).
 */
void ws_critpath_ival(struct ws_critpath *cp, const struct ws_thread *t, const struct ws_ival *iv,
		      const struct ws_claim *claim);
/*
 * What stretch @iv of @t's timeline, not walked to a root (running, or a wait too short to
 * walk), is called in a critical path ("CPU work in app", "short waits: futex"); @claim is its
 * explanation or NULL.
 */
void ws_stretch_label(const struct ws_thread *t, const struct ws_ival *iv,
		      const struct ws_claim *claim, char *what, size_t len);
void ws_critpath_text(struct ws_critpath *cp, FILE *out);
void ws_critpath_json(struct ws_critpath *cp, FILE *out);

#endif
