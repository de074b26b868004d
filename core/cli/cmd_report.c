// SPDX-License-Identifier: MIT
/* whyslow report: a recording replayed through the analysis (cmd_trace.h). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* fopencookie */
#endif
#include <dirent.h>
#include <errno.h>
#include <glob.h>
#include <regex.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "cmd_trace.h"
#include "options.h"
#include "plugin_dir.h"
#include "access/outfile.h"
#include "base/log.h"
#include "base/util.h"
#include "base/when.h"
#include "record/stuck_rec.h"
#include "session/loader.h"
#include "session/resolution.h"
#include "report/xhost.h"

#ifndef WS_VERSION
#define WS_VERSION "unknown"
#endif

/* A stream that discards: report --format perfetto needs no text (and /dev/null may be closed to
 * us). */
static ssize_t discard(void *cookie, const char *buf, size_t len)
{
	(void)cookie;
	(void)buf;
	return len;
}

static FILE *null_stream(void)
{
	cookie_io_functions_t io = { .write = discard };

	return fopencookie(NULL, "w", io);
}

struct replay {
	const struct ws_cli *cli; /* the options: filters, format, [core] keys */
	const char *file, *plugin_dir;
	int verbose;
	enum ws_format format;
	FILE *out; /* the report's (text/json), or /dev/null for perfetto */
	struct ws_config cfg;
	struct ws_session *s;
	struct ws_perfetto *pf;
	regex_t *comms; /* --comm: each matches a whole name */
	int ncomms;
	regex_t *cgroups; /* --cgroup-match: each matches anywhere in a cgroup path */
	int ncgroups;
	uint64_t since_mono, until_mono; /* of the victim's wait start; until: exclusive */
	bool have_summary;
	struct ws_clock clock; /* the recording's anchor */
	uint64_t last_ts;      /* of the last event read */
	uint64_t ended_at;     /* where an unfinished recording's complete records end */
	bool ended_early;
	struct ws_stuck open; /* the waits still open when the recording ended */
	bool have_open;
	struct ws_xjoin *xj; /* several recordings: what each keeps for the join; NULL: one */
	int err;
};

static bool id_wanted(const struct ws_ids *ids, uint32_t id)
{
	bool ok = !ids->n;

	for (int i = 0; i < ids->n; i++)
		ok |= ids->v[i] == id;
	return ok;
}

/* --cgroup-match: the victim's cgroup as the wait began (ws_session_cgroup()) matches one */
static bool cgroup_wanted(const struct replay *r, uint32_t tid, uint32_t pid, uint64_t ts)
{
	const char *cg;

	if (!r->ncgroups)
		return true;
	if (!(cg = ws_session_cgroup(r->s, tid, pid, ts)))
		return false; /* not read: never said to be in a group */
	for (int i = 0; i < r->ncgroups; i++)
		if (!regexec(&r->cgroups[i], cg, 0, NULL, 0))
			return true;
	return false;
}

static bool victim_wanted(const struct replay *r, const struct ws_chain *c)
{
	uint32_t tid, pid;
	const char *comm;
	bool ok;

	if (c->victim) {
		tid = c->victim->tid;
		pid = c->victim->pid;
		comm = c->victim->comm;
	} else if (c->nlinks) {
		tid = c->links[0].tid;
		pid = c->links[0].pid;
		comm = c->links[0].comm ? c->links[0].comm : "";
	} else {
		return !r->cli->tids.n && !r->cli->pids.n && !r->ncomms && !r->ncgroups;
	}
	if (!id_wanted(&r->cli->tids, tid) || !id_wanted(&r->cli->pids, pid))
		return false;
	ok = !r->ncomms;
	for (int i = 0; i < r->ncomms; i++)
		ok |= !regexec(&r->comms[i], comm, 0, NULL, 0);
	if (!ok || !cgroup_wanted(r, tid, pid, c->start))
		return false;
	return (!r->cli->since.set || c->start >= r->since_mono) &&
	       (!r->cli->until.set || c->start < r->until_mono);
}

