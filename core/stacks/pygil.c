// SPDX-License-Identifier: MIT
/* The GIL's futex words: see pygil.h. */
#include <stdio.h>

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
