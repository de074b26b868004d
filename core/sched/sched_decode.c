// SPDX-License-Identifier: MIT
/*
 * The scheduler model's records (sched_rec.h) into the graph's events (engine/events.h). Every
 * older record size still decodes: members a record lacks are left 0 (or "unknown").
 */
#include <errno.h>
#include <string.h>

#include <whyslow/syscall_names.h>

#include "sched.h"
#include "sched_rec.h"

static void comm_copy(char *dst, const char *src)
{
	memcpy(dst, src, WS_COMM_LEN);
	dst[WS_COMM_LEN - 1] = 0;
}

/*
 * Thread @tid of @pid is called @name (a record's WS_COMM_LEN bytes) from @ts on; @renamed: it
 * renamed itself then (its own record), rather than a record of another carrying its name.
 */
static void thread_named(const struct ws_sched_feed *feed, uint64_t ts, uint32_t tid, uint32_t pid,
			 const char *name, bool renamed)
{
	struct ws_thread_event ev = { .sz = sizeof(ev), .type = WS_THREAD_COMM };
	char comm[WS_COMM_LEN];

	comm_copy(comm, name);
	ev.ts = ts;
	ev.tid = tid;
	ev.pid = pid;
	ev.comm = comm;
	ev.renamed = renamed;
	feed->on_thread(feed->ctx, &ev);
}

static void short_copy(struct ws_short_waits *dst, const struct ws_sched_short *src)
{
	dst->n = src->n;
	dst->blocked_ns = src->blocked_ns;
	dst->runnable_ns = src->runnable_ns;
}

static int decode_switch(const struct ws_rec_hdr *rec, const struct ws_sched_feed *feed)
{
	const struct ws_sched_switch *r = (const void *)rec;
	struct ws_switch sw = { .sz = sizeof(sw) };
	char comm[WS_COMM_LEN];

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
		thread_named(feed, rec->ts, rec->tid, rec->pid, r->prev_comm, false);
	if (rec->size >= WS_SCHED_SWITCH_V1_SIZE) {
		sw.prev_run_start = r->prev_run_start;
		sw.next_off_ts = r->next_off_ts;
		sw.next_wake_ts = r->next_wake_ts;
		sw.next_off_state = r->next_off_state;
		sw.next_off_cpu = r->next_off_cpu;
		short_copy(&sw.next_short, &r->next_short);
		sw.prev_out_later = rec->flags & WS_SCHED_PREV_LATER;
		sw.prev_unseen = rec->flags & WS_SCHED_PREV_UNSEEN;
		sw.prev_unseen_ns = sw.prev_unseen ? r->prev_unseen_ns : 0;
	}
	if (rec->size >= sizeof(*r)) {
		sw.next_throttle_cg = r->next_throttle_cg;
		sw.next_unthrottled_ts = r->next_unthrottled_ts;
	}
	sw.helpers = (rec->flags & WS_SCHED_PREV_HELPER ? WS_SWITCH_PREV_HELPER : 0) |
		     (rec->flags & WS_SCHED_NEXT_HELPER ? WS_SWITCH_NEXT_HELPER : 0);
	feed->on_switch(feed->ctx, &sw);
	return 0;
}

static int decode_waking(const struct ws_rec_hdr *rec, const struct ws_sched_feed *feed)
{
	const struct ws_sched_waking *r = (const void *)rec;
	struct ws_wake wk = { .sz = sizeof(wk) };
	char comm[WS_COMM_LEN];

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
	feed->on_wake(feed->ctx, &wk);
	return 0;
}

bool ws_sched_new_thread(const struct ws_rec_hdr *rec, struct ws_thread_event *ev)
{
	const struct ws_sched_fork *r = (const void *)rec;

	if (rec->kind != WS_SCHED_FORK || rec->size < WS_SCHED_FORK_V0_SIZE)
		return false;
	ev->ts = rec->ts;
	ev->tid = r->child_tid;
	ev->pid = r->child_pid;
	ev->cg_cpu = rec->size >= sizeof(*r) ? r->child_cg_cpu : 0;
	ev->cg_dfl = rec->size >= sizeof(*r) ? r->child_cg_dfl : 0;
	return true;
}

