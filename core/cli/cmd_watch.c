// SPDX-License-Identifier: MIT
/* `whyslow watch`: the flight recorder, its triggers and its dumps (see cmd_watch.h). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd_trace.h"
#include "cmd_watch.h"
#include "options.h"
#include "watch_cone.h"
#include "watch_pidfile.h"
#include "base/clock.h"
#include "base/log.h"
#include "base/util.h"
#include "engine/chain.h"
#include "engine/graph.h"
#include "hang/stuck.h"
#include "record/flight.h"
#include "record/spool.h"
#include "record/stuck_rec.h"
#include "record/trace.h"
#include "session/core_keys.h"

/*
 * After a trigger, how long before its dump is written: the chain is complete when the wait is
 * reported, and a second more of what followed it (the rest of its wakers' bursts) costs little.
 */
#define WATCH_GRACE_NS 1000000000ULL
/*
 * A dump's open waits: the threads of its processes that did not run between two samples of
 * /proc this far apart (as `record` ends with): a hang whose start left the window is still said
 */
#define WATCH_OPEN_GAP_NS 100000000ULL
/* How often the threads' cgroups no record in the window names are forgotten (weeks of churn) */
#define WATCH_CGROUPS_EVERY_NS 10000000000ULL

static volatile sig_atomic_t dump_requests;

static void on_usr1(int sig)
{
	(void)sig;
	dump_requests++;
}

struct trigger {
	uint64_t wait_ns;
	uint32_t tid, pid;
	char comm[16];
};

/*
 * The kernel's loss count, sampled: its losses are not dated, so a dump counts those since the
 * last sample before its window began (a little more than the window's, never fewer).
 */
#define LOSS_SAMPLES 1024
struct loss_sample {
	uint64_t ts, lost;
};

struct ws_watch {
	struct ws_watch_opts o;
	struct loss_sample losses[LOSS_SAMPLES];
	size_t nlosses;	     /* samples taken; the last LOSS_SAMPLES are kept, round */
	uint64_t loss_every; /* between two samples: the window spread over the samples */
	struct ws_flight *fl;
	struct ws_cone *cone; /* of the triggers waiting for their dump */
	struct ws_spool sp;
	struct ws_pidfile pf;
	struct ws_session *s;
	/* triggers waiting for their dump: how many, the longest, when it may be written */
	uint64_t pending, due;
	struct trigger longest;
	sig_atomic_t requests_seen;
	uint64_t last_dump;		   /* CLOCK_MONOTONIC of the last dump; 0: none yet */
	uint64_t last_cgroups;		   /* CLOCK_MONOTONIC of the last forgetting of cgroups */
	uint64_t dumps, triggers, skipped; /* skipped: dumps not written (space, errors) */
};

/* ---- options ------------------------------------------------------------------------------ */

int ws_watch_opts_from_config(const struct ws_config *cfg, struct ws_watch_opts *o)
{
	uint64_t keep_mb = 0, spool_mb = 0;

	/* the values were checked as the ini's (ws_core_keys' rows): these only read them */
	memset(o, 0, sizeof(*o));
	if (ws_config_u64(cfg, "core", ws_core_keys, "watch_keep", &o->keep_ns) ||
	    ws_config_u64(cfg, "core", ws_core_keys, "watch_keep_mb", &keep_mb) ||
	    ws_config_u64(cfg, "core", ws_core_keys, "watch_trigger", &o->trigger_ns) ||
	    ws_config_u64(cfg, "core", ws_core_keys, "watch_min_interval", &o->min_interval_ns) ||
	    ws_config_u64(cfg, "core", ws_core_keys, "watch_spool_mb", &spool_mb))
		return -EINVAL;
	o->keep_bytes = keep_mb << 20;
	o->spool_bytes = spool_mb << 20;
	o->spool_dir = ws_config_str(cfg, "core", ws_core_keys, "watch_spool");
	return 0;
}

/* ---- life ---------------------------------------------------------------------------------- */

