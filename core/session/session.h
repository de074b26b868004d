/* SPDX-License-Identifier: MIT */
/*
 * One tracing session: the loaded sources, the BPF side (one ring buffer and
 * the shared maps handed to every source's object), and the analysis they
 * feed (reorder -> sources' decoders -> graph -> chains -> report).
 */
#ifndef WS_SESSION_H
#define WS_SESSION_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "config.h"
#include "core_keys.h"
#include "loader.h"
#include "base/clock.h"
#include "hang/stuck.h"
#include "report/report.h"

#define WS_MAX_PLUGINS 32

struct ws_session_opts {
	const char *plugin_dir;
	const char *sources; /* comma-separated, NULL: every plugin found */
	int verbose;
};

struct ws_session;

/*
 * Load the plugins of @o from their directory and check @cfg against their
 * keys. 0 or -errno, having printed one line saying what is wrong.
 */
int ws_session_open(struct ws_session **out, const struct ws_session_opts *o,
		    struct ws_config *cfg);
/* Create the maps, load and attach every enabled source. 0 or -errno (printed). */
int ws_session_attach(struct ws_session *s);
/* Add a thread group to the filter. 0 or -errno. */
int ws_session_trace_pid(struct ws_session *s, uint32_t pid);
/* Start analysis and reporting to @out (text or json). 0 or -errno. */
int ws_session_start(struct ws_session *s, FILE *out);
/* Read the ring for up to @timeout_ms and analyse what is old enough. 0 or -errno. */
int ws_session_poll(struct ws_session *s, int timeout_ms);
/*
 * Take a thread group out of the kernel-side filter: one that exited before
 * the programs that notice exits were attached (or a zombie) would stay in it
 * for ever.
 */
void ws_session_untrace_pid(struct ws_session *s, uint32_t pid);
/*
 * Did writing the report fail mid-run (said once on stderr)? Tracing went on;
 * ws_session_finish() then fails on the report alone.
 */
bool ws_session_report_lost(const struct ws_session *s);
/* Are any traced processes still alive (per the kernel-side filter)? */
bool ws_session_any_traced(struct ws_session *s);
/* Live counts for the status line (status.c). */
struct ws_progress {
	uint64_t threads, records, lost, elapsed_ns;
};
void ws_session_progress(struct ws_session *s, struct ws_progress *p);
/* The thread groups traced now (the kernel-side filter); count written, at most @max. */
size_t ws_session_traced_pids(struct ws_session *s, uint32_t *out, size_t max);
/* Drain everything, detach, write the summary. 0 or -errno. */
int ws_session_finish(struct ws_session *s);
/*
 * The waits still open when tracing ended (@open, /proc's view; NULL: none known), for
 * ws_session_finish(): after the last record, each blocked thread's timeline ends in its wait
 * (the critical path and the time off CPU count it, open). @open must live until then.
 */
void ws_session_set_open_waits(struct ws_session *s, const struct ws_stuck *open);
/* The first half of finish: analyse everything still held. 0 or -errno. */
int ws_session_drain(struct ws_session *s);
/* What the run saw (valid after drain). */
void ws_session_summary(struct ws_session *s, struct ws_summary *sum);
/* Replay: the counts a recording carries, so report's summary matches the live one. */
/* 0 or -ENOMEM (the losses by CPU are then not named). */
int ws_session_set_summary_counts(struct ws_session *s, uint64_t lost, uint64_t lost_recursion,
				  uint64_t duration_ns, const struct ws_losses *losses);

/* Called with every record as it is analysed, in time order (record uses it). */
typedef void (*ws_tap_fn)(void *ctx, const struct ws_rec_hdr *rec);
void ws_session_set_tap(struct ws_session *s, ws_tap_fn fn, void *ctx);
/*
 * Called with every chain built, before it is reported (perfetto export,
 * report's victim filters). Return false to leave the chain out of the report.
 * @c and what it points to are valid only during the call.
 */
typedef bool (*ws_chain_sink_fn)(void *ctx, const struct ws_chain *c);
void ws_session_set_chain_sink(struct ws_session *s, ws_chain_sink_fn fn, void *ctx);
/*
 * Every interval of every traced thread's timeline, once each, as it leaves the history (for
 * a full timeline export). Call ws_session_flush_timelines() after ws_session_finish() to get
 * the rest; after that the sink is not called again.
 */
typedef void (*ws_ival_sink_fn)(void *ctx, const struct ws_thread *t, const struct ws_ival *iv,
				const struct ws_claim *claim);
/* After start: account thread @tid's whole life as the critical path of the run. 0 or -errno. */
int ws_session_follow(struct ws_session *s, uint32_t tid);
void ws_session_set_ival_sink(struct ws_session *s, ws_ival_sink_fn fn, void *ctx);
void ws_session_flush_timelines(struct ws_session *s);
/* Every request as it ends (report/requests.h: a Perfetto export); NULL: none. */
struct ws_request;
typedef void (*ws_request_sink_fn)(void *ctx, const struct ws_request *q);
void ws_session_set_request_sink(struct ws_session *s, ws_request_sink_fn fn, void *ctx);
/*
 * Every socket call a source handed in (ws_host.sock_io), client ends too: the join of several
 * hosts' recordings (report/xhost.h). @io is valid only during the call; NULL: none.
 */
