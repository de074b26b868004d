/* SPDX-License-Identifier: MIT */
/*
 * What a live run shows while it traces: on a terminal no traced program
 * writes to, one status line on stderr (threads, events, lost, elapsed)
 * rewritten in place; with -v, the same as a line a second wherever stderr
 * goes. Nothing otherwise, so a log or a pipe gets only what it asked for.
 *
 * A line rewritten in place and a program writing to the same terminal
 * cannot share it: the program's output joins the end of the line, and the
 * next rewrite erases what it wrote there. Nothing but a pty between the
 * program and its terminal would tell when it writes (it would no longer
 * write to its terminal: isatty, window size and job control are its
 * own business), and a status line drawn in a scroll region breaks full-screen
 * programs and leaves the terminal broken if whyslow is killed. So, as perf
 * record says nothing while the command runs, the line is left out when a
 * traced program may write there: always for run (the command has whyslow's
 * stderr), for attach when a target's stdin, stdout, stderr or controlling
 * terminal is that terminal.
 */
#ifndef WS_STATUS_H
#define WS_STATUS_H

#include "session/session.h"

/*
 * Decide from stderr (a tty?) and -v; call once before tracing starts.
 * @off: stderr carries a live report (run --format json), so stay quiet.
 * @shared: a traced program may write to stderr's terminal
 * (ws_status_tty_shared): no line in place; -v still prints its lines.
 */
void ws_status_init(int verbose, bool off, bool shared);
/*
 * Whether a traced program may write to the terminal stderr is: @command (a
 * command whyslow starts inherits its stdout and stderr), or one of the
 * @npids processes @pids has it as stdin, stdout, stderr or controlling
 * terminal. Reads only /proc (links and stat lines, never the files).
 */
bool ws_status_tty_shared(bool command, const uint32_t *pids, int npids);
/* Show the counts if it is time to (at most 4 times a second, or once a second with -v). */
void ws_status_tick(struct ws_session *s);
/* Erase the status line, before anything else is written to stderr. */
void ws_status_clear(void);
/* Colour for stderr: only on a terminal, and never with NO_COLOR set (no-color.org). */
bool ws_status_colour(void);

#endif
