// SPDX-License-Identifier: MIT
/*
 * kill source: explains a wait as ended by a signal when the wakeup that
 * ended it found a signal pending for the thread: Ctrl-C is "SIGINT from the
 * terminal's kworker", not a wakeup by that kworker. The sched source reads
 * the pending set with the wakeup (ws_wake.wakee_sigpending, ABI 2.3), so
 * this source has no kernel side; recordings made before carry its own
 * record of each such wakeup (struct ws_kill_wake), still read.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <whyslow/plugin.h>
#include <whyslow/recent.h>
#include <whyslow/syscall_names.h>

#include "kill_rec.h"

#define NAME "kill"

/* Both records of one wakeup are written back to back; a bound guards against stale ones. */
#define SIGNAL_WAKE_NS 1000000ull
#define SIGNALS_PER_CPU 4
#define TASK_INTERRUPTIBLE_ 0x1
#define SIGKILL_ 9
#define SIGCHLD_ 17

/* The state: the last signal wakeups on each CPU of an older recording (struct ws_kill_wake). */
static int kill_init(struct ws_plugin_ctx *ctx)
{
	struct ws_recent *sent = malloc(sizeof(*sent));

	if (!sent)
		return -ENOMEM;
	ws_recent_init(sent, sizeof(struct ws_kill_wake), SIGNALS_PER_CPU);
	ctx->priv = sent;
	return 0;
}

static void kill_fini(struct ws_plugin_ctx *ctx)
{
	if (ctx->priv)
		ws_recent_free(ctx->priv);
	free(ctx->priv);
	ctx->priv = NULL;
}

static int kill_decode(struct ws_plugin_ctx *ctx, const struct ws_rec_hdr *rec)
{
	struct ws_kill_wake *s;

	if (rec->kind != WS_KILL_WAKE)
		return 0;
	if (rec->size < sizeof(struct ws_kill_wake))
		return -EINVAL;
	s = ws_recent_push(ctx->priv, rec);
	if (!s)
		return -ENOMEM;
	s->sender_comm[WS_KILL_COMM_LEN - 1] = 0;
	return 0;
}

/* The record of the wakeup @arg: same bracket, same wakee, just before it. */
static bool same_wakeup(const void *rec, const void *arg)
{
	const struct ws_kill_wake *s = rec;
	const struct ws_wake *wk = arg;

	return s->hdr.ctx_id == wk->ctx_id && s->hdr.ctx == wk->ctx && s->hdr.ts <= wk->ts &&
	       wk->ts - s->hdr.ts <= SIGNAL_WAKE_NS && s->wakee_tid == wk->wakee_tid &&
	       s->wakee_pid == wk->wakee_pid;
}

/* The record of @wk's own wakeup, written just before it in the same context. */
static const struct ws_kill_wake *signal_of(const struct ws_recent *sent, const struct ws_wake *wk)
{
	return ws_recent_newest(sent, wk->cpu, 0, same_wakeup, wk, NULL);
}

static const char *sig_name(uint32_t sig)
{
	static const char *const n[] = {
		[1] = "SIGHUP",	  [2] = "SIGINT",     [3] = "SIGQUIT",	[4] = "SIGILL",
		[5] = "SIGTRAP",  [6] = "SIGABRT",    [7] = "SIGBUS",	[8] = "SIGFPE",
		[9] = "SIGKILL",  [10] = "SIGUSR1",   [11] = "SIGSEGV", [12] = "SIGUSR2",
		[13] = "SIGPIPE", [14] = "SIGALRM",   [15] = "SIGTERM", [16] = "SIGSTKFLT",
		[17] = "SIGCHLD", [18] = "SIGCONT",   [19] = "SIGSTOP", [20] = "SIGTSTP",
		[21] = "SIGTTIN", [22] = "SIGTTOU",   [23] = "SIGURG",	[24] = "SIGXCPU",
		[25] = "SIGXFSZ", [26] = "SIGVTALRM", [27] = "SIGPROF", [28] = "SIGWINCH",
		[29] = "SIGIO",	  [30] = "SIGPWR",    [31] = "SIGSYS",
	};

	return sig < sizeof(n) / sizeof(n[0]) && n[sig] ? n[sig] : NULL;
}

/* What @wk found pending: from the wakeup itself, or from an older recording's own record. */
static bool pending_of(struct ws_plugin_ctx *ctx, const struct ws_wake *wk, uint64_t *pending,
		       uint32_t *state, const char **sender_comm)
{
	const struct ws_kill_wake *s;

	if (wk->wakee_signals_known) {
		*pending = wk->wakee_sigpending;
		*state = wk->wakee_state;
		*sender_comm = wk->waker_comm ? wk->waker_comm : "?";
		return *pending != 0;
	}
	if (!(s = signal_of(ctx->priv, wk)))
		return false;
	*pending = s->pending;
	*state = s->state;
	*sender_comm = s->sender_comm;
	return true;
}

/*
 * Did the thread, asleep in @sys, wait for signal @sig? Then the signal (and whoever sent it)
 * is what it waited for. Otherwise the signal only interrupted a wait for something else: a
 * Ctrl-C ends a deadlocked lock wait, it did not cause it. A child's SIGCHLD ends a wait for
 * that child (wait4, waitid): the child's exit is what was waited for. A read of a signalfd
 * is not told apart from any read here: it is said to be interrupted.
 */
