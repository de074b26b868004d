/* SPDX-License-Identifier: MIT */
/*
 * A link's stacks where a person looks: text ("in pthread_mutex_lock (libc.so.6) ← gt_lock ←
 * victim_thread (gt_mutex_disk) [kernel: futex_wait_queue]"), JSON arrays of
 * {ip, sym, off, module, file, line, kernel}, folded frames.
 */
#ifndef WS_STACK_FMT_H
#define WS_STACK_FMT_H

#include <stdio.h>

#include "chain.h"
#include "stacks.h"

/* The stacks of one link: the thread's own (as it waited) and its waker's (at the wakeup). */
struct ws_link_stacks {
	const struct ws_stack *own[WS_STACK_PARTS];
	const struct ws_stack *waker[WS_STACK_PARTS];
	int nown, nwaker;
};

/* The file @l's wait named through its fd ("/var/lib/..."), or NULL. */
const char *ws_link_fd_path(const struct ws_link *l, const struct ws_link_stacks *st);

/* Find @l's stacks in @s (NULL: none). A link standing for several waits gets none. */
void ws_link_stacks(const struct ws_stacks *s, const struct ws_link *l, struct ws_link_stacks *out);

/* "in f ← g (module) [kernel: k]": @user_depth user frames and one kernel frame; 0 if none. */
int ws_stack_text(FILE *f, const struct ws_stack *const parts[], int n, int user_depth);
/* ,"@key":[...] (nothing when there are no frames). */
void ws_stack_json(FILE *f, const char *key, const struct ws_stack *const parts[], int n);
/* The user frames, outermost first, as folded frames ";f;g" (at most @max). */
void ws_stack_folded(FILE *f, const struct ws_stack *const parts[], int n, int max);
/* Plain text of the frames, innermost first, one per line ("sym+0xoff (module) file:line"). */
void ws_stack_lines(FILE *f, const struct ws_stack *const parts[], int n);

#endif