static bool report_sink(void *ctx, const struct ws_chain *c)
{
	struct replay *r = ctx;
	int err;

	if (r->xj) {
		/* the joined report lists its chains after every recording is read */
		if ((err = ws_xjoin_chain(r->xj, c, ws_session_describe, r->s)) && !r->err)
			r->err = err;
		return false;
	}
	if (!victim_wanted(r, c))
		return false;
	if (r->pf && (err = ws_perfetto_chain(r->pf, c)) && !r->err)
		r->err = err;
	return true;
}

static void join_request(void *ctx, const struct ws_request *q)
{
	struct replay *r = ctx;
	int err = ws_xjoin_request(r->xj, q);

	if (err && !r->err)
		r->err = err;
}

static void join_io(void *ctx, const struct ws_sock_io *io)
{
	struct replay *r = ctx;
	int err = ws_xjoin_io(r->xj, io);

	if (err && !r->err)
		r->err = err;
}

static void report_ival(void *ctx, const struct ws_thread *t, const struct ws_ival *iv,
			const struct ws_claim *claim)
{
	struct replay *r = ctx;
	int err = ws_perfetto_ival(r->pf, t, iv, claim);

	if (err && !r->err)
		r->err = err;
}

static void report_request(void *ctx, const struct ws_request *q)
{
	struct replay *r = ctx;
	int err = ws_perfetto_request(r->pf, q);

	if (err && !r->err)
		r->err = err;
}

/* Note plugins whose version differs from the recording's: their records are decoded by this one.
 */
static void check_versions(struct replay *r, const char *recorded)
{
	char now[WS_TRACE_STR], e[4 * WS_TRACE_STR];

	if (!recorded[0])
		return;
	ws_source_versions(r->plugin_dir, ws_session_sources(r->s), now, sizeof(now));
	if (strcmp(now, recorded))
		ws_log(WS_LOG_ERROR, "note: %s was recorded with sources %s; decoding with %s",
		       r->file, ws_text_esc(recorded, e, sizeof(e)), now);
}

/*
 * Periods shorter than the recording's resolution are not in it one by one: a
 * min_block below what that supports would report chains from missing pieces.
 */
static int check_resolution(struct replay *r, const struct ws_trace_meta *m)
{
	uint64_t min_block = 0, least = ws_resolution_min_block(m->resolution_ns);
	char res[32], need[32];

	ws_config_u64(&r->cfg, "core", ws_core_keys, "min_block", &min_block);
	if (min_block >= least)
		return 0;
	ws_format_duration(m->resolution_ns, res, sizeof(res));
	ws_format_duration(least, need, sizeof(need));
	ws_log(WS_LOG_ERROR,
	       "%s was recorded at resolution %s: use --min-block %s or more, or record again with a smaller [core] resolution",
	       r->file, res, need);
	return -EINVAL;
}