int ws_sched_threads_named(const struct ws_rec_hdr *rec, uint32_t tid[2], uint32_t pid[2])
{
	const struct ws_sched_switch *sw = (const void *)rec;
	const struct ws_sched_waking *wk = (const void *)rec;
	const struct ws_sched_comm *cm = (const void *)rec;

	tid[0] = rec->tid;
	pid[0] = rec->pid;
	switch (rec->kind) {
	case WS_SCHED_SWITCH:
		if (rec->size < WS_SCHED_SWITCH_V0_SIZE)
			return 0;
		tid[1] = sw->next_tid;
		pid[1] = sw->next_pid;
		return 2;
	case WS_SCHED_WAKING:
		if (rec->size < WS_SCHED_WAKING_V0_SIZE)
			return 0;
		tid[1] = wk->wakee_tid;
		pid[1] = wk->wakee_pid;
		return 2;
	case WS_SCHED_COMM:
		if (rec->size < sizeof(*cm))
			return 0;
		tid[0] = cm->tid;
		pid[0] = cm->pid;
		return 1;
	default:
		return 0;
	}
}

static int decode_fork(const struct ws_rec_hdr *rec, const struct ws_sched_feed *feed)
{
	const struct ws_sched_fork *r = (const void *)rec;
	struct ws_thread_event ev = { .sz = sizeof(ev), .type = WS_THREAD_NEW };
	char comm[WS_COMM_LEN];

	if (!ws_sched_new_thread(rec, &ev))
		return -EINVAL;
	comm_copy(comm, r->child_comm);
	ev.comm = comm;
	ev.parent_tid = rec->tid;
	feed->on_thread(feed->ctx, &ev);
	return 0;
}

static int decode_exit(const struct ws_rec_hdr *rec, const struct ws_sched_feed *feed)
{
	const struct ws_sched_exit *r = (const void *)rec;
	struct ws_thread_event ev = { .sz = sizeof(ev), .type = WS_THREAD_EXIT };
	char comm[WS_COMM_LEN];

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
	feed->on_thread(feed->ctx, &ev);
	return 0;
}

/* The buckets of a thread's summarised periods (sched 1.6), those in use, in order. */
static int decode_causes(const struct ws_rec_hdr *rec, const struct ws_sched_feed *feed)
{
	const struct ws_sched_short_causes *r = (const void *)rec;
	struct ws_thread_event ev = { .sz = sizeof(ev), .type = WS_THREAD_SHORT_CAUSES };
	struct ws_short_cause c[WS_SCHED_CAUSES];
	uint32_t n = 0;

	if (rec->size < sizeof(*r))
		return -EINVAL;
	memset(c, 0, sizeof(c));
	for (int i = 0; i < WS_SCHED_CAUSES && r->c[i].n; i++, n++) {
		c[n].res = r->c[i].res;
		c[n].nr = r->c[i].nr == WS_SCHED_CAUSE_RUNQUEUE ? WS_SHORT_RUNQUEUE : r->c[i].nr;
		c[n].arch = r->arch;
		c[n].state = (uint8_t)r->c[i].state;
		c[n].waker = r->c[i].waker;
		c[n].n = r->c[i].n;
		c[n].ns = r->c[i].blocked_ns + r->c[i].runnable_ns;
	}
	ev.ts = rec->ts;
	ev.tid = r->tid;
	/* hdr's pid is current's: in a switch, prev's */
	ev.pid = rec->tid == r->tid ? rec->pid : 0;
	ev.causes = c;
	ev.ncauses = n;
	short_copy(&ev.causes_total, &r->total);
	ev.sys.nr = WS_SYSCALL_NONE;
	feed->on_thread(feed->ctx, &ev);
	return 0;
}

