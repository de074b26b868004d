// SPDX-License-Identifier: GPL-2.0
/*
 * STEP 3: the kernel side. Include vmlinux.h (generated from the running
 * kernel's BTF by the build), libbpf's helpers, then the SDK's BPF helpers:
 * they declare the shared ring buffer (ws_ring) and target filter (ws_tgids)
 * the core points your object at before load. Use only tracepoints
 * (tp_btf/, raw_tp/, tracepoint/): fentry/kprobes are often unavailable.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include <whyslow/whyslow.bpf.h>
#include "template_rec.h"

/* Most tracepoint helpers need a GPL-compatible license. */
char LICENSE[] SEC("license") = "GPL";

/* STEP 4: a setting user space fills in before load (host->set_rodata). */
const volatile __u32 template_enabled = 1;

SEC("tp_btf/sched_process_exec")
int BPF_PROG(template_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	struct template_exec *r;

	/* STEP 5: filter first (cheap), then reserve, fill, submit. */
	if (!template_enabled || !ws_traced_tgid(bpf_get_current_pid_tgid() >> 32))
		return 0;
	r = ws_reserve(sizeof(*r), TEMPLATE_EXEC); /* fills r->hdr; NULL: counted as lost */
	if (!r)
		return 0;
	bpf_get_current_comm(r->comm, sizeof(r->comm));
	ws_submit(r);
	return 0;
}
