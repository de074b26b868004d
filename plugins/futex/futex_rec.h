/* SPDX-License-Identifier: MIT */
/* Records of the futex source; shared by futex.bpf.c and futex.c only. */
#ifndef WHYSLOW_FUTEX_REC_H
#define WHYSLOW_FUTEX_REC_H

#include <whyslow/record.h>

/* Numbers are never reused. */
#define WS_FUTEX_ENTER (WS_KIND_FUTEX + 1)
#define WS_FUTEX_EXIT (WS_KIND_FUTEX + 2)

/*
 * Which futex system call, independent of the architecture's syscall
 * numbers, so user space never needs to know them.
 */
#define WS_FUTEX_SYS_FUTEX 1   /* futex(2): cmd says what it does */
#define WS_FUTEX_SYS_WAITV 2   /* futex_waitv(2) */
#define WS_FUTEX_SYS_WAKE 3    /* futex_wake(2) */
#define WS_FUTEX_SYS_WAIT 4    /* futex_wait(2) */
#define WS_FUTEX_SYS_REQUEUE 5 /* futex_requeue(2) */

/* futex(2) commands (uapi <linux/futex.h>; #defines, so not in vmlinux.h). */
#define WS_FUTEX_WAIT 0
#define WS_FUTEX_WAKE 1
#define WS_FUTEX_REQUEUE 3
#define WS_FUTEX_CMP_REQUEUE 4
#define WS_FUTEX_WAKE_OP 5
#define WS_FUTEX_LOCK_PI 6
#define WS_FUTEX_UNLOCK_PI 7
#define WS_FUTEX_TRYLOCK_PI 8
#define WS_FUTEX_WAIT_BITSET 9
#define WS_FUTEX_WAKE_BITSET 10
#define WS_FUTEX_WAIT_REQUEUE_PI 11
#define WS_FUTEX_CMP_REQUEUE_PI 12
#define WS_FUTEX_LOCK_PI2 13
#define WS_FUTEX_PRIVATE_FLAG 128
#define WS_FUTEX_CLOCK_REALTIME 256
#define WS_FUTEX_CMD_MASK (~(WS_FUTEX_PRIVATE_FLAG | WS_FUTEX_CLOCK_REALTIME))

/* Addresses read from a futex_waitv/futex_requeue array; the rest are not recorded. */
#define WS_FUTEX_MAX_ADDRS 8

/*
 * hdr.tid entered a futex call we care about (one that may block, or may
 * wake or hand over to another thread). Arguments as passed:
 *
 *	syscall		op		cmd		uaddr / uaddr2		val / val3
 *	FUTEX		op		op & CMD_MASK	uaddr / uaddr2		val / val3
 *	WAITV		flags		0		0 / 0			nr_futexes / 0
 *	WAKE		flags		0		uaddr / 0		nr / mask
 *	WAIT		flags		0		uaddr / 0		val / mask
 *	REQUEUE		flags		0		waiters[0..1].uaddr	nr_wake / nr_requeue
 *
 * @addrs holds the first @naddrs futex addresses of a WAITV or REQUEUE
 * array (a failed user read leaves the rest out).
 */
struct ws_futex_enter {
	struct ws_rec_hdr hdr;
	__u32 syscall; /* WS_FUTEX_SYS_* */
	__u32 op;
	__u32 cmd; /* WS_FUTEX_* command; 0 unless syscall is FUTEX */
	__u32 val;
	__u32 val3;
	__u32 naddrs;
	__u64 uaddr;
	__u64 uaddr2;
	__u64 addrs[WS_FUTEX_MAX_ADDRS];
};

/* hdr.tid returned @ret from the call its last ws_futex_enter announced. */
struct ws_futex_exit {
	struct ws_rec_hdr hdr;
	__u64 ret;     /* the syscall's return value (negative errno as two's complement) */
	__u32 syscall; /* as in the enter record */
	__u32 cmd;
};

#endif
