/* SPDX-License-Identifier: MIT */
/*
 * `stuck` on CPython's GIL: a thread asleep in take_gil waits for the GIL, which has no owner in
 * its futex word (a condition variable's), and it never looks stuck by itself: it wakes every
 * switch interval (5 ms) to ask the holder to drop it. The interpreter's own state names the
 * holder (the GIL's last_holder while it is locked), and switch_number, read at both of
 * `stuck`'s samples, proves it did not change hands between them. A C call that keeps the GIL
 * across a blocking call (an extension's sleep, a read, a lock) then reads as what it is: every
 * other Python thread waits for the GIL, held by that thread, blocked in that call.
 */
#ifndef WS_HANG_GIL_WAIT_H
#define WS_HANG_GIL_WAIT_H

#include <stdbool.h>
#include <stdint.h>

#include "stacks/pygil.h"

/* What one sample saw of a thread's wait for the GIL. */
struct ws_gil_wait {
	bool waits; /* asleep on the word where take_gil waits */
	bool read;  /* @st was read (else the GIL's memory was not readable, or changing) */
	struct ws_py_gil_state st;
	uint64_t addr;
	char name[64]; /* "the GIL (python3.11 pid 4821)" */
};

struct ws_gil_waits;

int ws_gil_waits_new(struct ws_gil_waits **out);
void ws_gil_waits_free(struct ws_gil_waits *g);

/* Does the thread of @pid asleep on futex word @addr wait for its process's GIL? *@out says. */
void ws_gil_wait_read(struct ws_gil_waits *g, uint32_t pid, uint64_t addr, struct ws_gil_wait *out);

/* @now and @before (the earlier sample, NULL: none) saw the same wait for a GIL that did not
 * change hands between them: locked by the same holder, with the same switch_number. */
bool ws_gil_wait_same(const struct ws_gil_wait *before, const struct ws_gil_wait *now);

#endif