static int on_meta(void *ctx, const struct ws_trace_meta *m)
{
	struct replay *r = ctx;
	struct ws_session_opts so = { .plugin_dir = r->plugin_dir, .verbose = r->verbose };
	char v[32];
	int err;

	if (!m->sources[0]) {
		ws_log(WS_LOG_ERROR, "%s: the recording names no sources", r->file);
		return -EINVAL;
	}
	so.sources = m->sources;
	/* perfetto is drawn from the chains and timelines; the session's own report is text */
	ws_config_set(&r->cfg, "core", "format",
		      ws_format_name(r->format == WS_FORMAT_PERFETTO ? WS_FORMAT_TEXT : r->format));
	/* what the recording says first: the command line's [core] keys then override it */
	if (m->min_block_ns) {
		snprintf(v, sizeof(v), "%" PRIu64 "ns", m->min_block_ns);
		ws_config_set(&r->cfg, "core", "min_block", v);
	}
	if (m->max_window_ns) {
		snprintf(v, sizeof(v), "%" PRIu64 "ns", m->max_window_ns);
		ws_config_set(&r->cfg, "core", "max_window", v);
	}
	if (m->max_history) {
		snprintf(v, sizeof(v), "%" PRIu64, m->max_history);
		ws_config_set(&r->cfg, "core", "max_history", v);
	}
	for (int i = 0; i < r->cli->ncore; i++)
		ws_config_set(&r->cfg, "core", r->cli->core_key[i], r->cli->core_val[i]);
	if ((err = check_resolution(r, m)))
		return err;
	r->since_mono = ws_when_resolve(&r->cli->since.when, &m->clock);
	r->until_mono = ws_when_resolve(&r->cli->until.when, &m->clock);
	if (r->cli->since.set && r->cli->until.set && r->until_mono <= r->since_mono) {
		ws_log(WS_LOG_ERROR, "report: --until is not after --since in %s", r->file);
		return -EINVAL;
	}
	if ((err = ws_session_open(&r->s, &so, &r->cfg)))
		return err;
	if (r->verbose) {
		/* from the file: whoever made it chose these bytes */
		char e[5][4 * WS_TRACE_STR];

		ws_log(WS_LOG_ERROR, "%s: whyslow %s on %s (%s), sources %s, command: %s", r->file,
		       ws_text_esc(m->version, e[0], sizeof(e[0])),
		       ws_text_esc(m->hostname, e[1], sizeof(e[1])),
		       ws_text_esc(m->kernel, e[2], sizeof(e[2])),
		       ws_text_esc(m->versions, e[3], sizeof(e[3])),
		       ws_text_esc(m->command, e[4], sizeof(e[4])));
	}
	check_versions(r, m->versions);
	r->clock = m->clock;
	ws_session_set_replay(r->s, &m->clock);
	if (m->ncpus && (err = ws_session_set_ncpus(r->s, m->ncpus)))
		return err;
	for (int i = 0; i < m->npids; i++)
		if ((err = ws_session_trace_pid(r->s, m->pids[i])))
			return err;
	if ((err = ws_session_start(r->s, r->out))) {
		ws_log(WS_LOG_ERROR, "cannot start the analysis: %s", strerror(-err));
		return err;
	}
	/* what a link without a stack says: the recording's threshold, not --min-block */
	ws_session_set_stack_capture(r->s, m->has_stack_min  ? m->stack_min_ns
					   : m->min_block_ns ? m->min_block_ns
							     : UINT64_MAX);
	/* a recording of `run` follows its command's main thread, as the live run did */
	if (m->npids && strncmp(m->command, "attach", 6) &&
	    (err = ws_session_follow(r->s, m->pids[0])))
		return err;
	ws_session_set_chain_sink(r->s, report_sink, r);
	if (r->xj) {
		if ((err = ws_xjoin_add_host(r->xj, r->file, m->hostname, m->boot_id, &m->clock))) {
			ws_log(WS_LOG_ERROR, "report: at most %d recordings are joined",
			       WS_XHOST_MAX);
			return err;
		}
		ws_session_set_sock_io_sink(r->s, join_io, r);
		ws_session_set_request_sink(r->s, join_request, r);
	}
	if (r->pf) {
		ws_perfetto_set_stacks(r->pf, ws_session_stacks(r->s));
		ws_perfetto_set_cgroups(r->pf, ws_session_cgroup_of, r->s);
		ws_session_set_ival_sink(r->s, report_ival, r);
		ws_session_set_request_sink(r->s, report_request, r);
	}
	return 0;
}

static int on_name(void *ctx, const char *source, uint64_t key, const char *name)
{
	struct replay *r = ctx;

	/* written right after the record whose handling read it: the last one read */
	if (!strcmp(source, WS_CGROUP_NAMES))
		return ws_session_set_cgroup(r->s, key, name, r->last_ts);
	return ws_session_set_name(r->s, source, key, name);
}

