// SPDX-License-Identifier: GPL-2.0
/* A BPF program the verifier must reject: it dereferences a map lookup without a NULL check. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16);
	__type(key, __u32);
	__type(value, __u64);
} ws_bad_map SEC(".maps");

SEC("tp_btf/sched_switch")
int ws_bad_verifier(void *ctx)
{
	__u32 k = bpf_get_smp_processor_id();
	__u64 *v = bpf_map_lookup_elem(&ws_bad_map, &k);

	*v += 1; /* R0 may be NULL: "invalid mem access 'map_value_or_null'" */
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
