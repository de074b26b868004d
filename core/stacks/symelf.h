/* SPDX-License-Identifier: MIT */
/*
 * One ELF file, for symbols.c only (symelf.c): the cache entry and what is read from it.
 */
#ifndef WS_SYMELF_H
#define WS_SYMELF_H

#include <elfutils/libdwfl.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>

#include "frame.h"
#include "procmaps.h"
#include "base/strpool.h"

struct load_seg {
	uint64_t vaddr, offset, filesz, memsz; /* memsz: with .bss, which the file does not hold */
};

struct elf_file {
	char *key; /* build-id in hex, or "path|inode" for a file without one */
	Dwfl *dwfl;
	Dwfl_Module *mod;
	GElf_Addr bias; /* module address = ELF address + bias */
	struct load_seg *segs;
	size_t nsegs;
	struct elf_file *next;
};

/*
 * The file open as @fd (@path, @st: its name and identity), from the list @cache or added to its
 * head; NULL if it is no ELF file or cannot be read. @fd stays the caller's.
 */
struct elf_file *symelf_open(struct elf_file **cache, const char *path, const struct stat *st,
			     int fd);
void symelf_free(struct elf_file *f);
/* The file's own address of @addr in mapping @m: through the file offset to its segment. */
bool symelf_addr(const struct elf_file *f, const struct ws_map *m, uint64_t addr, uint64_t *out);
/* The code symbol that provably covers file address @look, and its @start. */
const char *symelf_sym(struct elf_file *f, uint64_t look, uint64_t *start);
/* @look's source file and line into @out, if the file has a line table. */
void symelf_line(struct ws_strpool *strs, struct elf_file *f, uint64_t look, struct ws_frame *out);
/* The file's own address of data address @addr, through mapping @m (see symelf.c). */
bool symelf_data_addr(const struct elf_file *f, const struct ws_map *m, uint64_t addr,
		      uint64_t *out);
/* The data object that provably holds file address @look, and @look's offset in it. */
const char *symelf_data_sym(struct elf_file *f, uint64_t look, uint64_t *off);

#endif
