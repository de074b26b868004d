// SPDX-License-Identifier: MIT
/*
 * Reading the ring: records into the reorder buffer, raw stacks resolved while their process
 * lives, and what was lost (the kernel's counters, programs it skipped); the status line's
 * counts. Loading and attaching the programs that write it is session_bpf.c.
 */
#include "session_impl.h"
#include "stacks/pystack.h"

static void python_found(void *ctx, uint32_t pid, const struct ws_py_proc *proc);

/* The stack resolver, with its maps watcher (the trace goes on without either). */
static int stackcap_new(struct ws_session *s)
{
	int err = ws_stackcap_new(&s->stackcap);

	if (err)
		return err;
	ws_stackcap_on_python(s->stackcap, python_found, s);
	if ((err = ws_stackcap_watch(s->stackcap, s->tgids_fd)))
		ws_log(WS_LOG_ERROR,
		       "no thread to read the maps of new processes: %s; a short program's stacks may lack names",
		       strerror(-err));
	return 0;
}

void session_stacks_warm(struct ws_session *s)
{
	struct ws_reader_id me;

	/* the first stack would read the kernel's symbols itself, and fork the helpers: slower,
	 * never wrong. Helpers for whyslow's own user: `run` as root, and tests */
	if (!s->stackcap && ws_stack_capture_ns(s->cfg) && !stackcap_new(s))
		ws_stackcap_preload(s->stackcap, ws_reader_id_of(getpid(), &me) ? NULL : &me);
}

/*
 * A raw stack capture is unwound and named now, while its process lives; only the resolved
 * frames go on (to the report and to a recording), so nothing later needs the traced binaries.
 * They stay a struct in-process: kept now, not when the stream reaches their time (the store
 * evicts and finds them by their wait's interval, stacks.h), and encoded only for a recording.
 */
static int stack_resolve(struct ws_session *s, const struct ws_rec_hdr *h)
{
	struct ws_rec_hdr *rec = NULL;
	struct ws_stack *st;
	int err = 0;

	err = ws_stackcap_resolve(s->stackcap, h, &st);
	if (err == -EINVAL)
		s->bad_records++;
	if (err)
		return 0;
	/* counted as the record it stands for, recorded or not: the summary says the same */
	s->records++;
	/*
	 * The recording's copy goes through the reorder buffer, not to the tap now: the tap writes
	 * in dispatch order, and one written on arrival would be ahead of records older than it by
	 * up to the reorder window (more for a stack whose resolution took long), which a replay's
	 * own window is not sure to put back. Written in order, the recording is as before.
	 */
	if (s->tap && !(err = ws_stackrec_encode(h, st, &rec))) {
		rec->kind = SESSION_KIND_STACK_TAP;
		err = ws_reorder_push(s->ro, rec);
		free(rec);
	}
	/* one the store has no memory for is missing from the report, as a record that could not
	 * be decoded was */
	ws_stacks_keep(s->stacks, st);
	return err ? -ENOMEM : 0;
}

/*
 * A raw capture from the ring: what goes with its process is read now, and the rest (unwinding,
 * naming: a program's first stack can take 100 ms) once the run of captures it came in is read
 * (they come in bursts: a waiter's halves, its waker's), so that a later capture of a program
 * that is exiting still finds it (a Python program that exits right after its waits: each
 * capture's code objects are named from its memory).
 */
static int stack_arrived(struct ws_session *s, const struct ws_rec_hdr *h)
{
	struct ws_rec_hdr *copy;

	if (!s->stackcap && stackcap_new(s))
		return 0; /* no stacks, the trace goes on */
	ws_stackcap_prefetch(s->stackcap, h);
	if (s->nstacks_later < SESSION_STACKS_LATER && (copy = malloc(h->size))) {
		memcpy(copy, h, h->size);
		s->stacks_later[s->nstacks_later++] = copy;
		return 0;
	}
	return stack_resolve(s, h);
}

int session_stacks_resolve(struct ws_session *s)
{
	int err = 0;

	for (size_t i = 0; i < s->nstacks_later; i++) {
		if (!err)
			err = stack_resolve(s, s->stacks_later[i]);
		free(s->stacks_later[i]);
	}
	s->nstacks_later = 0;
	return err;
}

/* The scheduler object's ws_py_procs (sched/pystack.bpf.h), or -1. */
static int py_procs_fd(struct ws_session *s)
{
	for (int i = 0; i < s->nplugins; i++) {
		struct bpf_map *m =
			s->objs[i] ? bpf_object__find_map_by_name(s->objs[i], "ws_py_procs") : NULL;

		if (m)
			return bpf_map__fd(m);
	}
	return -1;
}

/*
 * A traced process runs CPython (or no longer does): tell BPF, which walks the Python frames
 * of the processes in ws_py_procs where it copies their stacks. Any thread (stackcap.h).
 */
