// SPDX-License-Identifier: MIT
/*
 * Every option of every command, one row each (see options.h). Rows are grouped by the
 * commands they apply to, in the order --help and whyslow(1) list them. An option whose value
 * is a [core] key names the key: its type, unit, range and default come from ws_core_keys
 * (session/core_keys.c), never from here.
 */
#include <stddef.h>

#include "options.h"

#define F(member) offsetof(struct ws_cli, member)
#define TRACING_ANY (WS_CMD_TRACING | WS_CMD_WATCH | WS_CMD_NONE)

const struct ws_cmd_name ws_cmd_names[] = {
	{ "run", WS_CMD_RUN },
	{ "attach", WS_CMD_ATTACH },
	{ "record", WS_CMD_RECORD | WS_CMD_REC_ATTACH },
	{ "report", WS_CMD_REPORT },
	{ "stuck", WS_CMD_STUCK },
	{ "watch", WS_CMD_WATCH },
	{ "dump", WS_CMD_DUMP },
	{ "help", 0 },
	{ NULL, 0 },
};

/* A table laid out one option per entry: clang-format would re-indent all of it for one long help
 * text. */
/* clang-format off */
const struct ws_opt ws_opts[] = {
	/* every command */
	{ WS_CMD_ALL, 0, "plugin-dir", WS_ARG_STRING, "DIR", NULL, F(plugin_dir), 0,
	  "load source plugins from DIR (env WHYSLOW_PLUGIN_DIR)", NULL, false },
	{ WS_CMD_ALL, 'v', "verbose", WS_ARG_COUNTER, NULL, NULL, F(verbose), 0,
	  "more detail; twice for libbpf's debug log (verifier output)", NULL, false },
	{ WS_CMD_ALL, 0, "config-help", WS_ARG_OPTIONAL, "text|ini|man", NULL, F(config_help), 0,
	  "every ini key with its default, range and meaning",
	  "From the key tables of the core and of each installed plugin: text (default), ini (a file holding every default) or man (the body of whyslow.ini(5)).",
	  false },
	{ WS_CMD_ALL, 0, "version", WS_ARG_FLAG, NULL, NULL, F(version), 0,
	  "print the version, the plugin ABI and the default plugin directory", NULL, false },
	{ WS_CMD_ALL, 'h', "help", WS_ARG_FLAG, NULL, NULL, F(help), 0,
	  "this help (whyslow help COMMAND, or COMMAND --help: the command's)", NULL, false },
	/* hidden: writes the lists of whyslow(1) and the bash completion (tools/gen-options) */
	{ WS_CMD_NONE, 0, "dump-options", WS_ARG_STRING, "man|bash", NULL, F(dump_options), 0, NULL,
	  NULL, false },

	/* what is traced: run, attach, record */
	{ TRACING_ANY, 'c', "config", WS_ARG_STRING, "FILE", NULL, F(config), 0,
	  "read settings from an ini file (see whyslow.ini(5)); options override it", NULL, false },
	{ TRACING_ANY, 0, "sources", WS_ARG_STRING, "LIST", NULL, F(sources), 0,
	  "comma-separated sources to enable, e.g. sched,futex,blkio (default: every plugin installed)",
	  "Without sched no wait is seen: whyslow warns.", false },
	{ WS_CMD_TRACING, 0, "format", WS_ARG_FORMAT, "FMT", NULL, F(format), WS_FORMATS_LIVE,
	  "text (default), json (JSON Lines, one chain per line), folded (one line per piece of a wait, for flame graphs) or pprof (the same stacks as a gzipped profile.proto for go tool pprof, Pyroscope, Parca; needs -o FILE); record: of --live",
	  "Text: for run, the command's critical path, then the costliest reasons, the --top longest chains, and a summary ranking root causes. JSON: every chain, every reason, then a summary object.",
	  true },
	{ WS_CMD_TRACING | WS_CMD_WATCH, 0, "duration", WS_ARG_DURATION, "DUR", "duration", 0, 0,
	  "stop tracing after DUR and report the waits still open (default: Ctrl-C or the end); run then ends the command",
	  NULL, true },
	{ WS_CMD_TRACING, 0, "perfetto", WS_ARG_STRING, "FILE", NULL, F(perfetto), 0,
	  "also write the chains as a Perfetto trace (ui.perfetto.dev)", NULL, false },

	{ WS_CMD_TRACING | WS_CMD_WATCH, 0, "metrics", WS_ARG_STRING, "[ADDR:]PORT", "metrics", 0,
	  0,
	  "serve Prometheus metrics at http://ADDR:PORT/metrics while tracing (a port alone: 127.0.0.1)",
	  "Off-CPU seconds of the reported waits per process by root-cause class, a histogram of their durations, the records lost, whyslow's own CPU time and memory; whyslow(1) METRICS lists them. ADDR is an IPv4 address, a host name or [IPv6]; an address that cannot be served stops whyslow before anything is traced. One request per connection, answered within 2 seconds or dropped, so a client never holds up the tracing.",
	  false },

	/* the report's own settings, live and from a recording */
	{ WS_CMD_TRACING | WS_CMD_STUCK | WS_CMD_WATCH, 0, "min-block", WS_ARG_DURATION, "DUR",
	  "min_block", 0, 0, "report waits (time off CPU) at least this long; units required", NULL,
	  false },
	{ WS_CMD_TRACING | WS_CMD_REPORT, 0, "top", WS_ARG_COUNT, "N", "top", 0, 0,
	  "text: show the N longest chains", NULL, false },
	{ WS_CMD_TRACING | WS_CMD_REPORT, 0, "stack-depth", WS_ARG_COUNT, "N", "stack_depth", 0, 0,
	  "text: user frames shown per link, and one kernel frame (0: none); JSON, Perfetto and folded carry them all",
	  NULL, false },
	{ WS_CMD_TRACING | WS_CMD_REPORT, 0, "include-idle", WS_ARG_FLAG, NULL, "include_idle", 0,
	  0,
	  "rank idle waits too (epoll_wait, accept... that nobody was working to end); by default they are only counted",
	  "A wait is idle when nobody was working to end it: the thread waited in epoll_wait, poll, select, accept, sigtimedwait or pause, or on a futex, and at least half of the wait is explained by waiting for work (the same calls, or a waker's sleep) rather than by work. By default idle waits are only counted in the summary (idle_waits, idle_ns); the critical path of run includes them either way.",
	  false },

	{ WS_CMD_TRACING | WS_CMD_REPORT, 0, "requests", WS_ARG_FLAG, NULL, "requests", 0, 0,
	  "rank what cost requests even when none was seen (default: when a traced thread answered one)",
	  "A request is found from socket traffic alone: on the server's end of a connection, it begins when a receive returns data after the last send (or at the first receive) and ends with the last send before the next receive. Each is explained as the critical path of the thread that received it, its parts adding up to its latency; the reasons are ranked by the time they cost the requests, and waits outside requests are not ranked. JSON: one request object each, and a requests object before the summary.",
	  false },
	{ WS_CMD_TRACING | WS_CMD_REPORT, 0, "no-requests", WS_ARG_FLAG, NULL, "requests", 0, 0,
	  "rank every thread's waits, as without requests", NULL, false },

	{ WS_CMD_TRACING | WS_CMD_REPORT, 0, "min-latency", WS_ARG_DURATION, "DUR",
	  "request_min_latency", 0, 0, "requests: count and rank only requests at least this long",
	  NULL, false },
	{ WS_CMD_TRACING | WS_CMD_REPORT, 0, "port", WS_ARG_COUNT, "N", "request_port", 0, 0,
	  "requests: only those served on local port N", NULL, false },

	/* run and attach: where the report goes */
	{ WS_CMD_RUN | WS_CMD_ATTACH, 'o', "output", WS_ARG_STRING, "FILE", "output", 0, 0,
	  "write the report to FILE (complete, or not at all); - = stdout",
	  "Every output path (-o, --perfetto, --live) is opened before the command starts, so a bad one stops whyslow before anything runs. See OUTPUT FILES for what whyslow will and will not write over.",
	  false },

	/* run and record -- COMMAND: the command's life */
	{ WS_CMD_RUN | WS_CMD_RECORD, 'u', "user", WS_ARG_STRING, "USER", NULL, F(user), 0,
	  "run COMMAND as USER (default under sudo: $SUDO_USER)", NULL, false },
	{ WS_CMD_RUN | WS_CMD_RECORD, 0, "as-root", WS_ARG_FLAG, NULL, NULL, F(as_root), 0,
	  "keep root for COMMAND", NULL, false },
	{ WS_CMD_RUN | WS_CMD_RECORD, 0, "wait", WS_ARG_FLAG, NULL, NULL, F(wait), 0,
	  "when COMMAND exits, trace what it left behind until that exits (default: name it, and stop 10s later)",
	  NULL, false },

	/* attach */
	{ WS_CMD_ATTACH | WS_CMD_REC_ATTACH | WS_CMD_WATCH | WS_CMD_NONE, 'p', "pid", WS_ARG_IDS,
	  "PID[,PID]", NULL, F(pids), 0,
	  "a process to trace (repeatable; or give PIDs as arguments); whyslow -p PID alone means attach",
	  NULL, false },

	{ WS_CMD_ATTACH | WS_CMD_REC_ATTACH | WS_CMD_WATCH | WS_CMD_NONE, 0, "cgroup",
	  WS_ARG_STRING, "PATH", "cgroup", 0, 0,
	  "trace every process of this cgroup (a directory under /sys/fs/cgroup) and of its sub-cgroups, and each process that joins one later",
	  "A process moved in later is traced from the move on, with the threads it makes from then; threads it had before the move are not. Attach ends when every traced process has exited.",
	  false },

	{ WS_CMD_ATTACH | WS_CMD_WATCH | WS_CMD_NONE, 0, "comm", WS_ARG_STRING, "NAME[,NAME]",
	  "comm", 0, 0,
	  "trace every process whose command name is NAME (exact; a list: any of them), and each process that takes such a name later by exec (not with -p or --cgroup)",
	  "The kernel's name (/proc/PID/comm: the program's file name, at most 15 characters). A process that execs into another name stops being traced, and so do the processes it makes from then on; a fork keeps its parent's name. Decided at exec, never per event. attach needs one running; watch runs while they come and go.",
	  false },

	/* watch */
	{ WS_CMD_WATCH, 'a', "all", WS_ARG_FLAG, NULL, NULL, F(all), 0,
	  "watch every process of the system (not with -p, --cgroup or --comm)",
	  "The processes running when watch starts, but its own and kernel threads, and every process they start from then on (a kernel thread is followed where it works for one of them).",
	  false },
	{ WS_CMD_WATCH, 0, "keep", WS_ARG_DURATION, "DUR", "watch_keep", 0, 0,
	  "keep the last DUR of records in memory, what a dump holds (default 30s)",
	  "The flight recorder holds what a recording would: every record the ring gave, stacks resolved, in time order; the oldest go first.",
	  true },
	{ WS_CMD_WATCH, 0, "keep-mb", WS_ARG_COUNT, "N", "watch_keep_mb", 0, 0,
	  "and at most N megabytes of them (default 64): when they fill it, a dump covers less than --keep and says so",
	  NULL, true },
	{ WS_CMD_WATCH, 0, "trigger", WS_ARG_DURATION, "DUR", "watch_trigger", 0, 0,
	  "dump when a wait of at least DUR is reported (default: no trigger, dumps on demand only)",
	  "Idle waits (a server waiting for work) never trigger. The dump is written a second after the wait was reported, so that its chain and what followed are in it.",
	  true },
	{ WS_CMD_WATCH, 0, "min-interval", WS_ARG_DURATION, "DUR", "watch_min_interval", 0, 0,
	  "at most one triggered dump per DUR (default 60s): the triggers in between make one dump, which counts them",
	  "SIGUSR1 and whyslow dump are not limited.", true },
	{ WS_CMD_WATCH, 0, "spool", WS_ARG_STRING, "DIR", "watch_spool", 0, 0,
	  "write dumps to DIR (default /var/lib/whyslow; made 0700, dumps 0600)",
	  "Each dump is a recording, whyslow-TIME-PID-SEQ.data, read with whyslow report, beside a NAME.data.json that says why it was made, how many triggers it stands for and what the flight recorder dropped. A dump is written to a temporary file and renamed, never over an existing path; DIR must be the user's own and writable by nobody else.",
	  true },
	{ WS_CMD_WATCH, 0, "spool-mb", WS_ARG_COUNT, "N", "watch_spool_mb", 0, 0,
	  "keep at most N megabytes of dumps, the oldest removed first (default 512); no dump leaves its file system less than 5% free",
	  NULL, true },

	/* record */
	{ WS_CMD_RECORD | WS_CMD_REC_ATTACH, 'o', "output", WS_ARG_STRING, "FILE", NULL, F(output),
	  0, "the recording (default whyslow.data)", NULL, false },
	{ WS_CMD_RECORD | WS_CMD_REC_ATTACH, 0, "live", WS_ARG_STRING, "FILE", NULL, F(live), 0,
	  "also write the live analysis (--format) to FILE; - = stdout",
	  "A write error there (a full disk) ends the live file, said once; the recording is still written whole.",
	  false },
	{ WS_CMD_RECORD | WS_CMD_REC_ATTACH, 0, "compress", WS_ARG_STRING, "zstd|none", NULL,
	  F(compress), 0, "zstd (default) or none: how the recording's records are stored",
	  "zstd (level 3) makes a recording 10 to 20 times smaller (BENCHMARKS.md); none writes the records as they are, for a whyslow older than format 1.6 (docs/trace-format.md).",
	  false },

	{ WS_CMD_RECORD | WS_CMD_REC_ATTACH, 0, "host", WS_ARG_STRING, "NAME", NULL, F(host), 0,
	  "the name of this host in the recording (default: its nodename)",
	  "report of several recordings names each link's host so; give each host its own.", true },
	{ WS_CMD_RECORD | WS_CMD_REC_ATTACH, 0, "clock-shift", WS_ARG_STRING, "DUR", NULL,
	  F(clock_shift), 0,
	  "a testing aid: record as if this host's wall clock were DUR ahead (default 0)",
	  "For tests of a report of several recordings made on one machine: the clock offset that report estimates between hosts is then DUR. Only the wall-clock anchor moves; event times and the analysis are unchanged.",
	  true },

	/* report */
	{ WS_CMD_REPORT, 0, "format", WS_ARG_FORMAT, "FMT", NULL, F(format), WS_FORMATS_REPORT,
	  "text (default), json (JSON Lines), folded (flame graph stacks), pprof (the same stacks as a gzipped profile.proto) or perfetto (trace-event JSON for ui.perfetto.dev or chrome://tracing)",
	  NULL, true },
	{ WS_CMD_REPORT, 'o', "output", WS_ARG_STRING, "FILE", NULL, F(output), 0,
	  "write to FILE (complete, or not at all) instead of stdout; - = stdout", NULL, false },
	{ WS_CMD_REPORT, 0, "min-block", WS_ARG_DURATION, "DUR", "min_block", 0, 0,
	  "report waits at least this long (default: the recording's)", NULL, true },
	{ WS_CMD_REPORT, 0, "tid", WS_ARG_IDS, "N", NULL, F(tids), 0,
	  "only chains whose victim is thread N (repeatable)", NULL, false },
	{ WS_CMD_REPORT, 'p', "pid", WS_ARG_IDS, "N", NULL, F(pids), 0,
	  "only chains whose victim is in process N (repeatable)", NULL, false },
	{ WS_CMD_REPORT, 0, "comm", WS_ARG_REGEX, "REGEX", NULL, F(comms), 0,
	  "only chains whose victim's whole name matches REGEX (POSIX extended; a plain name matches itself; repeatable)",
	  NULL, false },
	{ WS_CMD_REPORT, 0, "cgroup-match", WS_ARG_REGEX, "REGEX", NULL, F(cgroup_res), 0,
	  "only chains whose victim's cgroup path matches REGEX anywhere (POSIX extended; anchor it with ^ and $; repeatable)",
	  "The path is the thread's in the cpu controller's hierarchy on cgroup v1, in the unified one on v2, relative to its root (/system.slice/backup.service), as read when the recording first named the thread; a thread whose cgroup was not read (or a recording before format 1.9) matches none. Not attach's --cgroup, which takes a directory to trace.",
	  false },
	{ WS_CMD_REPORT, 0, "since", WS_ARG_WHEN, "WHEN", NULL, F(since), 0,
	  "only waits that began at WHEN or later: a time as the text report prints it (14:32:07.001) or a duration from the start (2s)",
	  "A time of day is local time; one more than 12 hours before the recording's start means the next day.",
	  false },
	{ WS_CMD_REPORT, 0, "until", WS_ARG_WHEN, "WHEN", NULL, F(until), 0,
	  "only waits that began before WHEN (same forms)", NULL, false },

	/* stuck */
	{ WS_CMD_STUCK, 0, "format", WS_ARG_FORMAT, "FMT", NULL, F(format), WS_FORMATS_STUCK,
	  "text (default) or json (JSON Lines: deadlock and open_wait objects)", NULL, true },
	{ 0, 0, NULL, 0, NULL, NULL, 0, 0, NULL, NULL, false },
};
/* clang-format on */

const char *ws_cmd_name(unsigned int cmd)
{
	switch (cmd) {
	case WS_CMD_RUN:
		return "run";
	case WS_CMD_ATTACH:
		return "attach";
	case WS_CMD_RECORD:
		return "record";
	case WS_CMD_REC_ATTACH:
		return "record attach";
	case WS_CMD_REPORT:
		return "report";
	case WS_CMD_STUCK:
		return "stuck";
	case WS_CMD_WATCH:
		return "watch";
	case WS_CMD_DUMP:
		return "dump";
	}
	return "whyslow";
}
