// SPDX-License-Identifier: MIT
/* whyslow: tells you why your program was slow, as causal chains. */
#include <errno.h>
#include <locale.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd_stuck.h"
#include "cmd_trace.h"
#include "cmd_watch.h"
#include "config_help.h"
#include "metrics_http.h"
#include "options.h"
#include "plugin_dir.h"
#include "runner.h"
#include "status.h"
#include "usage.h"
#include "access/outfile.h"
#include "base/log.h"
#include "base/util.h"
#include "session/config.h"
#include "session/cgroup.h"
#include "session/comm.h"
#include "session/core_keys.h"
#include "session/session.h"

/* @fmt takes one string: one line on stderr, as the parser says it (options_parse.c). */
static int bad(const char *fmt, const char *a)
{
	char msg[512];

	snprintf(msg, sizeof(msg), fmt, a);
	ws_log(WS_LOG_ERROR, "%s; see whyslow --help", msg);
	return -EINVAL;
}

/* `whyslow -c FILE` alone: the ini file says what to trace. 0 or -EINVAL (printed). */
static int from_config(struct ws_cli *c, struct ws_config *cfg)
{
	static char *sh_argv[4] = { "/bin/sh", "-c", NULL, NULL };
	const char *cmd = ws_config_get(cfg, "core", "command");
	const char *pids = ws_config_get(cfg, "core", "attach");
	const char *cgroup = ws_config_get(cfg, "core", "cgroup");
	const char *comm = ws_config_get(cfg, "core", "comm");

	if (cmd && (pids || cgroup || comm)) {
		ws_log(WS_LOG_ERROR,
		       "%s: [core] sets both command and attach (or cgroup, comm); keep one",
		       cfg->path);
		return -EINVAL;
	}
	if (cmd) {
		c->cmd = WS_CMD_RUN;
		sh_argv[2] = (char *)cmd;
		c->argv = sh_argv;
	} else if (pids || cgroup || comm) {
		c->cmd = WS_CMD_ATTACH;
		return pids ? ws_cli_add_pids(c, pids) : 0;
	}
	return 0;
}

/* --config-help[=FMT]: the key tables, printed. Exit status. */
static int config_help(const struct ws_cli *c)
{
	const char *fmt_name = *c->config_help ? c->config_help : NULL;
	enum ws_config_help_format fmt;

	if (ws_config_help_format_parse(fmt_name, &fmt)) {
		bad("--config-help=%s: give text, ini or man", fmt_name);
		return 1;
	}
	return ws_config_help(stdout, fmt, ws_plugin_dir_pick(c->plugin_dir)) ? 1 : 0;
}

/*
 * What the command line settles without tracing: help, the version, the key and option
 * tables, report and stuck. 1 and *@rc set when it did; 0 when tracing is to follow.
 */
static int without_tracing(const struct ws_cli *c, int *rc)
{
	uint64_t shift;

	if (c->version) {
		printf("whyslow %s (plugin ABI %d.%d)\nplugin directory: %s\n", WS_VERSION,
		       WS_ABI_MAJOR, WS_ABI_MINOR, ws_plugin_dir_pick(c->plugin_dir));
		*rc = 0;
	} else if (c->config_help) {
		*rc = config_help(c);
	} else if (c->dump_options) {
		*rc = 0;
		if (ws_opts_dump(stdout, c->dump_options)) {
			bad("--dump-options %s: give man or bash", c->dump_options);
			*rc = 1;
		}
	} else if (c->help) {
		ws_usage(stdout, c->cmd);
		*rc = 0;
	} else if (c->cmd == WS_CMD_REPORT) {
		*rc = ws_cmd_report(c);
	} else if (c->cmd == WS_CMD_STUCK) {
		*rc = ws_cmd_stuck(c);
	} else if (c->cmd == WS_CMD_DUMP) {
		*rc = ws_cmd_dump(c);
	} else if (c->cmd == WS_CMD_RECORD && !c->argv) {
		ws_log(WS_LOG_ERROR,
		       "record what? give record -- COMMAND or record attach PID; see whyslow help record");
		*rc = 1;
	} else if ((c->cmd & (WS_CMD_RECORD | WS_CMD_REC_ATTACH)) && c->compress &&
		   strcmp(c->compress, "zstd") && strcmp(c->compress, "none")) {
		ws_log(WS_LOG_ERROR, "record --compress=%s: give zstd (the default) or none",
		       c->compress);
		*rc = 1;
	} else if ((c->cmd & (WS_CMD_RECORD | WS_CMD_REC_ATTACH)) && c->clock_shift &&
		   ws_parse_duration(c->clock_shift, &shift)) {
		ws_log(WS_LOG_ERROR,
		       "record --clock-shift=%s: give a duration with its unit (250ms, 3s)",
		       c->clock_shift);
		*rc = 1;
	} else if ((c->cmd & (WS_CMD_RECORD | WS_CMD_REC_ATTACH)) && c->host &&
		   (!c->host[0] || strlen(c->host) >= WS_TRACE_STR)) {
		ws_log(WS_LOG_ERROR, "record --host: give a name of 1 to %d bytes",
		       WS_TRACE_STR - 1);
		*rc = 1;
	} else if ((c->cmd & (WS_CMD_RECORD | WS_CMD_REC_ATTACH)) && c->output &&
		   !strcmp(c->output, "-")) {
		ws_log(WS_LOG_ERROR,
		       "record -o -: a recording is a file; name one, or use report -o - to print");
		*rc = 1;
	} else {
		return 0;
	}
	return 1;
}