int ws_watch_new(struct ws_watch **out, const struct ws_watch_opts *o)
{
	struct ws_watch *w = calloc(1, sizeof(*w));
	char why[256];
	int err;

	*out = NULL;
	if (!w)
		return -ENOMEM;
	w->o = *o;
	w->loss_every = o->keep_ns / (LOSS_SAMPLES / 2);
	if (w->loss_every < 1000000000ULL)
		w->loss_every = 1000000000ULL;
	w->sp.dirfd = -1;
	w->pf.dirfd = -1;
	/* from now on SIGUSR1 asks for a dump: it must not kill a watch that is starting */
	signal(SIGUSR1, on_usr1);
	/* another watch running is said first: a refused watch makes nothing */
	if ((err = ws_pidfile_claim(&w->pf, o->spool_dir)))
		goto fail;
	if ((err = ws_spool_open(&w->sp, o->spool_dir, o->spool_bytes, why, sizeof(why)))) {
		ws_log(WS_LOG_ERROR, "--spool %s: %s", o->spool_dir, why);
		goto fail;
	}
	if ((err = ws_flight_new(&w->fl, o->keep_ns, o->keep_bytes))) {
		ws_log(WS_LOG_ERROR, "--keep-mb: cannot keep %" PRIu64 " MB in memory: %s",
		       o->keep_bytes >> 20, strerror(-err));
		goto fail;
	}
	if ((err = ws_cone_new(&w->cone)))
		goto fail;
	*out = w;
	return 0;
fail:
	ws_watch_free(w);
	return err;
}

void ws_watch_free(struct ws_watch *w)
{
	if (!w)
		return;
	ws_pidfile_release(&w->pf);
	ws_spool_close(&w->sp);
	ws_flight_free(w->fl);
	ws_cone_free(w->cone);
	free(w);
}

/* ---- what is kept, and what triggers a dump ------------------------------------------------- */

static void tap(void *ctx, const struct ws_rec_hdr *rec)
{
	struct ws_watch *w = ctx;

	ws_flight_push(w->fl, rec);
}

static void on_wait(void *ctx, struct ws_graph *g, const struct ws_chain *c, bool ranked)
{
	struct ws_watch *w = ctx;
	/* a wait whose end was not seen (cut by the window, or open) has no length to compare */
	uint64_t now, dur = c->end > c->start && c->end != WS_NO_END ? c->end - c->start : 0;

	if (w->o.metrics)
		ws_metrics_wait_sink(w->o.metrics, g, c, ranked);
	/* an idle wait (a server waiting for work) is no one's slowness: it never triggers */
	if (!w->o.trigger_ns || !ranked || dur < w->o.trigger_ns || !c->victim)
		return;
	w->triggers++;
	if (!w->pending++) {
		now = ws_clock_mono_now();
		w->due = now + WATCH_GRACE_NS;
		/* at most one dump per --min-interval: the triggers until then join this one */
		if (w->last_dump && w->last_dump + w->o.min_interval_ns > w->due)
			w->due = w->last_dump + w->o.min_interval_ns;
		memset(&w->longest, 0, sizeof(w->longest));
		ws_cone_reset(w->cone);
	}
	/* its chain is complete now, and its threads' timelines still in the graph */
	ws_cone_add(w->cone, g, c);
	if (dur > w->longest.wait_ns) {
		w->longest.wait_ns = dur;
		w->longest.tid = c->victim->tid;
		w->longest.pid = c->victim->pid;
		snprintf(w->longest.comm, sizeof(w->longest.comm), "%s", c->victim->comm);
	}
}

static void on_short(void *ctx, struct ws_graph *g, const struct ws_thread *t, uint64_t ns)
{
	struct ws_watch *w = ctx;

	if (w->o.metrics)
		ws_metrics_short_sink(w->o.metrics, g, t, ns);
}

static void on_gone(void *ctx, const struct ws_thread *t)
{
	struct ws_watch *w = ctx;

	if (w->o.metrics)
		ws_metrics_gone(w->o.metrics, t);
}

