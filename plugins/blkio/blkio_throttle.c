// SPDX-License-Identifier: MIT
/*
 * The I/O limit that held a block request back (blk-throttle): the BPF side gives only the
 * bio's blkio cgroup, the inode number of its directory. Named here from the cgroup file
 * system: the directory with that inode under the blkio hierarchy (cgroup v1) or the unified
 * one (v2), and the limits written for the request's device there or in an ancestor
 * (blkio.throttle.{read,write}_{iops,bps}_device on v1, io.max on v2). Read once per cgroup,
 * device and direction, never per event, and kept with name_set, so a recording names them as
 * the live run did. A limit changed later is not seen.
 */
#include <errno.h>
#include <ftw.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "blkio_throttle.h"

/* The mount point of the blkio v1 hierarchy, else of the unified v2 one; @v1 says which. */
static int blkio_mount(char *buf, size_t len, bool *v1)
{
	char line[1024], v2[PATH_MAX] = "";
	FILE *f = fopen("/proc/self/mountinfo", "re");
	int err = -ENOENT;

	while (f && err && fgets(line, sizeof(line), f)) {
		char mnt[PATH_MAX], *sep = strstr(line, " - ");
		char fstype[32], src[64], opts[512];

		if (!sep || sscanf(line, "%*s %*s %*s %*s %4095s", mnt) != 1 ||
		    sscanf(sep + 3, "%31s %63s %511s", fstype, src, opts) != 3)
			continue;
		if (!strcmp(fstype, "cgroup2") && !v2[0]) {
			snprintf(v2, sizeof(v2), "%s", mnt);
		} else if (!strcmp(fstype, "cgroup")) {
			for (char *o = strtok(opts, ","); o; o = strtok(NULL, ","))
				if (!strcmp(o, "blkio")) {
					snprintf(buf, len, "%s", mnt);
					*v1 = true;
					err = 0;
				}
		}
	}
	if (f)
		fclose(f);
	if (err && v2[0]) {
		snprintf(buf, len, "%s", v2);
		*v1 = false;
		err = 0;
	}
	return err;
}

/* nftw has no argument for its callback: the inode looked for and the directory found. */
static uint64_t find_ino;
static char found[PATH_MAX];

static int match_dir(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)ftw;
	if (type != FTW_D || (uint64_t)st->st_ino != find_ino)
		return 0;
	snprintf(found, sizeof(found), "%s", path);
	return 1;
}

/* The value of "KEY=V" in an io.max line's fields after MAJ:MIN; 0 for "max" or none. */
static uint64_t io_max_field(const char *fields, const char *key)
{
	const char *p = strstr(fields, key);

	return p ? strtoull(p + strlen(key), NULL, 10) : 0;
}

/* The value a v1 throttle file gives device @mm ("7:0"), 0 when none. */
static uint64_t v1_limit(const char *dir, const char *file, const char *mm)
{
	char name[PATH_MAX + 64], line[128], dev[32];
	unsigned long long v = 0, got;
	FILE *f;

	snprintf(name, sizeof(name), "%s/%s", dir, file);
	if (!(f = fopen(name, "re")))
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%31s %llu", dev, &got) == 2 && !strcmp(dev, mm))
			v = got;
	fclose(f);
	return v;
}

bool blkio_throttle_limits_in(const char *dir, bool v1, const char *mm, bool write, char *buf,
			      size_t len)
{
	uint64_t iops = 0, bps = 0;

	if (v1) {
		iops = v1_limit(dir,
				write ? "blkio.throttle.write_iops_device"
				      : "blkio.throttle.read_iops_device",
				mm);
		bps = v1_limit(dir,
			       write ? "blkio.throttle.write_bps_device"
				     : "blkio.throttle.read_bps_device",
			       mm);
	} else {
		char name[PATH_MAX + 16], line[256], dev[32];
		FILE *f;

		snprintf(name, sizeof(name), "%s/io.max", dir);
		f = fopen(name, "re");
		while (f && fgets(line, sizeof(line), f)) {
			if (sscanf(line, "%31s", dev) != 1 || strcmp(dev, mm))
				continue;
			iops = io_max_field(line, write ? "wiops=" : "riops=");
			bps = io_max_field(line, write ? "wbps=" : "rbps=");
		}
		if (f)
			fclose(f);
	}
	if (iops && bps)
		snprintf(buf, len, "%" PRIu64 " %s/s, %" PRIu64 " bytes/s on %s", iops,
			 write ? "writes" : "reads", bps, mm);
	else if (iops)
		snprintf(buf, len, "%" PRIu64 " %s/s on %s", iops, write ? "writes" : "reads", mm);
	else if (bps)
		snprintf(buf, len, "%" PRIu64 " bytes/s on %s", bps, mm);
	return iops || bps;
}

/* Read from the cgroup file system: the group whose limit applies and that limit. */
static int throttle_read(uint64_t cgroup, uint32_t dev, bool write, char *path, size_t plen,
			 char *limit, size_t llen)
{
	char mnt[PATH_MAX], mm[32], dir[PATH_MAX];
	size_t root_len;
	bool v1 = false;

	if (blkio_mount(mnt, sizeof(mnt), &v1))
		return -ENOENT;
	find_ino = cgroup;
	found[0] = 0;
	if (nftw(mnt, match_dir, 16, FTW_PHYS | FTW_MOUNT) != 1)
		return -ENOENT;
	snprintf(dir, sizeof(dir), "%s", found);
	snprintf(mm, sizeof(mm), "%u:%u", dev >> 20, dev & 0xfffff);
	root_len = strlen(mnt);
	/* the bio's group, else the nearest ancestor with a limit for the device (hierarchical) */
	for (;;) {
		char *slash;

		if (blkio_throttle_limits_in(dir, v1, mm, write, limit, llen)) {
			snprintf(path, plen, "%s", dir[root_len] ? dir + root_len : "/");
			return 0;
		}
		slash = strrchr(dir, '/');
		if (strlen(dir) <= root_len || !slash || (size_t)(slash - dir) < root_len)
			break;
		*slash = 0;
	}
	/* the group is known, its limit not (changed since, or set on another device) */
	snprintf(path, plen, "%s", found[root_len] ? found + root_len : "/");
	limit[0] = 0;
	return 0;
}

int blkio_throttle_of(struct ws_plugin_ctx *ctx, uint64_t cgroup, uint32_t dev, bool write,
		      char *path, size_t plen, char *limit, size_t llen)
{
	uint64_t kpath = blkio_throttle_path_key(cgroup);
	uint64_t klimit = blkio_throttle_limit_key(cgroup, dev, write);

	limit[0] = 0;
	/* known (an empty limit too: none was found, and it is not looked for again) */
	if (!ctx->host->name_get(ctx, kpath, path, plen)) {
		if (!ctx->host->name_get(ctx, klimit, limit, llen))
			return 0;
		if (ctx->replay)
			return 0;
	}
	if (ctx->replay || throttle_read(cgroup, dev, write, path, plen, limit, llen))
		return -ENOENT;
	ctx->host->name_set(ctx, kpath, path);
	ctx->host->name_set(ctx, klimit, limit);
	return 0;
}
