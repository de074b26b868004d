/* SPDX-License-Identifier: MIT */
/*
 * The spool directory of `whyslow watch`'s dumps: made 0700 if missing (an existing one must be
 * a real directory of ours that nobody else can write), each dump written to a temporary file
 * of its own there (0600, O_EXCL) and renamed to its name without replacing anything, so no
 * path is ever written over and no reader sees half a dump. A quota on the dumps' total size,
 * the oldest removed first, and a reserve of free space a dump never eats into.
 */
#ifndef WS_SPOOL_H
#define WS_SPOOL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define WS_SPOOL_PREFIX "whyslow-"
#define WS_SPOOL_SUFFIX ".data"
#define WS_SPOOL_SIDECAR ".json" /* after the dump's name: NAME.data.json */

struct ws_spool {
	int dirfd;
	const char *dir;
	uint64_t quota_bytes;
	unsigned int seq; /* dumps named so far, in their names: two in one second differ */
};

/* A dump being written: its temporary file, open for writing. */
struct ws_spool_file {
	FILE *f;
	char tmp[64];
};

/*
 * Open (or make, 0700) the spool @dir. 0, or -errno with the reason in @why (e.g. "is a
 * symbolic link", "group or others can write it").
 */
int ws_spool_open(struct ws_spool *sp, const char *dir, uint64_t quota_bytes, char *why,
		  size_t whylen);
void ws_spool_close(struct ws_spool *sp);
/*
 * A new temporary file in the spool for at most @need bytes: -ENOSPC when writing them would
 * leave less free than the reserve (5% of the file system). The quota is ws_spool_trim()'s.
 */
int ws_spool_begin(struct ws_spool *sp, uint64_t need, struct ws_spool_file *out);
/* Flush, fsync and close it, then rename it to @name (never replacing one). 0 or -errno. */
int ws_spool_commit(struct ws_spool *sp, struct ws_spool_file *sf, const char *name);
/* Close and remove it. */
void ws_spool_abort(struct ws_spool *sp, struct ws_spool_file *sf);
/* "whyslow-20261207T101500Z-4242-0003.data" for the dump made now. */
void ws_spool_name(struct ws_spool *sp, char *buf, size_t len);
/*
 * Remove the oldest dumps (with their sidecars) until all of them fit the quota; @keep, the
 * newest, is removed too when it alone does not. The count removed, or -errno.
 */
int ws_spool_trim(struct ws_spool *sp, const char *keep);
/* The total size of the dumps and sidecars in the spool now. */
uint64_t ws_spool_usage(struct ws_spool *sp);

#endif
