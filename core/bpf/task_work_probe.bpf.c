// SPDX-License-Identifier: GPL-2.0
/*
 * Does this kernel's verifier accept BPF task work from a tracepoint program? A kernel may have
 * the kfunc and still refuse any callback there (6.18.44: "sleepable callback in a program that
 * is not sleepable"). Loaded once at start-up beside the rest (session_bpf.c), never attached:
 * it decides how the scheduler object copies waiters' user stacks (sched/stack.bpf.h) before
 * that object, much larger, is verified.
 */
#define bpf_task_work ws_vmlinux_bpf_task_work
#include "vmlinux.h"
#undef bpf_task_work
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "GPL";

struct bpf_task_work {
	__u64 __opaque;
} __attribute__((aligned(8)));

extern int bpf_task_work_schedule_resume_impl(struct task_struct *task, struct bpf_task_work *tw,
					      void *map__map,
					      int (*callback)(struct bpf_map *map, void *key,
							      void *value),
					      void *aux__prog) __ksym __weak;

struct probe_work {
	struct bpf_task_work tw;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct probe_work);
} probe_works SEC(".maps");

static int probe_cb(struct bpf_map *map, void *key, void *value)
{
	return 0;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(ws_task_work_probe, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	__u32 k = 0;
	struct probe_work *w = bpf_map_lookup_elem(&probe_works, &k);

	if (w && bpf_task_work_schedule_resume_impl)
		bpf_task_work_schedule_resume_impl(next, &w->tw, &probe_works, probe_cb, NULL);
	return 0;
}
