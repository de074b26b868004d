/* SPDX-License-Identifier: MIT */
/*
 * The Python half of stacks: which traced processes run CPython (decided from their maps each
 * time they are read, cheaply for the rest: pyproc.h), and the Python frames a capture carries
 * merged into its native ones where the interpreter's evaluation frames stand, so a stack reads
 * "handle (app.py:41) <- serve (app.py:12)" above the interpreter's C code it waited in.
 */
#ifndef WS_PYSTACK_H
#define WS_PYSTACK_H

#include <stdbool.h>
#include <stdint.h>

#include "pycapture.h"
#include "pygil.h"
#include "access/useropen.h"
#include "stackrec.h"

struct ws_pystack;

int ws_pystack_new(struct ws_pystack **out);
void ws_pystack_free(struct ws_pystack *p);
/* @pid is gone (or runs another program): forget it and its code objects. True if it was
 * known to run CPython. */
bool ws_pystack_forget(struct ws_pystack *p, uint32_t pid);

/* ws_pystack_check() results */
#define WS_PYSTACK_SAME 0  /* nothing changed */
#define WS_PYSTACK_FOUND 1 /* @pid runs CPython: write *@out into ws_py_procs */
#define WS_PYSTACK_GONE 2  /* @pid no longer does: delete it from ws_py_procs */

/*
 * @pid's maps were just read (@text; @live: it still runs them): does it run CPython? Its
 * runtime's file is opened as @id (NULL: unknown, as nobody). A process whose maps name no
 * python file costs a string search. Thread-safe.
 */
int ws_pystack_check(struct ws_pystack *p, uint32_t pid, const char *text, bool live,
		     const struct ws_reader_id *id, struct ws_py_proc *out);

/*
 * The lock CPython keeps at futex word @addr of @pid, when it is one: 1 (WS_PYSTACK_LOCK_GIL)
 * and its name in @buf ("the GIL (python3.11 pid 4821)", pygil.h), or 0 (not a word of the
 * GIL, or @pid not known to run a CPython whyslow knows).
 */
#define WS_PYSTACK_LOCK_GIL 1
/* Is @pid decided already: known to run CPython (of a version known or not)? Then its maps need
 * not be read again to answer ws_pystack_lock(). */
bool ws_pystack_decided(struct ws_pystack *p, uint32_t pid);
int ws_pystack_lock(struct ws_pystack *p, uint32_t pid, uint64_t addr, char *buf, size_t len);

/*
 * A thread of @pid asleep on futex word @addr now: is it waiting to take the GIL (the word of
 * the GIL's condition variable, where take_gil sleeps)? 1 (WS_PYSTACK_LOCK_GIL) with the GIL's
 * name in @buf, and in *@st the GIL's state read from memory now, *@st_err its result
 * (ws_py_gil_read); or 0. For a thread seen asleep (`stuck`), not for a wait BPF recorded.
 */
int ws_pystack_gil_wait(struct ws_pystack *p, uint32_t pid, uint64_t addr, char *buf, size_t len,
			struct ws_py_gil_state *st, int *st_err);

/*
 * Name the code objects of @raw now (cached), before the slower native half of the stack is
 * unwound and named: they are read from @pid's live memory, and a program may exit meanwhile.
 */
void ws_pystack_prefetch(struct ws_pystack *p, uint32_t pid, const struct ws_py_raw *raw);
/* Start its file opener's helper for @id before any process needs it (useropen.h). */
int ws_pystack_prepare(struct ws_pystack *p, const struct ws_reader_id *id);
/* The same for one code object of @pid, known only by its address (BPF's ws_py_codes). */
void ws_pystack_warm(struct ws_pystack *p, uint32_t pid, uint64_t code);

/*
 * The BPF walk (sched/pystack.bpf.h) done from here, for thread @tid of @pid blocked now (its
 * frame chain does not move while it sleeps): into @out, state WS_PY_NONE when @pid is not
 * known to run CPython. Memory is read as pyframes.h reads it (resident pages only).
 */
void ws_pystack_walk_now(struct ws_pystack *p, uint32_t pid, uint32_t tid, struct ws_py_raw *out);

/*
 * Merge the Python frames @raw of process @pid into its user frames @fr (*@n of them, innermost
 * first, room for @max): each run of Python frames in place of the _PyEval_EvalFrameDefault
 * frame that ran it (those left over outermost). Frames that cannot be named become one frame
 * saying so. 0 or -ENOMEM.
 */
int ws_pystack_merge(struct ws_pystack *p, uint32_t pid, const struct ws_py_raw *raw,
		     struct ws_sframe *fr, uint32_t *n, uint32_t max);

#endif
