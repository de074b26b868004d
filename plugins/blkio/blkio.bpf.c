// SPDX-License-Identifier: GPL-2.0
/*
 * blkio source, kernel side: one record per block request completion, with
 * when the request was queued and handed to the driver and who queued it.
 *
 * Requests are keyed by their struct request pointer, never by (dev, sector):
 * a request the driver gives back is issued twice and completed once, and two
 * requests for one sector may be in flight at once.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include <whyslow/whyslow.bpf.h>
#include "blkio_rec.h"
#include "blkio_fault.bpf.h"

char LICENSE[] SEC("license") = "GPL";

#define REQ_OP_MASK_ 0xff

/* The kernel's bit number of a request flag, as this kernel numbers it (CO-RE). */
#define REQ_BIT_(name) (1U << bpf_core_enum_value(enum req_flag_bits, name))

/* cmd_flags -> WS_BLKIO_F_*: what the request really is (a flush is not a 0-byte write). */
static __always_inline __u32 ws_req_flags(__u32 f)
{
	__u32 w = WS_BLKIO_F_KNOWN;

	if (f & REQ_BIT_(__REQ_PREFLUSH))
		w |= WS_BLKIO_F_PREFLUSH;
	if (f & REQ_BIT_(__REQ_FUA))
		w |= WS_BLKIO_F_FUA;
	if (f & REQ_BIT_(__REQ_SYNC))
		w |= WS_BLKIO_F_SYNC;
	if (f & REQ_BIT_(__REQ_META))
		w |= WS_BLKIO_F_META;
	if (f & REQ_BIT_(__REQ_RAHEAD))
		w |= WS_BLKIO_F_RAHEAD;
	return w;
}

struct rq_info {
	__u64 insert_ts;
	__u64 first_issue_ts;
	__u64 last_issue_ts;
	__u32 nr_issues;
	__u32 nr_requeues;
	__u32 tid, pid;
	__u64 held_until_ts; /* its first bio was held back by blk-throttle until then */
	__u64 held_cgroup;   /* that bio's blkio cgroup (kn->id) */
};

/* LRU: a request whose completion we never see must not pin a slot forever. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__type(key, __u64);
	__type(value, struct rq_info);
	__uint(max_entries, 16384);
} rqs SEC(".maps");

#define PF_WQ_WORKER_ 0x00000020 /* the kernel's PF_WQ_WORKER: a workqueue's worker thread */

/*
 * blk-throttle's dispatch work (block/blk-throttle.c). A bio held back by its cgroup's I/O limit
 * leaves submit_bio_noacct() at blk_throtl_bio() before block_bio_queue fires; block_bio_queue
 * fires for it only when this work, run by a kworker, queues it once the limit allows. Weak: a
 * kernel without CONFIG_BLK_DEV_THROTTLING has none, and then nothing is held.
 */
extern const void blk_throtl_dispatch_work_fn __ksym __weak;

struct held_bio {
	__u64 until_ts; /* block_bio_queue in the throttle's dispatch work */
	__u64 cgroup;	/* the bio's blkio cgroup: bi_blkg->blkcg->css.cgroup->kn->id */
};

/* Bios the throttle released, until their request is made (LRU: a merged bio makes none). */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__type(key, __u64);
	__type(value, struct held_bio);
	__uint(max_entries, 4096);
} held_bios SEC(".maps");

/* Entries in held_bios: while 0 (no throttle at work) a new request looks nothing up. */
__s64 held_pending;

/* Is current a kworker running blk-throttle's dispatch work? */
static __always_inline bool in_throttle_dispatch(void)
{
	struct task_struct *cur = bpf_get_current_task_btf();
	struct kthread *kt;
	struct worker *w;

	/* before Linux 5.17 the kthread is not reached through worker_private: nothing is held */
	if (!(cur->flags & PF_WQ_WORKER_) || !&blk_throtl_dispatch_work_fn ||
	    !bpf_core_field_exists(cur->worker_private))
		return false;
	/* a worker thread's kthread data is its struct worker (kthread_data()) */
	kt = (struct kthread *)cur->worker_private;
	w = (struct worker *)BPF_CORE_READ(kt, data);
	return (__u64)BPF_CORE_READ(w, current_func) == (__u64)&blk_throtl_dispatch_work_fn;
}

/*
 * Every bio of the machine passes here: one load of current's flags; a workqueue's worker
 * reads two pointers more; only a bio the throttle released is written to held_bios.
 */
SEC("tp_btf/block_bio_queue")
int BPF_PROG(ws_blkio_bio_queue, struct bio *bio)
{
	struct held_bio h;
	__u64 key = (__u64)bio;

	if (!in_throttle_dispatch())
		return 0;
	h.until_ts = bpf_ktime_get_ns();
	h.cgroup = BPF_CORE_READ(bio, bi_blkg, blkcg, css.cgroup, kn, id);
	if (!bpf_map_update_elem(&held_bios, &key, &h, BPF_ANY))
		__sync_fetch_and_add(&held_pending, 1);
	return 0;
}

