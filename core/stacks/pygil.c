// SPDX-License-Identifier: MIT
/* The GIL's futex words: see pygil.h. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "pyframes.h"
#include "pygil.h"

/* Is @addr inside the object of @size bytes at @start? */
static int within(uint64_t addr, uint64_t start, uint16_t size)
{
	return addr >= start && addr - start < size;
}

enum ws_py_gil_part ws_py_gil_part(const struct ws_py_info *in, uint64_t addr)
{
	const struct ws_py_layout *l = in->layout;
	uint64_t gil;

	if (!l || !in->bpf.runtime || !l->cond_size || !l->mutex_size)
		return WS_PY_GIL_NONE;
	gil = in->bpf.runtime + l->walk.gil;
	if (within(addr, gil + l->gil_cond, l->cond_size))
		return WS_PY_GIL_COND;
	if (within(addr, gil + l->walk.gil_mutex, l->mutex_size))
		return WS_PY_GIL_MUTEX;
	if (within(addr, gil + l->gil_switch_cond, l->cond_size))
		return WS_PY_GIL_SWITCH_COND;
	if (within(addr, gil + l->gil_switch_mutex, l->mutex_size))
		return WS_PY_GIL_SWITCH_MUTEX;
	return WS_PY_GIL_NONE;
}

const char *ws_py_gil_part_name(enum ws_py_gil_part part)
{
	switch (part) {
	case WS_PY_GIL_COND:
		return "cond";
	case WS_PY_GIL_MUTEX:
		return "mutex";
	case WS_PY_GIL_SWITCH_COND:
		return "switch_cond";
	case WS_PY_GIL_SWITCH_MUTEX:
		return "switch_mutex";
	case WS_PY_GIL_NONE:
		break;
	}
	return NULL;
}

int ws_py_gil_name(const struct ws_py_info *in, uint32_t pid, char *buf, size_t len)
{
	return snprintf(buf, len, "the GIL (python%u.%u pid %u)", in->version >> 24,
			(in->version >> 16) & 0xff, pid);
}

static int read_word(uint32_t pid, uint64_t addr, uint64_t *v)
{
	*v = 0;
	return ws_py_mem_read(pid, addr, v, sizeof(*v));
}

static int read_int(uint32_t pid, uint64_t addr, uint32_t *v)
{
	*v = 0;
	return ws_py_mem_read(pid, addr, v, sizeof(*v));
}

int ws_py_gil_read(uint32_t pid, const struct ws_py_info *in, struct ws_py_gil_state *out)
{
	const struct ws_py_proc *w = &in->bpf;
	uint64_t gil, interp, at, sw2, tid;
	uint32_t locked;

	memset(out, 0, sizeof(*out));
	if (!in->layout || !w->runtime || !w->gil)
		return -ENOENT;
	gil = w->runtime + w->gil;
	/* 3.12+: the main interpreter's ceval.gil points at the GIL read here (as BPF checks) */
	if (w->interp_gil != WS_PY_NO_OFF) {
		if (read_word(pid, w->runtime + w->interp_main, &interp) ||
		    read_word(pid, interp + w->interp_gil, &at))
			return -EFAULT;
		if (at != gil)
			return -ENOENT;
	}
	/* switch_number before and after: the same, and nobody took it while it was read */
	if (read_word(pid, gil + w->gil_switch_number, &out->switches) ||
	    read_int(pid, gil + w->gil_locked, &locked) ||
	    read_word(pid, gil + w->gil_last_holder, &out->holder_ts) ||
	    read_word(pid, gil + w->gil_switch_number, &sw2))
		return -EFAULT;
	if (sw2 != out->switches)
		return -EAGAIN;
	out->locked = locked != 0;
	if (out->holder_ts && !read_word(pid, out->holder_ts + w->ts_native_tid, &tid) &&
	    tid <= UINT32_MAX)
		out->holder_tid = (uint32_t)tid;
	return 0;
}
