// SPDX-License-Identifier: MIT
/* whyslow: tells you why your program was slow, as causal chains. */
#include <errno.h>
#include <getopt.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd_stuck.h"
#include "cmd_trace.h"
#include "config_help.h"
#include "runner.h"
#include "status.h"
#include "usage.h"
#include "access/outfile.h"
#include "base/log.h"
#include "base/util.h"
#include "session/config.h"
#include "session/session.h"

/*
 * The subcommands. Each has its usage text (usage.c) and the bit its options are
 * checked against; adding one is a row here and a branch in main().
 */
enum cmd_bit {
	CMD_RUN = 1 << 0,
	CMD_ATTACH = 1 << 1,
	CMD_REC_RUN = 1 << 2, /* record -- COMMAND */
	CMD_REC_ATTACH = 1 << 3,
	CMD_REPORT = 1 << 4,
	CMD_STUCK = 1 << 5, /* parses its own arguments (cmd_stuck.c), as report does */
};
#define CMD_TRACING (CMD_RUN | CMD_ATTACH | CMD_REC_RUN | CMD_REC_ATTACH)

enum opt_id {
	OPT_SOURCES = 256,
	OPT_PLUGIN_DIR,
	OPT_FORMAT,
	OPT_MIN_BLOCK,
	OPT_TOP,
	OPT_STACK_DEPTH,
	OPT_DURATION,
	OPT_AS_ROOT,
	OPT_PERFETTO,
	OPT_LIVE,
	OPT_VERSION,
	OPT_CONFIG_HELP,
	OPT_WAIT,
	OPT_INCLUDE_IDLE,
};

static const struct option long_opts[] = {
	{ "config", required_argument, NULL, 'c' },
	{ "output", required_argument, NULL, 'o' },
	{ "user", required_argument, NULL, 'u' },
	{ "pid", required_argument, NULL, 'p' },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{ "sources", required_argument, NULL, OPT_SOURCES },
	{ "plugin-dir", required_argument, NULL, OPT_PLUGIN_DIR },
	{ "format", required_argument, NULL, OPT_FORMAT },
	{ "min-block", required_argument, NULL, OPT_MIN_BLOCK },
	{ "top", required_argument, NULL, OPT_TOP },
	{ "stack-depth", required_argument, NULL, OPT_STACK_DEPTH },
	{ "duration", required_argument, NULL, OPT_DURATION },
	{ "as-root", no_argument, NULL, OPT_AS_ROOT },
	{ "perfetto", required_argument, NULL, OPT_PERFETTO },
	{ "live", required_argument, NULL, OPT_LIVE },
	{ "version", no_argument, NULL, OPT_VERSION },
	{ "config-help", optional_argument, NULL, OPT_CONFIG_HELP },
	{ "wait", no_argument, NULL, OPT_WAIT },
	{ "include-idle", no_argument, NULL, OPT_INCLUDE_IDLE },
	{ NULL, 0, NULL, 0 },
};
static const char short_opts[] = "+c:o:u:p:vh";

/* Which commands each option applies to; anything else is an error naming both. */
static const struct {
	int id;
	unsigned int cmds;
} opt_cmds[] = {
	{ 'c', CMD_TRACING },
	{ 'o', CMD_TRACING | CMD_REPORT },
	{ 'u', CMD_RUN | CMD_REC_RUN },
	{ 'p', CMD_ATTACH | CMD_REC_ATTACH },
	{ 'v', CMD_TRACING | CMD_REPORT },
	{ 'h', ~0u },
	{ OPT_SOURCES, CMD_TRACING },
	{ OPT_PLUGIN_DIR, CMD_TRACING | CMD_REPORT },
	{ OPT_FORMAT, CMD_TRACING },
	{ OPT_MIN_BLOCK, CMD_TRACING },
	{ OPT_TOP, CMD_TRACING },
	{ OPT_STACK_DEPTH, CMD_TRACING },
	{ OPT_DURATION, CMD_TRACING },
	{ OPT_AS_ROOT, CMD_RUN | CMD_REC_RUN },
	{ OPT_PERFETTO, CMD_TRACING },
	{ OPT_LIVE, CMD_REC_RUN | CMD_REC_ATTACH },
	{ OPT_WAIT, CMD_RUN | CMD_REC_RUN },
	{ OPT_INCLUDE_IDLE, CMD_TRACING },
};

