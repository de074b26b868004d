/* SPDX-License-Identifier: MIT */
/*
 * BPF side of CPython frames (see core/stacks/pycapture.h): the thread's frame chain, walked in
 * its own context where its user stack is copied. Bounded: WS_PY_MAX_THREADS thread states,
 * WS_PY_MAX_FRAMES frames, one user-memory read per field (a read that faults fails, it never
 * sleeps). Pointers only: the core names them, and checks them, from the process's memory.
 * Include from stack.bpf.h.
 */
#ifndef WS_SCHED_PYSTACK_BPF_H
#define WS_SCHED_PYSTACK_BPF_H

#include "stacks/pycapture.h"

/* Written by the core: the processes that run CPython, and where their state lies. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, WS_PY_PROCS_MAX);
	__type(key, __u32);
	__type(value, struct ws_py_proc);
} ws_py_procs SEC(".maps");

static __always_inline int ws_py_read(__u64 *out, __u64 addr)
{
	*out = 0;
	return bpf_probe_read_user(out, sizeof(*out), (const void *)addr);
}

/* The thread state of thread @tid, or 0: the list is the interpreter's, newest first. */
static __always_inline __u64 ws_py_tstate(const struct ws_py_proc *pp, __u32 tid, bool *bad)
{
	__u64 interp, ts, v;

	if (ws_py_read(&interp, pp->runtime + pp->interp_head)) {
		*bad = true;
		return 0;
	}
	if (!interp)
		return 0; /* not initialized yet, or finalized: no Python thread */
	if (ws_py_read(&ts, interp + pp->threads_head)) {
		*bad = true;
		return 0;
	}
	for (int i = 0; i < WS_PY_MAX_THREADS && ts; i++) {
		if (ws_py_read(&v, ts + pp->ts_native_tid)) {
			*bad = true;
			return 0;
		}
		if (v == tid)
			return ts;
		if (ws_py_read(&ts, ts + pp->ts_next)) {
			*bad = true;
			return 0;
		}
	}
	return 0;
}

/* The innermost frame the thread state @ts points at (0: none), or false if unreadable. */
static __always_inline bool ws_py_top(const struct ws_py_proc *pp, __u64 ts, __u64 *frame)
{
	__u64 base = ts;

	*frame = 0;
	if (pp->ts_cframe != WS_PY_NO_OFF) {
		if (ws_py_read(&base, ts + pp->ts_cframe))
			return false;
		if (!base)
			return true; /* no frame: the thread runs no Python code */
	}
	return !ws_py_read(frame, base + pp->cur_frame);
}

static __always_inline int ws_py_read32(__u32 *out, __u64 addr)
{
	*out = 0;
	return bpf_probe_read_user(out, sizeof(*out), (const void *)addr);
}

/*
 * Who holds the main interpreter's GIL now (pycapture.h, WS_GIL_*), read in current's own
 * context. take_gil and drop_gil change locked, last_holder and switch_number with the GIL's
 * mutex held: a holder is claimed only if that mutex was free before and after the reads and
 * switch_number did not move, so last_holder is the thread that took it, not one half-replaced.
 */
static __always_inline void ws_py_gil(struct ws_py_raw *py, const struct ws_py_proc *pp,
				      __u64 *holder_ts, __u64 *switch_number)
{
	__u64 gil = pp->runtime + pp->gil, interp, at, sw, sw2, holder, tid;
	__u32 mu, mu2, locked;

	py->gil = WS_GIL_NOT_READ;
	py->gil_holder = 0;
	if (!pp->gil)
		return;
	py->gil = WS_GIL_UNREADABLE;
	/* 3.12+: the interpreter points at its GIL once it made it (NULL before and after) */
	if (pp->interp_gil != WS_PY_NO_OFF) {
		if (ws_py_read(&interp, pp->runtime + pp->interp_main) || !interp ||
		    ws_py_read(&at, interp + pp->interp_gil))
			return;
		if (at != gil) {
			py->gil = WS_GIL_ELSEWHERE;
			return;
		}
	}
	if (ws_py_read32(&mu, gil + pp->gil_mutex) ||
	    ws_py_read(&sw, gil + pp->gil_switch_number) ||
	    ws_py_read32(&locked, gil + pp->gil_locked) ||
	    ws_py_read(&holder, gil + pp->gil_last_holder) ||
	    ws_py_read(&sw2, gil + pp->gil_switch_number) ||
	    ws_py_read32(&mu2, gil + pp->gil_mutex))
		return;
	if (mu || mu2 || sw != sw2) {
		py->gil = WS_GIL_CHANGING;
		return;
	}
	if (!locked) {
		py->gil = WS_GIL_FREE;
		return;
	}
	if (!holder || ws_py_read(&tid, holder + pp->ts_native_tid))
		return;
	py->gil = WS_GIL_HELD;
	py->gil_holder = (__u32)tid;
	*holder_ts = holder;
	*switch_number = sw;
}

