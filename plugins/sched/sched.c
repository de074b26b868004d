// SPDX-License-Identifier: MIT
/*
 * sched source, user side: turns switch/wakeup/thread records into the
 * core's timelines, and explains wakeups that no more specific source claims:
 * by the waking thread, by a timer, or honestly as unknown.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <whyslow/plugin.h>
#include <whyslow/syscall_names.h>

#include "sched_open.h"
#include "sched_rec.h"
#include "sched.skel.h"

static const void *sched_object(size_t *size)
{
	return sched_bpf__elf_bytes(size);
}

static void comm_copy(char *dst, const char *src)
{
	memcpy(dst, src, WS_COMM_LEN);
	dst[WS_COMM_LEN - 1] = 0;
}

/* Thread @tid of @pid is called @name (a record's WS_COMM_LEN bytes) from @ts on. */
static void thread_named(struct ws_plugin_ctx *ctx, uint64_t ts, uint32_t tid, uint32_t pid,
			 const char *name)
{
	struct ws_thread_event ev = { .sz = sizeof(ev), .type = WS_THREAD_COMM };
	char comm[WS_COMM_LEN];

	comm_copy(comm, name);
	ev.ts = ts;
	ev.tid = tid;
	ev.pid = pid;
	ev.comm = comm;
	ctx->host->thread_event(ctx, &ev);
}

static void short_copy(struct ws_short_waits *dst, const struct ws_sched_short *src)
{
	dst->n = src->n;
	dst->blocked_ns = src->blocked_ns;
	dst->runnable_ns = src->runnable_ns;
}

/* Off-CPU periods shorter than the core's resolution are summarised in the kernel. */
static int sched_configure(struct ws_plugin_ctx *ctx, struct bpf_object *obj)
{
	uint64_t res = ctx->host->resolution_ns(ctx);
	int err;

	err = ctx->host->set_rodata(ctx, obj, "resolution_ns", &res, sizeof(res));
	if (err)
		ctx->host->log(ctx, WS_LOG_ERROR, "cannot set the resolution: %s", strerror(-err));
	return err;
}

