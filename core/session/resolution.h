/* SPDX-License-Identifier: MIT */
/*
 * The resolution: off-CPU periods shorter than it are summed per thread in the
 * kernel instead of written one by one. A report at min_block M needs nothing
 * finer than M / WS_CHAIN_SEG_PARTS (pieces of a wait shorter than that are
 * merged), so that is the default, and a recording made at resolution R
 * supports any min_block of at least R * WS_CHAIN_SEG_PARTS.
 */
#ifndef WS_RESOLUTION_H
#define WS_RESOLUTION_H

#include <stdint.h>

#include "config.h"

/* [core] resolution, or min_block / WS_CHAIN_SEG_PARTS when it is not set. */
uint64_t ws_resolution_ns(const struct ws_config *cfg);
/* The least min_block a recording at @res_ns supports. */
uint64_t ws_resolution_min_block(uint64_t res_ns);

#endif
