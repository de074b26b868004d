/* SPDX-License-Identifier: GPL-2.0 */
/*
 * sched source, kernel side: a traced thread inside direct memory reclaim, bracketed by the
 * kernel's own tracepoints (WS_SCHED_RECLAIM records). A wait that begins inside the bracket is
 * a wait of the reclaim (for a page's writeback, for a lock of the reclaimer), and its time on
 * CPU inside it is the reclaim's work, not the program's: the analysis marks both from these
 * records. The tracepoints fire only when an allocation has to reclaim, so with no memory
 * pressure these programs never run. Included by sched.bpf.c only, after sched_state.bpf.h.
 */
#ifndef WS_SCHED_RECLAIM_BPF_H
#define WS_SCHED_RECLAIM_BPF_H

#include "sched_state.bpf.h"

/* How far up the memory cgroups the one at its limit is looked for. */
#define RECLAIM_LEVELS 8
/* past any kernel's CGROUP_SUBSYS_COUNT (12 on this 6.18 build) */
#define RECLAIM_SUBSYS_MAX 32
/*
 * The page size's shift, for the limit in bytes: set by the loader from sysconf (not a Kconfig
 * extern, which makes libbpf refuse the whole object where no kernel config file can be read:
 * no /proc/config.gz nor /boot/config-*, as in a container or the arm64 test's guest).
 */
const volatile int ws_page_shift = 12;
/*
 * The most pages one charge that reclaims can ask for: a folio of a PMD's size (512 pages of
 * 4 KiB; large page-cache folios, likely: while a 1 MiB dd reclaimed here its group's usage was
 * seen 300 pages below its limit, and a margin of the kernel's charge batch, 64 pages, named no
 * group for most of its reclaims); a charge of a smaller folio tries that batch first.
 */
#define RECLAIM_CHARGE_MAX 512

/*
 * The reclaim tracepoints do not say which memory cgroup is reclaimed for: it is the one whose
 * page counter refused the charge, the thread's own or an ancestor. Named here as the nearest
 * one, from the thread's own up, whose usage was within one charge of its max (or past its
 * high, v2) as the reclaim began: read from the counters the charge itself reads, a few loads
 * per reclaim, none per event.
 */
static __always_inline void reclaim_memcg(struct task_struct *t, struct ws_sched_reclaim *r)
{
	int id, shift = ws_page_shift;
	struct cgroup_subsys_state *css;

	if (!bpf_core_enum_value_exists(enum cgroup_subsys_id, memory_cgrp_id))
		return;
	id = bpf_core_enum_value(enum cgroup_subsys_id, memory_cgrp_id);
	if (id < 0 || id >= RECLAIM_SUBSYS_MAX)
		return;
	css = BPF_CORE_READ(t, cgroups, subsys[id]);
	for (int i = 0; i < RECLAIM_LEVELS && css; i++) {
		/* css is a mem_cgroup's first member */
		struct mem_cgroup *m = (void *)css - bpf_core_field_offset(struct mem_cgroup, css);
		__u64 usage = BPF_CORE_READ(m, memory.usage.counter);
		__u64 max = BPF_CORE_READ(m, memory.max), high = BPF_CORE_READ(m, memory.high);

		if (usage + RECLAIM_CHARGE_MAX >= max) {
			r->limit_kind = WS_SCHED_RECLAIM_LIMIT_MAX;
			r->limit = max << shift;
		} else if (usage > high) {
			r->limit_kind = WS_SCHED_RECLAIM_LIMIT_HIGH;
			r->limit = high << shift;
		}
		if (r->limit_kind) {
			r->cg = BPF_CORE_READ(css, cgroup, kn, id);
			return;
		}
		css = BPF_CORE_READ(css, parent);
	}
}

/*
 * Traced @prev blocks (@state not 0) in a memory stall outside any reclaim bracket: a memory
 * cgroup of its own or above past its memory.high makes it the kernel's memory.high throttle
 * (mem_cgroup_handle_over_high sleeps inside psi_memstall_enter on the return to user space;
 * a stall waiting for I/O, in_iowait set, is its read's). One bitfield load per blocking
 * switch-out; the walk only in a stall.
 */