static void python_found(void *ctx, uint32_t pid, const struct ws_py_proc *proc)
{
	int fd = py_procs_fd(ctx);

	if (fd >= 0 && proc)
		bpf_map_update_elem(fd, &pid, proc, BPF_ANY);
	else if (fd >= 0)
		bpf_map_delete_elem(fd, &pid);
}

void session_stacks_watch_python(struct ws_session *s)
{
	for (int i = 0; s->stackcap && i < s->nplugins; i++) {
		struct bpf_map *m =
			s->objs[i] ? bpf_object__find_map_by_name(s->objs[i], "ws_py_codes") : NULL;

		if (m)
			ws_stackcap_watch_python_codes(s->stackcap, bpf_map__fd(m));
	}
}

void session_py_forget(struct ws_session *s, uint32_t pid)
{
	python_found(s, pid, NULL);
}

int session_ring_record(void *ctx, void *data, size_t size)
{
	struct ws_session *s = ctx;
	const struct ws_rec_hdr *h = data;
	struct ws_thread_event born;
	uint32_t tid[2], pid[2];
	static int discard = -1;

	/*
	 * A benchmark's floor (bench/pgbench.sh's "discard"): every record read off the ring and
	 * dropped, so the kernel side and the ring are measured without the analysis. Never set
	 * otherwise: the report of such a run is empty.
	 */
	if (discard < 0) {
		discard = getenv("WHYSLOW_BENCH_DISCARD") != NULL;
		if (discard)
			ws_log(WS_LOG_WARN,
			       "WHYSLOW_BENCH_DISCARD is set: every record is dropped unread, and this run reports nothing (a benchmark's floor)");
	}
	if (discard)
		return 0;
	if (size < sizeof(*h) || h->size > size || h->size < sizeof(*h)) {
		s->bad_records++;
		return 0;
	}
	if (h->kind == SESSION_KIND_STACK_TAP) {
		s->bad_records++; /* not a kind the kernel side writes: see session_impl.h */
		return 0;
	}
	session_note_loss(s, h);
	if (h->kind == WS_KIND_STACK_RAW)
		return stack_arrived(s, h);
	/* a new thread's cgroup at once: a short-lived one is gone by its dispatch */
	if (ws_sched_new_thread(h, &born))
		session_cgroup_born(s, &born);
	/* and any thread's at its first record: by its dispatch it may have exited */
	for (int i = ws_sched_threads_named(h, tid, pid) - 1; i >= 0; i--)
		session_cgroup_seen(s, tid[i], pid[i], h->ts, false);
	/* the memory cgroup a reclaim names, for the same reason */
	session_memcg_arrived(s, h);
	if (h->kind == WS_KIND_PROC_NEW) {
		/*
		 * --comm: traced from its exec, which no fork record says: from now on, before
		 * its first records are dispatched (the reorder window holds them)
		 */
		if ((h->flags & WS_PROC_NEW_EXEC) && !session_pid_traced(s, h->pid)) {
			session_pid_reborn(s, h->pid);
			if (session_pid_add(s, h->pid))
				return -ENOMEM;
		}
		/* a wakeup to read the new process's maps now, not an event */
		if (s->stackcap)
			ws_stackcap_snapshot(s->stackcap, h->pid, ws_clock_mono_now());
		/* but --comm's is one, for a recording too: the process traced from its exec */
		if (!(h->flags & WS_PROC_NEW_EXEC))
			return 0;
	}
	/*
	 * The captures put off so far go before any other record: a push can release a chain
	 * (the reorder window), and one made before its stacks were kept has none, where the
	 * recording's replay has them (record_report saw the live and replayed chains differ).
	 */
	if (s->nstacks_later && session_stacks_resolve(s))
		return -ENOMEM;
	if (ws_reorder_push(s->ro, h))
		return -ENOMEM;
	return 0;
}

uint64_t session_recursion_misses(struct ws_session *s)
{
	uint64_t total = 0;

	for (size_t i = 0; i < s->nprogs; i++) {
		struct bpf_prog_info info;
		__u32 len = sizeof(info);

		memset(&info, 0, sizeof(info));
		if (bpf_obj_get_info_by_fd(s->prog_fds[i], &info, &len) == 0)
			total += info.recursion_misses;
	}
	return total;
}

uint32_t session_possible_cpus(void)
{
	int n = libbpf_num_possible_cpus();

	/* unreadable (no /sys): every id a kernel can have, as for an old recording */
	return n > 0 && n <= WS_MAX_CPUS ? (uint32_t)n : WS_MAX_CPUS;
}

/*
 * Losses a CPU has not reported yet (it writes the note with its next
 * record): treat them as lasting until now, so waits about to be reported
 * are not called complete while a note is still on its way.
 */
