// SPDX-License-Identifier: MIT
/*
 * The sched source on waits still open, seen in /proc (`whyslow stuck`, and
 * the waits that never ended when a run stops): what the scheduler model
 * knows of any blocked thread, its state and the syscall it sleeps in. Other
 * sources that know the resource (a futex word, a block request) claim the
 * wait more specifically.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <whyslow/syscall_names.h>

#include "sched_open.h"

static void set_kind(struct ws_claim *out, enum ws_claim_strength s, const char *kind,
		     const char *evidence)
{
	out->strength = s;
	snprintf(out->kind, sizeof(out->kind), "%s", kind);
	snprintf(out->evidence, sizeof(out->evidence), "%s", evidence);
}

int ws_sched_describe_open(struct ws_plugin_ctx *ctx, const struct ws_open_wait *w,
			   struct ws_claim *out, char *what, size_t len)
{
	const struct ws_syscall *sys = &w->syscall;
	const char *frame = w->nkstack > 0 ? w->kstack[0] : "the kernel", *name;
	char nb[24];

	(void)ctx;
	name = ws_syscall_label(sys, nb, sizeof(nb));
	if (w->state == 'D') {
		set_kind(out, WS_CLAIM_FALLBACK, "uninterruptible",
			 "in uninterruptible sleep (state D)");
		if (name)
			snprintf(what, len,
				 "an uninterruptible wait (%s, arg 0x%" PRIx64 ", in %s)", name,
				 (uint64_t)sys->args[0], frame);
		else
			snprintf(what, len, "an uninterruptible wait (in %s)", frame);
		return 1;
	}
	if (!name)
		return 0;
	if (!strcmp(name, "nanosleep") || !strcmp(name, "clock_nanosleep")) {
		set_kind(out, WS_CLAIM_SPECIFIC, "sleep",
			 "asleep in a sleep call (a timer ends it)");
		snprintf(what, len, "a sleep (%s, a timer)", name);
		return 1;
	}
	set_kind(out, WS_CLAIM_FALLBACK, "syscall", "asleep in this syscall");
	snprintf(what, len, "%s (args 0x%" PRIx64 ", 0x%" PRIx64 ", 0x%" PRIx64 ")", name,
		 (uint64_t)sys->args[0], (uint64_t)sys->args[1], (uint64_t)sys->args[2]);
	return 1;
}