static int sched_decode(struct ws_plugin_ctx *ctx, const struct ws_rec_hdr *rec)
{
	const struct ws_host *host = ctx->host;
	char comm[WS_COMM_LEN];

	switch (rec->kind) {
	case WS_SCHED_SWITCH: {
		const struct ws_sched_switch *r = (const void *)rec;
		struct ws_switch sw = { .sz = sizeof(sw) };

		if (rec->size < WS_SCHED_SWITCH_V0_SIZE)
			return -EINVAL;
		comm_copy(comm, r->next_comm);
		sw.ts = rec->ts;
		sw.cpu = rec->cpu;
		sw.prev_tid = rec->tid;
		sw.prev_pid = rec->pid;
		sw.prev_state = r->prev_state;
		sw.next_tid = r->next_tid;
		sw.next_pid = r->next_pid;
		sw.next_comm = comm;
		/* an untraced prev's name (1.3): before the switch, which may name it */
		if (rec->size >= WS_SCHED_SWITCH_V2_SIZE && r->prev_comm[0])
			thread_named(ctx, rec->ts, rec->tid, rec->pid, r->prev_comm);
		if (rec->size >= WS_SCHED_SWITCH_V1_SIZE) {
			sw.prev_run_start = r->prev_run_start;
			sw.next_off_ts = r->next_off_ts;
			sw.next_wake_ts = r->next_wake_ts;
			sw.next_off_state = r->next_off_state;
			sw.next_off_cpu = r->next_off_cpu;
			short_copy(&sw.next_short, &r->next_short);
			sw.prev_out_later = rec->flags & WS_SCHED_PREV_LATER;
		}
		if (rec->size >= sizeof(*r)) {
			sw.next_throttle_cg = r->next_throttle_cg;
			sw.next_unthrottled_ts = r->next_unthrottled_ts;
		}
		sw.helpers = (rec->flags & WS_SCHED_PREV_HELPER ? WS_SWITCH_PREV_HELPER : 0) |
			     (rec->flags & WS_SCHED_NEXT_HELPER ? WS_SWITCH_NEXT_HELPER : 0);
		host->sched_switch(ctx, &sw);
		return 0;
	}
	case WS_SCHED_WAKING: {
		const struct ws_sched_waking *r = (const void *)rec;
		struct ws_wake wk = { .sz = sizeof(wk) };

		if (rec->size < WS_SCHED_WAKING_V0_SIZE)
			return -EINVAL;
		comm_copy(comm, r->waker_comm);
		wk.ts = rec->ts;
		wk.cpu = rec->cpu;
		wk.ctx = rec->ctx;
		wk.ctx_id = rec->ctx_id;
		wk.waker_tid = rec->tid;
		wk.waker_pid = rec->pid;
		wk.waker_comm = comm;
		wk.wakee_tid = r->wakee_tid;
		wk.wakee_pid = r->wakee_pid;
		wk.wakee_sys.nr = WS_SYSCALL_NONE;
		wk.waker_sys.nr = WS_SYSCALL_NONE;
		if (rec->size >= WS_SCHED_WAKING_V1_SIZE) {
			wk.wakee_sys = r->wakee_sys;
			wk.waker_sys = r->waker_sys;
		}
		if (rec->size >= WS_SCHED_WAKING_V2_SIZE) {
			wk.off_ts = r->off_ts;
			wk.off_state = r->off_state;
			wk.off_cpu = r->off_cpu;
		}
		if (rec->size >= WS_SCHED_WAKING_V3_SIZE)
			wk.waker_short = r->waker_short;
		if (rec->size >= sizeof(*r)) {
			wk.wakee_sigpending = r->wakee_sigpending;
			wk.wakee_state = r->wakee_state;
			wk.wakee_signals_known = true;
		}
		wk.wakee_helper = rec->flags & WS_SCHED_WAKEE_HELPER;
		host->sched_wake(ctx, &wk);
		return 0;
	}
	case WS_SCHED_FORK: {
		const struct ws_sched_fork *r = (const void *)rec;
		struct ws_thread_event ev = { .sz = sizeof(ev), .type = WS_THREAD_NEW };

		if (rec->size < sizeof(*r))
			return -EINVAL;
		comm_copy(comm, r->child_comm);
		ev.ts = rec->ts;
		ev.tid = r->child_tid;
		ev.pid = r->child_pid;
		ev.comm = comm;
		ev.parent_tid = rec->tid;
		host->thread_event(ctx, &ev);
		return 0;
	}
	case WS_SCHED_EXIT: {
		const struct ws_sched_exit *r = (const void *)rec;
		struct ws_thread_event ev = { .sz = sizeof(ev), .type = WS_THREAD_EXIT };

		if (rec->size < WS_SCHED_EXIT_V0_SIZE)
			return -EINVAL;
		if (rec->size >= WS_SCHED_EXIT_V1_SIZE)
			short_copy(&ev.short_waits, &r->short_waits);
		if (rec->size >= sizeof(*r)) {
			ev.exit_signal = r->exit_code & 0x7f;
			ev.sys = r->sys;
			ev.mem = r->mem;
			ev.mem_len = r->mem_len < sizeof(r->mem) ? r->mem_len : sizeof(r->mem);
		} else {
			ev.sys.nr = WS_SYSCALL_NONE;
		}
		comm_copy(comm, r->comm);
		ev.ts = rec->ts;
		ev.tid = rec->tid;
		ev.pid = rec->pid;
		ev.comm = comm;
		host->thread_event(ctx, &ev);
		return 0;
	}
	case WS_SCHED_COMM: {
		const struct ws_sched_comm *r = (const void *)rec;

		if (rec->size < sizeof(*r))
			return -EINVAL;
		thread_named(ctx, rec->ts, r->tid, r->pid, r->comm);
		return 0;
	}
	default:
		return -EINVAL;
	}
}

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
static int sched_infer(struct ws_plugin_ctx *ctx, const struct ws_wait *w, struct ws_claim *out)
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

static int sched_describe(struct ws_plugin_ctx *ctx, const struct ws_claim *c, char *buf,
			  size_t len)
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
	/* what an interrupted wait waited in (sched_describe_open's kinds) */
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
static int sched_root_label(struct ws_plugin_ctx *ctx, const struct ws_claim *c, const char *comm,
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

static const struct ws_plugin sched_plugin = {
	.sz = sizeof(struct ws_plugin),
	.abi_major = WS_ABI_MAJOR,
	.abi_minor = WS_ABI_MINOR,
	.name = "sched",
	.description = "scheduler: context switches, wakeups (with interrupt context), thread life",
	.version = "1.5",
	.kind_base = WS_KIND_SCHED,
	.bpf_object = sched_object,
	.configure = sched_configure,
	.decode = sched_decode,
	.infer = sched_infer,
	.describe = sched_describe,
	.root_label = sched_root_label,
	.describe_open = sched_describe_open,
};

WS_PLUGIN_DEFINE(sched_plugin)