static const char *cmd_name(unsigned int cmd)
{
	switch (cmd) {
	case CMD_RUN:
		return "run";
	case CMD_ATTACH:
		return "attach";
	case CMD_REC_RUN:
		return "record";
	case CMD_REC_ATTACH:
		return "record attach";
	case CMD_REPORT:
		return "report";
	case CMD_STUCK:
		return "stuck";
	}
	return "whyslow";
}

/* One option as given, kept until the command it belongs to is known. */
struct given {
	int id;
	const char *arg;
	char text[32]; /* as typed, for messages */
};

struct cli {
	const char *config, *plugin_dir, *sources, *user;
	bool as_root, help, wait;
	int verbose;
	unsigned int cmd; /* enum cmd_bit, 0 = none named */
	const char *trace, *live, *perfetto;
	int report_at; /* report: index of its first argument */
	char **argv;   /* run: the command */
	uint32_t *pids;
	int npids;
	/* [core] keys set on the command line, applied over the ini file */
	const char *set_key[16], *set_val[16];
	int nset;
	struct given *given;
	int ngiven;
};

/* @fmt takes two strings, @a and @b. */
static int bad(const char *fmt, const char *a, const char *b)
{
	char msg[1024];

	snprintf(msg, sizeof(msg), fmt, a, b);
	ws_log(WS_LOG_ERROR, "%s; see whyslow --help", msg);
	return -EINVAL;
}

/*
 * "10" could be 10ms or 10s: a duration on the command line names its unit
 * (0 alone is unambiguous).
 */
static bool has_unit(const char *s)
{
	size_t n = strlen(s);

	return (n && s[n - 1] >= 'a' && s[n - 1] <= 'z') || !strcmp(s, "0");
}

