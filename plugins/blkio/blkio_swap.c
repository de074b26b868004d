// SPDX-License-Identifier: MIT
/*
 * The swap areas of the machine as the recording starts: a read of a sector in one of them,
 * under a page fault, is a swap-in. /proc/swaps names each area by path; a block device's area
 * is the whole device, which sysfs places on its disk (a partition starts where its "start"
 * says), since a block request names the disk and a sector of it. Kept in the name table,
 * so a recording says which sectors were swap as it was made.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "blkio_swap.h"

bool blkio_swap_parse(const char *line, char *path, size_t len, bool *partition)
{
	char type[16];
	size_t n = 0;
	const char *p = line;

	if (!len)
		return false;
	/* the path runs to the first blank: the kernel escapes blanks in it as \040 */
	while (*p && *p != ' ' && *p != '\t' && *p != '\n') {
		char c = *p++;

		if (c == '\\' && p[0] >= '0' && p[0] <= '3' && p[1] >= '0' && p[1] <= '7' &&
		    p[2] >= '0' && p[2] <= '7') {
			c = (char)((p[0] - '0') << 6 | (p[1] - '0') << 3 | (p[2] - '0'));
			p += 3;
		}
		if (n + 1 >= len)
			return false;
		path[n++] = c;
	}
	path[n] = 0;
	if (path[0] != '/' || sscanf(p, "%15s", type) != 1)
		return false;
	*partition = !strcmp(type, "partition");
	return true;
}

bool blkio_swap_entry(const char *name, uint64_t *start, uint64_t *nsect, char *path, size_t len)
{
	int at = 0;

	if (sscanf(name, "%" SCNu64 " %" SCNu64 " %n", start, nsect, &at) != 2 || !at)
		return false;
	snprintf(path, len, "%s", name + at);
	return true;
}

/* A number from sysfs file @dir/@file. */
static bool sysfs_u64(const char *dir, const char *file, uint64_t *v)
{
	char path[128];
	bool ok;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	f = fopen(path, "re");
	if (!f)
		return false;
	ok = fscanf(f, "%" SCNu64, v) == 1;
	fclose(f);
	return ok;
}

/* Block device @rdev: its disk (as a block request names it) and the sectors it covers there. */
static bool disk_range(dev_t rdev, uint32_t *disk, uint64_t *start, uint64_t *nsect)
{
	char dir[64], parent[80], line[32];
	unsigned int maj = major(rdev), min = minor(rdev);
	FILE *f;

	snprintf(dir, sizeof(dir), "/sys/dev/block/%u:%u", maj, min);
	if (!sysfs_u64(dir, "size", nsect))
		return false;
	*disk = maj << 20 | min;
	*start = 0;
	if (!sysfs_u64(dir, "start", start))
		return true; /* a whole disk: no start */
	/* a partition: its directory lies in its disk's */
	snprintf(parent, sizeof(parent), "%s/../dev", dir);
	f = fopen(parent, "re");
	if (!f)
		return false;
	if (!fgets(line, sizeof(line), f) || sscanf(line, "%u:%u", &maj, &min) != 2) {
		fclose(f);
		return false;
	}
	fclose(f);
	*disk = maj << 20 | min;
	return true;
}

void blkio_swap_scan(struct ws_plugin_ctx *ctx)
{
	FILE *f = fopen("/proc/swaps", "re");
	unsigned int idx = 0;
	char line[512];

	while (f && idx < BLKIO_SWAP_MAX && fgets(line, sizeof(line), f)) {
		char path[256], name[BLKIO_SWAP_NAME];
		uint64_t start, nsect;
		bool partition;
		struct stat st;
		uint32_t disk;

		if (!blkio_swap_parse(line, path, sizeof(path), &partition))
			continue;
		if (!partition) {
			ctx->host->log(
				ctx, WS_LOG_DEBUG,
				"swap file %s: its blocks are not located, its reads are not told from other reads of its disk",
				path);
			continue;
		}
		if (stat(path, &st) || !S_ISBLK(st.st_mode) ||
		    !disk_range(st.st_rdev, &disk, &start, &nsect))
			continue;
		snprintf(name, sizeof(name), "%" PRIu64 " %" PRIu64 " %s", start, nsect, path);
		ctx->host->name_set(ctx, blkio_swap_key(idx++, disk), name);
	}
	if (f)
		fclose(f);
}

bool blkio_swap_of(struct ws_plugin_ctx *ctx, uint32_t disk, uint64_t sector, char *path,
		   size_t len)
{
	/* the entries of one disk are numbered among all disks': look at every index */
	for (unsigned int idx = 0; idx < BLKIO_SWAP_MAX; idx++) {
		char name[BLKIO_SWAP_NAME]; /* as written: a long /dev/disk/by-id path is not cut */
		uint64_t start, nsect;

		if (ctx->host->name_get(ctx, blkio_swap_key(idx, disk), name, sizeof(name)))
			continue;
		if (blkio_swap_entry(name, &start, &nsect, path, len) && sector >= start &&
		    sector - start < nsect)
			return true;
	}
	return false;
}
