/* SPDX-License-Identifier: MIT */
/*
 * The perf map of one process (/tmp/perf-PID.map): names of code a JIT or an interpreter
 * generated (Python 3.12+ -X perf, node --perf-basic-prof, perf-map-agent).
 */
#ifndef WS_PERFMAP_H
#define WS_PERFMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "base/strpool.h"

struct perf_sym {
	uint64_t start, size;
	const char *name;
};

struct ws_perf_map {
	struct perf_sym *syms; /* by start */
	size_t n;
	bool tried;
	struct timespec mtime; /* of the file as loaded */
	off_t size;
};

/*
 * The symbol covering @addr in process @pid's map under @dir, reloading the file when it has
 * changed since; *@path_out is the file's (interned) path. NULL when none covers it.
 */
const struct perf_sym *ws_perf_map_lookup(struct ws_perf_map *pm, struct ws_strpool *strs,
					  const char *dir, pid_t pid, uint64_t addr,
					  const char **path_out);

void ws_perf_map_free(struct ws_perf_map *pm);

#endif
