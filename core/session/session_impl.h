/* SPDX-License-Identifier: MIT */
/*
 * Inside a session (session.h is its interface): the struct every session_*.c
 * file shares, and the functions one file lends another.
 *   session.c       open (plugins, config), analysis (dispatch -> graph -> chains), summary
 *   session_host.c  the host table plugins call, their contexts and name tables
 *   session_bpf.c   the kernel side: shared maps, loading and attaching
 *   session_ring.c  reading the ring: records, raw stacks resolved, losses, progress
 *   session_pids.c  the set of traced thread groups
 *   session_sched.c the scheduler model's records into the graph
 *   session_cgroups.c the cgroup of each thread seen, read once
 */
#ifndef WS_SESSION_IMPL_H
#define WS_SESSION_IMPL_H

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include <whyslow/table.h>

#include "resolution.h"
#include "session.h"
#include "base/log.h"
#include "base/util.h"
#include "engine/chain.h"
#include "engine/graph.h"
#include "engine/reorder.h"
#include "hang/killed.h"
#include "sched/sched.h"
#include "stacks/stackcap.h"
#include "stacks/stacks.h"

struct core_bpf;

#define MAX_LOST_KINDS 1024
#define PIDS_ASKED 16
/* Waits a signal ended whose chains wait for their thread's exit at once (a whole process's) */
#define HELD_BACK 64
#define EVICT_EVERY_NS 1000000000ULL
#define GONE_GRACE_NS 1000000000ULL
#define MISSES_EVERY_NS 250000000ULL
/*
 * A stack resolved on arrival is kept in s->stacks at once, as a struct (stack_arrived()); only
 * when a recording is written does it go through the reorder buffer too, encoded as its
 * WS_KIND_STACK record under this session-private kind, so that the tap writes it in time order
 * like every other record while dispatch() does not keep it a second time. Never in a recording
 * (dispatch() gives it back its kind first) nor taken from the ring.
 */
#define SESSION_KIND_STACK_TAP (WS_KIND_CORE + 0xff)

/* A plugin's handle: what it sees, and which session and slot it is (for host calls). */
struct plugin_ctx {
	struct ws_plugin_ctx pub;
	struct ws_session *s;
	int index;
};

/* A name a plugin gave a key (ws_host.name_set). */
struct plugin_name {
	int plugin;
	uint64_t key;
	char name[64];
};

struct ws_session {
	struct ws_config *cfg;
	int verbose;
	struct ws_loaded plugins[WS_MAX_PLUGINS];
	struct plugin_ctx ctxs[WS_MAX_PLUGINS];
	int nplugins;
	bool inited;	   /* every plugin's init has run */
	int8_t owner[256]; /* kind >> 8 -> plugin index, -1 none */
	char sources[256];

	/* BPF */
	int ring_fd, tgids_fd, cpu_fd, lost_fd;
	struct core_bpf *core_skel;
	struct bpf_object *objs[WS_MAX_PLUGINS];
	struct bpf_link **links;
	size_t nlinks, links_cap;
	int *prog_fds;
	size_t nprogs, progs_cap;
	struct ring_buffer *rb;
	uint64_t recursion_misses, last_poll_ns;
	uint8_t stack_defer; /* WS_STACK_DEFER_*: how waiters' user stacks are copied */

