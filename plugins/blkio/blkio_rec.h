/* SPDX-License-Identifier: MIT */
/* Records of the blkio source; shared by blkio.bpf.c and blkio.c only. */
#ifndef WHYSLOW_BLKIO_REC_H
#define WHYSLOW_BLKIO_REC_H

#include <whyslow/record.h>

/* Bytes of a faulted file's name a completion record carries (its 0 included). */
#define WS_BLKIO_FAULT_NAME 32

/* Numbers are never reused. */
#define WS_BLKIO_DONE (WS_KIND_BLKIO + 1)

/* Values of ws_blkio_done.op (the kernel's REQ_OP_*, cmd_flags & 0xff). */
#define WS_BLKIO_OP_READ 0
#define WS_BLKIO_OP_WRITE 1
#define WS_BLKIO_OP_FLUSH 2
#define WS_BLKIO_OP_DISCARD 3
#define WS_BLKIO_OP_SECURE_ERASE 5
#define WS_BLKIO_OP_WRITE_ZEROES 9

/*
 * Bits of ws_blkio_done.flags, translated from the request's cmd_flags by
 * the BPF side (the kernel's own bit numbers move between versions).
 */
#define WS_BLKIO_F_KNOWN 0x80000000u /* flags were read (0: a record from before them) */
#define WS_BLKIO_F_PREFLUSH 0x1u     /* flush the device's cache first (fsync, fdatasync) */
#define WS_BLKIO_F_FUA 0x2u	     /* forced unit access: written through the cache */
#define WS_BLKIO_F_SYNC 0x4u	     /* someone waits for it */
#define WS_BLKIO_F_META 0x8u	     /* file system metadata */
#define WS_BLKIO_F_RAHEAD 0x10u	     /* readahead: nobody asked for it yet */

/*
 * One block request completed (or partly completed) on hdr.cpu, written in
 * the completion's own context: hdr.tid is whatever task it interrupted, so
 * the task that queued the request is in submit_tid. Times are 0 when the
 * event was not seen (request queued before tracing began, or map full).
 */
struct ws_blkio_done {
	struct ws_rec_hdr hdr;
	__u64 sector;	      /* first sector (512 bytes) of the request */
	__u64 insert_ts;      /* queued into the I/O scheduler / software queue */
	__u64 first_issue_ts; /* first handed to the driver */
	__u64 last_issue_ts;  /* last handed to the driver (differs when requeued) */
	__u32 dev;	      /* disk's dev_t, MAJOR << 20 | MINOR (vda 254:0 = 0xfe00000) */
	__u32 bytes;	      /* bytes this completion finished */
	__u32 data_len;	      /* bytes still outstanding before this completion */
	__u32 op;	      /* REQ_OP_*: 0 read, 1 write, 2 flush, 3 discard, ... */
	__u32 sync;	      /* REQ_SYNC set: someone waits for it */
	__u32 error;	      /* blk_status_t, 0 = success */
	__u32 nr_issues;      /* times handed to the driver; > 1 after a requeue */
	__u32 nr_requeues;    /* times given back by the driver */
	__u32 submit_tid;     /* task that queued it (insert, else first issue); 0 unknown */
	__u32 submit_pid;
	/* appended: records written before this member are shorter (flags then read as 0) */
	__u32 flags; /* WS_BLKIO_F_* */
	__u32 reserved;
	/*
	 * appended (blkio 1.1): the request's first bio was held back by its cgroup's I/O limit
	 * (blk-throttle) and released at held_until_ts, when the throttle's dispatch work queued
	 * it (block_bio_queue in that work); held_cgroup is the bio's blkio cgroup (its
	 * directory's inode, kn->id). Both 0: not held, or a record from before them.
	 */
	__u64 held_until_ts;
	__u64 held_cgroup;
	/*
	 * appended (blkio 1.2): the request's first page was added to the page cache by a page
	 * fault of a traced thread: that file's inode, its file system's device (MAJOR << 20 |
	 * MINOR) and its dentry's name (its last path component; "" when it has none). All 0: not
	 * a fault's page, or a record from before them.
	 */
	__u64 fault_ino;
	__u32 fault_dev;
	__u32 reserved2;
	char fault_name[WS_BLKIO_FAULT_NAME];
};

#endif
