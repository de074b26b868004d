/* SPDX-License-Identifier: MIT */
/*
 * CPython's GIL as a lock: which futex words are the GIL's. A thread that waits for the GIL
 * sleeps in a futex call on the GIL's condition variable or mutex (take_gil), and the one that
 * drops it may wait on its switch condition (drop_gil, until another thread took it); the
 * words of those pthread objects, at fixed offsets in _PyRuntime per version (pyproc.h), say
 * "the GIL" from what the thread was doing, never from where its stack was. Only the main
 * interpreter's GIL: a subinterpreter with a GIL of its own keeps it elsewhere (3.12+).
 */
#ifndef WS_PYGIL_H
#define WS_PYGIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pyproc.h"

enum ws_py_gil_part {
	WS_PY_GIL_NONE = 0,	    /* not a word of the GIL */
	WS_PY_GIL_COND = 1,	    /* gil.cond: take_gil waits there for the GIL */
	WS_PY_GIL_MUTEX = 2,	    /* gil.mutex: guards the GIL's state */
	WS_PY_GIL_SWITCH_COND = 3,  /* gil.switch_cond: drop_gil waits for another to take it */
	WS_PY_GIL_SWITCH_MUTEX = 4, /* gil.switch_mutex */
};

/* Which of the GIL's objects of the process @in describes holds futex word @addr. */
enum ws_py_gil_part ws_py_gil_part(const struct ws_py_info *in, uint64_t addr);

/* "cond", "mutex", "switch_cond", "switch_mutex" (NULL: WS_PY_GIL_NONE). */
const char *ws_py_gil_part_name(enum ws_py_gil_part part);

/* The GIL's name as a wait's text says it: "the GIL (python3.11 pid 4821)"; snprintf's
 * return. */
int ws_py_gil_name(const struct ws_py_info *in, uint32_t pid, char *buf, size_t len);

/* The GIL's state as the process's memory says it (ws_py_gil_read). */
struct ws_py_gil_state {
	bool locked;	     /* held now */
	uint64_t holder_ts;  /* last_holder: the PyThreadState that holds it (locked) or last did */
	uint32_t holder_tid; /* that thread state's native_thread_id (0: not read) */
	uint64_t switches;   /* switch_number: how many times it changed hands */
};

/*
 * The GIL of the process @pid that @in describes, read from its memory now, only from pages
 * resident (ws_py_mem_read: never blocks on the target). The main interpreter's GIL only: a
 * 3.12+ process whose main interpreter points elsewhere is not read. 0; -EAGAIN it changed
 * hands while read (switch_number moved); -ENOENT not this GIL; -EFAULT not readable.
 */
int ws_py_gil_read(uint32_t pid, const struct ws_py_info *in, struct ws_py_gil_state *out);

#endif
