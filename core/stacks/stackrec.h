/* SPDX-License-Identifier: MIT */
/*
 * Resolved stacks (WS_KIND_STACK records, stacks/capture.h) in memory, and their encoding: what
 * a recording keeps so that `report` never needs the traced binaries.
 */
#ifndef WS_STACKREC_H
#define WS_STACKREC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "capture.h"

#include "symbols.h"

#define WS_STACK_MAX_FRAMES 96

struct ws_sframe {
	struct ws_frame f; /* strings owned by the ws_stack */
	bool kernel;
	/* a CPython frame (WS_STACK_FRAME_PYTHON): f.sym its function, f.file and f.line its
	 * source, f.module its interpreter; f.sym NULL: the Python frames could not be read */
	bool python;
};

/* One thread's stack for one wait; user frames first (innermost first), then kernel frames. */
struct ws_stack {
	uint32_t tid, pid, wait_tid;
	uint8_t role;	 /* WS_STACK_WAITER or WS_STACK_WAKER */
	uint8_t ustop;	 /* enum ws_unwind_stop + 1; 0: no user part */
	uint16_t nouser; /* WS_NOUSER_*: why no user frames (0: there are, or unknown) */
	uint64_t wait_start, wait_end;
	uint32_t n;
	struct ws_sframe *frames;
	char *strs;
	int32_t fd;	  /* -1: no file named */
	const char *path; /* what fd named, or NULL */
	/* a waiter in a CPython process: the GIL as it read it when its wait ended (capture.h,
	 * struct ws_stack_gil; WS_GIL_NOT_READ: no such read) */
	uint8_t gil;
	uint32_t gil_holder;
	/* WS_GIL_HELD: the holder's CPython frames as the waiter read them while it ran, innermost
	 * first (@nholder of them; in a decoded or copied stack, right after @frames' @n) */
	uint32_t nholder;
	struct ws_sframe *holder;
};

/*
 * Encode @st (header identity taken from @hdr: cpu, ctx, ts...) into a malloc'd record.
 * Frames that do not fit in a record (64 KiB) are left out. 0 or -ENOMEM.
 */
int ws_stackrec_encode(const struct ws_rec_hdr *hdr, const struct ws_stack *st,
		       struct ws_rec_hdr **out);
/* Decode a WS_KIND_STACK record into a malloc'd stack. 0, -EINVAL (malformed) or -ENOMEM. */
int ws_stackrec_decode(const struct ws_rec_hdr *rec, struct ws_stack **out);
/*
 * A malloc'd copy of @st as a recording gives it back (ws_stackrec_decode() of
 * ws_stackrec_encode()), without the record in between: what is kept in-process is then what a
 * replay of the recording finds. 0 or -ENOMEM.
 */
int ws_stack_dup(const struct ws_stack *st, struct ws_stack **out);
void ws_stack_free(struct ws_stack *st);

#endif
