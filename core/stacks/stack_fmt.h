/* SPDX-License-Identifier: MIT */
/*
 * Stacks where a person looks: text ("in pthread_mutex_lock (libc.so.6) ← gt_lock ←
 * victim_thread (gt_mutex_disk) [kernel: futex_wait_queue]"), JSON arrays of
 * {ip, sym, off, module, file, line, kernel}, folded frames. Which stacks belong to a link is
 * link_stacks.h's; this file only prints them (the recording reader links it without the
 * symbolizer).
 */
#ifndef WS_STACK_FMT_H
#define WS_STACK_FMT_H

#include <stdio.h>

#include "stacks.h"
#include "unwind.h"

/* "in f ← g (module) [kernel: k]": @user_depth user frames and one kernel frame; 0 if none. */
int ws_stack_text(FILE *f, const struct ws_stack *const parts[], int n, int user_depth);
/* ,"@key":[...] (nothing when there are no frames). */
void ws_stack_json(FILE *f, const char *key, const struct ws_stack *const parts[], int n);
/* The user frames, outermost first, as folded frames ";f;g" (at most @max). */
void ws_stack_folded(FILE *f, const struct ws_stack *const parts[], int n, int max);
/* Plain text of the frames, innermost first, one per line ("sym+0xoff (module) file:line"). */
void ws_stack_lines(FILE *f, const struct ws_stack *const parts[], int n);

/* "sym+0xoff (module) file:line", "sym+0xoff (module)" or "module+0xoff" ("0x…" unmapped), with
 * the module's directory left out.  Returns what snprintf returns. */
int ws_frame_format(const struct ws_frame *f, char *buf, size_t len);
/* The same for a stack's frame: a Python frame as "function /path/file.py:41 (python)". */
int ws_sframe_format(const struct ws_sframe *f, char *buf, size_t len);

/*
 * Why the user walk of @parts (@n of them) ended before the outermost frame ("time limit",
 * "stack copy too short"), or NULL: it reached it, or there is no user part. A cut stack is
 * said to be one, never shown as if whole.
 */
const char *ws_stack_cut(const struct ws_stack *const parts[], int n);

/* "end of stack", "time limit", ...: why a user stack's walk stopped */
const char *ws_unwind_stop_str(enum ws_unwind_stop stop);

#endif
