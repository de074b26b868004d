// SPDX-License-Identifier: MIT
/* whyslow: tells you why your program was slow, as causal chains. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd_stuck.h"
#include "cmd_trace.h"
#include "config.h"
#include "outfile.h"
#include "runner.h"
#include "session.h"
#include "util.h"

static const char usage[] =
	"Usage: whyslow [options] run [options] -- COMMAND [ARGS...]\n"
	"       whyslow [options] attach [options] PID...\n"
	"       whyslow -c whyslow.ini [run ... | attach ...]\n"
	"       whyslow record [-o FILE] [options] -- COMMAND [ARGS...] | attach PID...\n"
	"       whyslow stuck [--format text|json] PID...  (what each thread waits for, now)\n"
	"       whyslow report [FILE] [--format text|json|folded|perfetto] [-o OUT] (report --help)\n"
	"\n"
	"Explains why a program was slow: every wait of a traced thread (off CPU for at least\n"
	"--min-block) is walked back along proven wakeups to its root cause — a futex holder,\n"
	"a disk request, a timer, or the threads that kept it off the CPU.\n"
	"\n"
	"Options:\n"
	"  -c, --config FILE      read settings from an ini file ([core] and one section per "
	"source)\n"
	"      --sources LIST     comma-separated sources to enable, e.g. sched,futex,blkio\n"
	"      --plugin-dir DIR   load source plugins from DIR (env WHYSLOW_PLUGIN_DIR)\n"
	"      --format FMT       text (default), json (JSON Lines, one chain per line) or folded\n"
	"                         (one line per piece of a wait, for flame graphs)\n"
	"  -o, --output FILE      write the report to FILE (complete, or not at all)\n"
	"      --min-block DUR    report waits at least this long (default 10ms)\n"
	"      --top N            text: show the N longest chains (default 5)\n"
	"      --duration DUR     stop tracing after DUR and report (run: then kill the "
	"command)\n"
	"  -u, --user USER        run: run the command as USER (default under sudo: $SUDO_USER)\n"
	"      --as-root          run: keep root for the command\n"
	"      --perfetto FILE    also write the chains as a Perfetto trace (ui.perfetto.dev)\n"
	"  record: -o FILE        the recording (default whyslow.data); no chains are printed\n"
	"      --live FILE        record: also write the live analysis (--format) to FILE\n"
	"  -v, --verbose          more detail; twice for libbpf's debug log\n"
	"      --version          print the version\n"
	"  -h, --help             this help\n"
	"\n"
	"Examples:\n"
	"  sudo whyslow run -- ./my-slow-program --its-args\n"
	"  sudo whyslow run --format json -o chains.jsonl -- make -j4\n"
	"  sudo whyslow attach --duration 30s $(pidof postgres)\n"
	"  sudo whyslow run --sources sched,futex -- ./app\n"
	"  sudo whyslow -c /etc/whyslow/whyslow.ini run -- ./app\n"
	"  sudo whyslow record -o app.data -- ./app && whyslow report app.data\n";

struct cli {
	const char *config, *plugin_dir, *sources, *user;
	bool as_root;
	int verbose;
	const char *cmd; /* "run", "attach", "report" or NULL */
	bool record;	 /* record: run or attach into a file */
	const char *trace, *live, *perfetto;
	int report_at; /* report: index of its first argument */
	char **argv;   /* run: the command */
	uint32_t *pids;
	int npids;
	/* [core] keys set on the command line, applied over the ini file */
	const char *set_key[16], *set_val[16];
	int nset;
};

static int bad(const char *fmt, const char *a, const char *b)
{
	fprintf(stderr, "whyslow: ");
	fprintf(stderr, fmt, a, b);
	fprintf(stderr, "; see whyslow --help\n");
	return -EINVAL;
}

/* Options that map to [core] keys are checked with the same table as the ini file. */
static int set_core(struct cli *c, const char *opt, const char *key, const char *val)
{
	const struct ws_config_key *k = ws_config_key_find(ws_core_keys, key);
	char why[160];

	if (!val)
		return bad("%s needs a value%s", opt, "");
	if (k && ws_config_check_value(k, val, why, sizeof(why)))
		return bad("%s: %s", opt, why);
	if (!strcmp(key, "format") && strcmp(val, "text") && strcmp(val, "json") &&
	    strcmp(val, "folded"))
		return bad("%s: '%s' is not text, json or folded", opt, val);
	if (c->nset == (int)ARRAY_SIZE(c->set_key))
		return -E2BIG;
	c->set_key[c->nset] = key;
	c->set_val[c->nset++] = val;
	return 0;
}

