// SPDX-License-Identifier: MIT
#include "resolution.h"
#include "chain.h"
#include "session.h"

uint64_t ws_resolution_ns(const struct ws_config *cfg)
{
	uint64_t res, min_block = 0;

	if (!ws_config_u64(cfg, "core", ws_core_keys, "resolution", &res))
		return res;
	ws_config_u64(cfg, "core", ws_core_keys, "min_block", &min_block);
	return min_block / WS_CHAIN_SEG_PARTS;
}

uint64_t ws_resolution_min_block(uint64_t res_ns)
{
	return res_ns * WS_CHAIN_SEG_PARTS;
}
