/* SPDX-License-Identifier: MIT */
/* Records of the kill (signal) source, as recordings made before ABI 2.3 hold them (kill.c). */
#ifndef WHYSLOW_KILL_REC_H
#define WHYSLOW_KILL_REC_H

#include <whyslow/record.h>

/* Numbers are never reused. */
#define WS_KILL_WAKE (WS_KIND_KILL + 1)

#define WS_KILL_COMM_LEN 16

/*
 * A traced thread is being woken (sched_waking) with signals pending that it
 * does not block: the wakeup is the signal's (signal_wake_up), run by hdr.tid
 * in task context (the sender, or the kernel thread sending for it: the tty's
 * kworker on Ctrl-C); inside an interrupt (a timer's SIGALRM) hdr.tid is only
 * whatever task the interrupt hit. Written just before the sched source's
 * own record of the same wakeup.
 */
struct ws_kill_wake {
	struct ws_rec_hdr hdr;
	__u64 pending; /* bit n-1: signal n (first word of the kernel's sigset) */
	__u32 wakee_tid;
	__u32 wakee_pid;
	__u32 state; /* the wakee's task state (1 interruptible, 2 uninterruptible, ...) */
	__u32 reserved;
	char sender_comm[WS_KILL_COMM_LEN];
};

#endif