static int parse_pid(struct cli *c, const char *s)
{
	uint64_t v;
	uint32_t *p;

	if (ws_parse_u64(s, &v) || v == 0 || v > 4194304)
		return bad("'%s' is not a process id%s", s, "");
	p = realloc(c->pids, (c->npids + 1) * sizeof(*p));
	if (!p)
		return -ENOMEM;
	c->pids = p;
	c->pids[c->npids++] = v;
	return 0;
}

static int parse(struct cli *c, int argc, char **argv)
{
	static const struct {
		const char *longopt, *shortopt, *key;
	} core_opts[] = {
		{ "--format", NULL, "format" },	      { "--output", "-o", "output" },
		{ "--min-block", NULL, "min_block" }, { "--top", NULL, "top" },
		{ "--duration", NULL, "duration" },
	};

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		bool matched = false;
		int err;

		for (size_t k = 0; k < ARRAY_SIZE(core_opts) && !matched; k++) {
			if (c->record && !strcmp(core_opts[k].key, "output"))
				continue; /* record: -o names the recording */
			if (strcmp(a, core_opts[k].longopt) &&
			    (!core_opts[k].shortopt || strcmp(a, core_opts[k].shortopt)))
				continue;
			if ((err = set_core(c, a, core_opts[k].key, v)))
				return err;
			i++;
			matched = true;
		}
		if (matched)
			continue;
		if ((c->record && (!strcmp(a, "-o") || !strcmp(a, "--output"))) ||
		    (c->record && !strcmp(a, "--live")) || !strcmp(a, "--perfetto")) {
			if (!v)
				return bad("%s needs a value%s", a, "");
			if (!strcmp(a, "--live"))
				c->live = v;
			else if (!strcmp(a, "--perfetto"))
				c->perfetto = v;
			else
				c->trace = v;
			i++;
			continue;
		}
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			fputs(usage, stdout);
			exit(0);
		} else if (!strcmp(a, "--version")) {
			printf("whyslow %s (plugin ABI %d.%d)\n", WS_VERSION, WS_ABI_MAJOR,
			       WS_ABI_MINOR);
			exit(0);
		} else if (!strcmp(a, "-v") || !strcmp(a, "--verbose")) {
			c->verbose++;
		} else if (!strcmp(a, "-vv")) {
			c->verbose += 2;
		} else if (!strcmp(a, "--as-root")) {
			c->as_root = true;
		} else if (!strcmp(a, "-c") || !strcmp(a, "--config") || !strcmp(a, "--sources") ||
			   !strcmp(a, "--plugin-dir") || !strcmp(a, "-u") || !strcmp(a, "--user")) {
			if (!v)
				return bad("%s needs a value%s", a, "");
			if (a[1] == 'c' || !strcmp(a, "--config"))
				c->config = v;
			else if (!strcmp(a, "--sources"))
				c->sources = v;
			else if (!strcmp(a, "--plugin-dir"))
				c->plugin_dir = v;
			else
				c->user = v;
			i++;
		} else if (!strcmp(a, "--")) {
			if (!c->cmd)
				c->cmd = "run";
			if (strcmp(c->cmd, "run"))
				return bad("'--' goes with run, not %s%s", c->cmd, "");
			if (i + 1 >= argc)
				return bad("run needs a command after --%s%s", "", "");
			c->argv = argv + i + 1;
			return 0;
		} else if (a[0] == '-' && a[1]) {
			return bad("unknown option '%s'%s", a, "");
		} else if (!c->cmd && !c->record && !strcmp(a, "report")) {
			c->cmd = a;
			c->report_at = i + 1;
			return 0;
		} else if (!c->cmd && !c->record && !strcmp(a, "stuck")) {
			c->cmd = a;
			c->report_at = i + 1;
			return 0;
		} else if (!c->cmd && !c->record && !strcmp(a, "record")) {
			c->record = true;
		} else if (!c->cmd && (!strcmp(a, "run") || !strcmp(a, "attach"))) {
			c->cmd = a;
		} else if (c->cmd && !strcmp(c->cmd, "attach")) {
			if ((err = parse_pid(c, a)))
				return err;
		} else if (c->cmd && !strcmp(c->cmd, "run")) {
			c->argv = argv + i; /* "run CMD ARGS" without "--" */
			return 0;
		} else {
			return bad("unknown command '%s' (expected run or attach)%s", a, "");
		}
	}
	return 0;
}

