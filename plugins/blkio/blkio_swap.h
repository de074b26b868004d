/* SPDX-License-Identifier: MIT */
/* The machine's swap areas, as the disk sectors they cover: see blkio_swap.c. */
#ifndef WHYSLOW_BLKIO_SWAP_H
#define WHYSLOW_BLKIO_SWAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <whyslow/plugin.h>

/*
 * name_set keys of the swap areas: bit 62 alone (apart from the disks' below 2^32 and the I/O
 * throttle's with bit 63), the area's index and its disk (MAJOR << 20 | MINOR).
 */
#define BLKIO_KEY_SWAP (1ULL << 62)
#define BLKIO_SWAP_MAX 32
/* An entry's name, "START NSECTORS PATH": two numbers and a path of up to 255 bytes. */
#define BLKIO_SWAP_NAME 320

static inline uint64_t blkio_swap_key(unsigned int idx, uint32_t disk)
{
	return BLKIO_KEY_SWAP | (uint64_t)idx << 32 | disk;
}

/*
 * Every swap area /proc/swaps lists that is a block device (a partition, a whole disk), as the
 * disk and sector range it covers, into the name table (a recording keeps it). A swap file's
 * blocks are not located: its reads are not told from the file system's own.
 */
void blkio_swap_scan(struct ws_plugin_ctx *ctx);

/*
 * Is sector @sector of disk @disk in a swap area the scan found (live, or kept in the
 * recording)? Its path ("/dev/loop3") into @path then.
 */
bool blkio_swap_of(struct ws_plugin_ctx *ctx, uint32_t disk, uint64_t sector, char *path,
		   size_t len);

/*
 * One line of /proc/swaps: the area's path (its octal escapes undone) into @path and whether
 * its type is "partition" (a block device). False for the header or a line not understood.
 */
bool blkio_swap_parse(const char *line, char *path, size_t len, bool *partition);

/* A name table entry "START LEN PATH" (sectors): its parts. False when not one. */
bool blkio_swap_entry(const char *name, uint64_t *start, uint64_t *nsect, char *path, size_t len);

#endif