static __always_inline void high_sleep(struct task_struct *prev, struct task_state *s, __u32 state)
{
	struct cgroup_subsys_state *css;
	struct ws_sched_reclaim *r;
	int id;

	if (!state || s->in_reclaim || !bpf_core_field_exists(prev->in_memstall) ||
	    !BPF_CORE_READ_BITFIELD(prev, in_memstall) ||
	    !bpf_core_enum_value_exists(enum cgroup_subsys_id, memory_cgrp_id))
		return;
	/*
	 * The throttle sleeps in schedule_timeout_killable(); the stalls that wait for I/O (a
	 * thrashing page's read, a swap-in, readahead of workingset pages) go through
	 * io_schedule(), in_iowait set: those are their read's, even in a group past its high.
	 */
	if (bpf_core_field_exists(prev->in_iowait) && BPF_CORE_READ_BITFIELD(prev, in_iowait))
		return;
	id = bpf_core_enum_value(enum cgroup_subsys_id, memory_cgrp_id);
	if (id < 0 || id >= RECLAIM_SUBSYS_MAX)
		return;
	css = BPF_CORE_READ(prev, cgroups, subsys[id]);
	for (int i = 0; i < RECLAIM_LEVELS && css; i++) {
		struct mem_cgroup *m = (void *)css - bpf_core_field_offset(struct mem_cgroup, css);
		__u64 high = BPF_CORE_READ(m, memory.high);

		if (BPF_CORE_READ(m, memory.usage.counter) > high) {
			r = ws_reserve(sizeof(*r), WS_SCHED_RECLAIM);
			if (!r)
				return;
			r->what = WS_SCHED_RECLAIM_HIGH_SLEEP;
			r->order = 0;
			r->cg = BPF_CORE_READ(css, cgroup, kn, id);
			r->limit = high << ws_page_shift;
			r->nr_reclaimed = 0;
			r->limit_kind = WS_SCHED_RECLAIM_LIMIT_HIGH;
			r->reserved = 0;
			ws_submit(r);
			return;
		}
		css = BPF_CORE_READ(css, parent);
	}
}

/* Current, if traced, begins reclaim (@what): marked in its task storage, and written. */
static __always_inline void reclaim_begin(__u32 what, int order)
{
	struct task_struct *cur = bpf_get_current_task_btf();
	bool known = seeded();
	struct task_state *s = state_of(cur, known);
	struct ws_sched_reclaim *r;

	if (!traced(cur, s, known) || !s)
		return;
	s->in_reclaim = 1;
	r = ws_reserve(sizeof(*r), WS_SCHED_RECLAIM);
	if (!r)
		return;
	r->what = what;
	r->order = order;
	r->cg = 0;
	r->limit = 0;
	r->nr_reclaimed = 0;
	r->limit_kind = 0;
	r->reserved = 0;
	if (what == WS_SCHED_RECLAIM_MEMCG)
		reclaim_memcg(cur, r);
	ws_submit(r);
}

/* Current ends the reclaim it began, if its beginning was seen. */
static __always_inline void reclaim_end(unsigned long nr_reclaimed)
{
	struct task_struct *cur = bpf_get_current_task_btf();
	struct task_state *s = bpf_task_storage_get(&task_state, cur, 0, 0);
	struct ws_sched_reclaim *r;

	if (!s || !s->in_reclaim)
		return;
	s->in_reclaim = 0;
	r = ws_reserve(sizeof(*r), WS_SCHED_RECLAIM);
	if (!r)
		return;
	r->what = WS_SCHED_RECLAIM_END;
	r->order = 0;
	r->cg = 0;
	r->limit = 0;
	r->nr_reclaimed = nr_reclaimed;
	r->limit_kind = 0;
	r->reserved = 0;
	ws_submit(r);
}

SEC("tp_btf/mm_vmscan_memcg_reclaim_begin")
int BPF_PROG(ws_reclaim_memcg_begin, int order, gfp_t gfp)
{
	reclaim_begin(WS_SCHED_RECLAIM_MEMCG, order);
	return 0;
}

SEC("tp_btf/mm_vmscan_memcg_reclaim_end")
int BPF_PROG(ws_reclaim_memcg_end, unsigned long nr_reclaimed)
{
	reclaim_end(nr_reclaimed);
	return 0;
}

/*
 * Direct compaction: an allocation of 2^order pages that free memory could not serve compacts
 * the zones in the allocating thread's context (kcompactd's and proactive compaction are not an
 * allocation's stall: cc->direct_compaction tells them apart).
 */
SEC("tp_btf/mm_compaction_begin")
int BPF_PROG(ws_compaction_begin, struct compact_control *cc, unsigned long zone_start,
	     unsigned long migrate_pfn, unsigned long free_pfn, bool sync)
{
	if (cc->direct_compaction)
		reclaim_begin(WS_SCHED_RECLAIM_COMPACT, cc->order);
	return 0;
}

SEC("tp_btf/mm_compaction_end")
int BPF_PROG(ws_compaction_end, struct compact_control *cc, unsigned long zone_start,
	     unsigned long migrate_pfn, unsigned long free_pfn, bool sync, int status)
{
	if (cc->direct_compaction)
		reclaim_end(0);
	return 0;
}

SEC("tp_btf/mm_vmscan_direct_reclaim_begin")
int BPF_PROG(ws_reclaim_direct_begin, int order, gfp_t gfp)
{
	reclaim_begin(WS_SCHED_RECLAIM_GLOBAL, order);
	return 0;
}

SEC("tp_btf/mm_vmscan_direct_reclaim_end")
int BPF_PROG(ws_reclaim_direct_end, unsigned long nr_reclaimed)
{
	reclaim_end(nr_reclaimed);
	return 0;
}

#endif
