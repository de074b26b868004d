/* SPDX-License-Identifier: MIT */
/*
 * What a live run shows while it traces: on a terminal, one status line on
 * stderr (threads, events, lost, elapsed) rewritten in place; with -v, the
 * same as a line a second wherever stderr goes. Nothing otherwise, so a log
 * or a pipe gets only what it asked for.
 */
#ifndef WS_STATUS_H
#define WS_STATUS_H

#include "session/session.h"

/*
 * Decide from stderr (a tty?) and -v; call once before tracing starts.
 * @off: stderr carries a live report (run --format json), so stay quiet.
 */
void ws_status_init(int verbose, bool off);
/* Show the counts if it is time to (at most 4 times a second, or once a second with -v). */
void ws_status_tick(struct ws_session *s);
/* Erase the status line, before anything else is written to stderr. */
void ws_status_clear(void);
/* Colour for stderr: only on a terminal, and never with NO_COLOR set (no-color.org). */
bool ws_status_colour(void);

#endif
