// SPDX-License-Identifier: MIT
#include "resolution.h"
#include "chain.h"
#include "session.h"

uint64_t ws_resolution_ns(const struct ws_config *cfg)
{
	uint64_t res;

	/*
	 * Off unless asked for: a waker whose waits are all shorter than the resolution is seen
	 * as running through them (gt_many_io: 200 reads of 0.2 ms read as "running 35ms"), which
	 * says more than the evidence. The graph would have to show summed periods as what they
	 * are before this can be the default.
	 */
	if (!ws_config_u64(cfg, "core", ws_core_keys, "resolution", &res))
		return res;
	return 0;
}

uint64_t ws_resolution_min_block(uint64_t res_ns)
{
	return res_ns * WS_CHAIN_SEG_PARTS;
}
