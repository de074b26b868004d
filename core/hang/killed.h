/* SPDX-License-Identifier: MIT */
/*
 * The waits a fatal signal ended. A program killed while it is stuck (Ctrl-C on a deadlock) is
 * gone before /proc can be read, so `stuck`'s snapshot cannot be taken at the end of the run.
 * Its threads' exit records carry what is needed instead: the syscall each was in as it died and,
 * for a futex wait, the lock's words, read in the thread's own context (sched.bpf.c). With the
 * graph's knowledge of when each wait began, they are the program's open waits at the kill, its
 * lock holders and deadlocks named as `stuck` names them (issue 34).
 */
#ifndef WS_KILLED_H
#define WS_KILLED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <whyslow/plugin.h>

#include "stuck.h"
#include "engine/graph.h"

#define WS_KILLED_MEM 24
/* threads kept: a killed program of more blocked threads reports these, and says so */
#define WS_KILLED_MAX 4096

struct ws_killed_wait {
	uint32_t tid, pid;
	char comm[WS_COMM];
	uint32_t sig;		  /* the signal that killed it */
	uint64_t since_ns, at_ns; /* its wait began (switch-out) and the kill ended it */
	uint32_t off_state;	  /* task state at the switch-out: 2 uninterruptible */
	struct ws_syscall sys;
	uint8_t mem[WS_KILLED_MEM];
	uint32_t mem_len;
};

struct ws_killed {
	struct ws_killed_wait *w;
	size_t n, cap;
	size_t dropped; /* not kept: beyond WS_KILLED_MAX, or out of memory */
};

/*
 * @ev, a thread's exit: if a signal killed it, keep it, with the wait of its timeline in @g
 * that signal ended if there is one. Beyond WS_KILLED_MAX, or out of memory, it is counted in
 * @k->dropped instead.
 */
void ws_killed_note(struct ws_killed *k, struct ws_graph *g, const struct ws_thread_event *ev);

/*
 * The kept waits as a snapshot at the kill, into @st (empty when none): each described by
 * @src's sources from its syscall, its lock's holder read from the words kept, deadlocks among
 * them. 0 or -ENOMEM.
 */
int ws_killed_snapshot(const struct ws_killed *k, const struct ws_open_sources *src,
		       struct ws_stuck *st);

void ws_killed_free(struct ws_killed *k);

#endif