struct ws_sock_io;
/* Claim @c in words, by its source ("futex 0x7f..."); @session is a struct ws_session. */
void ws_session_describe(void *session, const struct ws_claim *c, char *buf, size_t len);
typedef void (*ws_sock_io_sink_fn)(void *ctx, const struct ws_sock_io *io);
void ws_session_set_sock_io_sink(struct ws_session *s, ws_sock_io_sink_fn fn, void *ctx);
/* After start: every reported wait (report.h: ws_report_set_wait_sink); NULL: none. */
void ws_session_set_wait_sink(struct ws_session *s, const struct ws_wait_sink *sink);
/* Mark the session as a replay (before start): @clock is the recording's anchor. */
void ws_session_set_replay(struct ws_session *s, const struct ws_clock *clock);
const struct ws_clock *ws_session_clock(struct ws_session *s);
/*
 * Before start: the machine recorded had @ncpus CPUs (1 to WS_MAX_CPUS); records naming another
 * are refused and counted. Without it a replay allows WS_MAX_CPUS, a live run the machine's
 * possible CPUs. 0 or -EINVAL.
 */
int ws_session_set_ncpus(struct ws_session *s, uint32_t ncpus);
/* After start: the CPUs the analysis keeps state for. */
uint32_t ws_session_ncpus(const struct ws_session *s);
void ws_session_free(struct ws_session *s);

/*
 * Warn when a source of the core's own that every wait needs (the scheduler model) is not
 * enabled: the other sources alone see no wait, so no chain can be reported.
 */
void ws_session_warn_blind(struct ws_session *s);
/* Names of the enabled sources, "sched,futex,blkio". */
const char *ws_session_sources(struct ws_session *s);

/* Replay records through the analysis without BPF (tests, report). */
void ws_session_feed(struct ws_session *s, const struct ws_rec_hdr *rec);

/*
 * The sources' name tables (ws_host.name_set): a recording keeps them, a replay
 * starts from them. ws_session_set_name() ignores a source the session has not
 * loaded. 0 or -ENOMEM.
 */
struct ws_name {
	const char *plugin;
	uint64_t key;
	const char *name;
};
int ws_session_set_name(struct ws_session *s, const char *plugin, uint64_t key, const char *name);
/* How many names are set; they are numbered in the order they were first set. */
size_t ws_session_nnames(struct ws_session *s);
/* Names numbered @from on, at most @max; valid until the next name is set. */
size_t ws_session_names(struct ws_session *s, size_t from, struct ws_name *out, size_t max);

/*
 * Threads' cgroups (session_cgroups.c): the path of thread @tid of @pid in the hierarchy with
 * the cpu controller (v1), else the unified one (v2), at @ts as far as whyslow knows: the last
 * read by then (read at the first record naming the thread, when it was made, and when it took
 * a new name), or the first one read if @ts is earlier; NULL when not known (gone before it was
 * read; a recording made before format 1.9). UINT64_MAX: the last one read.
 */
const char *ws_session_cgroup(struct ws_session *s, uint32_t tid, uint32_t pid, uint64_t ts);
/* The same, for a callback's context (@s a struct ws_session): ws_perfetto_set_cgroups(). */
const char *ws_session_cgroup_of(void *s, uint32_t tid, uint32_t pid, uint64_t ts);
/* A recording's entries are NAME records of this source, keyed pid << 32 | tid. */
#define WS_CGROUP_NAMES "core.cgroup"
/*
 * One entry of a recording: thread @key's cgroup is @path as of @ts (the time of the last
 * event read before it: the record whose handling read it). 0 or -ENOMEM.
 */
int ws_session_set_cgroup(struct ws_session *s, uint64_t key, const char *path, uint64_t ts);
/* How many answers about threads' cgroups were read, numbered in that order. */
size_t ws_session_ncgroups(struct ws_session *s);
/* Answers @from on, as names of source WS_CGROUP_NAMES (@out's strings live with @s). */
size_t ws_session_cgroups(struct ws_session *s, size_t from, struct ws_name *out, size_t max);
/*
 * Forget the cgroups of the threads no record has named since @before (exited, or asleep that
 * long: one named again is read again), and of those whose read failed, so that a session that
 * runs for weeks (watch) keeps the threads of its window only. The answers are numbered anew:
 * not while a recording writes them @from a count. How many threads were forgotten; -ENOMEM
 * (nothing changed).
 */
long ws_session_cgroups_evict(struct ws_session *s, uint64_t before);

/* The stacks resolved so far (links and timeline slices look theirs up); NULL before start. */
struct ws_stacks;
const struct ws_stacks *ws_session_stacks(struct ws_session *s);
/* The waits @cfg has stacks captured for: at least this long (0: [core] stacks = false). */
uint64_t ws_stack_capture_ns(const struct ws_config *cfg);
/* After start, in a replay: the recording captured stacks for waits of at least @min_ns. */
void ws_session_set_stack_capture(struct ws_session *s, uint64_t min_ns);

/*
 * The session's sources as describers of open waits (stuck.c), valid while @s lives: their
 * init runs first if it has not. 0, or the -errno of a source's init (it said why).
 */
int ws_session_open_sources(struct ws_session *s, struct ws_open_sources *out);

/*
 * The waits of the traced threads that a fatal signal ended (killed.h), as a snapshot at the
 * kill, into @out (out->n 0: none). Call after the records are all read. 0 or -errno.
 */
int ws_session_killed_waits(struct ws_session *s, struct ws_stuck *out);

#endif
