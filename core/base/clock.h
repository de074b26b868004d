/* SPDX-License-Identifier: MIT */
/*
 * Clock normalization. Every BPF program stamps CLOCK_MONOTONIC
 * (bpf_ktime_get_ns); one anchor pair taken at start converts those stamps to
 * wall-clock time for display, so all sources share one time base.
 */
#ifndef WS_CLOCK_H
#define WS_CLOCK_H

#include <stddef.h>
#include <stdint.h>

struct ws_clock {
	uint64_t mono_ns; /* CLOCK_MONOTONIC at the anchor */
	uint64_t wall_ns; /* CLOCK_REALTIME at the same instant */
};

/* Take the anchor: REALTIME read between two MONOTONIC reads, the tightest pair of a few. */
void ws_clock_anchor(struct ws_clock *c);
uint64_t ws_clock_wall(const struct ws_clock *c, uint64_t mono_ns);
uint64_t ws_clock_mono_now(void);
/* "2026-11-30T14:32:07.001234Z" */
void ws_clock_iso(uint64_t wall_ns, char *buf, size_t len);
/* "14:32:07.001" in local time */
void ws_clock_hms(uint64_t wall_ns, char *buf, size_t len);

#endif
