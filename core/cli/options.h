/* SPDX-License-Identifier: MIT */
/*
 * The command line's one option table (options.c): every option of every command, one row
 * each, saying which commands it applies to, its names, what its value is, where the value
 * goes and its help. The table drives the parser (options_parse.c, the only getopt_long in
 * whyslow), each command's --help, and the option lists of whyslow(1) and the bash completion
 * (options_doc.c, `whyslow --dump-options=man|bash`), so they cannot drift apart.
 */
#ifndef WS_CLI_OPTIONS_H
#define WS_CLI_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "base/when.h"
#include "report/format.h"

/* The commands, as bits: a row applies to a set of them. */
enum ws_cmd {
	WS_CMD_NONE = 1 << 0, /* no command named: -c FILE alone, -p PID, --version */
	WS_CMD_RUN = 1 << 1,
	WS_CMD_ATTACH = 1 << 2,
	WS_CMD_RECORD = 1 << 3,	    /* record -- COMMAND */
	WS_CMD_REC_ATTACH = 1 << 4, /* record attach PID... */
	WS_CMD_REPORT = 1 << 5,
	WS_CMD_STUCK = 1 << 6,
	WS_CMD_WATCH = 1 << 7, /* attach for good, with a flight recorder and dumps */
	WS_CMD_DUMP = 1 << 8,  /* ask the running watch for a dump */
};
#define WS_CMD_TRACING (WS_CMD_RUN | WS_CMD_ATTACH | WS_CMD_RECORD | WS_CMD_REC_ATTACH)
#define WS_CMD_ALL \
	(WS_CMD_NONE | WS_CMD_TRACING | WS_CMD_REPORT | WS_CMD_STUCK | WS_CMD_WATCH | WS_CMD_DUMP)

/* What an option's value is, and so how it is checked. */
enum ws_opt_arg {
	WS_ARG_FLAG,	 /* no value */
	WS_ARG_COUNTER,	 /* no value; each one counts (-v -v) */
	WS_ARG_OPTIONAL, /* --opt or --opt=WORD */
	WS_ARG_STRING,	 /* a path, a user, a list: taken as written */
	WS_ARG_DURATION, /* a [core] duration key: its unit required, as in the ini */
	WS_ARG_COUNT,	 /* a [core] whole-number key */
	WS_ARG_FORMAT,	 /* one of the row's formats */
	WS_ARG_IDS,	 /* process or thread ids, 1,2 or repeated */
	WS_ARG_REGEX,	 /* POSIX extended, repeatable */
	WS_ARG_WHEN,	 /* a time of day or a duration from the start */
};

struct ws_opt {
	unsigned int cmds; /* enum ws_cmd bits */
	char short_name;   /* 0: none */
	const char *long_name;
	enum ws_opt_arg arg;
	const char *metavar; /* the value's name in the help: "DUR", "FILE" */
	/*
	 * Where the value goes: a [core] key, checked by its ws_core_keys row exactly as the
	 * ini's value is (type, unit, range) and applied over the ini; or, when NULL, the
	 * member of struct ws_cli at @field.
	 */
	const char *key;
	size_t field;
	unsigned int formats; /* WS_ARG_FORMAT: WS_FORMAT_BIT mask */
	const char *help;     /* one line, for --help; NULL: hidden */
	/* said after @help in whyslow(1) only; NULL: nothing more */
	const char *more;
	bool own_default; /* @help says the default: not the [core] key's */
};

/* The table, terminated by a row with long_name NULL. */
extern const struct ws_opt ws_opts[];

/* The commands' names, for the parser and the documents. */
struct ws_cmd_name {
	const char *name;
	unsigned int cmds; /* what --help and the documents group under it */
};
extern const struct ws_cmd_name ws_cmd_names[];

struct ws_ids {
	uint32_t *v;
	int n;
};

struct ws_strs {
	const char **v;
	int n;
};

struct ws_cli_when {
	bool set;
	struct ws_when when;
};

#define WS_CLI_MAX_CORE 16

/* Everything the command line said: each row's value lands in one member. */
struct ws_cli {
	unsigned int cmd; /* one enum ws_cmd bit; WS_CMD_NONE: none named */
	/* [core] keys set on the command line, in order, applied over the ini file */
	const char *core_key[WS_CLI_MAX_CORE], *core_val[WS_CLI_MAX_CORE];
	int ncore;
	const char *config, *sources, *plugin_dir, *user, *output, *live, *perfetto;
	const char *compress;	 /* record: "zstd" or "none"; NULL: zstd */
	const char *host;	 /* record: the host's name in the recording; NULL: the nodename */
	const char *clock_shift; /* record: a testing aid, the wall clock read this much ahead */
	const char *config_help, *dump_options;
	bool as_root, wait, help, version;
	/* watch: -a (its flight recorder, triggers and spool are [core] watch_* keys) */
	bool all;
	int verbose;
	enum ws_format format;
	bool format_set;
	struct ws_ids pids, tids; /* attach, stuck: the processes; report: filters */
	struct ws_strs comms;
	struct ws_strs cgroup_res; /* report --cgroup-match */
	struct ws_cli_when since, until;
	char **argv;		   /* run, record: the command */
	const char *file;	   /* report: the (first) recording */
	struct ws_strs more_files; /* report: recordings of other hosts, joined with it */
};

/*
 * Parse the whole command line into @c: the options before the command, the command (or
 * `help COMMAND`), its options and operands. 0, or -EINVAL after one line on stderr naming
 * the problem (or -ENOMEM).
 */
int ws_cli_parse(struct ws_cli *c, int argc, char **argv);
void ws_cli_free(struct ws_cli *c);
/* "1,2" or "1 2" (the ini's [core] attach): more processes for @c. 0, or -EINVAL (printed). */
int ws_cli_add_pids(struct ws_cli *c, const char *list);

/* "run", "record attach"...; "whyslow" for none. */
const char *ws_cmd_name(unsigned int cmd);

/* The "Options:" list of command @cmd (WS_CMD_NONE: the general help's). */
void ws_opts_help(FILE *f, unsigned int cmd);

/* whyslow --dump-options=@what ("man" or "bash"): 0, or -EINVAL for another word. */
int ws_opts_dump(FILE *f, const char *what);

#endif