/* The ini file, with the command line's [core] keys over it. 0, or -errno (printed). */
static int load_config(struct ws_cli *c, struct ws_config *cfg)
{
	bool named, by_comm;
	char err[768];

	if (c->config) {
		if (ws_config_load(cfg, c->config, err, sizeof(err)) ||
		    /* its [core] now, with the command line's rules: no root needed to be told */
		    ws_config_check_section(cfg, "core", ws_core_keys, err, sizeof(err))) {
			ws_log(WS_LOG_ERROR, "%s", err);
			return -EINVAL;
		}
	}
	if (c->cmd == WS_CMD_NONE && from_config(c, cfg))
		return -EINVAL;
	if (c->cmd == WS_CMD_NONE) {
		ws_log(WS_LOG_ERROR,
		       "nothing to do: give run -- COMMAND or attach PID (or [core] command in the ini file); see whyslow --help");
		return -EINVAL;
	}
	if (c->cmd == WS_CMD_RUN && !c->argv) {
		ws_log(WS_LOG_ERROR, "run needs a command: whyslow run -- COMMAND [ARGS...]");
		return -EINVAL;
	}
	for (int i = 0; i < c->ncore; i++)
		if (ws_config_set(cfg, "core", c->core_key[i], c->core_val[i]))
			return -ENOMEM;
	if (c->format_set && ws_config_set(cfg, "core", "format", ws_format_name(c->format)))
		return -ENOMEM;
	/* after the command line's [core] keys: --cgroup and --comm name the processes too */
	named = c->pids.n || ws_config_get(cfg, "core", "cgroup");
	by_comm = ws_config_get(cfg, "core", "comm") != NULL;
	/* it takes processes out of tracing at exec: a command's own exec would be one */
	if (by_comm && !(c->cmd & (WS_CMD_ATTACH | WS_CMD_WATCH))) {
		ws_log(WS_LOG_ERROR,
		       "--comm (or [core] comm) is for attach and watch only; remove it from %s",
		       c->config ? c->config : "the command line");
		return -EINVAL;
	}
	if (by_comm && named) {
		ws_log(WS_LOG_ERROR,
		       "--comm names the processes by their name: give no PID nor --cgroup with it");
		return -EINVAL;
	}
	if ((c->cmd & (WS_CMD_ATTACH | WS_CMD_REC_ATTACH)) && !named && !by_comm) {
		ws_log(WS_LOG_ERROR,
		       "attach needs at least one PID, --cgroup or --comm; see whyslow help attach");
		return -EINVAL;
	}
	if (c->cmd == WS_CMD_WATCH && c->all == (named || by_comm)) {
		ws_log(WS_LOG_ERROR, "%s",
		       c->all ? "watch -a is every process: give no PID, --cgroup nor --comm with it"
			      : "watch what? give -a, PIDs, --cgroup PATH or --comm NAME; see whyslow help watch");
		return -EINVAL;
	}
	return 0;
}

