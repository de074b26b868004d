// SPDX-License-Identifier: MIT
/*
 * The scheduler model's explanations of a wait, when no more specific source has one: by the
 * waking thread, by a timer (named by the syscall it waited in), or honestly as unknown. An
 * interrupt-context wakeup is never pinned on current.
 */
#include <stdio.h>
#include <string.h>

#include <whyslow/syscall_names.h>

#include "sched_claims.h"

static void claim_set(struct ws_claim *out, enum ws_claim_strength s, const char *kind,
		      uint32_t woken_by, bool root, const char *evidence)
{
	out->strength = s;
	snprintf(out->kind, sizeof(out->kind), "%s", kind);
	out->woken_by = woken_by;
	out->root = root;
	snprintf(out->evidence, sizeof(out->evidence), "%s", evidence);
}

static bool name_in(const char *name, const char *const *list)
{
	for (; *list; list++)
		if (!strcmp(name, *list))
			return true;
	return false;
}

/*
 * Whether a poll-family wait could time out at all, from its arguments: a
 * negative timeout (poll, epoll_wait, epoll_pwait) or a NULL timespec/timeval
 * (ppoll, epoll_pwait2, select, pselect6) waits for ever.
 */
static bool poll_can_time_out(const char *name, const struct ws_syscall *sys)
{
	if (!strcmp(name, "epoll_wait") || !strcmp(name, "epoll_pwait"))
		return (int)sys->args[3] >= 0;
	if (!strcmp(name, "poll"))
		return (int)sys->args[2] >= 0;
	if (!strcmp(name, "ppoll"))
		return sys->args[2] != 0;
	if (!strcmp(name, "epoll_pwait2"))
		return sys->args[3] != 0;
	if (!strcmp(name, "select") || !strcmp(name, "pselect6"))
		return sys->args[4] != 0;
	return true;
}

/*
 * A wakeup from a timer callback, named by the syscall the thread waited in:
 * only a real sleep is a sleep; a wait that had a timeout timed out. A poll
 * with no timeout was ended by a timer it set some other way: a timer signal
 * (setitimer, timer_create) reaching its signalfd or handler — PostgreSQL's
 * backends wait so — or a timerfd in its set; "timed out" would be false.
 */
static int timer_claim(const struct ws_wait *w, struct ws_claim *out)
{
	static const char *const sleeps[] = { "nanosleep", "clock_nanosleep", NULL };
	/* a read that a timer callback completes is a timerfd's */
	static const char *const timerfd[] = { "read", "readv", "pread64", NULL };
	static const char *const polls[] = { "poll",	     "ppoll",	       "select",
					     "pselect6",     "epoll_wait",     "epoll_pwait",
					     "epoll_pwait2", "epoll_wait_old", NULL };
	const struct ws_syscall *sys = &w->wake->wakee_sys;
	const char *name = w->wake->sz >= sizeof(*w->wake) && ws_syscall_known(sys)
				   ? ws_syscall_name(sys->arch, sys->nr)
				   : NULL;
	char ev[96];

	if (!name) {
		/* not known what it waited in (older recording, no syscall) */
		claim_set(out, WS_CLAIM_SPECIFIC, "sleep", 0, true,
			  "woken inside a timer expiry callback (sleep or timeout)");
		return 1;
	}
	if (name_in(name, sleeps)) {
		claim_set(out, WS_CLAIM_SPECIFIC, "sleep", 0, true,
			  "woken by its own timer while in a sleep call");
		return 1;
	}
	if (name_in(name, timerfd)) {
		claim_set(out, WS_CLAIM_SPECIFIC, "sleep", 0, true,
			  "a read completed inside a timer expiry callback (a timerfd)");
		return 1;
	}
	if (name_in(name, polls) && !poll_can_time_out(name, sys)) {
		snprintf(ev, sizeof(ev),
			 "woken inside a timer expiry callback in %s with no timeout", name);
		claim_set(out, WS_CLAIM_SPECIFIC, "timer", 0, true, ev);
		return 1;
	}
	if (name_in(name, polls)) {
		claim_set(out, WS_CLAIM_SPECIFIC, "timeout", 0, true,
			  "poll/epoll timed out (woken inside a timer expiry callback)");
		return 1;
	}
	/* futex waits: the futex source names the futex and may know more, so only a fallback */
	snprintf(ev, sizeof(ev), "%s timed out (woken inside a timer expiry callback)", name);
	claim_set(out, strncmp(name, "futex", 5) ? WS_CLAIM_SPECIFIC : WS_CLAIM_FALLBACK, "timeout",
		  0, true, ev);
	return 1;
}

