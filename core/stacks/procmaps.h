/* SPDX-License-Identifier: MIT */
/* A process's memory map, parsed from the text of /proc/PID/maps (read now, or saved earlier so
 * that addresses of a process that has exited can still be placed). */
#ifndef WS_PROCMAPS_H
#define WS_PROCMAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct ws_map {
	uint64_t start, end; /* [start, end) */
	uint64_t offset;     /* file offset of start */
	uint64_t inode;
	uint32_t dev_major, dev_minor;
	bool readable, writable, executable;
	bool deleted;	  /* the file was unlinked after it was mapped */
	const char *path; /* NULL when anonymous; "[vdso]", "[heap]"... as the kernel names them */
};

struct ws_procmaps {
	struct ws_map *maps; /* sorted by start, as the kernel lists them */
	size_t n;
	char *text; /* the text parsed, NUL-terminated (paths point into a copy of it) */
	char *strs;
};

/* Parse maps text.  0, -EINVAL (a line that is not a maps line) or -ENOMEM. */
int ws_procmaps_parse(const char *text, struct ws_procmaps *out);
/* Read and parse /proc/@pid/maps.  0 or a negative errno (-ENOENT: no such process). */
int ws_procmaps_read(pid_t pid, struct ws_procmaps *out);
/* Read /proc/@pid/maps into a malloc()ed NUL-terminated string.  0 or a negative errno. */
int ws_procmaps_read_text(pid_t pid, char **text);
/* The mapping that holds @addr, or NULL. */
const struct ws_map *ws_procmaps_find(const struct ws_procmaps *pm, uint64_t addr);
void ws_procmaps_free(struct ws_procmaps *pm);

#endif
