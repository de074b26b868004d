/* SPDX-License-Identifier: MIT */
/*
 * The files a stack's names come from, found and opened by the rules of useropen.h: the ELF file
 * a process mapped, and its separate debug file — by build-id under /usr/lib/debug, or by
 * .gnu_debuglink, a plain file name looked up only beside the file, in its .debug/ and under
 * /usr/lib/debug, and taken only when its build-id (or, without one, its CRC) matches. libdwfl's
 * own finders open whatever path a binary names, as root, and may block for good.
 *
 * libdwfl's callbacks take no argument of ours, so whoever symbolizes for a process sets the
 * context (whose permissions, where refusals are counted) around the calls with
 * ws_symfile_use(); with none set, files are opened by useropen.h's rules for an unknown user.
 */
#ifndef WS_SYMFILE_H
#define WS_SYMFILE_H

#include <elfutils/libdwfl.h>
#include <errno.h>
#include <stddef.h>
#include <stdint.h>

#include "access/useropen.h"

#define WS_SYMFILE_REFUSALS 16

/* Files whose symbols were not read, and why: the first few kept by path, all counted. */
struct ws_symfile_log {
	struct {
		char *path;
		int err; /* an error of ws_useropen() */
	} items[WS_SYMFILE_REFUSALS];
	size_t n;
	uint64_t total; /* refusals of distinct paths, kept or not */
};

void ws_symfile_log_free(struct ws_symfile_log *log);

struct ws_symfile_ctx {
	struct ws_useropen *uo;
	const struct ws_reader_id *id; /* NULL: the process's user is not known */
	struct ws_symfile_log *log;    /* NULL: refusals are not counted */
};

/* Make @ctx the context of the calls that follow (NULL: none); returns the previous one. */
const struct ws_symfile_ctx *ws_symfile_use(const struct ws_symfile_ctx *ctx);

/*
 * Open @path (WS_UOPEN_* @flags) in the current context: a descriptor or -errno. A refusal other
 * than "no such file" is counted in the context's log.
 */
int ws_symfile_open(const char *path, unsigned int flags);

/* Not an ELF file (a refusal of ws_symfile_open_elf()). */
#define WS_SYMFILE_ENOTELF (-ENOEXEC)

/*
 * ws_symfile_open() of an ELF file, for libelf to map: anything else is refused, and a file root
 * does not own comes back as a sealed copy in memory (at most 512 MiB; -EFBIG past it).
 */
int ws_symfile_open_elf(const char *path, unsigned int flags);
/* The same for @fd, already open (@path for the log): @fd is taken, another returned. */
int ws_symfile_elf_only(const char *path, int fd);

/* Dwfl_Callbacks members. */
int ws_symfile_find_elf(Dwfl_Module *mod, void **userdata, const char *module_name, Dwarf_Addr base,
			char **file_name, Elf **elfp);
int ws_symfile_find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
			      Dwarf_Addr base, const char *file_name, const char *debuglink_file,
			      GElf_Word debuglink_crc, char **debuginfo_file_name);

/* Is @name a plain file name (no '/', not "." or "..", not empty)? Unit-tested. */
bool ws_symfile_plain_name(const char *name);

#endif
