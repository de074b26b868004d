// SPDX-License-Identifier: MIT
/*
 * The command line, read with the option table (options.c): getopt_long's conventions for every
 * command (--opt=value, --opt value, -- ends the options), each option checked against the
 * command it is given to once that is known, and each value by its row's rules.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "options.h"
#include "base/log.h"
#include "base/util.h"
#include "session/core_keys.h"

#define PID_LIMIT 4194304 /* the kernel's PID_MAX_LIMIT */

/* One option as given, kept until the command it belongs to is known. */
struct given {
	const char *name; /* its long name: the rows to pick from */
	const char *arg;
	char text[48]; /* as typed, for messages: "-o", "--min-block" */
};

struct parser {
	struct ws_cli *c;
	int argc;
	char **argv;
	struct option lopts[64];
	char shortopts[64];
	struct given *given;
	int ngiven;
	bool dashdash; /* "--" seen: the rest are operands */
};

/* @fmt takes one string. One line naming the problem and where to read more; -EINVAL. */
static int bad(const struct ws_cli *c, const char *fmt, const char *a)
{
	char msg[512];

	snprintf(msg, sizeof(msg), fmt, a);
	if (c->cmd == WS_CMD_NONE)
		ws_log(WS_LOG_ERROR, "%s; see whyslow --help", msg);
	else
		ws_log(WS_LOG_ERROR, "%s; see whyslow help %s", msg,
		       c->cmd == WS_CMD_REC_ATTACH ? "record" : ws_cmd_name(c->cmd));
	return -EINVAL;
}

static int has_arg(enum ws_opt_arg a)
{
	return a == WS_ARG_FLAG || a == WS_ARG_COUNTER ? no_argument
	       : a == WS_ARG_OPTIONAL		       ? optional_argument
						       : required_argument;
}

/* getopt_long's tables from the rows: each name once ("+": stop at the first operand). */
static void build_tables(struct parser *p)
{
	int n = 0;
	size_t s = 0;

	p->shortopts[s++] = '+';
	for (const struct ws_opt *o = ws_opts; o->long_name; o++) {
		bool seen = false;

		for (int i = 0; i < n; i++)
			seen |= !strcmp(p->lopts[i].name, o->long_name);
		if (seen || n + 1 >= (int)ARRAY_SIZE(p->lopts))
			continue;
		p->lopts[n] = (struct option){ o->long_name, has_arg(o->arg), NULL, 256 + n };
		n++;
		if (o->short_name && s + 3 < sizeof(p->shortopts)) {
			p->shortopts[s++] = o->short_name;
			if (has_arg(o->arg) == required_argument)
				p->shortopts[s++] = ':';
		}
	}
	p->lopts[n] = (struct option){ NULL, 0, NULL, 0 };
	p->shortopts[s] = 0;
}

static const char *long_of_short(int ch)
{
	for (const struct ws_opt *o = ws_opts; o->long_name; o++)
		if (o->short_name == ch)
			return o->long_name;
	return NULL;
}

/* What getopt_long refused: one line saying why. */
static int refused(struct parser *p, const char *typed)
{
	size_t n;

	if (strncmp(typed, "--", 2)) {
		char opt[3] = { '-', (char)optopt, 0 };
		const char *name = long_of_short(optopt);

		if (optopt && name)
			return bad(p->c, "%s needs a value", opt);
		return bad(p->c, "unknown option '%s'", optopt ? opt : typed);
	}
	n = strcspn(typed + 2, "=");
	for (const struct option *o = p->lopts; o->name; o++) {
		if (strncmp(typed + 2, o->name, n) || o->name[n])
			continue;
		if (typed[2 + n] == '=')
			return bad(p->c, "%s: this option takes no value", typed);
		return bad(p->c, "%s needs a value", typed);
	}
	return bad(p->c, "unknown option '%s'", typed);
}

/*
 * Note the options from optind up to the first operand (or "--"). This is whyslow's one
 * getopt_long loop: every command's options go through it.
 */
static int collect(struct parser *p)
{
	int id, idx, at;

	opterr = 0;
	for (;;) {
		struct given *g;

		at = optind;
		idx = -1;
		id = getopt_long(p->argc, p->argv, p->shortopts, p->lopts, &idx);
		if (id == -1)
			break;
		if (id == '?' || id == ':')
			return refused(p, p->argv[optind - 1]);
		g = realloc(p->given, (p->ngiven + 1) * sizeof(*g));
		if (!g)
			return -ENOMEM;
		p->given = g;
		g = &p->given[p->ngiven++];
		g->name = id >= 256 ? p->lopts[id - 256].name : long_of_short(id);
		g->arg = optarg;
		if (id >= 256)
			snprintf(g->text, sizeof(g->text), "--%s", g->name);
		else
			snprintf(g->text, sizeof(g->text), "-%c", id);
	}
	p->dashdash = optind > at && !strcmp(p->argv[optind - 1], "--");
	return 0;
}

