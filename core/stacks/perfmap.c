// SPDX-License-Identifier: MIT
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "perfmap.h"
#include "symfile.h"
#include "base/util.h"

/* a JIT's map of a long-running service has some 100k lines */
#define PERF_MAP_MAX_LINES 4000000

static int perf_sym_cmp(const void *a, const void *b)
{
	const struct perf_sym *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* Lines "START SIZE name" in hex, as perf reads them. */
static int perf_map_load(struct ws_perf_map *pm, struct ws_strpool *strs, const char *path,
			 const struct stat *st)
{
	/* perf's rule: the process's user's (or root's) own file, not a link to someone else's */
	int fd = ws_symfile_open(path, WS_UOPEN_NOFOLLOW | WS_UOPEN_OWNED);
	struct perf_sym *syms = NULL;
	size_t n = 0, cap = 0, lines = 0;
	char *line = NULL;
	size_t lcap = 0;
	FILE *f;

	if (fd < 0)
		return fd;
	f = fdopen(fd, "re");
	if (!f) {
		close(fd);
		return -ENOMEM;
	}
	/* bounded: the file is the traced user's, and may be endless */
	while (lines++ < PERF_MAP_MAX_LINES && getline(&line, &lcap, f) > 0) {
		uint64_t start, size;
		int at = 0;
		char *name;

		if (sscanf(line, "%" SCNx64 " %" SCNx64 " %n", &start, &size, &at) < 2 || !at ||
		    !size)
			continue;
		name = line + at;
		name[strcspn(name, "\n")] = '\0';
		if (!*name)
			continue;
		if (ws_grow((void **)&syms, &cap, n + 1, sizeof(*syms)))
			break;
		syms[n].start = start;
		syms[n].size = size;
		syms[n].name = ws_strpool_intern(strs, name);
		if (syms[n].name)
			n++;
	}
	free(line);
	fclose(f);
	qsort(syms, n, sizeof(*syms), perf_sym_cmp);
	free(pm->syms);
	pm->syms = syms;
	pm->n = n;
	pm->mtime = st->st_mtim;
	pm->size = st->st_size;
	return 0;
}

static const struct perf_sym *perf_find(const struct ws_perf_map *pm, uint64_t addr)
{
	const struct perf_sym *best = NULL;
	size_t lo = 0, hi = pm->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (pm->syms[mid].start <= addr) {
			best = &pm->syms[mid];
			lo = mid + 1;
		} else {
			hi = mid;
		}
	}
	/* A JIT reuses memory: a later entry for the same range is the newer code, and sorting
	 * kept file order among equal starts, so the last one that covers wins. */
	return best && addr - best->start < best->size ? best : NULL;
}

const struct perf_sym *ws_perf_map_lookup(struct ws_perf_map *pm, struct ws_strpool *strs,
					  const char *dir, pid_t pid, uint64_t addr,
					  const char **path_out)
{
	const struct perf_sym *ps = perf_find(pm, addr);
	char path[4096];
	struct stat st;

	snprintf(path, sizeof(path), "%s/perf-%d.map", dir, (int)pid);
	if (ps)
		goto found;
	/* Entries are appended as code is generated: reload when the file has changed. */
	if (stat(path, &st) != 0)
		return NULL;
	if (pm->tried && st.st_size == pm->size && st.st_mtim.tv_sec == pm->mtime.tv_sec &&
	    st.st_mtim.tv_nsec == pm->mtime.tv_nsec)
		return NULL;
	pm->tried = true;
	if (perf_map_load(pm, strs, path, &st))
		return NULL;
	ps = perf_find(pm, addr);
	if (!ps)
		return NULL;
found:
	*path_out = ws_strpool_intern(strs, path);
	return *path_out ? ps : NULL;
}

void ws_perf_map_free(struct ws_perf_map *pm)
{
	free(pm->syms);
	memset(pm, 0, sizeof(*pm));
}