	/* analysis */
	struct ws_clock clock;
	struct ws_graph *g;
	struct ws_reorder *ro;
	struct ws_report *rep;
	struct ws_chain chain;
	struct ws_stackcap *stackcap; /* raw captures -> frames, made at the first one */
#define SESSION_STACKS_LATER 64
	struct ws_rec_hdr *stacks_later[SESSION_STACKS_LATER]; /* of this batch (session_ring.c) */
	size_t nstacks_later;
	struct ws_stacks *stacks;
	uint64_t max_window;
	struct ws_table pids; /* traced thread groups (keys only) */
	/*
	 * Answers session_pid_traced() gave lately, at pid % PIDS_ASKED: every switch asks about
	 * two threads' processes and every wakeup about one, nearly always the same few, and the
	 * table's probe was 2% of `report`'s instructions. Forgotten whenever the set changes.
	 */
	struct pid_answer {
		uint32_t pid;
		bool known, traced;
	} pids_asked[PIDS_ASKED];
	struct gone_pid {
		uint32_t pid;
		uint64_t ts;
	} * gone; /* thread groups whose last thread exited, dropped a little later */
	size_t ngone, gone_cap;
	uint64_t records, bad_records, lost, last_evict, first_ts, last_ts, start_mono;
	/*
	 * CPUs of the machine traced (live: its possible CPUs; replay: the recording's, or
	 * WS_MAX_CPUS if it says none): per-CPU state is made for these, and a record naming
	 * another is refused and counted in cpu_refused, so crafted CPU ids cost nothing.
	 */
	uint32_t ncpus;
	uint64_t cpu_refused;
	uint64_t by_plugin[WS_MAX_PLUGINS]; /* records each source wrote */
	struct ws_source_count by_source[WS_MAX_PLUGINS];
	int err;
	bool report_lost; /* the report's output failed: chains are no longer written */
	bool replay;	  /* fed from a recording: no sysfs, no BPF */
	/* cgroups whose CPU quota throttled a traced thread, named once each (session_quota.c) */
	struct session_quota {
		uint64_t id;
		char path[512];		      /* "" when not found */
		uint64_t quota_us, period_us; /* 0: no quota read */
	} * quotas;
	size_t nquotas, quotas_cap;
	/* memory cgroups a traced thread reclaimed at the limit of, named once each
	 * (session_memcg.c) */
	struct session_memcg {
		uint64_t id;
		char path[512]; /* "" when not found */
		unsigned tries; /* reads that did not find it */
	} * memcgs;
	size_t nmemcgs, memcgs_cap;
	/*
	 * Each thread's cgroup (session_cgroups.c): pid << 32 | tid -> its latest note in cg_log,
	 * + 1 (UINT32_MAX: asked, not read); the distinct paths; and every answer in the order
	 * read, each with the time of the record that caused it and the thread's note before it
	 * (+ 1, 0: none): what a recording writes, and each thread's history of moves.
	 */
	struct ws_table cg_threads;
	char **cg_paths;
	size_t ncg_paths, cg_paths_cap;
	/* each path's cgroup id (0: not found), in the hierarchy the paths are of: cg_mount's, v1's
	 * with the cpu controller (cg_v1) or v2's; cg_mount "" until the first path is read */
	uint64_t *cg_ids;
	size_t cg_ids_len, cg_ids_cap;
	char cg_mount[512];
	bool cg_v1;
	struct cg_note {
		uint64_t key, ts;
		uint32_t path, prev;
		uint64_t seen; /* the latest note's: the last record that named the thread */
	} * cg_log;
	size_t ncg_log, cg_log_cap;
	ws_tap_fn tap;
	void *tap_ctx;
	ws_chain_sink_fn sink;
	void *sink_ctx;
	ws_ival_sink_fn ival_sink;
	void *ival_sink_ctx;
	ws_sock_io_sink_fn sock_io_sink;
	void *sock_io_sink_ctx;
	struct plugin_name *names;
	size_t nnames, names_cap;
	uint64_t lost_total, end_mono;
	struct ws_losses losses;	 /* by CPU and kind, read at the end (or a recording's) */
	const struct ws_stuck *open_end; /* ws_session_set_open_waits(), until finish */
	struct ws_killed killed;	 /* waits a fatal signal ended (killed.h) */
	/*
	 * Waits a signal ended, their chains held back until the thread's next sign of life: if
	 * the signal killed it, its exit may name the holder of the lock it waited for
	 * (session_wait_done(), session_host.c).
	 */
	struct ws_wait_done held_back[HELD_BACK];
	size_t nheld_back;
};