static int on_thread(void *ctx, const struct ws_trace_thread *t)
{
	struct replay *r = ctx;

	return r->pf ? ws_perfetto_thread(r->pf, t->tid, t->pid, t->comm) : 0;
}

static int on_event(void *ctx, const struct ws_rec_hdr *rec)
{
	struct replay *r = ctx;

	if (rec->ts > r->last_ts)
		r->last_ts = rec->ts;
	ws_session_feed(r->s, rec);
	return r->err;
}

static int on_ended_early(void *ctx, uint64_t off)
{
	struct replay *r = ctx;

	r->ended_early = true;
	r->ended_at = off;
	return 0;
}

/* "whyslow.data: No such file": name an unfinished recording of that name, if one is there */
static void mention_unfinished(const char *file)
{
	char pattern[PATH_MAX + 16];
	glob_t g;

	snprintf(pattern, sizeof(pattern), "%s.tmp.*", file);
	if (glob(pattern, 0, NULL, &g))
		return;
	ws_log(WS_LOG_ERROR,
	       "an unfinished recording (killed?) is at %s; read what it holds with: whyslow report %s",
	       g.gl_pathv[g.gl_pathc - 1], g.gl_pathv[g.gl_pathc - 1]);
	globfree(&g);
}

static int on_summary(void *ctx, const struct ws_trace_summary *s, const char *lost_json)
{
	struct replay *r = ctx;
	struct ws_losses losses;

	/* a crafted recording's text is not copied into the summary: the losses by CPU go
	 * unnamed */
	if (ws_losses_parse(lost_json ? lost_json : "{}", &losses))
		memset(&losses, 0, sizeof(losses));
	ws_session_set_summary_counts(r->s, s->lost, s->lost_recursion, s->duration_ns, &losses);
	ws_losses_free(&losses);
	r->have_summary = true;
	return 0;
}

static int on_open_waits(void *ctx, const void *p, size_t len)
{
	struct replay *r = ctx;
	struct ws_open_sources src;
	int err;

	if (r->have_open) /* one per recording; a second is not the writer's */
		return -EBADMSG;
	err = ws_stuck_decode(p, len, &r->open);
	if (err == -EINVAL)
		return -EBADMSG;
	if (err) {
		ws_log(WS_LOG_ERROR, "%s: %s", r->file, strerror(-err));
		return err;
	}
	r->have_open = true;
	/* what /proc said is stored; the sources loaded now put it in words */
	if (r->s) {
		if ((err = ws_session_open_sources(r->s, &src)))
			return err; /* a source's init said why */
		ws_stuck_describe(&r->open, &src);
	}
	return 0;
}

/*
 * The recording's open waits, as the live run printed them: JSON before the
 * summary line, text after it. Sets *@deadlock when one was reported.
 */
static int report_end(struct replay *r, bool *deadlock)
{
	bool json = r->format == WS_FORMAT_JSON, show = json || r->format == WS_FORMAT_TEXT;
	const struct ws_stuck *shown = r->have_open ? &r->open : NULL;
	struct ws_stuck killed;
	uint64_t min_block = 0;
	int err = 0;

	memset(&killed, 0, sizeof(killed));
	ws_config_u64(&r->cfg, "core", ws_core_keys, "min_block", &min_block);
	if (r->have_open) {
		*deadlock = r->open.ncycles > 0;
		/* the critical path and the time off CPU count them, open, as the live run did */
		ws_session_set_open_waits(r->s, &r->open);
	}
	/* none open because a signal killed the program while it waited: as the live run did */
	if (!shown && show) {
		err = ws_session_drain(r->s);
		if (!err && !ws_session_killed_waits(r->s, &killed) && killed.n) {
			shown = &killed;
			*deadlock = killed.ncycles > 0;
		}
	}
	if (!err && shown && show && json) {
		err = ws_session_drain(r->s);
		if (!err)
			ws_stuck_print(r->out, shown, min_block, true, NULL);
	}
	if (!err)
		err = ws_session_finish(r->s);
	if (!err && shown && show && !json)
		ws_stuck_print(r->out, shown, min_block, false, ws_stuck_heading(shown));
	ws_stuck_free(&killed);
	return err;
}