int ws_watch_start(void *ctx, struct ws_session *s, const uint32_t *pids, int npids)
{
	struct ws_watch *w = ctx;
	/* only: its report is nobody's, and it would grow with every wait for as long as it runs */
	struct ws_wait_sink sink = {
		.wait = on_wait, .short_waits = on_short, .gone = on_gone, .ctx = w, .only = true
	};
	char keep[32], trig[32] = "";
	uint64_t min_block = 0;
	int err;

	(void)pids;
	w->s = s;
	ws_session_set_tap(s, tap, w);
	ws_session_set_wait_sink(s, &sink);
	/* said only now: a `whyslow dump` before this would find nothing to dump */
	if ((err = ws_pidfile_write(&w->pf))) {
		ws_session_set_tap(s, NULL, NULL);
		return err;
	}
	ws_config_u64(w->o.cfg, "core", ws_core_keys, "min_block", &min_block);
	if (w->o.trigger_ns && w->o.trigger_ns < min_block) {
		ws_format_duration(min_block, keep, sizeof(keep));
		ws_log(WS_LOG_WARN,
		       "--trigger is below --min-block %s: shorter waits are not reported, so only those of %s or more trigger",
		       keep, keep);
	}
	ws_format_duration(w->o.keep_ns, keep, sizeof(keep));
	if (w->o.trigger_ns)
		ws_format_duration(w->o.trigger_ns, trig, sizeof(trig));
	ws_log(WS_LOG_INFO,
	       "watching %s (%d %s): the last %s (at most %" PRIu64
	       " MB) kept; dumps to %s on SIGUSR1 or `whyslow dump`%s%s",
	       w->o.what, npids, ws_plural(npids, "process", "processes"), keep,
	       w->o.keep_bytes >> 20, w->o.spool_dir, *trig ? " and when a wait reaches " : "",
	       trig);
	return 0;
}

static void sample_losses(struct ws_watch *w, struct ws_session *s)
{
	uint64_t now = ws_clock_mono_now();
	struct loss_sample *last = w->nlosses ? &w->losses[(w->nlosses - 1) % LOSS_SAMPLES] : NULL;
	struct ws_progress p;

	if (last && now - last->ts < w->loss_every)
		return;
	ws_session_progress(s, &p);
	w->losses[w->nlosses++ % LOSS_SAMPLES] = (struct loss_sample){ now, p.lost };
}

/* Lost since the last sample taken at or before @from (since the start when there is none). */
static uint64_t lost_since(const struct ws_watch *w, uint64_t from, uint64_t now_lost)
{
	size_t first = w->nlosses > LOSS_SAMPLES ? w->nlosses - LOSS_SAMPLES : 0;
	uint64_t base = 0;

	for (size_t i = first; i < w->nlosses; i++) {
		const struct loss_sample *x = &w->losses[i % LOSS_SAMPLES];

		if (x->ts > from)
			break;
		base = x->lost;
	}
	return now_lost > base ? now_lost - base : 0;
}

/* ---- the dump ------------------------------------------------------------------------------ */

struct dump_ctx {
	struct ws_trace_writer tw;
	/* the open waits written: how many threads sampled, or why none (NULL: written) */
	size_t open_waits;
	const char *open_why;
	const struct ws_cone *cone; /* NULL: the whole window */
	uint64_t records;	    /* written */
};

static int write_event(void *ctx, const struct ws_rec_hdr *rec)
{
	struct dump_ctx *d = ctx;

	if (d->cone && !ws_cone_keeps(d->cone, rec))
		return 0;
	d->records++;
	return ws_trace_write_event(&d->tw, rec);
}

static int cone_near(void *ctx, const struct ws_rec_hdr *rec)
{
	ws_cone_near(ctx, rec);
	return 0;
}

static void write_names(struct ws_trace_writer *tw, struct ws_session *s)
{
	struct ws_name names[16];
	size_t n, from = 0;

	while ((n = ws_session_names(s, from, names, ARRAY_SIZE(names)))) {
		for (size_t i = 0; i < n; i++)
			ws_trace_write_name(tw, names[i].plugin, names[i].key, names[i].name);
		from += n;
	}
	/* the threads' cgroups as read so far (as `record` writes them): a dump read on another
	 * machine names them from no file of its own */
	for (from = 0; (n = ws_session_cgroups(s, from, names, ARRAY_SIZE(names))); from += n)
		for (size_t i = 0; i < n; i++)
			ws_trace_write_name(tw, names[i].plugin, names[i].key, names[i].name);
}

/*
 * The waits of @pids open now, as `record` ends with them: `report` of the dump prints them
 * ("still waiting"), and a thread blocked since before the window began is in it all the same.
 * Two samples of /proc: the watch reads no ring meanwhile (its buffers hold that long).
 */
