/* SPDX-License-Identifier: MIT */
/* The I/O limit (blk-throttle) that held a block request back: see blkio_throttle.c. */
#ifndef WHYSLOW_BLKIO_THROTTLE_H
#define WHYSLOW_BLKIO_THROTTLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <whyslow/plugin.h>

/*
 * The cgroup whose I/O limit applies to a bio of blkio cgroup @cgroup (its directory's inode)
 * on device @dev (MAJOR << 20 | MINOR), @write or read: its path under the hierarchy into
 * @path, and the limit into @limit ("1 reads/s on 7:0"; "" when none was found), read once
 * and kept with name_set. 0, or -ENOENT (no such cgroup found; in a replay, not recorded).
 */
int blkio_throttle_of(struct ws_plugin_ctx *ctx, uint64_t cgroup, uint32_t dev, bool write,
		      char *path, size_t plen, char *limit, size_t llen);

#endif