/* --comm REGEX, anchored so that it matches a whole name ("worker" is not "worker2"). */
static int add_comm(struct replay *r, const char *re)
{
	char *whole = NULL;
	int err;

	if (asprintf(&whole, "^(%s)$", re) < 0)
		return -ENOMEM;
	err = regcomp(&r->comms[r->ncomms], whole, REG_EXTENDED | REG_NOSUB);
	free(whole);
	if (err) {
		char why[128];

		regerror(err, NULL, why, sizeof(why));
		ws_log(WS_LOG_ERROR, "report: --comm '%s' is not a regular expression (%s)", re,
		       why);
		return -EINVAL;
	}
	r->ncomms++;
	return 0;
}

/* --cgroup-match REGEX, as given: a path is matched anywhere in it ("backup" finds the unit). */
static int add_cgroup_match(struct replay *r, const char *re)
{
	int err = regcomp(&r->cgroups[r->ncgroups], re, REG_EXTENDED | REG_NOSUB);

	if (err) {
		char why[128];

		regerror(err, NULL, why, sizeof(why));
		ws_log(WS_LOG_ERROR, "report: --cgroup-match '%s' is not a regular expression (%s)",
		       re, why);
		return -EINVAL;
	}
	r->ncgroups++;
	return 0;
}

static void free_comms(struct replay *r)
{
	for (int i = 0; i < r->ncomms; i++)
		regfree(&r->comms[i]);
	free(r->comms);
	r->comms = NULL;
	r->ncomms = 0;
	for (int i = 0; i < r->ncgroups; i++)
		regfree(&r->cgroups[i]);
	free(r->cgroups);
	r->cgroups = NULL;
	r->ncgroups = 0;
}

/* The plugin directory, and each --comm and --cgroup-match compiled once. 0, or -EINVAL / -ENOMEM
 * (printed). */
static int replay_prepare(struct replay *r)
{
	int err = 0;

	r->plugin_dir = ws_plugin_dir_pick(r->plugin_dir);
	r->comms = calloc(r->cli->comms.n ? r->cli->comms.n : 1, sizeof(*r->comms));
	if (!r->comms)
		return -ENOMEM;
	for (int i = 0; i < r->cli->comms.n && !err; i++)
		err = add_comm(r, r->cli->comms.v[i]);
	r->cgroups = calloc(r->cli->cgroup_res.n ? r->cli->cgroup_res.n : 1, sizeof(*r->cgroups));
	if (!r->cgroups)
		return -ENOMEM;
	for (int i = 0; i < r->cli->cgroup_res.n && !err; i++)
		err = add_cgroup_match(r, r->cli->cgroup_res.v[i]);
	return err;
}

/* The recording ("-": standard input, as a pipe from zstdcat or ssh), or NULL (said, with a
 * hint where one may be). */
static FILE *open_recording(const char *file)
{
	FILE *in = strcmp(file, "-") ? fopen(file, "re") : fdopen(dup(STDIN_FILENO), "r");
	struct stat st;

	if (!in) {
		ws_log(WS_LOG_ERROR, "cannot read %s: %s%s", file, strerror(errno),
		       errno == ENOENT ? " (make one with: sudo whyslow record -- COMMAND)" : "");
		if (errno == ENOENT)
			mention_unfinished(file);
		return NULL;
	}
	if (fstat(fileno(in), &st) == 0 && S_ISDIR(st.st_mode)) {
		ws_log(WS_LOG_ERROR,
		       "%s is a directory: give a recording (whyslow.data by default)", file);
		fclose(in);
		return NULL;
	}
	setvbuf(in, NULL, _IOFBF, 1 << 18);
	return in;
}

