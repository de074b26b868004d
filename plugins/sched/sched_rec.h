/* SPDX-License-Identifier: MIT */
/* Records of the sched source; shared by sched.bpf.c and sched.c only. */
#ifndef WHYSLOW_SCHED_REC_H
#define WHYSLOW_SCHED_REC_H

#include <whyslow/record.h>

/* Numbers are never reused. */
#define WS_SCHED_SWITCH (WS_KIND_SCHED + 1)
#define WS_SCHED_WAKING (WS_KIND_SCHED + 2)
#define WS_SCHED_FORK (WS_KIND_SCHED + 3)
#define WS_SCHED_EXIT (WS_KIND_SCHED + 4)
#define WS_SCHED_COMM (WS_KIND_SCHED + 5)

#define WS_COMM_LEN 16

/* A context switch on hdr.cpu; current (hdr.tid) is prev. */
struct ws_sched_switch {
	struct ws_rec_hdr hdr;
	__u32 prev_state; /* 0: preempted; else the task state it blocked in */
	__u32 next_tid;
	__u32 next_pid;
	__u32 reserved;
	char next_comm[WS_COMM_LEN];
};

/*
 * current (hdr.tid) began waking @wakee_tid; only real wakeups (not yet queued).
 * @wakee_sys: the syscall the wakee slept in. @waker_sys: the one current was
 * in, read only in task context (nr WS_SYSCALL_NONE otherwise). Recordings
 * made before these were appended end after @waker_comm.
 */
struct ws_sched_waking {
	struct ws_rec_hdr hdr;
	__u32 wakee_tid;
	__u32 wakee_pid;
	char waker_comm[WS_COMM_LEN];
	struct ws_syscall wakee_sys;
	struct ws_syscall waker_sys;
};
#define WS_SCHED_WAKING_V0_SIZE (sizeof(struct ws_rec_hdr) + 8 + WS_COMM_LEN)

/* hdr.tid created @child_tid. */
struct ws_sched_fork {
	struct ws_rec_hdr hdr;
	__u32 child_tid;
	__u32 child_pid;
	char child_comm[WS_COMM_LEN];
};

/* hdr.tid exits. */
struct ws_sched_exit {
	struct ws_rec_hdr hdr;
	char comm[WS_COMM_LEN];
};

/* Thread @tid took the name @comm (exec, prctl, pthread_setname_np). */
struct ws_sched_comm {
	struct ws_rec_hdr hdr;
	__u32 tid;
	__u32 pid;
	char comm[WS_COMM_LEN];
};

#endif
