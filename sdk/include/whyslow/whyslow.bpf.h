/* SPDX-License-Identifier: MIT */
/*
 * BPF-side helpers for whyslow source plugins. Include after vmlinux.h and
 * <bpf/bpf_helpers.h>:
 *
 *	#include "vmlinux.h"
 *	#include <bpf/bpf_helpers.h>
 *	#include <whyslow/whyslow.bpf.h>
 *
 * The maps below are placeholders: before loading a plugin's object the core
 * points each of them at the one instance it owns (bpf_map__reuse_fd), so all
 * plugins write into one ring buffer and see one target filter. Their sizes
 * here do not matter; the core's do.
 */
#ifndef WHYSLOW_BPF_H
#define WHYSLOW_BPF_H

#include <whyslow/record.h>

/* Bytes of unread data above which a submit wakes the reader. */
#define WS_WAKEUP_BYTES (256 * 1024)

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);
} ws_ring SEC(".maps");

/* Thread group ids being traced (value unused). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, __u32);
	__type(value, __u8);
	__uint(max_entries, 1);
} ws_tgids SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct ws_cpu_state);
	__uint(max_entries, 1);
} ws_cpu SEC(".maps");

/* Records lost for want of ring space, per CPU and kind. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__type(key, __u32);
	__type(value, __u64);
	__uint(max_entries, 1);
} ws_lost SEC(".maps");

static __always_inline struct ws_cpu_state *ws_cpu_state(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&ws_cpu, &zero);
}

/*
 * A context switch on this CPU. The scheduler never switches tasks inside an interrupt, so a
 * switch closes every bracket: an exit that was missed (a program skipped for recursion) cannot
 * leave the CPU marked "in interrupt". The core's sched_switch program calls this; the sched
 * source calls it first thing in its own, and the core then leaves its program out: one program
 * per switch instead of two (on a VM, calling a program costs more than most programs do).
 */
static __always_inline void ws_cpu_switch(struct ws_cpu_state *cs)
{
	if (!cs)
		return;
	cs->depth = 0;
	cs->timer = 0;
	cs->task_id = ++cs->next_id;
}

static __always_inline int ws_traced_tgid(__u32 tgid)
{
	return bpf_map_lookup_elem(&ws_tgids, &tgid) != NULL;
}

static __always_inline void ws_fill_hdr(struct ws_rec_hdr *h, __u32 size, __u32 kind,
					struct ws_cpu_state *cs)
{
	__u64 id = bpf_get_current_pid_tgid();

	h->size = size;
	h->kind = kind;
	h->cpu = bpf_get_smp_processor_id();
	h->ctx = WS_CTX_TASK;
	h->flags = 0;
	h->ctx_id = 0;
	h->tid = (__u32)id;
	h->pid = id >> 32;
	h->reserved = 0;
	h->ts = bpf_ktime_get_ns();
	if (cs) {
		__u32 d = cs->depth;

		if (d > 0 && d <= WS_CTX_STACK) {
			h->ctx = cs->kind[(d - 1) & (WS_CTX_STACK - 1)];
			h->ctx_id = cs->id[(d - 1) & (WS_CTX_STACK - 1)];
		} else {
			h->ctx_id = cs->task_id;
		}
		if (cs->timer)
			h->ctx |= WS_CTX_TIMER;
	}
}

static __always_inline void ws_count_lost(__u32 kind, struct ws_cpu_state *cs)
{
	__u64 one = 1, *n = bpf_map_lookup_elem(&ws_lost, &kind);

	if (n)
		*n += 1;
	else
		bpf_map_update_elem(&ws_lost, &kind, &one, BPF_NOEXIST);
	if (cs) {
		if (!cs->lost_pending) {
			cs->lost_first_ts = bpf_ktime_get_ns();
			cs->lost_first_kind = kind;
		}
		cs->lost_pending++;
	}
}

/*
 * Wake the reader when unread data passes WS_WAKEUP_BYTES, but from each CPU
 * at most once per ~1 ms. Waking it on every record above the mark (a reader
 * that is behind makes that every record) queued an irq_work, a self-IPI, per
 * record: each program got several times slower exactly when the reader most
 * needed the CPU. Waking only when a record crosses the mark missed crossings
 * that two CPUs jumped over together, and the ring filled before the reader's
 * poll timeout.
 */
static __always_inline void ws_submit(void *rec)
{
	__u64 avail = bpf_ringbuf_query(&ws_ring, BPF_RB_AVAIL_DATA);
	struct ws_cpu_state *cs;
	__u32 now;

	if (avail < WS_WAKEUP_BYTES) {
		bpf_ringbuf_submit(rec, BPF_RB_NO_WAKEUP);
		return;
	}
	now = ((struct ws_rec_hdr *)rec)->ts >> 20;
	cs = ws_cpu_state();
	if (cs && cs->last_wakeup == now) {
		bpf_ringbuf_submit(rec, BPF_RB_NO_WAKEUP);
		return;
	}
	if (cs)
		cs->last_wakeup = now;
	bpf_ringbuf_submit(rec, BPF_RB_FORCE_WAKEUP);
}

/* Report records lost earlier on this CPU before writing a new one. */
static __always_inline void ws_flush_lost(struct ws_cpu_state *cs)
{
	struct ws_rec_lost *l;

	if (!cs || !cs->lost_pending)
		return;
	l = bpf_ringbuf_reserve(&ws_ring, sizeof(*l), 0);
	if (!l)
		return;
	ws_fill_hdr(&l->hdr, sizeof(*l), WS_KIND_LOST, cs);
	l->count = cs->lost_pending;
	l->first_ts = cs->lost_first_ts;
	l->first_kind = cs->lost_first_kind;
	l->reserved = 0;
	cs->lost_pending = 0;
	ws_submit(l);
}

/*
 * Reserve a record of @size bytes and fill its header; NULL when the ring is
 * full (the loss is counted and reported later). Finish with ws_submit().
 */
static __always_inline void *ws_reserve(__u32 size, __u32 kind)
{
	struct ws_cpu_state *cs = ws_cpu_state();
	void *rec;

	ws_flush_lost(cs);
	rec = bpf_ringbuf_reserve(&ws_ring, size, 0);
	if (!rec) {
		ws_count_lost(kind, cs);
		return NULL;
	}
	ws_fill_hdr(rec, size, kind, cs);
	return rec;
}

#endif /* WHYSLOW_BPF_H */
