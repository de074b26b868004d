// SPDX-License-Identifier: GPL-2.0
/*
 * The floor of any tracer of the scheduler here: programs that do nothing, on the two BTF
 * tracepoints whyslow's sched source pays for on every event (a switch, a wakeup).
 * bench/overhead.sh's "empty_bpf" configuration loads it with bench/bpf_floor.c's loader: what
 * it costs a workload is what attaching there costs before a program does any work.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "GPL";

SEC("tp_btf/sched_switch")
int BPF_PROG(empty_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	return 0;
}

SEC("tp_btf/sched_waking")
int BPF_PROG(empty_waking, struct task_struct *p)
{
	return 0;
}