/* Where the analysis writes: @out itself, or nowhere while a Perfetto trace is spooled. */
static int replay_output(struct replay *r, FILE *out)
{
	if (r->format != WS_FORMAT_PERFETTO) {
		r->out = out;
		return 0;
	}
	r->pf = ws_perfetto_new();
	r->out = null_stream();
	if (!r->pf || !r->out) {
		int e = errno;

		ws_log(WS_LOG_ERROR, "cannot spool the Perfetto trace: %s", strerror(e));
		return -e;
	}
	return 0;
}

/* Replay the recording through the analysis, and say how complete it was. */
static int replay_recording(struct replay *r, FILE *in)
{
	const struct ws_trace_ops ops = { .meta = on_meta,
					  .name = on_name,
					  .thread = on_thread,
					  .event = on_event,
					  .summary = on_summary,
					  .open_waits = on_open_waits,
					  .ended_early = on_ended_early };
	char err[512];
	int e;

	e = ws_trace_read(in, r->file, &ops, r, err, sizeof(err));
	if (e) {
		if (err[0])
			ws_log(WS_LOG_ERROR, "%s", err);
		else if (e == -ENOMEM || r->err)
			ws_log(WS_LOG_ERROR, "%s: analysis failed: %s", r->file,
			       strerror(-(r->err ? r->err : e)));
		return e;
	}
	if (r->ended_early) {
		char hms[32] = "the start";

		if (r->last_ts)
			ws_clock_hms(ws_clock_wall(&r->clock, r->last_ts), hms, sizeof(hms));
		ws_log(WS_LOG_INFO,
		       "%s: recording ends early at offset %" PRIu64 " (killed?); results up to %s",
		       r->file, r->ended_at, hms);
	} else if (!r->have_summary) {
		ws_log(WS_LOG_ERROR, "%s: no summary record; loss counts are unknown", r->file);
	}
	return 0;
}

/* The chains still open and the summary; for Perfetto, the timelines and the trace to @out. */
static int report_finish(struct replay *r, FILE *out, bool *deadlock)
{
	int e;

	if ((e = report_end(r, deadlock))) {
		ws_log(WS_LOG_ERROR, "%s: analysis failed: %s", r->file, strerror(-e));
		return e;
	}
	if (r->err) {
		ws_log(WS_LOG_ERROR, "%s: Perfetto export failed: %s", r->file, strerror(-r->err));
		return r->err;
	}
	if (r->pf)
		ws_session_flush_timelines(r->s);
	if (r->err) {
		ws_log(WS_LOG_ERROR, "%s: Perfetto export failed: %s", r->file, strerror(-r->err));
		return r->err;
	}
	if (r->pf && (e = ws_perfetto_write(r->pf, out, ws_session_clock(r->s)))) {
		ws_log(WS_LOG_ERROR, "cannot write the Perfetto trace: %s", strerror(-e));
		return e;
	}
	return 0;
}

/* One recording of several read into @xj: its chains and TCP calls kept, its own report discarded.
 */
static int join_one(const struct ws_cli *cli, const char *file, struct ws_xjoin *xj)
{
	struct replay r = { .cli = cli,
			    .file = file,
			    .plugin_dir = cli->plugin_dir,
			    .verbose = cli->verbose,
			    .format = WS_FORMAT_TEXT,
			    .xj = xj };
	bool deadlock = false;
	FILE *in;
	int err = -EINVAL;

	if (replay_prepare(&r)) {
		free_comms(&r);
		return -EINVAL;
	}
	in = open_recording(file);
	r.out = null_stream();
	if (in && r.out && !(err = replay_recording(&r, in)))
		err = report_end(&r, &deadlock);
	if (!r.out)
		ws_log(WS_LOG_ERROR, "report: %s", strerror(errno));
	if (r.out)
		fclose(r.out);
	if (in)
		fclose(in);
	ws_session_free(r.s);
	ws_config_free(&r.cfg);
	ws_stuck_free(&r.open);
	free_comms(&r);
	return err ? err : r.err;
}