static void note_pending_losses(struct ws_session *s, uint64_t now)
{
	int ncpu = libbpf_num_possible_cpus();
	struct ws_cpu_state *st;
	__u32 zero = 0;

	if (s->cpu_fd < 0 || ncpu <= 0)
		return;
	st = calloc(ncpu, sizeof(*st));
	if (st && bpf_map_lookup_elem(s->cpu_fd, &zero, st) == 0) {
		for (int c = 0; c < ncpu; c++)
			if (st[c].lost_pending)
				ws_graph_loss(s->g, st[c].lost_first_ts, now);
	}
	free(st);
}

/* Maps of the traced processes, so stacks of one that exits before they are read still unwind. */
static void stack_snapshots(struct ws_session *s, uint64_t now)
{
	bool on = false; /* set from [core] stacks, whose default is ws_core_keys' */

	if (!s->stackcap) {
		ws_config_bool(s->cfg, "core", ws_core_keys, "stacks", &on);
		if (!on || stackcap_new(s))
			return;
	}
	for (size_t i = 0; i < s->pids.cap; i++)
		if (ws_table_at(&s->pids, i))
			ws_stackcap_snapshot(s->stackcap, ws_table_key_of(ws_table_at(&s->pids, i)),
					     now);
	/* new processes whose fork the analysis has not reached yet (WS_KIND_PROC_NEW) */
	ws_stackcap_snapshot_young(s->stackcap, now);
}

int ws_session_poll(struct ws_session *s, int timeout_ms)
{
	uint64_t now, misses, due;
	int n;

	/* no longer than until a young process's maps are due (stackcap.h) */
	due = s->stackcap ? ws_stackcap_due_in(s->stackcap, ws_clock_mono_now()) : UINT64_MAX;
	if (timeout_ms > 0 && due / 1000000 < (uint64_t)timeout_ms)
		timeout_ms = (int)(due / 1000000);
	n = ring_buffer__poll(s->rb, timeout_ms);
	/* a capture's code objects before the capture: its process may be exiting (one syscall
	 * when none is listed) */
	ws_stackcap_name_python_codes(s->stackcap);
	if (n >= 0)
		n = ring_buffer__consume(s->rb);
	if (session_stacks_resolve(s))
		return -ENOMEM;
	if (n < 0 && n != -EINTR)
		return n;
	now = ws_clock_mono_now();
	/*
	 * Reading every program's counter is ~40 syscalls: at most every MISSES_EVERY_NS, not on
	 * every poll (a busy ring wakes the reader dozens of times a second). If the kernel
	 * skipped programs, every wait across that interval is suspect.
	 */
	if (now - s->last_poll_ns < MISSES_EVERY_NS)
		goto flush;
	misses = session_recursion_misses(s);
	if (misses > s->recursion_misses) {
		/* as a record, so a recording keeps the loss where it happened */
		struct ws_rec_lost l = {
			.hdr = { .size = sizeof(l),
				 .kind = WS_KIND_LOST,
				 .ts = now,
				 .flags = WS_LOST_RECURSION },
			.count = misses - s->recursion_misses,
			.first_ts = s->last_poll_ns,
		};

		session_note_loss(s, &l.hdr);
		ws_reorder_push(s->ro, &l.hdr);
		s->recursion_misses = misses;
	}
	s->last_poll_ns = now;
flush:
	stack_snapshots(s, now);
	note_pending_losses(s, now);
	ws_reorder_flush(s->ro, now);
	return s->err;
}

int session_read_losses(struct ws_session *s, struct ws_losses *out, uint64_t *total)
{
	int ncpu = libbpf_num_possible_cpus();
	uint64_t *vals;
	int err = 0;

	memset(out, 0, sizeof(*out));
	*total = 0;
	if (ncpu <= 0)
		return ncpu < 0 ? ncpu : -EINVAL;
	vals = calloc(ncpu, sizeof(*vals));
	if (!vals)
		return -ENOMEM;
	/* without memory for the detail, the total is still counted */
	for (__u32 key, *prev = NULL; bpf_map_get_next_key(s->lost_fd, prev, &key) == 0;
	     prev = &key) {
		if (bpf_map_lookup_elem(s->lost_fd, &key, vals))
			continue;
		for (int c = 0; c < ncpu; c++) {
			*total += vals[c];
			if (!err)
				err = ws_losses_add(out, (uint32_t)c, key, vals[c]);
		}
	}
	free(vals);
	ws_losses_settle(out);
	return err;
}

void ws_session_progress(struct ws_session *s, struct ws_progress *p)
{
	struct ws_graph_stats st;
	struct ws_losses losses = { 0 };

	memset(p, 0, sizeof(*p));
	if (s->g) {
		ws_graph_stats(s->g, &st);
		p->threads = st.threads;
	}
	p->records = s->records;
	if (s->lost_fd >= 0)
		session_read_losses(s, &losses, &p->lost); /* the total, whatever the detail */
	ws_losses_free(&losses);
	if (s->start_mono)
		p->elapsed_ns = ws_clock_mono_now() - s->start_mono;
}
