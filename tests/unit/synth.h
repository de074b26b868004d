/* SPDX-License-Identifier: MIT */
/*
 * Synthetic records for the unit tests: exactly what the BPF sources would
 * write into the ring, built in user space. Each builder fills a whole
 * record (header included) and returns it by value; feed it with
 * ws_session_feed(s, &rec.hdr).
 *
 * Header conventions the sources rely on:
 *  - hdr.tid/hdr.pid name "current" on hdr.cpu when the record was written;
 *  - hdr.ctx says whether that was task context or an interrupt
 *    (WS_CTX_HARDIRQ / WS_CTX_SOFTIRQ, optionally | WS_CTX_TIMER);
 *  - hdr.ctx_id names the interrupt bracket: two records with the same
 *    (cpu, ctx_id) were written inside the same bracket.
 */
#ifndef WS_TEST_SYNTH_H
#define WS_TEST_SYNTH_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <whyslow/record.h>

#include "../../plugins/blkio/blkio_rec.h"
#include "../../plugins/futex/futex_rec.h"
#include "../../core/sched/sched_rec.h"

/* Task-context ctx_id used when a test does not care: distinct from any bracket id. */
#define SYN_TASK_CTX_ID(cpu) (0x10000u + (cpu))
/* CPUs of the machine the records describe (ws_session_set_ncpus) */
#define SYN_NCPUS 64

static inline void syn_hdr(struct ws_rec_hdr *h, uint16_t size, uint16_t kind, uint64_t ts,
			   uint16_t cpu, uint32_t tid, uint32_t pid, uint8_t ctx, uint32_t ctx_id)
{
	memset(h, 0, sizeof(*h));
	h->size = size;
	h->kind = kind;
	h->cpu = cpu;
	h->ctx = ctx;
	h->ctx_id = ctx_id;
	h->tid = tid;
	h->pid = pid;
	h->ts = ts;
}

static inline void syn_comm(char *dst, const char *src)
{
	memset(dst, 0, WS_COMM_LEN);
	if (src)
		snprintf(dst, WS_COMM_LEN, "%s", src);
}

/* On @cpu, @prev (current) switches out in @prev_state (0 preempted) and @next runs. */
static inline struct ws_sched_switch syn_switch(uint64_t ts, uint16_t cpu, uint32_t prev_tid,
						uint32_t prev_pid, uint32_t prev_state,
						uint32_t next_tid, uint32_t next_pid,
						const char *next_comm)
{
	struct ws_sched_switch r;

	memset(&r, 0, sizeof(r));
	syn_hdr(&r.hdr, sizeof(r), WS_SCHED_SWITCH, ts, cpu, prev_tid, prev_pid, WS_CTX_TASK,
		SYN_TASK_CTX_ID(cpu));
	r.prev_state = prev_state;
	r.next_tid = next_tid;
	r.next_pid = next_pid;
	syn_comm(r.next_comm, next_comm);
	return r;
}

/*
 * On @cpu, with @cur_tid current, something wakes @wakee. In task context
 * (@ctx WS_CTX_TASK) current is the waker; in an interrupt it is not.
 */
static inline struct ws_sched_waking syn_waking(uint64_t ts, uint16_t cpu, uint32_t cur_tid,
						uint32_t cur_pid, const char *cur_comm, uint8_t ctx,
						uint32_t ctx_id, uint32_t wakee_tid,
						uint32_t wakee_pid)
{
	struct ws_sched_waking r;

	memset(&r, 0, sizeof(r));
	syn_hdr(&r.hdr, sizeof(r), WS_SCHED_WAKING, ts, cpu, cur_tid, cur_pid, ctx, ctx_id);
	r.wakee_tid = wakee_tid;
	r.wakee_pid = wakee_pid;
	syn_comm(r.waker_comm, cur_comm);
	return r;
}

/* @parent_tid (current) created @child_tid. */
static inline struct ws_sched_fork syn_fork(uint64_t ts, uint16_t cpu, uint32_t parent_tid,
					    uint32_t parent_pid, uint32_t child_tid,
					    uint32_t child_pid, const char *child_comm)
{
	struct ws_sched_fork r;

	memset(&r, 0, sizeof(r));
	syn_hdr(&r.hdr, sizeof(r), WS_SCHED_FORK, ts, cpu, parent_tid, parent_pid, WS_CTX_TASK,
		SYN_TASK_CTX_ID(cpu));
	r.child_tid = child_tid;
	r.child_pid = child_pid;
	syn_comm(r.child_comm, child_comm);
	return r;
}

/* @tid (current) exits. */
static inline struct ws_sched_exit syn_exit(uint64_t ts, uint16_t cpu, uint32_t tid, uint32_t pid,
					    const char *comm)
{
	struct ws_sched_exit r;

	memset(&r, 0, sizeof(r));
	syn_hdr(&r.hdr, sizeof(r), WS_SCHED_EXIT, ts, cpu, tid, pid, WS_CTX_TASK,
		SYN_TASK_CTX_ID(cpu));
	syn_comm(r.comm, comm);
	return r;
}

/*
 * On @cpu, @tid (current) begins direct memory reclaim (@what WS_SCHED_RECLAIM_MEMCG or _GLOBAL:
 * at memory cgroup @cg's limit of @limit bytes, 0: not found) or ends it (WS_SCHED_RECLAIM_END).
 */
