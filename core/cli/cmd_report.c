// SPDX-License-Identifier: MIT
/* whyslow report: a recording replayed through the analysis (cmd_trace.h). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* fopencookie */
#endif
#include <dirent.h>
#include <errno.h>
#include <glob.h>
#include <regex.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "cmd_trace.h"
#include "access/outfile.h"
#include "base/log.h"
#include "base/util.h"
#include "base/when.h"
#include "record/stuck_rec.h"
#include "session/loader.h"
#include "session/resolution.h"

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

#define MAX_FILTER 64

enum {
	OUT_TEXT,
	OUT_JSON,
	OUT_FOLDED,
	OUT_PERFETTO
};

struct replay {
	const char *file, *plugin_dir, *min_block, *top, *stack_depth;
	int verbose, format;
	FILE *out; /* the report's (text/json), or /dev/null for perfetto */
	struct ws_config cfg;
	struct ws_session *s;
	struct ws_perfetto *pf;
	uint32_t tids[MAX_FILTER], pids[MAX_FILTER];
	regex_t comms[MAX_FILTER]; /* --comm: each matches a whole name */
	int ntids, npids, ncomms;
	bool include_idle;
	struct ws_when since, until; /* --since/--until, placed on the recording's clock */
	bool has_since, has_until;
	uint64_t since_mono, until_mono; /* of the victim's wait start; until: exclusive */
	bool have_summary;
	struct ws_clock clock; /* the recording's anchor */
	uint64_t last_ts;      /* of the last event read */
	uint64_t ended_at;     /* where an unfinished recording's complete records end */
	bool ended_early;
	struct ws_stuck open; /* the waits still open when the recording ended */
	bool have_open;
	int err;
};

static const char report_usage[] =
	"Usage: whyslow report [FILE] [options]\n"
	"\n"
	"Analyses a recording made by `whyslow record` (default FILE: whyslow.data) and prints\n"
	"the same chains the live run would have. Needs neither root nor BPF.\n"
	"\n"
	"Options:\n"
	"      --format FMT       text (default), json (JSON Lines), folded (flame graph stacks)\n"
	"                         or perfetto (trace-event JSON for ui.perfetto.dev)\n"
	"  -o, --output FILE      write to FILE (complete, or not at all) instead of stdout\n"
	"      --min-block DUR    report waits at least this long (default: the recording's)\n"
	"      --top N            text: show the N longest chains (default 5)\n"
	"      --stack-depth N    text: user frames shown per link (default 3; 0: none)\n"
	"      --tid N            only chains whose victim is thread N (repeatable)\n"
	"      --pid N            only chains whose victim is in process N (repeatable)\n"
	"      --comm REGEX       only chains whose victim's whole name matches REGEX (POSIX\n"
	"                         extended; a plain name matches itself; repeatable)\n"
	"      --since WHEN       only waits that began at WHEN or later: a time as the text\n"
	"                         report prints it (14:32:07.001) or a duration from the start (2s)\n"
	"      --until WHEN       only waits that began before WHEN (same forms)\n"
	"      --include-idle     rank idle waits too (epoll_wait, accept... that nobody was\n"
	"                         working to end); by default they are only counted\n"
	"      --plugin-dir DIR   load source plugins from DIR (env WHYSLOW_PLUGIN_DIR)\n"
	"  -v, --verbose          more detail\n"
	"\n"
	"Examples:\n"
	"  sudo whyslow record -o app.data -- ./app\n"
	"  whyslow report app.data\n"
	"  whyslow report app.data --format json --comm 'worker-[0-9]+'\n"
	"  whyslow report app.data --since 14:32:07 --until 14:32:09.500\n"
	"  whyslow report app.data --since 2s --pid 1234 --min-block 50ms\n"
	"  whyslow report app.data --format perfetto -o app.json   # open in ui.perfetto.dev\n";

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
		return !r->ntids && !r->npids && !r->ncomms;
	}
	ok = !r->ntids;
	for (int i = 0; i < r->ntids; i++)
		ok |= r->tids[i] == tid;
	if (!ok)
		return false;
	ok = !r->npids;
	for (int i = 0; i < r->npids; i++)
		ok |= r->pids[i] == pid;
	if (!ok)
		return false;
	ok = !r->ncomms;
	for (int i = 0; i < r->ncomms; i++)
		ok |= !regexec(&r->comms[i], comm, 0, NULL, 0);
	if (!ok)
		return false;
	return (!r->has_since || c->start >= r->since_mono) &&
	       (!r->has_until || c->start < r->until_mono);
}