/* `whyslow -c FILE` alone: the ini file says what to trace. 0 or -EINVAL (printed). */
static int from_config(struct cli *c, struct ws_config *cfg)
{
	static char *sh_argv[4] = { "/bin/sh", "-c", NULL, NULL };
	const char *cmd = ws_config_get(cfg, "core", "command");
	const char *pids = ws_config_get(cfg, "core", "attach");

	if (cmd && pids) {
		fprintf(stderr, "whyslow: %s: [core] sets both command and attach; keep one\n",
			cfg->path);
		return -EINVAL;
	}
	if (cmd) {
		c->cmd = "run";
		sh_argv[2] = (char *)cmd;
		c->argv = sh_argv;
	} else if (pids) {
		char *copy = strdup(pids), *save = NULL;
		int err = 0;

		if (!copy)
			return -ENOMEM;
		c->cmd = "attach";
		for (char *t = strtok_r(copy, " ,", &save); t && !err;
		     t = strtok_r(NULL, " ,", &save))
			err = parse_pid(c, t);
		free(copy);
		return err;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct ws_session_opts so = { 0 };
	struct ws_run_opts ro = { 0 };
	struct ws_trace_job job = { 0 };
	struct ws_session *s = NULL;
	struct ws_config cfg = { 0 };
	struct cli c = { 0 };
	char err[768];
	int rc = 1;

	ws_outfile_guard_std();
	if (parse(&c, argc, argv))
		goto out;
	if (c.cmd && !strcmp(c.cmd, "report")) {
		struct ws_report_globals g = { .plugin_dir = c.plugin_dir, .verbose = c.verbose };

		rc = ws_cmd_report(argc - c.report_at, argv + c.report_at, &g);
		goto out;
	}
	if (c.cmd && !strcmp(c.cmd, "stuck")) {
		rc = ws_cmd_stuck(argc - c.report_at, argv + c.report_at);
		goto out;
	}
	if (c.record && !c.cmd) {
		fprintf(stderr, "whyslow: record what? give record -- COMMAND or record attach "
				"PID; see whyslow --help\n");
		goto out;
	}
	if (c.config) {
		if (ws_config_load(&cfg, c.config, err, sizeof(err))) {
			fprintf(stderr, "whyslow: %s\n", err);
			goto out;
		}
	}
	if (!c.cmd && from_config(&c, &cfg))
		goto out;
	if (!c.cmd) {
		fprintf(stderr, "whyslow: nothing to do: give run -- COMMAND or attach PID (or "
				"[core] command in the ini file); see whyslow --help\n");
		goto out;
	}
	if (!strcmp(c.cmd, "attach") && !c.npids) {
		fprintf(stderr, "whyslow: attach needs at least one PID; see whyslow --help\n");
		goto out;
	}
	if (!strcmp(c.cmd, "run") && !c.argv) {
		fprintf(stderr, "whyslow: run needs a command: whyslow run -- COMMAND [ARGS...]\n");
		goto out;
	}
	for (int i = 0; i < c.nset; i++)
		if (ws_config_set(&cfg, "core", c.set_key[i], c.set_val[i]))
			goto out;
	so.verbose = c.verbose;
	so.sources = c.sources ? c.sources : ws_config_get(&cfg, "core", "sources");
	so.plugin_dir = c.plugin_dir ? c.plugin_dir : getenv("WHYSLOW_PLUGIN_DIR");
	if (!so.plugin_dir)
		so.plugin_dir = ws_config_get(&cfg, "core", "plugin_dir");
	if (!so.plugin_dir)
		so.plugin_dir = WS_PLUGINDIR;
	/* privilege first: without it nothing else can work, whatever else is wrong */
	if (ws_check_privilege() || ws_session_open(&s, &so, &cfg))
		goto out;
	ro.argv = c.argv;
	ro.user = c.user;
	ro.as_root = c.as_root;
	ro.pids = c.pids;
	ro.npids = c.npids;
	ro.output = ws_config_get(&cfg, "core", "output");
	if (c.record || c.perfetto) {
		job.record_path = c.record ? (c.trace ? c.trace : "whyslow.data") : NULL;
		job.perfetto_path = c.perfetto;
		job.plugin_dir = so.plugin_dir;
		job.cfg = &cfg;
		job.argv = c.argv;
		job.attach = !strcmp(c.cmd, "attach");
		ro.on_start = ws_trace_job_start;
		ro.on_finish = ws_trace_job_finish;
		ro.hook_ctx = &job;
		if (c.record)
			ro.output = c.live ? c.live : "/dev/null";
	}
	ws_config_u64(&cfg, "core", ws_core_keys, "duration", &ro.duration_ns);
	ws_config_u64(&cfg, "core", ws_core_keys, "min_block", &ro.min_block_ns);
	ro.json = !strcmp(ws_config_str(&cfg, "core", ws_core_keys, "format"), "json");
	ro.open_waits =
		ro.json || !strcmp(ws_config_str(&cfg, "core", ws_core_keys, "format"), "text");
	fflush(stdout);
	rc = !strcmp(c.cmd, "run") ? ws_run_command(s, &ro) : ws_attach(s, &ro);
out:
	ws_session_free(s);
	ws_config_free(&cfg);
	free(c.pids);
	return rc;
}
