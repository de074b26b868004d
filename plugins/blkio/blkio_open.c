// SPDX-License-Identifier: MIT
/*
 * The blkio source on waits still open, seen in /proc (`whyslow stuck`, and
 * the waits that never ended when a run stops): a thread in uninterruptible
 * sleep whose kernel stack is in the block layer waits for a block request.
 * The stack is readable by root only; without it the wait stays the sched
 * source's "uninterruptible".
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <whyslow/syscall_names.h>

#include "blkio_open.h"

static bool in_block_layer(const struct ws_open_wait *w)
{
	/* frames of a wait for a block request */
	static const char *const frames[] = {
		"io_schedule", "submit_bio_wait", "blk_",	"bio_",	       "__blkdev_direct_IO",
		"iomap_dio",   "__iomap_dio",	  "folio_wait", "bit_wait_io", "wait_on_page",
	};

	for (int i = 0; i < w->nkstack; i++)
		for (size_t k = 0; k < sizeof(frames) / sizeof(frames[0]); k++)
			if (!strncmp(w->kstack[i], frames[k], strlen(frames[k])))
				return true;
	return false;
}

int blkio_describe_open(struct ws_plugin_ctx *ctx, const struct ws_open_wait *w,
			struct ws_claim *out, char *what, size_t len)
{
	char nb[24];
	const char *name = ws_syscall_label(&w->syscall, nb, sizeof(nb));

	(void)ctx;
	if (w->state != 'D' || !in_block_layer(w))
		return 0;
	out->strength = WS_CLAIM_SPECIFIC;
	snprintf(out->kind, sizeof(out->kind), "block_io");
	snprintf(out->evidence, sizeof(out->evidence),
		 "in uninterruptible sleep in the block layer (kernel stack)");
	/* in_block_layer: there is a frame */
	if (name)
		snprintf(what, len, "block I/O (%s, arg 0x%" PRIx64 ", in %s)", name,
			 (uint64_t)w->syscall.args[0], w->kstack[0]);
	else
		snprintf(what, len, "block I/O (in %s)", w->kstack[0]);
	return 1;
}