static bool report_sink(void *ctx, const struct ws_chain *c)
{
	struct replay *r = ctx;
	int err;

	if (!victim_wanted(r, c))
		return false;
	if (r->pf && (err = ws_perfetto_chain(r->pf, c)) && !r->err)
		r->err = err;
	return true;
}

static void report_ival(void *ctx, const struct ws_thread *t, const struct ws_ival *iv,
			const struct ws_claim *claim)
{
	struct replay *r = ctx;
	int err = ws_perfetto_ival(r->pf, t, iv, claim);

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
	ws_config_set(&r->cfg, "core", "format",
		      r->format == OUT_JSON	? "json"
		      : r->format == OUT_FOLDED ? "folded"
						: "text");
	if (r->min_block) {
		ws_config_set(&r->cfg, "core", "min_block", r->min_block);
	} else if (m->min_block_ns) {
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
	if (r->top)
		ws_config_set(&r->cfg, "core", "top", r->top);
	if ((err = check_resolution(r, m)))
		return err;
	if (r->stack_depth)
		ws_config_set(&r->cfg, "core", "stack_depth", r->stack_depth);
	if (r->include_idle)
		ws_config_set(&r->cfg, "core", "include_idle", "true");
	r->since_mono = ws_when_resolve(&r->since, &m->clock);
	r->until_mono = ws_when_resolve(&r->until, &m->clock);
	if (r->has_since && r->has_until && r->until_mono <= r->since_mono) {
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
	if (r->pf) {
		ws_perfetto_set_stacks(r->pf, ws_session_stacks(r->s));
		ws_session_set_ival_sink(r->s, report_ival, r);
	}
	return 0;
}

static int on_name(void *ctx, const char *source, uint64_t key, const char *name)
{
	struct replay *r = ctx;

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

	/* a crafted recording's text is not copied into the summary: the losses by CPU go unnamed */
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
	bool json = r->format == OUT_JSON, show = json || r->format == OUT_TEXT;
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

static int add_u32(uint32_t *arr, int *n, const char *opt, const char *v)
{
	uint64_t x;

	if (*n == MAX_FILTER || ws_parse_u64(v, &x) || !x || x > UINT32_MAX) {
		ws_log(WS_LOG_ERROR, "%s: '%s' is not a thread or process id (or too many)", opt,
		       v);
		return -EINVAL;
	}
	arr[(*n)++] = x;
	return 0;
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

/* @argv[0] is "report"; getopt_long's conventions, as for the other commands (main.c). */
static int report_parse(struct replay *r, const char **output, int argc, char **argv)
{
	enum {
		O_FORMAT = 256,
		O_MIN_BLOCK,
		O_TOP,
		O_STACK_DEPTH,
		O_TID,
		O_PID,
		O_COMM,
		O_PLUGIN_DIR,
		O_SINCE,
		O_UNTIL,
		O_INCLUDE_IDLE
	};
	static const struct option opts[] = {
		{ "format", required_argument, NULL, O_FORMAT },
		{ "output", required_argument, NULL, 'o' },
		{ "min-block", required_argument, NULL, O_MIN_BLOCK },
		{ "top", required_argument, NULL, O_TOP },
		{ "stack-depth", required_argument, NULL, O_STACK_DEPTH },
		{ "tid", required_argument, NULL, O_TID },
		{ "pid", required_argument, NULL, O_PID },
		{ "comm", required_argument, NULL, O_COMM },
		{ "plugin-dir", required_argument, NULL, O_PLUGIN_DIR },
		{ "since", required_argument, NULL, O_SINCE },
		{ "until", required_argument, NULL, O_UNTIL },
		{ "include-idle", no_argument, NULL, O_INCLUDE_IDLE },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int id, li;

	optind = 0; /* main() ran getopt already: start afresh */
	opterr = 0;
	while ((li = -1, id = getopt_long(argc, argv, "o:p:vh", opts, &li)) != -1) {
		const char *a = argv[optind - 1], *v = optarg;
		size_t n = strcspn(a, "=");
		uint64_t x;
		int err = 0;

		switch (id) {
		case '?':
			if (optopt == 'o' || optopt == 'p' || (optopt >= 256 && !strchr(a, '=')))
				ws_log(WS_LOG_ERROR,
				       "report: %.*s needs a value; see whyslow report --help",
				       (int)n, a);
			else
				ws_log(WS_LOG_ERROR,
				       "report: unknown option '%s'; see whyslow report --help",
				       optopt && optopt < 256 ? (char[]){ '-', (char)optopt, 0 }
							      : a);
			return -EINVAL;
		case 'h':
			fputs(report_usage, stdout);
			exit(0);
		case 'v':
			r->verbose++;
			break;
		case O_FORMAT:
			if (!strcmp(v, "text"))
				r->format = OUT_TEXT;
			else if (!strcmp(v, "json"))
				r->format = OUT_JSON;
			else if (!strcmp(v, "folded"))
				r->format = OUT_FOLDED;
			else if (!strcmp(v, "perfetto"))
				r->format = OUT_PERFETTO;
			else
				err = -EINVAL;
			break;
		case 'o':
			/* "-": stdout, which is the default */
			*output = strcmp(v, "-") ? v : NULL;
			break;
		case O_MIN_BLOCK:
			r->min_block = v;
			err = ws_parse_duration(v, &x);
			if (!err && strcmp(v, "0") &&
			    !(v[strlen(v) - 1] >= 'a' && v[strlen(v) - 1] <= 'z')) {
				ws_log(WS_LOG_ERROR,
				       "report: --min-block %s: give the unit (ns, us, ms, s or m), e.g. 10ms",
				       v);
				return -EINVAL;
			}
			break;
		case O_STACK_DEPTH:
			r->stack_depth = v;
			break;
		case O_TOP:
			r->top = v;
			err = ws_parse_u64(v, &x) || !x ? -EINVAL : 0;
			break;
		case O_TID:
			if (add_u32(r->tids, &r->ntids, "--tid", v))
				return -EINVAL;
			break;
		case 'p':
		case O_PID:
			if (add_u32(r->pids, &r->npids, "--pid", v))
				return -EINVAL;
			break;
		case O_COMM:
			if (r->ncomms == MAX_FILTER)
				err = -E2BIG;
			else if (add_comm(r, v))
				return -EINVAL;
			break;
		case O_SINCE:
		case O_UNTIL:
			if (ws_when_parse(v, id == O_SINCE ? &r->since : &r->until)) {
				ws_log(WS_LOG_ERROR,
				       "report: --%s %s: give a time as the report prints it (14:32:07.001) or a duration from the start with its unit (2s)",
				       opts[li].name, v);
				return -EINVAL;
			}
			*(id == O_SINCE ? &r->has_since : &r->has_until) = true;
			break;
		case O_INCLUDE_IDLE:
			r->include_idle = true;
			break;
		case O_PLUGIN_DIR:
			r->plugin_dir = v;
			break;
		}
		if (err) {
			ws_log(WS_LOG_ERROR,
			       "report: %s%s: '%s' is not valid; see whyslow report --help",
			       li >= 0 ? "--" : "-",
			       li >= 0 ? opts[li].name : (char[]){ (char)id, 0 }, v);
			return err;
		}
	}
	for (; optind < argc; optind++) {
		if (strcmp(r->file, "whyslow.data")) {
			ws_log(WS_LOG_ERROR, "report: one recording at a time ('%s' and '%s')",
			       r->file, argv[optind]);
			return -EINVAL;
		}
		r->file = argv[optind];
	}
	return 0;
}

static void free_comms(struct replay *r)
{
	for (int i = 0; i < r->ncomms; i++)
		regfree(&r->comms[i]);
	r->ncomms = 0;
}

int ws_cmd_report(int argc, char **argv, const struct ws_report_globals *g)
{
	struct replay r = { .file = "whyslow.data",
			    .plugin_dir = g->plugin_dir,
			    .verbose = g->verbose };
	const struct ws_trace_ops ops = { .meta = on_meta,
					  .name = on_name,
					  .thread = on_thread,
					  .event = on_event,
					  .summary = on_summary,
					  .open_waits = on_open_waits,
					  .ended_early = on_ended_early };
	const char *output = NULL;
	struct ws_outfile of;
	char err[512];
	FILE *in, *out = stdout;
	bool deadlock = false;
	int rc = 1, e;

	if (report_parse(&r, &output, argc, argv)) {
		free_comms(&r);
		return 2; /* a bad command line, as for the other commands' usage errors */
	}
	if (!r.plugin_dir)
		r.plugin_dir = getenv("WHYSLOW_PLUGIN_DIR");
	if (!r.plugin_dir)
		r.plugin_dir = WS_PLUGINDIR;
	in = fopen(r.file, "re");
	if (!in) {
		ws_log(WS_LOG_ERROR, "cannot read %s: %s%s", r.file, strerror(errno),
		       errno == ENOENT ? " (make one with: sudo whyslow record -- COMMAND)" : "");
		if (errno == ENOENT)
			mention_unfinished(r.file);
		return 1;
	}
	setvbuf(in, NULL, _IOFBF, 1 << 18);
	/* stdout too: a closed one is said, not silently written to nowhere */
	if (ws_outfile_open(&of, output))
		goto out_in;
	out = of.f;
	if (r.format == OUT_PERFETTO) {
		r.pf = ws_perfetto_new();
		r.out = null_stream();
		if (!r.pf || !r.out) {
			ws_log(WS_LOG_ERROR, "cannot spool the Perfetto trace: %s",
			       strerror(errno));
			goto out_file;
		}
	} else {
		r.out = out;
	}
	e = ws_trace_read(in, r.file, &ops, &r, err, sizeof(err));
	if (e) {
		if (err[0])
			ws_log(WS_LOG_ERROR, "%s", err);
		else if (e == -ENOMEM || r.err)
			ws_log(WS_LOG_ERROR, "%s: analysis failed: %s", r.file,
			       strerror(-(r.err ? r.err : e)));
		goto out_file;
	}
	if (r.ended_early) {
		char hms[32] = "the start";

		if (r.last_ts)
			ws_clock_hms(ws_clock_wall(&r.clock, r.last_ts), hms, sizeof(hms));
		ws_log(WS_LOG_INFO,
		       "%s: recording ends early at offset %" PRIu64 " (killed?); results up to %s",
		       r.file, r.ended_at, hms);
	} else if (!r.have_summary) {
		ws_log(WS_LOG_ERROR, "%s: no summary record; loss counts are unknown", r.file);
	}
	if ((e = report_end(&r, &deadlock))) {
		ws_log(WS_LOG_ERROR, "%s: analysis failed: %s", r.file, strerror(-e));
		goto out_file;
	}
	if (r.err) {
		ws_log(WS_LOG_ERROR, "%s: Perfetto export failed: %s", r.file, strerror(-r.err));
		goto out_file;
	}
	if (r.pf)
		ws_session_flush_timelines(r.s);
	if (r.err) {
		ws_log(WS_LOG_ERROR, "%s: Perfetto export failed: %s", r.file, strerror(-r.err));
		goto out_file;
	}
	if (r.pf && (e = ws_perfetto_write(r.pf, out, ws_session_clock(r.s)))) {
		ws_log(WS_LOG_ERROR, "cannot write the Perfetto trace: %s", strerror(-e));
		goto out_file;
	}
	rc = deadlock ? WS_EXIT_DEADLOCK : 0;
out_file:
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