static inline struct ws_sched_reclaim syn_reclaim(uint64_t ts, uint16_t cpu, uint32_t tid,
						  uint32_t pid, uint32_t what, uint64_t cg,
						  uint64_t limit)
{
	struct ws_sched_reclaim r;

	memset(&r, 0, sizeof(r));
	syn_hdr(&r.hdr, sizeof(r), WS_SCHED_RECLAIM, ts, cpu, tid, pid, WS_CTX_TASK,
		SYN_TASK_CTX_ID(cpu));
	r.what = what;
	r.cg = cg;
	r.limit = limit;
	r.limit_kind = cg ? WS_SCHED_RECLAIM_LIMIT_MAX : 0;
	return r;
}

/*
 * On @cpu, with @cur_tid current, the kernel reports what @tid's summarised periods waited for
 * (sched 1.6): @n of @c used, and the totals they are part of.
 */
static inline struct ws_sched_short_causes
syn_short_causes(uint64_t ts, uint16_t cpu, uint32_t cur_tid, uint32_t cur_pid, uint32_t tid,
		 const struct ws_sched_cause *c, int n, struct ws_sched_short total)
{
	struct ws_sched_short_causes r;

	memset(&r, 0, sizeof(r));
	syn_hdr(&r.hdr, sizeof(r), WS_SCHED_SHORT_CAUSES, ts, cpu, cur_tid, cur_pid, WS_CTX_TASK,
		SYN_TASK_CTX_ID(cpu));
	r.tid = tid;
	r.arch = WS_ARCH_X86_64;
	for (int i = 0; i < n && i < WS_SCHED_CAUSES; i++)
		r.c[i] = c[i];
	r.total = total;
	return r;
}

/* @tid enters futex(2) with command @cmd (WS_FUTEX_WAIT, WS_FUTEX_WAKE, ...) on @uaddr. */
static inline struct ws_futex_enter syn_futex_enter(uint64_t ts, uint16_t cpu, uint32_t tid,
						    uint32_t pid, uint32_t cmd, uint64_t uaddr)
{
	struct ws_futex_enter r;

	memset(&r, 0, sizeof(r));
	syn_hdr(&r.hdr, sizeof(r), WS_FUTEX_ENTER, ts, cpu, tid, pid, WS_CTX_TASK,
		SYN_TASK_CTX_ID(cpu));
	r.syscall = WS_FUTEX_SYS_FUTEX;
	r.op = cmd | WS_FUTEX_PRIVATE_FLAG;
	r.cmd = cmd;
	r.val = 1;
	r.uaddr = uaddr;
	return r;
}

/* @tid returns @ret from the futex call its last enter record announced. */
static inline struct ws_futex_exit syn_futex_exit(uint64_t ts, uint16_t cpu, uint32_t tid,
						  uint32_t pid, uint32_t cmd, int64_t ret)
{
	struct ws_futex_exit r;

	memset(&r, 0, sizeof(r));
	syn_hdr(&r.hdr, sizeof(r), WS_FUTEX_EXIT, ts, cpu, tid, pid, WS_CTX_TASK,
		SYN_TASK_CTX_ID(cpu));
	r.ret = (uint64_t)ret;
	r.syscall = WS_FUTEX_SYS_FUTEX;
	r.cmd = cmd;
	return r;
}

/*
 * A block request (queued by @submit_tid) completes on @cpu inside the
 * interrupt bracket (@ctx, @ctx_id) that hit @cur_tid.
 */
static inline struct ws_blkio_done syn_blk_done(uint64_t ts, uint16_t cpu, uint32_t cur_tid,
						uint32_t cur_pid, uint8_t ctx, uint32_t ctx_id,
						uint64_t sector, uint32_t submit_tid,
						uint32_t submit_pid, uint64_t issue_ts)
{
	struct ws_blkio_done r;

	memset(&r, 0, sizeof(r));
	syn_hdr(&r.hdr, sizeof(r), WS_BLKIO_DONE, ts, cpu, cur_tid, cur_pid, ctx, ctx_id);
	r.sector = sector;
	r.insert_ts = issue_ts;
	r.first_issue_ts = issue_ts;
	r.last_issue_ts = issue_ts;
	r.dev = (7u << 20) | 99u; /* loop99: no such sysfs entry, printed as "7:99" */
	r.bytes = 4096;
	r.data_len = 4096;
	r.op = WS_BLKIO_OP_READ;
	r.sync = 1;
	r.nr_issues = 1;
	r.submit_tid = submit_tid;
	r.submit_pid = submit_pid;
	return r;
}

/* @count records were lost on @cpu between @first_ts and @ts (when this note was written). */
static inline struct ws_rec_lost syn_lost(uint64_t ts, uint16_t cpu, uint32_t cur_tid,
					  uint32_t cur_pid, uint64_t count, uint64_t first_ts,
					  uint32_t first_kind)
{
	struct ws_rec_lost r;

	memset(&r, 0, sizeof(r));
	syn_hdr(&r.hdr, sizeof(r), WS_KIND_LOST, ts, cpu, cur_tid, cur_pid, WS_CTX_TASK,
		SYN_TASK_CTX_ID(cpu));
	r.count = count;
	r.first_ts = first_ts;
	r.first_kind = first_kind;
	return r;
}

/* The last thread of thread group @pid (@tid, current on @cpu) is exiting. */
static inline struct ws_rec_hdr syn_proc_exit(uint64_t ts, uint16_t cpu, uint32_t tid, uint32_t pid)
{
	struct ws_rec_hdr h;

	syn_hdr(&h, sizeof(h), WS_KIND_PROC_EXIT, ts, cpu, tid, pid, WS_CTX_TASK,
		SYN_TASK_CTX_ID(cpu));
	return h;
}

#endif