/* A new request whose first bio the throttle held: say so in @ri, forget the bio. */
static __always_inline void take_held(struct request *rq, struct rq_info *ri)
{
	struct held_bio *h;
	__u64 key;

	if (held_pending <= 0)
		return;
	key = (__u64)BPF_CORE_READ(rq, bio);
	h = bpf_map_lookup_elem(&held_bios, &key);
	if (!h)
		return;
	ri->held_until_ts = h->until_ts;
	ri->held_cgroup = h->cgroup;
	if (!bpf_map_delete_elem(&held_bios, &key))
		__sync_fetch_and_sub(&held_pending, 1);
}

/*
 * Who queued a request is only known in task context: in an interrupt (a
 * request dispatched from a completion) current is an unrelated task.
 */
static __always_inline void set_submitter(struct rq_info *ri)
{
	struct ws_cpu_state *cs = ws_cpu_state();
	__u64 id;

	if (cs && cs->depth)
		return;
	id = bpf_get_current_pid_tgid();
	ri->tid = (__u32)id;
	ri->pid = id >> 32;
}

SEC("tp_btf/block_rq_insert")
int BPF_PROG(ws_blkio_insert, struct request *rq)
{
	__u64 key = (__u64)rq;
	struct rq_info *old = bpf_map_lookup_elem(&rqs, &key), ri = {};

	/*
	 * A requeued request comes back through insert: keep its history. Any
	 * other entry is left over from a completion we missed; start afresh.
	 */
	if (old && old->nr_requeues)
		return 0;
	ri.insert_ts = bpf_ktime_get_ns();
	set_submitter(&ri);
	take_held(rq, &ri);
	bpf_map_update_elem(&rqs, &key, &ri, BPF_ANY);
	return 0;
}

SEC("tp_btf/block_rq_issue")
int BPF_PROG(ws_blkio_issue, struct request *rq)
{
	__u64 key = (__u64)rq, now = bpf_ktime_get_ns();
	struct rq_info *ri = bpf_map_lookup_elem(&rqs, &key), fresh = {};

	if (ri) {
		if (!ri->first_issue_ts)
			ri->first_issue_ts = now;
		ri->last_issue_ts = now;
		ri->nr_issues++;
		if (!ri->tid)
			set_submitter(ri);
		return 0;
	}
	/* Issued directly, without passing an I/O scheduler or software queue. */
	fresh.first_issue_ts = now;
	fresh.last_issue_ts = now;
	fresh.nr_issues = 1;
	set_submitter(&fresh);
	take_held(rq, &fresh);
	bpf_map_update_elem(&rqs, &key, &fresh, BPF_ANY);
	return 0;
}

SEC("tp_btf/block_rq_requeue")
int BPF_PROG(ws_blkio_requeue, struct request *rq)
{
	__u64 key = (__u64)rq;
	struct rq_info *ri = bpf_map_lookup_elem(&rqs, &key);

	if (ri)
		ri->nr_requeues++;
	return 0;
}

/*
 * Every completion is written, whatever the submitter: under cgroup I/O
 * throttling the request is created and issued by a kworker long after the
 * reader went to sleep, so filtering by traced process would drop exactly the
 * slow case. Block I/O rates are low enough for this to cost little. The
 * record is written in the completion's context (irq or softirq), which is
 * what ties it to the wakeup that follows in the same bracket.
 */
SEC("tp_btf/block_rq_complete")
int BPF_PROG(ws_blkio_complete, struct request *rq, blk_status_t error, unsigned int nr_bytes)
{
	__u64 key = (__u64)rq;
	struct rq_info *ri = bpf_map_lookup_elem(&rqs, &key);
	__u32 data_len = BPF_CORE_READ(rq, __data_len);
	__u32 flags = BPF_CORE_READ(rq, cmd_flags);
	struct ws_blkio_done *r;

	r = ws_reserve(sizeof(*r), WS_BLKIO_DONE);
	if (r) {
		r->sector = BPF_CORE_READ(rq, __sector);
		r->dev = BPF_CORE_READ(rq, q, disk, part0, bd_dev);
		r->bytes = nr_bytes;
		r->data_len = data_len;
		r->op = flags & REQ_OP_MASK_;
		r->sync = !!(flags & REQ_BIT_(__REQ_SYNC));
		r->flags = ws_req_flags(flags);
		r->reserved = 0;
		r->error = error;
		if (ri) {
			r->insert_ts = ri->insert_ts;
			r->first_issue_ts = ri->first_issue_ts;
			r->last_issue_ts = ri->last_issue_ts;
			r->nr_issues = ri->nr_issues;
			r->nr_requeues = ri->nr_requeues;
			r->submit_tid = ri->tid;
			r->submit_pid = ri->pid;
			r->held_until_ts = ri->held_until_ts;
			r->held_cgroup = ri->held_cgroup;
		} else {
			r->insert_ts = 0;
			r->first_issue_ts = 0;
			r->last_issue_ts = 0;
			r->nr_issues = 0;
			r->nr_requeues = 0;
			r->submit_tid = 0;
			r->submit_pid = 0;
			r->held_until_ts = 0;
			r->held_cgroup = 0;
		}
		take_fault(rq, r);
		ws_submit(r);
	}
	/* A partial completion (fewer bytes than outstanding) is followed by more. */
	if (ri && nr_bytes >= data_len)
		bpf_map_delete_elem(&rqs, &key);
	return 0;
}
