/* SPDX-License-Identifier: MIT */
/*
 * CPython frames at a wait, BPF <-> core. The core finds out once per program whether a process
 * runs CPython (its executable or libpython exports _PyRuntime) and, if so, writes where its
 * runtime state lies and the struct offsets of its version into ws_py_procs (key: tgid). BPF
 * then walks that thread's frame chain where it copies its user stack (in the thread's own
 * context: its memory is readable, and the chain is the one it blocked in) and records, per
 * frame, the code object and the instruction pointer: pointers only, bounded in depth. The core
 * names them from the process's memory (pyframes.h), validating every pointer it follows; a
 * process not in the map costs one failed lookup per captured stack.
 *
 * Shared by BPF and user space: fixed-width types only. The raw record never leaves the
 * tracing process, so this layout may change freely.
 */
#ifndef WS_STACKS_PYCAPTURE_H
#define WS_STACKS_PYCAPTURE_H

#include <whyslow/record.h>

#define WS_PY_MAX_FRAMES 32  /* Python frames kept per stack, innermost first */
#define WS_PY_MAX_THREADS 64 /* thread states looked at to find the thread's own */
#define WS_PY_PROCS_MAX 4096 /* Python processes followed at once */
#define WS_PY_NO_OFF 0xffff  /* ws_py_proc.ts_cframe: the thread state holds the frame itself */

/* Where one CPython process keeps its threads and frames: addresses and offsets in bytes. */
struct ws_py_proc {
	__u64 runtime;	     /* address of _PyRuntime */
	__u16 interp_head;   /* _PyRuntime.interpreters.head */
	__u16 threads_head;  /* PyInterpreterState.threads.head */
	__u16 ts_next;	     /* PyThreadState.next */
	__u16 ts_native_tid; /* PyThreadState.native_thread_id */
	__u16 ts_cframe;     /* PyThreadState.cframe (WS_PY_NO_OFF: none, 3.13) */
	__u16 cur_frame;     /* _PyCFrame.current_frame (or PyThreadState.current_frame) */
	__u16 fr_code;	     /* _PyInterpreterFrame.f_code (f_executable in 3.13) */
	__u16 fr_previous;   /* _PyInterpreterFrame.previous */
	__u16 fr_instr;	     /* _PyInterpreterFrame.prev_instr (instr_ptr in 3.13) */
	__u16 fr_owner;	     /* _PyInterpreterFrame.owner (a char) */
	__u16 fr_entry;	     /* _PyInterpreterFrame.is_entry (a bool; WS_PY_NO_OFF: none) */
	__u16 pad;
	/*
	 * The main interpreter's GIL (struct _gil_runtime_state), which lies inside _PyRuntime in
	 * every version known (3.11: _PyRuntime.ceval.gil; 3.12+:
	 * _PyRuntime._main_interpreter._gil, which the interpreter's ceval.gil points at once it
	 * made its GIL).
	 */
	__u32 gil;		 /* its offset in _PyRuntime */
	__u16 interp_main;	 /* _PyRuntime.interpreters.main */
	__u16 interp_gil;	 /* PyInterpreterState.ceval.gil, a pointer (WS_PY_NO_OFF: 3.11) */
	__u16 gil_locked;	 /* _gil_runtime_state.locked (an int) */
	__u16 gil_last_holder;	 /* _gil_runtime_state.last_holder (a PyThreadState *) */
	__u16 gil_switch_number; /* _gil_runtime_state.switch_number (an unsigned long) */
	__u16 gil_mutex; /* _gil_runtime_state.mutex (a pthread_mutex_t: its lock word first) */
};

/* ws_py_raw.state */
#define WS_PY_NONE 0	   /* not a Python process (or no capture) */
#define WS_PY_OK 1	   /* the whole chain, @n frames */
#define WS_PY_TRUNCATED 2  /* the innermost WS_PY_MAX_FRAMES frames of a deeper chain */
#define WS_PY_NO_THREAD 3  /* no thread state of this thread (not a Python thread, or C only) */
#define WS_PY_UNREADABLE 4 /* a pointer on the way could not be read */

struct ws_py_raw_frame {
	__u64 code;  /* the code object (unvalidated: the core checks its type) */
	__u64 instr; /* the frame's instruction pointer */
	__u8 owner;  /* raw _PyInterpreterFrame.owner */
	__u8 entry;  /* raw is_entry: the first frame its _PyEval_EvalFrameDefault ran */
	__u8 pad[6];
};

/*
 * ws_py_codes: the code objects BPF walked lately, per process, for the core to name while its
 * reader is busy elsewhere (an LRU map: the oldest go first; the core deletes those it took).
 */
#define WS_PY_CODES_MAX 4096
struct ws_py_code_key {
	__u32 pid;
	__u32 pad;
	__u64 code;
};

/*
 * ws_py_raw.gil: the main interpreter's GIL as the thread read it where its stack was copied (a
 * waiter: as its wait ended, in its own context). Held means: its mutex free before and after,
 * locked, and the same switch_number around reading last_holder, whose native_thread_id is
 * @gil_holder (unvalidated: the core checks it is a thread of the process).
 */
#define WS_GIL_NOT_READ 0   /* not a Python process, or no GIL known for its version */
#define WS_GIL_FREE 1	    /* nobody held it */
#define WS_GIL_HELD 2	    /* held by @gil_holder */
#define WS_GIL_UNREADABLE 3 /* a read failed (a page not resident, a bad pointer) */
#define WS_GIL_CHANGING 4   /* it changed hands while read: no holder is claimed */
#define WS_GIL_ELSEWHERE 5  /* the interpreter's GIL is not (or not yet) the one in _PyRuntime */

struct ws_py_raw {
	__u8 state; /* WS_PY_* */
	__u8 n;
	__u8 gil; /* WS_GIL_* */
	__u8 pad;
	__u32 gil_holder;
	struct ws_py_raw_frame f[WS_PY_MAX_FRAMES];
};

#endif /* WS_STACKS_PYCAPTURE_H */
