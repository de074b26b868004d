/* SPDX-License-Identifier: MIT */
/*
 * STEP 2: the records your BPF code writes and your plugin reads. Shared by
 * template.bpf.c and template.c only, so use fixed-width __u types, and
 * begin every record with struct ws_rec_hdr.
 */
#ifndef TEMPLATE_REC_H
#define TEMPLATE_REC_H

#include <whyslow/record.h>

/*
 * STEP 1: choose your kind range: a multiple of WS_KIND_RANGE at or above
 * WS_KIND_THIRD_PARTY that no other plugin you load with uses (the core
 * refuses a second plugin on the same range). Number records from base + 1
 * and never reuse a number.
 */
#define TEMPLATE_KIND_BASE (WS_KIND_THIRD_PARTY + 0x0f00)
#define TEMPLATE_EXEC (TEMPLATE_KIND_BASE + 1)

/* A traced process called execve(): hdr.tid / hdr.pid, and its new name. */
struct template_exec {
	struct ws_rec_hdr hdr;
	char comm[16];
};

#endif