/*
 * Would a binary report (--format pprof) go to a terminal? Said, before anything is loaded.
 * The report goes where main() sends it below: a recording's to --live (else nowhere), run's to
 * stderr unless -o says otherwise, attach's to stdout.
 */
static bool binary_to_terminal(const struct ws_cli *c, struct ws_config *cfg, bool recording)
{
	enum ws_format format = WS_FORMAT_TEXT;
	const char *output = ws_config_get(cfg, "core", "output");

	ws_format_parse(ws_config_str(cfg, "core", ws_core_keys, "format"), WS_FORMATS_LIVE,
			&format);
	if (recording)
		output = c->live ? c->live : "/dev/null";
	else if (!output && c->cmd == WS_CMD_RUN)
		output = WS_OUTFILE_STDERR;
	return ws_format_binary(format) &&
	       ws_outfile_binary_to_terminal(output, ws_format_name(format));
}

/*
 * attach/watch --comm NAME[,NAME]: the processes that bear one of the names now (watch: none is
 * no error, they may start later). 0 or -errno, said.
 */
static int add_comm_pids(struct ws_config *cfg, struct ws_ids *ids, bool watch)
{
	const char *list = ws_config_get(cfg, "core", "comm");
	char names[WS_COMM_NAMES][WS_COMM_BYTES], why[200];
	uint32_t *pids, *v;
	size_t n;
	int err;

	if (!list)
		return 0;
	if ((err = ws_comm_parse(list, names, why, sizeof(why))) < 0) {
		ws_log(WS_LOG_ERROR, "--comm: %s", why);
		return err;
	}
	if ((err = ws_comm_pids(names, err, &pids, &n))) {
		ws_log(WS_LOG_ERROR, "--comm: cannot list the processes in /proc: %s",
		       strerror(-err));
		return err;
	}
	if (!n && !watch) {
		free(pids);
		ws_log(WS_LOG_ERROR,
		       "--comm %s: no process has that name now; attach follows processes from one that runs, start one first (or use watch)",
		       list);
		return -ENOENT;
	}
	v = realloc(ids->v, (ids->n + n + 1) * sizeof(*v));
	if (!v) {
		free(pids);
		return -ENOMEM;
	}
	ids->v = v;
	memcpy(ids->v + ids->n, pids, n * sizeof(*pids));
	ids->n += n;
	free(pids);
	ws_log(WS_LOG_INFO, "--comm %s: %zu %s now", list, n, ws_plural(n, "process", "processes"));
	return 0;
}

/* attach --cgroup PATH: its processes now, after those named with -p. 0 or -errno, said. */
static int add_cgroup_pids(struct ws_config *cfg, struct ws_ids *ids)
{
	const char *path = ws_config_get(cfg, "core", "cgroup");
	uint32_t *pids, *v;
	size_t n, added = 0;
	int err;

	if (!path)
		return 0;
	if ((err = ws_cgroup_pids(path, &pids, &n)))
		return err;
	v = realloc(ids->v, (ids->n + n + 1) * sizeof(*v));
	if (!v) {
		free(pids);
		return -ENOMEM;
	}
	ids->v = v;
	for (size_t i = 0; i < n; i++) {
		bool named = false;

		for (int j = 0; j < ids->n; j++)
			named |= ids->v[j] == pids[i];
		/* one that exited since the cgroup was read is no error of the command line */
		if (!named && (kill((pid_t)pids[i], 0) == 0 || errno == EPERM)) {
			ids->v[ids->n++] = pids[i];
			added++;
		}
	}
	free(pids);
	if (!ids->n) {
		ws_log(WS_LOG_ERROR,
		       "--cgroup %s has no process: attach follows processes from one that runs there; start one first",
		       path);
		return -ENOENT;
	}
	ws_log(WS_LOG_INFO, "--cgroup %s: %zu %s", path, added,
	       ws_plural(added, "process", "processes"));
	return 0;
}

/*
 * The status line: none between the lines of a json or folded report streaming to the terminal
 * (to stderr, or to stdout on the same terminal), none where a traced program writes.
 */