void session_describe(void *ctx, const struct ws_claim *c, char *buf, size_t len);
/* The chain of the wait @d, reported (session.c). */
void session_chain(struct ws_session *s, const struct ws_wait_done *d);
/* A wait is over (ws_graph_ops.on_wait): its chain now, or held back for its thread's exit. */
void session_wait_done(void *ctx, const struct ws_wait_done *d);
/* @ev is a thread's exit: the chain held back for its last wait, with the lock's holder. */
void session_held_exit(struct ws_session *s, const struct ws_thread_event *ev);
/* One record of the scheduler model's range into the graph (session_sched.c). */
void session_sched_record(struct ws_session *s, const struct ws_rec_hdr *rec);
/* Every chain held back, now (the end of the session). */
void session_held_flush(struct ws_session *s);
/* Thread @t leaves the history (ws_graph_ops.on_gone): a wait of it held back goes too. */
void session_held_gone(struct ws_session *s, const struct ws_thread *t);
/* The waits ws_session_set_open_waits() gave, into the analysis (session_open.c). */
void session_open_at_end(struct ws_session *s);
int session_infer_all(void *ctx, const struct ws_wait *w, struct ws_claim *out);
/*
 * The kernel's per-CPU loss counters into @out (settled) and their sum into @total. 0 or -errno
 * (-ENOMEM: @out names fewer, @total is whole).
 */
int session_read_losses(struct ws_session *s, struct ws_losses *out, uint64_t *total);
void session_note_loss(struct ws_session *s, const struct ws_rec_hdr *rec);
int session_pid_add(struct ws_session *s, uint32_t pid);
void session_pid_gone(struct ws_session *s, uint32_t pid, uint64_t ts);
/* A traced thread group stops being traced at @ts while it lives (--comm: it exec'd into
 * another name): at once, its threads' timelines closed there. */
void session_pid_left(struct ws_session *s, uint32_t pid, uint64_t ts);
void session_pid_reborn(struct ws_session *s, uint32_t pid);
bool session_pid_traced(struct ws_session *s, uint32_t pid);
void session_pids_expire(struct ws_session *s, uint64_t now);
/* The machine's possible CPUs (session_ring.c). */
uint32_t session_possible_cpus(void);
int session_plugins_init(struct ws_session *s);
uint64_t session_recursion_misses(struct ws_session *s);
/* The ring's callback (ring_buffer__new): one record in (session_ring.c). */
int session_ring_record(void *ctx, void *data, size_t size);
/* Process @pid, which ran CPython, is gone: drop it from BPF's ws_py_procs. */
void session_py_forget(struct ws_session *s, uint32_t pid);
/* Stacks on: make the resolver now and let it read what the first stack needs meanwhile. */
void session_stacks_warm(struct ws_session *s);
/* Once loaded: the resolver names BPF's latest Python code objects while it is busy. */
void session_stacks_watch_python(struct ws_session *s);
/* Resolve the raw captures the ring's last batch left for later: 0 or -ENOMEM. */
int session_stacks_resolve(struct ws_session *s);
int session_resource(void *ctx, const struct ws_claim *c, char *buf, size_t len);
int session_root_label(void *ctx, const struct ws_claim *c, const char *comm, char *buf,
		       size_t len);
int ws_bpf_set_rodata(struct bpf_object *obj, const char *name, const void *val, size_t size);
extern const struct ws_host ws_session_host;
/*
 * A record at @ts names thread @tid of @pid: its cgroup is read now if it was not yet
 * (@again: read it again, it was just made or renamed). Nothing in replay (session_cgroups.c).
 */
void session_cgroup_seen(struct ws_session *s, uint32_t tid, uint32_t pid, uint64_t ts, bool again);
/*
 * Thread @ev->tid was made (WS_THREAD_NEW, or its record as it arrives): its cgroup read now,
 * or, if it is gone already, named from the cgroup id its record carries when another thread's
 * read found that group (session_cgroups.c).
 */
void session_cgroup_born(struct ws_session *s, const struct ws_thread_event *ev);
void session_cgroups_free(struct ws_session *s);
/* ws_graph_ops.quota_name (session_quota.c) */
void session_quota_name(void *ctx, uint32_t tid, uint32_t pid, uint64_t cg, struct ws_claim *c);
/* A record arrived: a reclaim's memory cgroup is named now, while its thread lives. */
void session_memcg_arrived(struct ws_session *s, const struct ws_rec_hdr *h);
/* ws_graph_ops.reclaim_name (session_memcg.c) */
void session_reclaim_name(void *ctx, uint32_t tid, uint32_t pid, uint64_t cg, struct ws_claim *c);

#endif