/* report A.data B.data ...: one recording per host, their chains joined (report/xhost.h). */
static int report_joined(const struct ws_cli *cli)
{
	const char *output = cli->output && strcmp(cli->output, "-") ? cli->output : NULL;
	enum ws_format format = cli->format_set ? cli->format : WS_FORMAT_TEXT;
	struct ws_xjoin *xj;
	struct ws_outfile of;
	uint64_t top = 5;
	int rc = 1;

	if (format != WS_FORMAT_TEXT && format != WS_FORMAT_JSON) {
		ws_log(WS_LOG_ERROR,
		       "report of several recordings: --format text or json (%s takes one recording)",
		       ws_format_name(format));
		return 2;
	}
	if (cli->tids.n || cli->pids.n || cli->comms.n || cli->cgroup_res.n || cli->since.set ||
	    cli->until.set) {
		ws_log(WS_LOG_ERROR,
		       "report of several recordings: the filters (--tid, --pid, --comm, --cgroup-match, --since, --until) take one recording");
		return 2;
	}
	if (cli->more_files.n + 1 > WS_XHOST_MAX) {
		ws_log(WS_LOG_ERROR,
		       "report: %d recordings given; at most %d are joined (one per host)",
		       cli->more_files.n + 1, WS_XHOST_MAX);
		return 2;
	}
	for (int i = 0; i < cli->ncore; i++)
		if (!strcmp(cli->core_key[i], "top"))
			ws_parse_u64(cli->core_val[i], &top);
	xj = calloc(1, sizeof(*xj));
	if (!xj)
		return 1;
	if (join_one(cli, cli->file, xj))
		goto out;
	for (int i = 0; i < cli->more_files.n; i++)
		if (join_one(cli, cli->more_files.v[i], xj))
			goto out;
	if (ws_xjoin_match(xj)) {
		ws_log(WS_LOG_ERROR, "report: out of memory joining the recordings");
		goto out;
	}
	if (ws_outfile_open(&of, output))
		goto out;
	ws_xjoin_print(xj, of.f, format, (int)top);
	rc = ws_outfile_close(&of, true) ? 1 : 0;
out:
	ws_xjoin_free(xj);
	free(xj);
	return rc;
}

int ws_cmd_report(const struct ws_cli *cli)
{
	struct replay r = { .cli = cli,
			    .file = cli->file ? cli->file : "whyslow.data",
			    .plugin_dir = cli->plugin_dir,
			    .verbose = cli->verbose,
			    .format = cli->format_set ? cli->format : WS_FORMAT_TEXT };
	/* "-": stdout, which is the default */
	const char *output = cli->output && strcmp(cli->output, "-") ? cli->output : NULL;
	struct ws_outfile of;
	FILE *in, *out = stdout;
	bool deadlock = false;
	int rc = 1;

	if (cli->more_files.n)
		return report_joined(cli);
	if (replay_prepare(&r)) {
		free_comms(&r);
		return 2; /* a bad command line, as for the other commands' usage errors */
	}
	if (ws_format_binary(r.format) &&
	    ws_outfile_binary_to_terminal(output, ws_format_name(r.format))) {
		free_comms(&r);
		return 2;
	}
	in = open_recording(r.file);
	if (!in) {
		free_comms(&r);
		return 1;
	}
	/* stdout too: a closed one is said, not silently written to nowhere */
	if (ws_outfile_open(&of, output))
		goto out_in;
	out = of.f;
	if (!replay_output(&r, out) && !replay_recording(&r, in) &&
	    !report_finish(&r, out, &deadlock))
		rc = deadlock ? WS_EXIT_DEADLOCK : 0;
	if (ws_outfile_close(&of, rc != 1))
		rc = 1;
out_in:
	if (r.out && r.out != out)
		fclose(r.out);
	fclose(in);
	ws_perfetto_free(r.pf);
	ws_session_free(r.s);
	ws_config_free(&r.cfg);
	ws_stuck_free(&r.open);
	free_comms(&r);
	return rc;
}