static void status_init(const struct ws_cli *c, enum ws_format format, const char *output,
			const struct ws_run_opts *ro)
{
	bool streams =
		format != WS_FORMAT_TEXT && ((output && !strcmp(output, WS_OUTFILE_STDERR)) ||
					     (!ro->output && isatty(STDOUT_FILENO)));

	ws_status_init(
		c->verbose, streams,
		ws_status_tty_shared(c->cmd & (WS_CMD_RUN | WS_CMD_RECORD), ro->pids, ro->npids));
}

/*
 * --metrics / [core] metrics: the metrics made and their server listening, before anything is
 * loaded or traced (an address that cannot be served stops whyslow now). 0 or -errno, said.
 */
static int metrics_start(struct ws_config *cfg, struct ws_metrics **m, struct ws_metrics_http **h)
{
	const char *spec = ws_config_get(cfg, "core", "metrics");
	struct ws_metrics_addr a;
	int err;

	if (!spec)
		return 0;
	err = ws_metrics_addr_parse(spec, &a);
	if (err == -EINVAL) {
		ws_log(WS_LOG_ERROR,
		       "--metrics %s: give PORT, ADDR:PORT or [IPV6]:PORT, the port from 1 to 65535",
		       spec);
		return err;
	}
	if (err) {
		ws_log(WS_LOG_ERROR, "--metrics %s: no such address", spec);
		return err;
	}
	*m = ws_metrics_new();
	if (!*m) {
		err = -errno;
		ws_log(WS_LOG_ERROR, "--metrics %s: %s", spec, strerror(-err));
		return err;
	}
	if ((err = ws_metrics_http_start(h, &a, *m))) {
		ws_log(WS_LOG_ERROR, "--metrics %s: cannot serve there: %s", spec, strerror(-err));
		ws_metrics_free(*m);
		*m = NULL;
		return err;
	}
	/* where to point Prometheus, said once: the address may come from an ini file */
	ws_log(WS_LOG_INFO, "metrics at http://%s%s/metrics",
	       strchr(spec, ':') ? "" : "127.0.0.1:", spec);
	return 0;
}