static int decode_comm(const struct ws_rec_hdr *rec, const struct ws_sched_feed *feed)
{
	const struct ws_sched_comm *r = (const void *)rec;

	if (rec->size < sizeof(*r))
		return -EINVAL;
	thread_named(feed, rec->ts, r->tid, r->pid, r->comm, true);
	return 0;
}

bool ws_sched_reclaim_cg(const struct ws_rec_hdr *rec, uint64_t *cg)
{
	const struct ws_sched_reclaim *r = (const void *)rec;

	if (rec->kind != WS_SCHED_RECLAIM || rec->size < sizeof(*r) ||
	    (r->what != WS_SCHED_RECLAIM_MEMCG && r->what != WS_SCHED_RECLAIM_HIGH_SLEEP) || !r->cg)
		return false;
	*cg = r->cg;
	return true;
}

/* A traced thread begins or ends direct memory reclaim (trace format 1.10). */
static int decode_reclaim(const struct ws_rec_hdr *rec, const struct ws_sched_feed *feed)
{
	const struct ws_sched_reclaim *r = (const void *)rec;
	struct ws_thread_event ev = { .sz = sizeof(ev) };

	if (rec->size < sizeof(*r))
		return -EINVAL;
	switch (r->what) {
	case WS_SCHED_RECLAIM_MEMCG:
	case WS_SCHED_RECLAIM_GLOBAL:
	case WS_SCHED_RECLAIM_COMPACT:
		ev.type = WS_THREAD_RECLAIM_BEGIN;
		ev.reclaim_compaction = r->what == WS_SCHED_RECLAIM_COMPACT;
		ev.reclaim_order = r->order;
		ev.reclaim_memcg = r->what == WS_SCHED_RECLAIM_MEMCG;
		ev.reclaim_cg = r->cg;
		ev.reclaim_limit = r->limit;
		ev.reclaim_limit_kind =
			r->limit_kind == WS_SCHED_RECLAIM_LIMIT_MAX    ? WS_RECLAIM_LIMIT_MAX
			: r->limit_kind == WS_SCHED_RECLAIM_LIMIT_HIGH ? WS_RECLAIM_LIMIT_HIGH
								       : 0;
		break;
	case WS_SCHED_RECLAIM_END:
		ev.type = WS_THREAD_RECLAIM_END;
		break;
	case WS_SCHED_RECLAIM_HIGH_SLEEP:
		ev.type = WS_THREAD_MEMORY_HIGH;
		ev.reclaim_memcg = true;
		ev.reclaim_cg = r->cg;
		ev.reclaim_limit = r->limit;
		ev.reclaim_limit_kind = WS_RECLAIM_LIMIT_HIGH;
		break;
	default:
		return -EINVAL;
	}
	ev.ts = rec->ts;
	ev.tid = rec->tid;
	ev.pid = rec->pid;
	ev.sys.nr = WS_SYSCALL_NONE;
	feed->on_thread(feed->ctx, &ev);
	return 0;
}

int ws_sched_decode(const struct ws_rec_hdr *rec, const struct ws_sched_feed *feed)
{
	switch (rec->kind) {
	case WS_SCHED_SWITCH:
		return decode_switch(rec, feed);
	case WS_SCHED_WAKING:
		return decode_waking(rec, feed);
	case WS_SCHED_FORK:
		return decode_fork(rec, feed);
	case WS_SCHED_EXIT:
		return decode_exit(rec, feed);
	case WS_SCHED_COMM:
		return decode_comm(rec, feed);
	case WS_SCHED_SHORT_CAUSES:
		return decode_causes(rec, feed);
	case WS_SCHED_RECLAIM:
		return decode_reclaim(rec, feed);
	default:
		return -EINVAL;
	}
}