static int add_core(struct ws_cli *c, const struct ws_opt *o, const char *text, const char *v)
{
	const struct ws_config_key *k = ws_config_key_find(ws_core_keys, o->key);
	char why[192];

	/* the ini's rules, so that both accept and refuse the same values */
	if (k && ws_config_check_value(k, v, why, sizeof(why))) {
		ws_log(WS_LOG_ERROR, "%s: %s", text, why);
		return -EINVAL;
	}
	if (c->ncore == WS_CLI_MAX_CORE)
		return -E2BIG;
	c->core_key[c->ncore] = o->key;
	c->core_val[c->ncore++] = v;
	return 0;
}

/* "1,2", "1 2" or "1": ids 1 to PID_LIMIT, appended. */
static int add_ids(struct ws_cli *c, struct ws_ids *ids, const char *text, const char *v)
{
	const char *what_id = ids == &c->tids ? "thread id" : "process id";
	char *copy = strdup(v), *save = NULL;
	int err = 0, before = ids->n;

	if (!copy)
		return -ENOMEM;
	for (char *t = strtok_r(copy, " ,", &save); t && !err; t = strtok_r(NULL, " ,", &save)) {
		uint64_t x;
		uint32_t *grown;

		if (ws_parse_u64(t, &x) || !x || x > PID_LIMIT) {
			char what[256];

			snprintf(what, sizeof(what), "%s%s'%s' is not a %s", text,
				 *text ? ": " : "", t, what_id);
			err = bad(c, "%s", what);
			break;
		}
		grown = realloc(ids->v, (ids->n + 1) * sizeof(*ids->v));
		if (!grown) {
			err = -ENOMEM;
			break;
		}
		ids->v = grown;
		ids->v[ids->n++] = (uint32_t)x;
	}
	if (!err && ids->n == before) {
		char what[256];

		snprintf(what, sizeof(what), "%s%s'%s' names no %s", text, *text ? ": " : "", v,
			 what_id);
		err = bad(c, "%s", what);
	}
	free(copy);
	return err;
}

static int store(struct ws_cli *c, const struct ws_opt *o, const struct given *g)
{
	char *at = (char *)c + o->field, names[64];
	const char *v = g->arg;

	if (o->key)
		/* a flag sets its key; one named no-KEY clears it */
		return add_core(c, o, g->text,
				o->arg != WS_ARG_FLAG		  ? v
				: strncmp(o->long_name, "no-", 3) ? "true"
								  : "false");
	switch (o->arg) {
	case WS_ARG_FLAG:
		*(bool *)at = true;
		return 0;
	case WS_ARG_COUNTER:
		++*(int *)at;
		return 0;
	case WS_ARG_OPTIONAL:
		*(const char **)at = v ? v : "";
		return 0;
	case WS_ARG_FORMAT:
		if (ws_format_parse(v, o->formats, (enum ws_format *)at)) {
			ws_format_list(o->formats, ", ", names, sizeof(names));
			ws_log(WS_LOG_ERROR, "%s: '%s' is not %s", g->text, v, names);
			return -EINVAL;
		}
		c->format_set = true;
		return 0;
	case WS_ARG_IDS:
		return add_ids(c, (struct ws_ids *)at, g->text, v);
	case WS_ARG_REGEX: {
		struct ws_strs *s = (struct ws_strs *)at;
		const char **grown = realloc(s->v, (s->n + 1) * sizeof(*s->v));

		if (!grown)
			return -ENOMEM;
		s->v = grown;
		s->v[s->n++] = v;
		return 0;
	}
	case WS_ARG_WHEN: {
		struct ws_cli_when *w = (struct ws_cli_when *)at;

		if (ws_when_parse(v, &w->when)) {
			ws_log(WS_LOG_ERROR,
			       "%s %s: give a time as the report prints it (14:32:07.001) or a duration from the start with its unit (2s)",
			       g->text, v);
			return -EINVAL;
		}
		w->set = true;
		return 0;
	}
	default: /* STRING; DURATION and COUNT always name a [core] key */
		*(const char **)at = v;
		return 0;
	}
}