int main(int argc, char **argv)
{
	struct ws_session_opts so = { 0 };
	struct ws_run_opts ro = { 0 };
	struct ws_trace_job job = { 0 };
	struct ws_session *s = NULL;
	struct ws_config cfg = { 0 };
	struct ws_cli c = { 0 };
	struct ws_metrics *metrics = NULL;
	struct ws_metrics_http *metrics_http = NULL;
	struct ws_watch_opts wo = { 0 };
	struct ws_watch *watch = NULL;
	enum ws_format format = WS_FORMAT_TEXT;
	const char *output;
	bool recording;
	int rc = 1;

	ws_outfile_guard_std();
	/* the character set only: the text report's arrows follow it (report.c) */
	setlocale(LC_CTYPE, "");
	if (ws_cli_parse(&c, argc, argv)) {
		/* report's usage errors have their own status (whyslow(1)) */
		rc = c.cmd == WS_CMD_REPORT ? 2 : 1;
		goto out;
	}
	if (without_tracing(&c, &rc) || load_config(&c, &cfg))
		goto out;
	/* every command at the same default resolution, min_block/64: a recording keeps what a
	 * report at any --min-block of at least 64 times it needs (ws_resolution_ns) */
	recording = c.cmd & (WS_CMD_RECORD | WS_CMD_REC_ATTACH);
	if (binary_to_terminal(&c, &cfg, recording) || metrics_start(&cfg, &metrics, &metrics_http))
		goto out;
	if (c.cmd == WS_CMD_WATCH && ws_watch_opts_from_config(&cfg, &wo))
		goto out;
	so.verbose = c.verbose;
	so.sources = c.sources ? c.sources : ws_config_get(&cfg, "core", "sources");
	so.plugin_dir = c.plugin_dir ? c.plugin_dir : getenv("WHYSLOW_PLUGIN_DIR");
	if (!so.plugin_dir)
		so.plugin_dir = ws_config_get(&cfg, "core", "plugin_dir");
	if (!so.plugin_dir)
		so.plugin_dir = ws_plugin_dir_default();
	/* privilege first: without it nothing else can work, whatever else is wrong */
	if (ws_check_privilege())
		goto out;
	if (c.cmd == WS_CMD_WATCH) {
		wo.plugin_dir = so.plugin_dir;
		wo.cfg = &cfg;
		wo.metrics = metrics;
		wo.what = c.all					  ? "-a"
			  : ws_config_get(&cfg, "core", "cgroup") ? "--cgroup"
			  : ws_config_get(&cfg, "core", "comm")	  ? "--comm"
								  : "PIDs";
		/* a spool that cannot be written, or a watch already running: said before tracing
		 */
		if (ws_watch_new(&watch, &wo))
			goto out;
	}
	if (ws_session_open(&s, &so, &cfg))
		goto out;
	ws_session_warn_blind(s);
	ro.argv = c.argv;
	ro.user = c.user;
	ro.as_root = c.as_root;
	ro.wait = c.wait;
	ro.metrics = metrics;
	if ((c.cmd & (WS_CMD_ATTACH | WS_CMD_REC_ATTACH | WS_CMD_WATCH)) &&
	    (add_cgroup_pids(&cfg, &c.pids) || add_comm_pids(&cfg, &c.pids, c.cmd == WS_CMD_WATCH)))
		goto out;
	if (c.cmd == WS_CMD_WATCH && c.all && ws_watch_all_pids(&c.pids.v, &c.pids.n)) {
		ws_log(WS_LOG_ERROR, "watch -a: cannot list the processes in /proc");
		goto out;
	}
	ro.pids = c.pids.v;
	ro.npids = c.pids.n;
	/* run: the command's stdout stays its own; "-" asks for stdout */
	output = ws_config_get(&cfg, "core", "output");
	if (!output && c.cmd == WS_CMD_RUN)
		output = WS_OUTFILE_STDERR;
	ro.output = output && strcmp(output, "-") ? output : NULL;
	if (recording || c.perfetto) {
		job.record_path = recording ? (c.output ? c.output : "whyslow.data") : NULL;
		job.perfetto_path = c.perfetto;
		job.plugin_dir = so.plugin_dir;
		job.cfg = &cfg;
		job.argv = c.argv;
		job.attach = !!(c.cmd & (WS_CMD_ATTACH | WS_CMD_REC_ATTACH));
		job.compress =
			c.compress && !strcmp(c.compress, "none") ? WS_TRACE_RAW : WS_TRACE_ZSTD;
		job.host = c.host;
		if (c.clock_shift)
			ws_parse_duration(c.clock_shift, &job.clock_shift_ns); /* checked before */
		ro.on_start = ws_trace_job_start;
		ro.on_finish = ws_trace_job_finish;
		ro.hook_ctx = &job;
		if (job.record_path) {
			ro.on_open_waits = ws_trace_job_open_waits;
			ro.output = !c.live ? "/dev/null" : strcmp(c.live, "-") ? c.live : NULL;
		}
	}
	if (c.cmd == WS_CMD_WATCH) {
		/* its report (of everything, at the end) is nobody's: what counts are the dumps */
		ro.output = "/dev/null";
		/* --comm: the processes come and go (one gone since /proc was read is no error),
		 * and none may run yet */
		ro.stay = ws_config_get(&cfg, "core", "comm") != NULL;
		ro.all = c.all || ro.stay;
		ro.on_start = ws_watch_start;
		ro.on_tick = ws_watch_tick;
		ro.on_finish = ws_watch_finish;
		ro.hook_ctx = watch;
	}
	ws_config_u64(&cfg, "core", ws_core_keys, "duration", &ro.duration_ns);
	ws_config_u64(&cfg, "core", ws_core_keys, "min_block", &ro.min_block_ns);
	/* checked when the session opened; the default is ws_core_keys' */
	ws_format_parse(ws_config_str(&cfg, "core", ws_core_keys, "format"), WS_FORMATS_LIVE,
			&format);
	ro.json = format == WS_FORMAT_JSON;
	ro.open_waits = format != WS_FORMAT_FOLDED && format != WS_FORMAT_PPROF;
	status_init(&c, format, output, &ro);
	fflush(stdout);
	rc = c.cmd & (WS_CMD_RUN | WS_CMD_RECORD) ? ws_run_command(s, &ro) : ws_attach(s, &ro);
out:
	/* the server reads the metrics: stopped first */
	ws_metrics_http_stop(metrics_http);
	ws_session_free(s);
	ws_watch_free(watch);
	ws_metrics_free(metrics);
	ws_config_free(&cfg);
	ws_cli_free(&c);
	return rc;
}
