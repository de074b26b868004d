// SPDX-License-Identifier: MIT
#include "resolution.h"
#include "core_keys.h"
#include "engine/chain.h"

/*
 * Unset: min_block / WS_CHAIN_SEG_PARTS, the finest piece a chain of the live report shows, for
 * every command (record and --perfetto too, from sched 1.6). A short period another task ended
 * is then summed in the kernel by cause (what it blocked in, who woke it); one an interrupt
 * ended is still written (sched.bpf.c), so what a waker did is still named where a source can
 * prove it (200 short disk reads stay block I/O).
 */
uint64_t ws_resolution_ns(const struct ws_config *cfg)
{
	uint64_t res, min_block;

	if (!ws_config_u64(cfg, "core", ws_core_keys, "resolution", &res))
		return res;
	if (ws_config_u64(cfg, "core", ws_core_keys, "min_block", &min_block))
		return 0;
	return min_block / WS_CHAIN_SEG_PARTS;
}

uint64_t ws_resolution_min_block(uint64_t res_ns)
{
	return res_ns * WS_CHAIN_SEG_PARTS;
}