static bool waits_for_signal(const struct ws_syscall *sys, uint32_t sig)
{
	if (ws_syscall_is(sys, "rt_sigtimedwait") || ws_syscall_is(sys, "rt_sigsuspend") ||
	    ws_syscall_is(sys, "pause") || ws_syscall_is(sys, "sigsuspend"))
		return true;
	return sig == SIGCHLD_ && (ws_syscall_is(sys, "wait4") || ws_syscall_is(sys, "waitid"));
}

static int kill_infer(struct ws_plugin_ctx *ctx, const struct ws_wait *w, struct ws_claim *out)
{
	const struct ws_host *host = ctx->host;
	const char *name, *sender_comm;
	uint64_t others, pending;
	uint32_t sig, state;
	char buf[16];
	bool in_irq;

	if (!w->wake || !pending_of(ctx, w->wake, &pending, &state, &sender_comm))
		return 0;
	/*
	 * Only an interruptible sleep is ended by any signal; an uninterruptible one only by
	 * SIGKILL (killable waits). Otherwise a pending signal is not what woke it.
	 */
	if (!(state & TASK_INTERRUPTIBLE_) && !(pending & (1ull << (SIGKILL_ - 1))))
		return 0;
	/*
	 * A fatal signal makes the kernel add SIGKILL for every thread of the process: name the
	 * signal that was sent, SIGKILL only when nothing else is pending.
	 */
	others = pending & ~(1ull << (SIGKILL_ - 1));
	sig = others ? (uint32_t)__builtin_ctzll(others) + 1 : SIGKILL_;
	name = sig_name(sig);
	if (!name) {
		snprintf(buf, sizeof(buf), "SIG%u", sig);
		name = buf;
	}
	in_irq = w->wake->ctx & (WS_CTX_HARDIRQ | WS_CTX_SOFTIRQ | WS_CTX_TIMER);
	out->strength = WS_CLAIM_SPECIFIC;
	/* without the syscall (a recording from before ABI 1.1) the signal is all that is known */
	if (ws_syscall_known(&w->wake->wakee_sys))
		out->ends_only = !waits_for_signal(&w->wake->wakee_sys, sig);
	snprintf(out->kind, sizeof(out->kind), "signal");
	if (in_irq) {
		/* current is whatever the interrupt hit: the kernel sent it (a timer's SIGALRM) */
		out->woken_by = 0;
		out->root = true;
		snprintf(out->evidence, sizeof(out->evidence),
			 "woken inside an interrupt with the signal pending");
	} else {
		/* the sender's own work came before: follow it when it is traced */
		out->woken_by = w->wake->waker_tid;
		out->root = !w->waker_traced;
		snprintf(out->evidence, sizeof(out->evidence),
			 "woken with the signal pending, by the thread that sent it");
	}
	host->claim_str(out, "signal", name);
	host->claim_u64(out, "signo", sig);
	host->claim_hex(out, "pending", pending);
	if (!in_irq) {
		host->claim_u64(out, "sender", w->wake->waker_tid);
		host->claim_u64(out, "sender_pid", w->wake->waker_pid);
		host->claim_str(out, "sender_comm", sender_comm);
	}
	return 1;
}

/* "signal SIGINT from tid 4242 (kworker/u8:2)" */
static int kill_describe(struct ws_plugin_ctx *ctx, const struct ws_claim *c, char *buf, size_t len)
{
	const struct ws_field *sig = ws_claim_field(c, "signal"),
			      *from = ws_claim_field(c, "sender"),
			      *comm = ws_claim_field(c, "sender_comm");

	(void)ctx;
	if (!sig)
		return snprintf(buf, len, "a signal");
	if (!from)
		return snprintf(buf, len, "signal %s, sent by the kernel from an interrupt",
				sig->s);
	return snprintf(buf, len, "signal %s from tid %" PRIu64 " (%s)", sig->s, from->u,
			comm ? comm->s : "?");
}

/* Waits ended by one signal number are one cause, whoever sent each. */
static int kill_resource(struct ws_plugin_ctx *ctx, const struct ws_claim *c, char *buf, size_t len)
{
	const struct ws_field *sig = ws_claim_field(c, "signal");

	(void)ctx;
	return sig ? snprintf(buf, len, "signal %s", sig->s) : 0;
}

static const struct ws_plugin kill_plugin = {
	.sz = sizeof(struct ws_plugin),
	.abi_major = WS_ABI_MAJOR,
	.abi_minor = WS_ABI_MINOR,
	.name = NAME,
	.description =
		"signals: a wait ended by a signal (kill, Ctrl-C, alarm) names it and its sender",
	.version = "1.1",
	.kind_base = WS_KIND_KILL,
	.bpf_object = NULL, /* the sched source reads the pending signals at the wakeup */
	.init = kill_init,
	.decode = kill_decode,
	.infer = kill_infer,
	.describe = kill_describe,
	.fini = kill_fini,
	.resource = kill_resource,
};

WS_PLUGIN_DEFINE(kill_plugin)