/* Options that map to [core] keys are checked with the same table as the ini file. */
static int set_core(struct cli *c, const char *opt, const char *key, const char *val)
{
	const struct ws_config_key *k = ws_config_key_find(ws_core_keys, key);
	char why[160];

	if (k && k->type == WS_CFG_DURATION && !has_unit(val))
		return bad("%s %s: give the unit (ns, us, ms, s or m), e.g. 10ms", opt, val);
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

/* -p 1,2 or -p 1 -p 2, as perf and strace take them */
static int parse_pid_list(struct cli *c, const char *s)
{
	char *copy = strdup(s), *save = NULL;
	int err = 0;

	if (!copy)
		return -ENOMEM;
	for (char *t = strtok_r(copy, ",", &save); t && !err; t = strtok_r(NULL, ",", &save))
		err = parse_pid(c, t);
	free(copy);
	return err;
}

static void print_help(unsigned int cmd)
{
	if (cmd == CMD_REPORT) {
		char *argv[] = { "report", "--help", NULL };

		ws_cmd_report(2, argv, &(struct ws_report_globals){ 0 });
		return;
	}
	fputs(cmd == CMD_RUN			     ? ws_usage_run
	      : cmd == CMD_ATTACH		     ? ws_usage_attach
	      : cmd & (CMD_REC_RUN | CMD_REC_ATTACH) ? ws_usage_record
						     : ws_usage_main,
	      stdout);
}

static unsigned int cmd_from_name(const char *s)
{
	if (!strcmp(s, "run"))
		return CMD_RUN;
	if (!strcmp(s, "attach"))
		return CMD_ATTACH;
	if (!strcmp(s, "record"))
		return CMD_REC_RUN;
	if (!strcmp(s, "report"))
		return CMD_REPORT;
	if (!strcmp(s, "stuck"))
		return CMD_STUCK;
	return 0;
}

/* getopt_long over argv from optind: note each option; stop at the first operand. */
static int collect(struct cli *c, int argc, char **argv, const char *shortopts)
{
	int id, idx;

	opterr = 0;
	while ((id = getopt_long(argc, argv, shortopts, long_opts, &idx)) != -1) {
		const char *typed = argv[optind - 1];
		struct given *g;

		if (id == '?' && strncmp(typed, "--", 2)) {
			char opt[3] = { '-', (char)optopt, 0 };
			const char *p = strchr(short_opts + 1, optopt);

			if (p && p[1] == ':')
				return bad("%s needs a value%s", opt, "");
			return bad("unknown option '%s'%s", opt, "");
		}
		if (id == '?') {
			size_t n = strcspn(typed + 2, "=");

			for (const struct option *o = long_opts; o->name; o++) {
				if (strncmp(typed + 2, o->name, n) || o->name[n])
					continue;
				if (typed[2 + n] == '=')
					return bad("%s: this option takes no value%s", typed, "");
				return bad("%s needs a value%s", typed, "");
			}
			return bad("unknown option '%s'%s", typed, "");
		}
		if (id == OPT_VERSION) {
			printf("whyslow %s (plugin ABI %d.%d)\n", WS_VERSION, WS_ABI_MAJOR,
			       WS_ABI_MINOR);
			exit(0);
		}
		g = realloc(c->given, (c->ngiven + 1) * sizeof(*g));
		if (!g)
			return -ENOMEM;
		c->given = g;
		g = &c->given[c->ngiven++];
		g->id = id;
		g->arg = optarg;
		if (id < 256)
			snprintf(g->text, sizeof(g->text), "%s",
				 strncmp(typed, "--", 2) ? (char[]){ '-', id, 0 } : typed);
		else
			snprintf(g->text, sizeof(g->text), "--%s", long_opts[idx].name);
		/* "--format=json": name only the option in messages */
		g->text[strcspn(g->text, "=")] = 0;
	}
	return 0;
}

/* Apply the options collected, now that the command is known. */
static int apply(struct cli *c)
{
	/* no command named: the ini file's [core] command or attach decides (main()) */
	unsigned int mask = c->cmd ? c->cmd : CMD_RUN | CMD_ATTACH;

	for (int i = 0; i < c->ngiven; i++) {
		const struct given *g = &c->given[i];
		const char *v = g->arg;
		int err = 0;

		if (g->id == OPT_CONFIG_HELP)
			continue; /* handled in main() */
		for (size_t k = 0; k < ARRAY_SIZE(opt_cmds); k++)
			if (opt_cmds[k].id == g->id && !(opt_cmds[k].cmds & mask))
				return bad("%s does not apply to %s", g->text, cmd_name(c->cmd));
		switch (g->id) {
		case 'c':
			c->config = v;
			break;
		case 'o':
			if (c->cmd & (CMD_REC_RUN | CMD_REC_ATTACH)) {
				if (!strcmp(v, "-"))
					return bad(
						"record -o -: a recording is a file; name one, or use report -o - to print%s",
						"", "");
				c->trace = v;
			} else {
				err = set_core(c, g->text, "output", v);
			}
			break;
		case 'u':
			c->user = v;
			break;
		case 'p':
			err = parse_pid_list(c, v);
			break;
		case 'v':
			c->verbose++;
			break;
		case 'h':
			c->help = true;
			break;
		case OPT_SOURCES:
			c->sources = v;
			break;
		case OPT_PLUGIN_DIR:
			c->plugin_dir = v;
			break;
		case OPT_FORMAT:
			err = set_core(c, g->text, "format", v);
			break;
		case OPT_MIN_BLOCK:
			err = set_core(c, g->text, "min_block", v);
			break;
		case OPT_TOP:
			err = set_core(c, g->text, "top", v);
			break;
		case OPT_STACK_DEPTH:
			err = set_core(c, g->text, "stack_depth", v);
			break;
		case OPT_DURATION:
			err = set_core(c, g->text, "duration", v);
			break;
		case OPT_AS_ROOT:
			c->as_root = true;
			break;
		case OPT_PERFETTO:
			c->perfetto = v;
			break;
		case OPT_LIVE:
			c->live = v;
			break;
		case OPT_WAIT:
			c->wait = true;
			break;
		case OPT_INCLUDE_IDLE:
			err = set_core(c, g->text, "include_idle", "true");
			break;
		}
		if (err)
			return err;
	}
	return 0;
}

static int parse(struct cli *c, int argc, char **argv)
{
	const char *word;
	int err;

	optind = 1;
	if ((err = collect(c, argc, argv, short_opts)))
		return err;
	if (optind < argc && !strcmp(argv[optind - 1], "--") && !c->cmd) {
		c->cmd = CMD_RUN; /* "whyslow [options] -- COMMAND": run */
		c->argv = argv + optind;
		return apply(c);
	}
	if (optind >= argc) {
		/* nothing named: -p PID means attach; else the ini file says (main()) */
		for (int i = 0; i < c->ngiven && !c->cmd; i++)
			if (c->given[i].id == 'p')
				c->cmd = CMD_ATTACH;
		return apply(c);
	}
	word = argv[optind++];
	if (!strcmp(word, "help")) {
		unsigned int cmd = optind < argc ? cmd_from_name(argv[optind]) : 0;

		if (optind < argc && !cmd)
			return bad("help: no command '%s' (run, attach, record, report)%s",
				   argv[optind], "");
		print_help(cmd);
		exit(0);
	}
	c->cmd = cmd_from_name(word);
	if (!c->cmd)
		return bad("unknown command '%s' (run, attach, record, report, help)%s", word, "");
	if (c->cmd == CMD_REPORT || c->cmd == CMD_STUCK) {
		c->report_at = optind;
		return apply(c);
	}
	/* run and record stop at the command; attach takes options after its PIDs too */
	if ((err = collect(c, argc, argv, short_opts)))
		return err;
	if (c->cmd == CMD_REC_RUN && optind < argc && !strcmp(argv[optind], "attach") &&
	    strcmp(argv[optind - 1], "--")) {
		c->cmd = CMD_REC_ATTACH;
		optind++;
		if ((err = collect(c, argc, argv, short_opts))) /* record attach -p PID */
			return err;
	}
	if (c->cmd & (CMD_ATTACH | CMD_REC_ATTACH)) {
		while (optind < argc) {
			if (!strcmp(argv[optind - 1], "--") && optind > 1)
				return bad("attach takes PIDs, not a command after --%s%s", "", "");
			if ((err = parse_pid(c, argv[optind++])))
				return err;
			if ((err = collect(c, argc, argv, short_opts)))
				return err;
		}
	} else if (optind < argc) {
		c->argv = argv + optind;
	}
	return apply(c);
}

/* `whyslow -c FILE` alone: the ini file says what to trace. 0 or -EINVAL (printed). */
static int from_config(struct cli *c, struct ws_config *cfg)
{
	static char *sh_argv[4] = { "/bin/sh", "-c", NULL, NULL };
	const char *cmd = ws_config_get(cfg, "core", "command");
	const char *pids = ws_config_get(cfg, "core", "attach");

	if (cmd && pids) {
		ws_log(WS_LOG_ERROR, "%s: [core] sets both command and attach; keep one",
		       cfg->path);
		return -EINVAL;
	}
	if (cmd) {
		c->cmd = CMD_RUN;
		sh_argv[2] = (char *)cmd;
		c->argv = sh_argv;
	} else if (pids) {
		char *copy = strdup(pids), *save = NULL;
		int err = 0;

		if (!copy)
			return -ENOMEM;
		c->cmd = CMD_ATTACH;
		for (char *t = strtok_r(copy, " ,", &save); t && !err;
		     t = strtok_r(NULL, " ,", &save))
			err = parse_pid(c, t);
		free(copy);
		return err;
	}
	return 0;
}

/* --config-help[=FMT]: the key tables, printed. Exit status. */
static int config_help(const struct cli *c, const char *fmt_name)
{
	const char *dir = c->plugin_dir ? c->plugin_dir : getenv("WHYSLOW_PLUGIN_DIR");
	enum ws_config_help_format fmt;

	if (ws_config_help_format_parse(fmt_name, &fmt)) {
		bad("--config-help=%s: give text, ini or man%s", fmt_name, "");
		return 1;
	}
	return ws_config_help(stdout, fmt, dir ? dir : WS_PLUGINDIR) ? 1 : 0;
}

int main(int argc, char **argv)
{
	struct ws_session_opts so = { 0 };
	struct ws_run_opts ro = { 0 };
	struct ws_trace_job job = { 0 };
	struct ws_session *s = NULL;
	struct ws_config cfg = { 0 };
	struct cli c = { 0 };
	const char *output;
	char err[768];
	int rc = 1;

	ws_outfile_guard_std();
	/* the character set only: the text report's arrows follow it (report.c) */
	setlocale(LC_CTYPE, "");
	if (parse(&c, argc, argv))
		goto out;
	for (int i = 0; i < c.ngiven; i++) {
		if (c.given[i].id == OPT_CONFIG_HELP) {
			rc = config_help(&c, c.given[i].arg);
			goto out;
		}
	}
	if (c.help) {
		print_help(c.cmd);
		rc = 0;
		goto out;
	}
	if (c.cmd == CMD_REPORT) {
		struct ws_report_globals g = { .plugin_dir = c.plugin_dir, .verbose = c.verbose };

		/* its parser sees "report" as argv[0], as getopt expects */
		rc = ws_cmd_report(argc - c.report_at + 1, argv + c.report_at - 1, &g);
		goto out;
	}
	if (c.cmd == CMD_STUCK) {
		struct ws_report_globals g = { .plugin_dir = c.plugin_dir, .verbose = c.verbose };

		rc = ws_cmd_stuck(argc - c.report_at, argv + c.report_at, &g);
		goto out;
	}
	if (c.cmd == CMD_REC_RUN && !c.argv) {
		ws_log(WS_LOG_ERROR,
		       "record what? give record -- COMMAND or record attach PID; see whyslow help record");
		goto out;
	}
	if (c.config) {
		if (ws_config_load(&cfg, c.config, err, sizeof(err))) {
			ws_log(WS_LOG_ERROR, "%s", err);
			goto out;
		}
	}
	if (!c.cmd && from_config(&c, &cfg))
		goto out;
	if (!c.cmd) {
		ws_log(WS_LOG_ERROR,
		       "nothing to do: give run -- COMMAND or attach PID (or [core] command in the ini file); see whyslow --help");
		goto out;
	}
	if ((c.cmd & (CMD_ATTACH | CMD_REC_ATTACH)) && !c.npids) {
		ws_log(WS_LOG_ERROR, "attach needs at least one PID; see whyslow help attach");
		goto out;
	}
	if (c.cmd == CMD_RUN && !c.argv) {
		ws_log(WS_LOG_ERROR, "run needs a command: whyslow run -- COMMAND [ARGS...]");
		goto out;
	}
	for (int i = 0; i < c.nset; i++)
		if (ws_config_set(&cfg, "core", c.set_key[i], c.set_val[i]))
			goto out;
	/*
	 * A live report needs nothing finer than min_block/64, the default resolution; a
	 * recording is reported again at any --min-block, and a Perfetto timeline shows every
	 * switch: those record every period unless [core] resolution says otherwise.
	 */
	if (((c.cmd & (CMD_REC_RUN | CMD_REC_ATTACH)) || c.perfetto) &&
	    !ws_config_get(&cfg, "core", "resolution") &&
	    ws_config_set(&cfg, "core", "resolution", "0"))
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
	ws_session_warn_blind(s);
	ro.argv = c.argv;
	ro.user = c.user;
	ro.as_root = c.as_root;
	ro.wait = c.wait;
	ro.pids = c.pids;
	ro.npids = c.npids;
	/* run: the command's stdout stays its own; "-" asks for stdout */
	output = ws_config_get(&cfg, "core", "output");
	if (!output && c.cmd == CMD_RUN)
		output = WS_OUTFILE_STDERR;
	ro.output = output && strcmp(output, "-") ? output : NULL;
	if ((c.cmd & (CMD_REC_RUN | CMD_REC_ATTACH)) || c.perfetto) {
		job.record_path = (c.cmd & (CMD_REC_RUN | CMD_REC_ATTACH))
					  ? (c.trace ? c.trace : "whyslow.data")
					  : NULL;
		job.perfetto_path = c.perfetto;
		job.plugin_dir = so.plugin_dir;
		job.cfg = &cfg;
		job.argv = c.argv;
		job.attach = !!(c.cmd & (CMD_ATTACH | CMD_REC_ATTACH));
		ro.on_start = ws_trace_job_start;
		ro.on_finish = ws_trace_job_finish;
		ro.hook_ctx = &job;
		if (job.record_path) {
			ro.on_open_waits = ws_trace_job_open_waits;
			ro.output = !c.live ? "/dev/null" : strcmp(c.live, "-") ? c.live : NULL;
		}
	}
	ws_config_u64(&cfg, "core", ws_core_keys, "duration", &ro.duration_ns);
	ws_config_u64(&cfg, "core", ws_core_keys, "min_block", &ro.min_block_ns);
	ro.json = !strcmp(ws_config_str(&cfg, "core", ws_core_keys, "format"), "json");
	ro.open_waits =
		ro.json || !strcmp(ws_config_str(&cfg, "core", ws_core_keys, "format"), "text");
	/*
	 * json and folded reports stream as they go: no status line between their lines, whether
	 * they go to stderr or to stdout on the same terminal
	 */
	ws_status_init(c.verbose,
		       strcmp(ws_config_str(&cfg, "core", ws_core_keys, "format"), "text") &&
			       ((output && !strcmp(output, WS_OUTFILE_STDERR)) ||
				(!ro.output && isatty(STDOUT_FILENO))));
	fflush(stdout);
	rc = c.cmd & (CMD_RUN | CMD_REC_RUN) ? ws_run_command(s, &ro) : ws_attach(s, &ro);
out:
	ws_session_free(s);
	ws_config_free(&cfg);
	free(c.pids);
	free(c.given);
	return rc;
}