static void write_open_waits(struct ws_session *s, struct dump_ctx *d, const uint32_t *pids,
			     size_t npids)
{
	struct ws_open_sources src;
	struct ws_stuck st;
	size_t len;
	void *buf;
	int err;

	memset(&st, 0, sizeof(st));
	d->open_why = "no process left";
	if (!npids || ws_session_open_sources(s, &src))
		return;
	if ((err = ws_stuck_take_flags(&st, pids, (int)npids, WATCH_OPEN_GAP_NS, NULL, &src, 0))) {
		d->open_why = err == -ESRCH ? "no process left" : strerror(-err);
		return;
	}
	if ((err = ws_stuck_encode(&st, &buf, &len))) {
		d->open_why =
			err == -E2BIG ? "too many blocked threads for one record" : strerror(-err);
	} else {
		ws_trace_write_rec(&d->tw, WS_TR_OPEN_WAITS, buf, len);
		free(buf);
		d->open_why = NULL;
		d->open_waits = st.n;
	}
	ws_stuck_free(&st);
}

/*
 * What a cone dump kept: its start, the threads of its chains, the processes it kept whole (theirs
 * and their wakers'), its records; null for a dump of the whole window.
 */
static void write_cone_json(FILE *f, const struct dump_ctx *d)
{
	size_t max = WS_CONE_MAX_THREADS + WS_CONE_MAX_NEAR, n;
	uint32_t *tids;

	if (!d->cone) {
		fputs(",\"cone\":null", f);
		return;
	}
	/* without memory for the lists: their lengths alone */
	tids = malloc(max * sizeof(*tids));
	if (!tids)
		max = 0;
	n = ws_cone_threads(d->cone, tids, max);
	fprintf(f, ",\"cone\":{\"from_ns\":%" PRIu64 ",\"threads\":[", ws_cone_from(d->cone));
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%s%u", i ? "," : "", tids[i]);
	n = ws_cone_pids(d->cone, tids, max);
	fputs("],\"processes\":[", f);
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%s%u", i ? "," : "", tids[i]);
	fprintf(f, "],\"nthreads\":%zu,\"nprocesses\":%zu,\"records\":%" PRIu64 "}",
		ws_cone_nthreads(d->cone), ws_cone_npids(d->cone), d->records);
	free(tids);
}

/* The dump's own account, for people and tools: NAME.data.json beside it. */
static int write_sidecar(struct ws_watch *w, const char *name, const char *why,
			 const struct ws_flight_stats *st, const struct dump_ctx *d, uint64_t lost)
{
	struct ws_spool_file sf;
	char side[300];
	/* a cone's threads and processes, 11 bytes each at most */
	size_t more = d->cone ? 11 * (ws_cone_nthreads(d->cone) + ws_cone_npids(d->cone)) : 0;
	int err = ws_spool_begin(&w->sp, 4096 + more, &sf);

	if (err)
		return err;
	fprintf(sf.f,
		"{\"dump\":\"%s\",\"reason\":\"%s\",\"triggers\":%" PRIu64
		",\"trigger_ns\":%" PRIu64 ",\"min_interval_ns\":%" PRIu64,
		name, why, w->pending, w->o.trigger_ns, w->o.min_interval_ns);
	if (w->pending) {
		fprintf(sf.f, ",\"longest\":{\"tid\":%u,\"pid\":%u,\"comm\":", w->longest.tid,
			w->longest.pid);
		ws_json_str(sf.f, w->longest.comm);
		fprintf(sf.f, ",\"wait_ns\":%" PRIu64 "}", w->longest.wait_ns);
	}
	write_cone_json(sf.f, d);
	if (d->open_why) {
		fputs(",\"open_waits_sampled\":null,\"open_waits_missing\":", sf.f);
		ws_json_str(sf.f, d->open_why);
	} else {
		fprintf(sf.f, ",\"open_waits_sampled\":%zu", d->open_waits);
	}
	fprintf(sf.f,
		",\"window\":{\"from_ns\":%" PRIu64 ",\"to_ns\":%" PRIu64 ",\"keep_ns\":%" PRIu64
		",\"keep_bytes\":%" PRIu64 ",\"bytes\":%" PRIu64 "},\"records\":%" PRIu64
		",\"dropped\":{\"older_than_keep\":%" PRIu64 ",\"for_room\":%" PRIu64
		",\"too_big\":%" PRIu64 "},\"kernel_lost\":%" PRIu64 ",\"dumps_before\":%" PRIu64
		",\"dumps_skipped\":%" PRIu64 "}\n",
		st->oldest_ts, st->newest_ts, w->o.keep_ns, w->o.keep_bytes, st->bytes, st->records,
		st->aged, st->evicted, st->too_big, lost, w->dumps, w->skipped);
	snprintf(side, sizeof(side), "%s%s", name, WS_SPOOL_SIDECAR);
	return ws_spool_commit(&w->sp, &sf, side);
}

