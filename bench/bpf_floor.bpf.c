// SPDX-License-Identifier: GPL-2.0
/*
 * What single operations cost inside a BPF program on this machine (bench/bpf_floor.sh).
 * Every program is attached to tp_btf/sched_waking and does one operation on the woken task
 * or on shared data; the kernel runs them one after another on each wakeup, in this order.
 * A program that first touches some memory on a wakeup pays for that miss; the "again" ones
 * that follow show the same operation with the lines already touched. Built twice: with
 * FLOOR_CREATE the storage lookups find an entry, without it they find none.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "GPL";

struct floor_val {
	__u64 a, b, c, d;
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct floor_val);
} fl_task SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, __u32);
	__type(value, __u8);
	__uint(max_entries, 1024);
} fl_tgids SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct floor_val);
	__uint(max_entries, 1);
} fl_cpu SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 20);
} fl_rb SEC(".maps");

__u64 fl_sink, fl_counter;

#ifdef FLOOR_CREATE
#define STORAGE_FLAGS BPF_LOCAL_STORAGE_GET_F_CREATE
#else
#define STORAGE_FLAGS 0
#endif

/* the first program of each wakeup pays for the wakeup's first touches of BPF's own data */
SEC("tp_btf/sched_waking")
int BPF_PROG(fl_empty1, struct task_struct *p)
{
	return 0;
}

SEC("tp_btf/sched_waking")
int BPF_PROG(fl_empty, struct task_struct *p)
{
	return 0;
}

SEC("tp_btf/sched_waking")
int BPF_PROG(fl_ktime, struct task_struct *p)
{
	fl_sink = bpf_ktime_get_ns();
	return 0;
}

SEC("tp_btf/sched_waking")
int BPF_PROG(fl_ktime2, struct task_struct *p)
{
	fl_sink = bpf_ktime_get_ns();
	return 0;
}

SEC("tp_btf/sched_waking")
int BPF_PROG(fl_storage, struct task_struct *p)
{
	struct floor_val *v = bpf_task_storage_get(&fl_task, p, 0, STORAGE_FLAGS);

	fl_sink = v ? v->a : 0;
	return 0;
}

SEC("tp_btf/sched_waking")
int BPF_PROG(fl_storage2, struct task_struct *p)
{
	struct floor_val *v = bpf_task_storage_get(&fl_task, p, 0, 0);

	fl_sink = v ? v->a : 0;
	return 0;
}

SEC("tp_btf/sched_waking")
int BPF_PROG(fl_hash, struct task_struct *p)
{
	__u32 tgid = p->tgid;

	fl_sink = bpf_map_lookup_elem(&fl_tgids, &tgid) != NULL;
	return 0;
}

SEC("tp_btf/sched_waking")
int BPF_PROG(fl_hash2, struct task_struct *p)
{
	__u32 tgid = p->tgid;

	fl_sink = bpf_map_lookup_elem(&fl_tgids, &tgid) != NULL;
	return 0;
}

SEC("tp_btf/sched_waking")
int BPF_PROG(fl_percpu, struct task_struct *p)
{
	__u32 zero = 0;
	struct floor_val *v = bpf_map_lookup_elem(&fl_cpu, &zero);

	if (v)
		v->a++;
	return 0;
}

SEC("tp_btf/sched_waking")
int BPF_PROG(fl_atomic, struct task_struct *p)
{
	__sync_fetch_and_add(&fl_counter, 1);
	return 0;
}

SEC("tp_btf/sched_waking")
int BPF_PROG(fl_ring, struct task_struct *p)
{
	void *r = bpf_ringbuf_reserve(&fl_rb, 64, 0);

	if (r)
		bpf_ringbuf_discard(r, BPF_RB_NO_WAKEUP);
	return 0;
}

/* the wakee's fields a wakeup program reads: flags, on_rq, its signals */
SEC("tp_btf/sched_waking")
int BPF_PROG(fl_fields, struct task_struct *p)
{
	fl_sink = p->flags + p->on_rq +
		  ((p->pending.signal.sig[0] | p->signal->shared_pending.signal.sig[0]) &
		   ~p->blocked.sig[0]);
	return 0;
}