/*
 * The fallbacks. An interrupt-context wakeup is never pinned on current: it
 * is a timer's doing when it ran inside a timer callback, else unknown
 * (a source that saw what the interrupt completed may claim it instead).
 */
int ws_sched_infer(struct ws_plugin_ctx *ctx, const struct ws_wait *w, struct ws_claim *out)
{
	const struct ws_host *host = ctx->host;
	const struct ws_wake *wk = w->wake;

	if (wk->ctx & WS_CTX_TIMER)
		return timer_claim(w, out);
	if (wk->ctx & (WS_CTX_HARDIRQ | WS_CTX_SOFTIRQ)) {
		claim_set(out, WS_CLAIM_FALLBACK, "unknown", 0, true,
			  wk->ctx & WS_CTX_HARDIRQ
				  ? "woken from a hardware interrupt no source explained"
				  : "woken from a softirq no source explained");
		return 1;
	}
	if (!wk->waker_tid) {
		claim_set(out, WS_CLAIM_FALLBACK, "unknown", 0, true,
			  "woken by the idle task outside any known interrupt");
		return 1;
	}
	if (!w->waker_traced) {
		claim_set(out, WS_CLAIM_FALLBACK, "untraced", wk->waker_tid, true,
			  "woken by a thread outside the traced processes");
		host->claim_str(out, "waker_comm", wk->waker_comm ? wk->waker_comm : "?");
		return 1;
	}
	claim_set(out, WS_CLAIM_FALLBACK, "wakeup", wk->waker_tid, false,
		  "the waker ran the wakeup in task context");
	return 1;
}

int ws_sched_describe(struct ws_plugin_ctx *ctx, const struct ws_claim *c, char *buf, size_t len)
{
	(void)ctx;
	if (!strcmp(c->kind, "sleep"))
		return snprintf(buf, len, "%s",
				strstr(c->evidence, "sleep or timeout")
					? "a timer (sleep or timeout)"
					: "a sleep");
	if (!strcmp(c->kind, "timeout"))
		return snprintf(buf, len, "a timeout");
	if (!strcmp(c->kind, "timer"))
		return snprintf(buf, len, "a timer (a timer signal or timerfd; no timeout)");
	if (!strcmp(c->kind, "wakeup"))
		return snprintf(buf, len, "a wakeup");
	if (!strcmp(c->kind, "untraced"))
		return snprintf(buf, len, "a wakeup from tid %u (%s), outside the traced processes",
				c->woken_by, ws_claim_str(c, "waker_comm", "?"));
	/* what an interrupted wait waited in (ws_sched_describe_open's kinds) */
	if (!strcmp(c->kind, "syscall") || !strcmp(c->kind, "uninterruptible")) {
		char nb[24];
		const char *name = ws_syscall_label(&c->syscall, nb, sizeof(nb));

		if (name)
			return snprintf(buf, len, "%s%s (args 0x%llx, 0x%llx, 0x%llx)",
					c->kind[0] == 'u' ? "an uninterruptible wait in " : "",
					name, (unsigned long long)c->syscall.args[0],
					(unsigned long long)c->syscall.args[1],
					(unsigned long long)c->syscall.args[2]);
	}
	return snprintf(buf, len, "an unknown cause (%s)", c->evidence);
}

/* Roots of chains: a timer sleep is the sleeper's own; an untraced waker is named by its name. */
int ws_sched_root_label(struct ws_plugin_ctx *ctx, const struct ws_claim *c, const char *comm,
			char *buf, size_t len)
{
	char waker[32];

	if (!strcmp(c->kind, "sleep"))
		return snprintf(buf, len, "timer sleep in %s", comm);
	if (!strcmp(c->kind, "syscall") && ws_syscall_label(&c->syscall, waker, sizeof(waker)))
		return snprintf(buf, len, "%s in %s",
				ws_syscall_label(&c->syscall, waker, sizeof(waker)), comm);
	if (!strcmp(c->kind, "untraced")) {
		if (ctx->host->thread_comm(ctx, c->woken_by, waker, sizeof(waker)))
			snprintf(waker, sizeof(waker), "?");
		return snprintf(buf, len, "untraced thread %s", waker);
	}
	return 0;
}