/* The command field of the dump's metadata: what it is, said to whoever reads the report. */
static void dump_command(struct ws_watch *w, const char *why, const struct ws_flight_stats *st,
			 const struct ws_cone *cone, uint64_t from, char *buf, size_t len)
{
	char span[32], longest[32];
	size_t n;

	ws_format_duration(st->newest_ts - from, span, sizeof(span));
	if (cone)
		n = snprintf(
			buf, len,
			"watch %s: dump on %s, the causal cone of its chains (%zu %s) over the last %s",
			w->o.what, why, ws_cone_nthreads(cone),
			ws_plural(ws_cone_nthreads(cone), "thread", "threads"), span);
	else
		n = snprintf(buf, len, "watch %s: dump on %s, the last %s", w->o.what, why, span);
	if (w->pending && n < len) {
		ws_format_duration(w->longest.wait_ns, longest, sizeof(longest));
		n += snprintf(buf + n, len - n, "; %" PRIu64 " %s, the longest %s (tid %u)",
			      w->pending, ws_plural(w->pending, "trigger", "triggers"), longest,
			      w->longest.tid);
	}
	if (st->evicted && n < len)
		snprintf(buf + n, len - n, "; %" PRIu64 " older records dropped for --keep-mb",
			 st->evicted);
}

static int write_dump(struct ws_watch *w, struct ws_session *s, const char *why,
		      struct ws_cone *cone, char *name, size_t namelen)
{
	struct ws_trace_meta *m = calloc(1, sizeof(*m));
	struct ws_trace_summary sum = { 0 };
	struct ws_flight_stats st;
	struct ws_progress p;
	struct ws_spool_file sf;
	struct dump_ctx d = { .cone = cone };
	uint64_t from;
	uint32_t *pids = calloc(WS_TRACE_MAX_PIDS, sizeof(*pids));
	size_t npids;
	bool side_written = false;
	int err;

	if (!m || !pids) {
		free(m);
		free(pids);
		return -ENOMEM;
	}
	ws_flight_stats(w->fl, &st);
	ws_session_progress(s, &p);
	from = st.oldest_ts;
	if (cone) {
		/* first the processes of the threads that woke the cone's: kept whole too */
		ws_flight_each(w->fl, cone_near, cone);
		/* grown past its bounds: the whole window, its sidecar says no cone */
		if (!ws_cone_usable(cone))
			d.cone = cone = NULL;
		else if (ws_cone_from(cone) > from)
			from = ws_cone_from(cone);
	}
	/* the records as they are held: compressed, the file is smaller still */
	if ((err = ws_spool_begin(&w->sp, st.bytes, &sf)))
		goto out;
	ws_spool_name(&w->sp, name, namelen);
	setvbuf(sf.f, NULL, _IOFBF, 1 << 18);
	/* a cone's processes are its traced ones: a thread of another is not followed */
	npids = cone ? ws_cone_pids(cone, pids, WS_TRACE_MAX_PIDS)
		     : ws_session_traced_pids(s, pids, WS_TRACE_MAX_PIDS);
	ws_trace_meta_fill(m, s, w->o.cfg, w->o.plugin_dir, pids, (int)npids);
	dump_command(w, why, &st, cone, from, m->command, sizeof(m->command));
	ws_trace_write_begin(&d.tw, sf.f, WS_TRACE_ZSTD);
	ws_trace_write_meta(&d.tw, m);
	write_names(&d.tw, s);
	/* the names the threads have now, from the window's start (a later rename is a record) */
	for (size_t i = 0; i < npids; i++)
		ws_trace_write_threads(&d.tw, pids[i], from);
	ws_flight_each(w->fl, write_event, &d);
	write_open_waits(s, &d, pids, npids);
	sum.records = d.records;
	sum.lost = lost_since(w, from, p.lost);
	sum.duration_ns = st.newest_ts - from;
	ws_trace_write_summary(&d.tw, &sum, NULL);
	if ((err = ws_trace_write_end(&d.tw))) {
		ws_spool_abort(&w->sp, &sf);
		goto out;
	}
	if (!(err = write_sidecar(w, name, why, &st, &d, sum.lost)))
		side_written = true;
	else
		ws_log(WS_LOG_ERROR, "the account of dump %s (%s%s) not written: %s", name, name,
		       WS_SPOOL_SIDECAR, strerror(-err));
	if ((err = ws_spool_commit(&w->sp, &sf, name)) && side_written) {
		/* no account of a dump that is not there */
		char side[300];

		snprintf(side, sizeof(side), "%s%s", name, WS_SPOOL_SIDECAR);
		unlinkat(w->sp.dirfd, side, 0);
	}
out:
	free(m);
	free(pids);
	return err;
}

