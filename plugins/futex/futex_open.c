// SPDX-License-Identifier: MIT
/*
 * The futex source on waits still open, seen in /proc (`whyslow stuck`, and
 * the waits that never ended when a run stops): a thread asleep in a futex
 * wait is described by the word it sleeps on, and the holder of that lock is
 * read from the lock itself (futex_owner.c).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/uio.h>

#include <whyslow/syscall_names.h>

#include "futex_open.h"
#include "futex_owner.h"

int futex_describe_open(struct ws_plugin_ctx *ctx, const struct ws_open_wait *w,
			struct ws_claim *out, char *what, size_t len)
{
	const struct ws_host *h = ctx->host;
	uint64_t addr = w->syscall.args[0];
	uint32_t op = (uint32_t)w->syscall.args[1];
	const char *cond, *join;
	char ob[40], fn[64];

	if (!ws_syscall_is(&w->syscall, "futex") || !futex_op_waits(op))
		return 0;
	futex_op_name(op, ob, sizeof(ob));
	out->strength = WS_CLAIM_SPECIFIC;
	snprintf(out->kind, sizeof(out->kind), "futex");
	h->claim_hex(out, "addr", addr);
	h->claim_str(out, "op", ob);
	/* the same call serves mutexes and condition variables: the stack tells them apart */
	cond = futex_op_pi(op) || !w->ustack
		       ? NULL
		       : futex_cond_wait_frame(w->ustack, w->nustack);
	if (cond) {
		snprintf(fn, sizeof(fn), "%.*s", (int)strcspn(cond, "@"), cond);
		snprintf(out->evidence, sizeof(out->evidence),
			 "%.36s: asleep in futex(%.26s) on this word", fn, ob);
		h->claim_str(out, "object", "condvar");
		h->claim_str(out, "function", fn);
		snprintf(what, len,
			 "a condition variable (futex 0x%" PRIx64 ", %s, in %s): it waits to be signalled, not for a lock",
			 addr, ob, fn);
		return 1;
	}
	join = futex_op_pi(op) || !w->ustack
		       ? NULL
		       : futex_join_wait_frame(w->ustack, w->nustack);
	if (join) {
		snprintf(fn, sizeof(fn), "%.*s", (int)strcspn(join, "@"), join);
		snprintf(out->evidence, sizeof(out->evidence),
			 "%.36s: asleep in futex(%.26s) on this word", fn, ob);
		h->claim_str(out, "object", "join");
		h->claim_str(out, "function", fn);
		snprintf(what, len,
			 "a thread join (futex 0x%" PRIx64 ", %s, in %s): it waits for a thread to exit",
			 addr, ob, fn);
		return 1;
	}
	snprintf(out->evidence, sizeof(out->evidence), "asleep in futex(%s) on this word", ob);
	snprintf(what, len, "futex 0x%" PRIx64 " (%s)", addr, ob);
	return 1;
}

/* The thread a join (claim @c) waits for, from the tid word at its futex address. */
static int join_owner(const struct ws_open_wait *w, uint64_t addr, ws_tid_live_fn is_live,
		      void *live_ctx, struct ws_open_owner *out)
{
	struct futex_owner o;
	uint32_t word = 0;
	struct iovec local = { &word, sizeof(word) }, remote = { (void *)(uintptr_t)addr, 4 };

	ssize_t n;

	if (w->mem && w->mem_len >= sizeof(word)) {
		memcpy(&word, w->mem, sizeof(word));
	} else {
		n = process_vm_readv((pid_t)w->pid, &local, 1, &remote, 1, 0);
		if (n < 0)
			return -errno;
		if (n != sizeof(word))
			word = 0; /* said below: names no live thread */
	}
	futex_owner_from_tid_word(word, is_live, live_ctx, &o);
	out->lock = addr;
	snprintf(out->lock_name, sizeof(out->lock_name), "thread join");
	if (o.evidence == OWNER_EV_NONE) {
		out->tid = 0;
		snprintf(out->why, sizeof(out->why), "%s", o.why);
		return 1;
	}
	out->tid = o.tid;
	snprintf(out->evidence, sizeof(out->evidence), "joined thread's tid word");
	snprintf(out->evidence_key, sizeof(out->evidence_key), "tid_word");
	return 1;
}

int futex_open_owner(struct ws_plugin_ctx *ctx, const struct ws_open_wait *w,
		     const struct ws_claim *c, ws_tid_live_fn is_live, void *live_ctx,
		     struct ws_open_owner *out)
{
	struct futex_owner o;
	uint64_t addr = ws_claim_u64(c, "addr", 0);
	uint32_t op = (uint32_t)w->syscall.args[1];
	bool pi = futex_op_pi(op);
	int err;

	(void)ctx;
	/* a condition variable has no holder: whoever signals it ends the wait */
	if (strcmp(c->kind, "futex") || !addr || !strcmp(ws_claim_str(c, "object", ""), "condvar"))
		return 0;
	if (!strcmp(ws_claim_str(c, "object", ""), "join"))
		return join_owner(w, addr, is_live, live_ctx, out);
	/* a program killed while it waited is gone: its lock as the thread read it then */
	if (w->mem)
		futex_owner_from_bytes(w->mem, w->mem_len, op, is_live, live_ctx, &o);
	else if ((err = futex_owner_read(w->pid, addr, op, is_live, live_ctx, &o)))
		return err;
	out->lock = addr;
	out->pshared = o.pshared;
	snprintf(out->lock_name, sizeof(out->lock_name), "%s", pi ? "PI futex" : "mutex");
	if (o.evidence == OWNER_EV_NONE) {
		out->tid = 0;
		if (o.claimed_tid)
			snprintf(out->why, sizeof(out->why),
				 "the lock word names tid %u, not verified: not a thread of this user's processes",
				 o.claimed_tid);
		else
			snprintf(out->why, sizeof(out->why), "%s", o.why ? o.why : "no owner evidence");
		return 1;
	}
	out->tid = o.tid;
	snprintf(out->evidence, sizeof(out->evidence), "%s",
		 o.evidence == OWNER_EV_PI_WORD ? "PI futex word" : "mutex word");
	snprintf(out->evidence_key, sizeof(out->evidence_key), "%s",
		 o.evidence == OWNER_EV_PI_WORD ? "pi_futex_word" : "mutex_word");
	return 1;
}