/* The frames of thread state @ts into @py (its state: WS_PY_OK, _TRUNCATED or _UNREADABLE). */
static __always_inline void ws_py_frames(struct ws_py_raw *py, const struct ws_py_proc *pp,
					 __u64 ts)
{
	__u64 frame;

	py->state = WS_PY_UNREADABLE;
	if (!ws_py_top(pp, ts, &frame))
		return;
	for (int i = 0; i < WS_PY_MAX_FRAMES; i++) {
		struct ws_py_raw_frame *f = &py->f[i];
		__u8 b = 0;

		if (!frame) {
			py->state = WS_PY_OK;
			return;
		}
		if (ws_py_read(&f->code, frame + pp->fr_code) ||
		    ws_py_read(&f->instr, frame + pp->fr_instr) ||
		    bpf_probe_read_user(&f->owner, 1, (const void *)(frame + pp->fr_owner)))
			return;
		if (pp->fr_entry != WS_PY_NO_OFF &&
		    bpf_probe_read_user(&b, 1, (const void *)(frame + pp->fr_entry)))
			return;
		f->entry = b;
		py->n = i + 1;
		if (ws_py_read(&frame, frame + pp->fr_previous))
			return;
	}
	py->state = frame ? WS_PY_TRUNCATED : WS_PY_OK;
}

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, WS_PY_CODES_MAX);
	__type(key, struct ws_py_code_key);
	__type(value, __u8);
} ws_py_codes SEC(".maps");

/*
 * The code objects of @py, for the core to name at once even while its reader is busy: their
 * capture may wait in the ring behind a slow one, and the program exit meanwhile. Long waits
 * only (where stacks are captured).
 */
static __always_inline void ws_py_publish(const struct ws_py_raw *py, __u32 tgid)
{
	struct ws_py_code_key k = { .pid = tgid };
	__u8 one = 1;

	for (int i = 0; i < WS_PY_MAX_FRAMES && i < py->n; i++) {
		k.code = py->f[i].code;
		bpf_map_update_elem(&ws_py_codes, &k, &one, BPF_ANY);
	}
}

/*
 * Walk current's Python frames into @py (state WS_PY_NONE: not a Python process). A @waiter
 * (current as its wait ends) also reads the GIL (py->gil) and, if it is held, walks the
 * holder's frames into @holder while the holder runs on: kept only if the GIL's switch_number
 * and locked did not move meanwhile (it still held it; its frames may be of a moment later
 * than the read of the holder, never of another holder). A waker's read would say nothing of
 * the wait it ends: not made.
 */
static __always_inline void ws_py_walk(struct ws_py_raw *py, struct task_struct *cur,
				       struct ws_py_raw *holder, bool waiter)
{
	__u32 tgid = cur->tgid;
	struct ws_py_proc *pp = bpf_map_lookup_elem(&ws_py_procs, &tgid);
	bool bad = false;
	__u64 ts, holder_ts = 0, sw = 0, sw2;
	__u32 locked;

	py->state = WS_PY_NONE;
	py->n = 0;
	py->gil = WS_GIL_NOT_READ;
	py->gil_holder = 0;
	if (!pp)
		return;
	if (waiter)
		ws_py_gil(py, pp, &holder_ts, &sw);
	if (holder_ts) {
		__u64 gil = pp->runtime + pp->gil;

		ws_py_frames(holder, pp, holder_ts);
		/* the same switch_number as when the holder was read: nobody took it since */
		if (ws_py_read(&sw2, gil + pp->gil_switch_number) ||
		    ws_py_read32(&locked, gil + pp->gil_locked) || sw != sw2 || !locked) {
			holder->state = WS_PY_NONE;
			holder->n = 0;
		}
	}
	ts = ws_py_tstate(pp, cur->pid, &bad);
	py->state = bad ? WS_PY_UNREADABLE : WS_PY_NO_THREAD;
	if (!ts)
		return;
	ws_py_frames(py, pp, ts);
}

#endif /* WS_SCHED_PYSTACK_BPF_H */
