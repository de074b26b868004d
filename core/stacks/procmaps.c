// SPDX-License-Identifier: MIT
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "procmaps.h"
#include "base/util.h"

int ws_procmaps_read_text(pid_t pid, char **text)
{
	char path[64];
	int err;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	err = ws_read_file(path, 16384, text, NULL);
	/* A process that exits while being read: its maps read as ESRCH. */
	return err == -ESRCH ? -ENOENT : err;
}

/* One maps line: "start-end perms offset major:minor inode   path". */
static int parse_line(char *line, struct ws_map *m)
{
	char perms[8];
	unsigned int maj, min;
	int path_at = 0;

	memset(m, 0, sizeof(*m));
	if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %7s %" SCNx64 " %x:%x %" SCNu64 " %n", &m->start,
		   &m->end, perms, &m->offset, &maj, &min, &m->inode, &path_at) < 7 ||
	    m->end <= m->start || strlen(perms) < 4)
		return -EINVAL;
	m->dev_major = maj;
	m->dev_minor = min;
	m->readable = perms[0] == 'r';
	m->writable = perms[1] == 'w';
	m->executable = perms[2] == 'x';
	if (path_at > 0 && line[path_at]) {
		char *p = line + path_at;
		size_t n = strlen(p);
		static const char del[] = " (deleted)";

		if (n > sizeof(del) - 1 && !strcmp(p + n - (sizeof(del) - 1), del)) {
			p[n - (sizeof(del) - 1)] = '\0';
			m->deleted = true;
		}
		m->path = p;
	}
	return 0;
}

int ws_procmaps_parse(const char *text, struct ws_procmaps *out)
{
	size_t cap = 0, n = 0;
	struct ws_map *maps = NULL;
	char *strs, *line, *save = NULL;
	int err;

	memset(out, 0, sizeof(*out));
	out->text = strdup(text);
	strs = strdup(text);
	if (!out->text || !strs) {
		free(out->text);
		free(strs);
		out->text = NULL;
		return -ENOMEM;
	}
	for (line = strtok_r(strs, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (n == cap) {
			struct ws_map *nm = realloc(maps, (cap ? cap * 2 : 64) * sizeof(*nm));

			if (!nm) {
				err = -ENOMEM;
				goto fail;
			}
			maps = nm;
			cap = cap ? cap * 2 : 64;
		}
		err = parse_line(line, &maps[n]);
		if (err)
			goto fail;
		/* The kernel lists mappings in address order; a saved text that is not is not a
		 * maps file. */
		if (n && maps[n].start < maps[n - 1].end) {
			err = -EINVAL;
			goto fail;
		}
		n++;
	}
	out->maps = maps;
	out->n = n;
	out->strs = strs;
	return 0;
fail:
	free(maps);
	free(strs);
	free(out->text);
	out->text = NULL;
	return err;
}

int ws_procmaps_read(pid_t pid, struct ws_procmaps *out)
{
	char *text;
	int err = ws_procmaps_read_text(pid, &text);

	if (err)
		return err;
	err = ws_procmaps_parse(text, out);
	free(text);
	return err;
}

const struct ws_map *ws_procmaps_find(const struct ws_procmaps *pm, uint64_t addr)
{
	size_t lo = 0, hi = pm->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (addr < pm->maps[mid].start)
			hi = mid;
		else if (addr >= pm->maps[mid].end)
			lo = mid + 1;
		else
			return &pm->maps[mid];
	}
	return NULL;
}

void ws_procmaps_free(struct ws_procmaps *pm)
{
	free(pm->maps);
	free(pm->strs);
	free(pm->text);
	memset(pm, 0, sizeof(*pm));
}