static void dump(struct ws_watch *w, struct ws_session *s, const char *why)
{
	struct ws_flight_stats st;
	struct ws_cone *cone;
	char name[128];
	int err, removed, own;

	ws_flight_stats(w->fl, &st);
	if (!st.records) {
		ws_log(WS_LOG_INFO, "dump on %s: nothing recorded yet, no dump written", why);
		w->skipped++;
		w->pending = 0; /* or asked again at every tick */
		return;
	}
	/* a trigger's dump keeps its chains' cone; one asked for keeps everything */
	cone = w->pending && !strcmp(why, "trigger") && ws_cone_usable(w->cone) ? w->cone : NULL;
	err = write_dump(w, s, why, cone, name, sizeof(name));
	w->last_dump = ws_clock_mono_now();
	if (err) {
		w->skipped++;
		if (err == -ENOSPC)
			ws_log(WS_LOG_ERROR,
			       "dump on %s not written: %s would have less than 5%% of its file system free",
			       why, w->o.spool_dir);
		else
			ws_log(WS_LOG_ERROR, "dump on %s not written to %s: %s", why,
			       w->o.spool_dir, strerror(-err));
		w->pending = 0;
		return;
	}
	w->dumps++;
	if (w->pending)
		ws_log(WS_LOG_INFO,
		       "dump on %s (%" PRIu64 " %s): %s/%s; read it with whyslow report", why,
		       w->pending, ws_plural(w->pending, "trigger", "triggers"), w->o.spool_dir,
		       name);
	else
		ws_log(WS_LOG_INFO, "dump on %s: %s/%s; read it with whyslow report", why,
		       w->o.spool_dir, name);
	w->pending = 0;
	removed = ws_spool_trim(&w->sp, name);
	if (removed < 0)
		return;
	own = faccessat(w->sp.dirfd, name, F_OK, 0) != 0;
	if (removed - own > 0)
		ws_log(WS_LOG_INFO, "--spool-mb: %d older %s removed", removed - own,
		       ws_plural(removed - own, "dump", "dumps"));
	if (own)
		ws_log(WS_LOG_ERROR, "dump %s alone exceeds --spool-mb %" PRIu64 ": removed", name,
		       w->o.spool_bytes >> 20);
}

/*
 * The cgroups of the threads no record held names any more: a dump names the threads of its
 * window only, and a watch that runs for weeks would keep one per thread ever seen.
 */
static void forget_cgroups(struct ws_watch *w, struct ws_session *s)
{
	uint64_t now = ws_clock_mono_now();
	struct ws_flight_stats st;

	if (now - w->last_cgroups < WATCH_CGROUPS_EVERY_NS)
		return;
	w->last_cgroups = now;
	ws_flight_stats(w->fl, &st);
	if (st.records)
		ws_session_cgroups_evict(s, st.oldest_ts);
}

void ws_watch_tick(void *ctx, struct ws_session *s)
{
	struct ws_watch *w = ctx;
	sig_atomic_t req = dump_requests;

	sample_losses(w, s);
	forget_cgroups(w, s);

	if (req != w->requests_seen) {
		/* asked for: at once, and it stands for the triggers waiting too */
		w->requests_seen = req;
		dump(w, s, "request");
		return;
	}
	if (w->pending && ws_clock_mono_now() >= w->due)
		dump(w, s, "trigger");
}

int ws_watch_finish(void *ctx, struct ws_session *s, bool complete)
{
	struct ws_watch *w = ctx;

	ws_session_set_tap(s, NULL, NULL);
	/* the waits the end reported (or whose dump was not due yet) are not left undumped */
	if (w->pending && complete)
		dump(w, s, "trigger");
	ws_log(WS_LOG_INFO, "watch ends: %" PRIu64 " %s written, %" PRIu64 " %s seen", w->dumps,
	       ws_plural(w->dumps, "dump", "dumps"), w->triggers,
	       ws_plural(w->triggers, "trigger", "triggers"));
	ws_pidfile_release(&w->pf);
	return 0;
}