/* Apply the options collected, now that the command is known. */
static int apply(struct parser *p)
{
	struct ws_cli *c = p->c;
	/* no command named: the ini file's [core] command or attach decides (main()) */
	unsigned int mask =
		c->cmd != WS_CMD_NONE ? c->cmd : WS_CMD_NONE | WS_CMD_RUN | WS_CMD_ATTACH;

	for (int i = 0; i < p->ngiven; i++) {
		const struct given *g = &p->given[i];
		const struct ws_opt *o = ws_opts;
		int err;

		while (o->long_name && (strcmp(o->long_name, g->name) || !(o->cmds & mask)))
			o++;
		if (!o->long_name) {
			char what[128];

			snprintf(what, sizeof(what), "%s does not apply to %s", g->text,
				 ws_cmd_name(c->cmd));
			return bad(c, "%s", what);
		}
		if ((err = store(c, o, g)))
			return err;
	}
	return 0;
}

static unsigned int cmd_from_name(const char *s)
{
	for (const struct ws_cmd_name *n = ws_cmd_names; n->name; n++)
		if (n->cmds && !strcmp(s, n->name))
			return n->cmds & ~WS_CMD_REC_ATTACH; /* "record" is record -- COMMAND until
								 "attach" follows */
	return 0;
}

static int help_operand(struct parser *p, const char *word)
{
	struct ws_cli *c = p->c;

	c->help = true;
	c->cmd = word ? cmd_from_name(word) : WS_CMD_NONE;
	if (!c->cmd) {
		c->cmd = WS_CMD_NONE;
		return bad(
			c,
			"help: no command '%s' (run, attach, record, report, stuck, watch, dump)",
			word);
	}
	return 0;
}

/* The word at optind, which is not an option. 1: the rest belongs to the command, 0: go on. */
static int operand(struct parser *p)
{
	struct ws_cli *c = p->c;
	char *word = p->argv[optind];

	if (c->cmd == WS_CMD_NONE) {
		if (p->dashdash) { /* "whyslow [options] -- COMMAND": run */
			c->cmd = WS_CMD_RUN;
			c->argv = p->argv + optind;
			return 1;
		}
		optind++;
		if (!strcmp(word, "help")) {
			int err = help_operand(p, optind < p->argc ? p->argv[optind++] : NULL);

			return err ? err : 1;
		}
		c->cmd = cmd_from_name(word);
		if (!c->cmd) {
			c->cmd = WS_CMD_NONE;
			return bad(
				c,
				"unknown command '%s' (run, attach, record, report, stuck, watch, dump, help)",
				word);
		}
		return 0;
	}
	if (c->cmd == WS_CMD_RECORD && !p->dashdash && !strcmp(word, "attach")) {
		c->cmd = WS_CMD_REC_ATTACH;
		optind++;
		return 0;
	}
	switch (c->cmd) {
	case WS_CMD_RUN:
	case WS_CMD_RECORD:
		c->argv = p->argv + optind;
		return 1;
	case WS_CMD_REPORT:
		if (c->file) {
			/* several recordings: one per host, joined (report/xhost.h) */
			const char **grown =
				realloc(c->more_files.v, (c->more_files.n + 1) * sizeof(*grown));

			if (!grown)
				return -ENOMEM;
			c->more_files.v = grown;
			c->more_files.v[c->more_files.n++] = word;
			break;
		}
		c->file = word;
		break;
	case WS_CMD_ATTACH:
	case WS_CMD_REC_ATTACH:
		if (p->dashdash)
			return bad(c, "attach takes PIDs, not a command after --%s", "");
		/* fall through */
	default:
		if (add_ids(c, &c->pids, "", word))
			return -EINVAL;
	}
	optind++;
	return 0;
}

int ws_cli_parse(struct ws_cli *c, int argc, char **argv)
{
	struct parser p = { .c = c, .argc = argc, .argv = argv };
	int err = 0;

	c->cmd = WS_CMD_NONE;
	build_tables(&p);
	optind = 1;
	while (!err) {
		if (!p.dashdash && (err = collect(&p)))
			break;
		if (optind >= argc)
			break;
		err = operand(&p);
	}
	/* -p PID with no command means attach */
	if (err >= 0 && c->cmd == WS_CMD_NONE && !c->help)
		for (int i = 0; i < p.ngiven; i++)
			if (!strcmp(p.given[i].name, "pid"))
				c->cmd = WS_CMD_ATTACH;
	if (err >= 0)
		err = apply(&p);
	free(p.given);
	return err < 0 ? err : 0;
}

int ws_cli_add_pids(struct ws_cli *c, const char *list)
{
	return add_ids(c, &c->pids, "", list);
}

void ws_cli_free(struct ws_cli *c)
{
	free(c->pids.v);
	free(c->tids.v);
	free(c->comms.v);
	free(c->cgroup_res.v);
	free(c->more_files.v);
	memset(c, 0, sizeof(*c));
}
