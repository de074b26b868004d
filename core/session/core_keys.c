// SPDX-License-Identifier: MIT
/* The core's own ini keys, one row each: default, limits and help. Every reader of a [core] key
 * (the session, the commands, `--config-help`) takes its default from here; there is no other copy.
 */
#include "stacks/capture.h"

#include "core_keys.h"

const struct ws_config_key ws_core_keys[] = {
	{ "format", WS_CFG_STRING, "text", 0, 0,
	  "output format: text, json, folded (flame graph stacks) or pprof (the same as a gzipped profile.proto)" },
	{ "output", WS_CFG_STRING, NULL, 0, 0, "write the report to this file instead of stdout" },
	{ "min_block", WS_CFG_DURATION, "10ms", 0, 3600000000000ULL,
	  "report waits (time off CPU) at least this long" },
	{ "resolution", WS_CFG_DURATION, NULL, 0, 3600000000000ULL,
	  "off-CPU periods shorter than this that another task ended (not an interrupt) are summed per thread and cause (syscall and its first argument, or the runqueue) in the kernel, not recorded one by one (default: min_block/64, the finest piece a chain shows, for every command; a recording can be reported at any --min-block of at least 64 times it; 0: every switch)" },
	{ "top", WS_CFG_U64, "5", 1, 100000, "text output: how many of the longest chains" },
	{ "include_idle", WS_CFG_BOOL, "false", 0, 0,
	  "rank idle waits (nobody was working to end them) with the rest" },
	{ "requests", WS_CFG_STRING, "auto", 0, 0,
	  "rank what cost requests (found from socket traffic) instead of every thread's waits: auto (when a traced thread answered one), on or off" },
	{ "request_min_latency", WS_CFG_DURATION, "0", 0, 3600000000000ULL,
	  "requests: count and rank only requests at least this long (0: every one)" },
	{ "request_port", WS_CFG_U64, "0", 0, 65535,
	  "requests: count and rank only those served on this local port (0: any)" },
	{ "sources", WS_CFG_STRING, NULL, 0, 0,
	  "comma-separated sources (default: all installed)" },
	{ "plugin_dir", WS_CFG_STRING, NULL, 0, 0, "directory the source plugins are loaded from" },
	{ "ring_size", WS_CFG_U64, "16M", 65536, 1ULL << 30, "BPF ring buffer bytes (power of 2)" },
	{ "max_processes", WS_CFG_U64, "16384", 1, 1ULL << 22,
	  "processes traced at once; new ones past it are not traced, and are counted (UNTRACED) with the chains touching them marked incomplete" },
	{ "reorder_window", WS_CFG_DURATION, "20ms", 1000000, 10000000000ULL,
	  "how long records are held to restore timestamp order" },
	{ "max_window", WS_CFG_DURATION, "10s", 1000000000ULL, 3600000000000ULL,
	  "longest wait whose chain is kept whole; longer ones are marked incomplete" },
	{ "max_history", WS_CFG_U64, "128M", 1ULL << 20, 1ULL << 40,
	  "most memory for the history chains are walked over; past it the oldest goes first and waits reaching back further are marked incomplete" },
	{ "duration", WS_CFG_DURATION, "0", 0, 0,
	  "stop tracing after this long (0: until Ctrl-C); run then ends the command" },
	{ "command", WS_CFG_STRING, NULL, 0, 0,
	  "with no run/attach on the command line: run this shell command" },
	{ "attach", WS_CFG_STRING, NULL, 0, 0,
	  "with no run/attach on the command line: attach to these PIDs (space-separated)" },
	{ "cgroup", WS_CFG_STRING, NULL, 0, 0,
	  "attach: trace every process of this cgroup (its directory under /sys/fs/cgroup, v1 or v2) and its sub-cgroups, and each process that joins one later" },
	{ "stacks", WS_CFG_BOOL, "true", 0, 0,
	  "capture the user and kernel stacks of waits of at least min_block (and of their wakers)" },
	{ "stack_user_bytes", WS_CFG_U64, "16K", 0, WS_STACK_USER_MAX,
	  "bytes of user stack copied for unwinding (deeper stacks are cut short)" },
	{ "stack_depth", WS_CFG_U64, "3", 0, 64,
	  "text output: user frames shown per link (and one kernel frame; 0: none)" },
	{ NULL },
};
