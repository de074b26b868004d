/* SPDX-License-Identifier: MIT */
/* The I/O limit (blk-throttle) that held a block request back: see blkio_throttle.c. */
#ifndef WHYSLOW_BLKIO_THROTTLE_H
#define WHYSLOW_BLKIO_THROTTLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <whyslow/plugin.h>

/* name_set keys: apart from the disks' (MAJOR << 20 | MINOR, below 2^32) and from each other */
#define BLKIO_KEY_PATH (1ULL << 63)
#define BLKIO_KEY_LIMIT (3ULL << 62)

/* The name table's key of blkio cgroup @cgroup's path. */
static inline uint64_t blkio_throttle_path_key(uint64_t cgroup)
{
	return BLKIO_KEY_PATH | (cgroup & ~BLKIO_KEY_LIMIT);
}

/* The name table's key of its limit on device @dev, one direction. */
static inline uint64_t blkio_throttle_limit_key(uint64_t cgroup, uint32_t dev, bool write)
{
	return BLKIO_KEY_LIMIT | (uint64_t)write << 61 | (uint64_t)(dev & 0x1fffffff) << 32 |
	       (cgroup & 0xffffffffu);
}

/*
 * The cgroup whose I/O limit applies to a bio of blkio cgroup @cgroup (its directory's inode)
 * on device @dev (MAJOR << 20 | MINOR), @write or read: its path under the hierarchy into
 * @path, and the limit into @limit ("1 reads/s on 7:0"; "" when none was found), read once
 * and kept with name_set. 0, or -ENOENT (no such cgroup found; in a replay, not recorded).
 */
int blkio_throttle_of(struct ws_plugin_ctx *ctx, uint64_t cgroup, uint32_t dev, bool write,
		      char *path, size_t plen, char *limit, size_t llen);

/*
 * The limits cgroup directory @dir sets on device @mm ("7:0") for one direction into @buf
 * ("2 reads/s on 7:0", "1048576 bytes/s on 7:0", or both joined): v1's blkio.throttle files
 * (@v1), else v2's io.max ("max": none). False when it sets none.
 */
bool blkio_throttle_limits_in(const char *dir, bool v1, const char *mm, bool write, char *buf,
			      size_t len);

#endif
