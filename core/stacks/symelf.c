// SPDX-License-Identifier: MIT
/*
 * One ELF file of a process's mappings, as symbols.c uses it: opened once per build-id (an
 * offline Dwfl of its own, at base 0, so its addresses are the file's), and the file's own
 * addresses, code symbols, lines and data objects read from it.
 */
#include <elfutils/libdwelf.h>
#include <errno.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "symelf.h"
#include "symfile.h"

static const Dwfl_Callbacks offline_callbacks = {
	.find_elf = ws_symfile_find_elf,
	.find_debuginfo = ws_symfile_find_debuginfo,
	.section_address = dwfl_offline_section_address,
};

static char *file_key(Elf *elf, const char *path, const struct stat *st)
{
	const void *id;
	ssize_t n = dwelf_elf_gnu_build_id(elf, &id);
	char *key;

	if (n > 0) {
		key = malloc((size_t)n * 2 + 1);
		if (!key)
			return NULL;
		for (ssize_t i = 0; i < n; i++)
			sprintf(key + i * 2, "%02x", ((const unsigned char *)id)[i]);
		return key;
	}
	if (asprintf(&key, "%s|%ju|%ju", path, (uintmax_t)st->st_dev, (uintmax_t)st->st_ino) < 0)
		return NULL;
	return key;
}

static int read_segs(Elf *elf, struct elf_file *f)
{
	size_t nph;

	if (elf_getphdrnum(elf, &nph))
		return -EINVAL;
	f->segs = calloc(nph ? nph : 1, sizeof(*f->segs));
	if (!f->segs)
		return -ENOMEM;
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		f->segs[f->nsegs++] =
			(struct load_seg){ ph.p_vaddr, ph.p_offset, ph.p_filesz, ph.p_memsz };
	}
	return 0;
}

void symelf_free(struct elf_file *f)
{
	if (f->dwfl)
		dwfl_end(f->dwfl);
	free(f->segs);
	free(f->key);
	free(f);
}

struct elf_file *symelf_open(struct elf_file **cache, const char *path, const struct stat *st,
			     int fd)
{
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	struct elf_file *f = NULL;
	int dwfl_fd;
	char *key;

	if (!elf)
		return NULL;
	if (elf_kind(elf) != ELF_K_ELF)
		goto out;
	key = file_key(elf, path, st);
	if (!key)
		goto out;
	for (f = *cache; f; f = f->next)
		if (!strcmp(f->key, key))
			break;
	if (f) {
		free(key);
		goto out;
	}
	f = calloc(1, sizeof(*f));
	if (!f) {
		free(key);
		goto out;
	}
	f->key = key;
	if (read_segs(elf, f))
		goto bad;
	f->dwfl = dwfl_begin(&offline_callbacks);
	if (!f->dwfl)
		goto bad;
	/* At base 0, so the module's addresses are the file's own (plus a bias for a prelinked
	 * ET_DYN, read back below). */
	/* the descriptor already checked, never the path again: it may be something else now */
	dwfl_fd = dup(fd);
	if (dwfl_fd < 0)
		goto bad;
	dwfl_report_begin(f->dwfl);
	f->mod = dwfl_report_elf(f->dwfl, path, path, dwfl_fd, 0, false);
	if (!f->mod)
		close(dwfl_fd); /* taken only on success */
	if (dwfl_report_end(f->dwfl, NULL, NULL) != 0 || !f->mod ||
	    !dwfl_module_getelf(f->mod, &f->bias))
		goto bad;
	f->next = *cache;
	*cache = f;
	goto out;
bad:
	symelf_free(f);
	f = NULL;
out:
	elf_end(elf);
	return f;
}

/* The file's own address of @addr in mapping @m: through the file offset to its segment. */
bool symelf_addr(const struct elf_file *f, const struct ws_map *m, uint64_t addr, uint64_t *out)
{
	uint64_t foff = addr - m->start + m->offset;

	for (size_t i = 0; i < f->nsegs; i++) {
		const struct load_seg *g = &f->segs[i];

		if (foff >= g->offset && foff - g->offset < g->filesz) {
			*out = g->vaddr + (foff - g->offset);
			return true;
		}
	}
	return false;
}

/* The symbol that provably covers @look (a sized symbol, or exactly the start of an unsized
 * one) — libdw would otherwise fall back to the nearest symbol before it. */
const char *symelf_sym(struct elf_file *f, uint64_t look, uint64_t *start)
{
	GElf_Off off;
	GElf_Sym sym;
	const char *name;
	int type;

	name = dwfl_module_addrinfo(f->mod, look + f->bias, &off, &sym, NULL, NULL, NULL);
	if (!name || !*name)
		return NULL;
	type = GELF_ST_TYPE(sym.st_info);
	if (type != STT_FUNC && type != STT_GNU_IFUNC && type != STT_NOTYPE)
		return NULL;
	if (sym.st_size ? off >= sym.st_size : off != 0)
		return NULL;
	*start = look - off;
	return name;
}

void symelf_line(struct ws_strpool *strs, struct elf_file *f, uint64_t look, struct ws_frame *out)
{
	Dwfl_Line *line = dwfl_module_getsrc(f->mod, look + f->bias);
	const char *file;
	int lineno = 0;

	if (!line)
		return;
	file = dwfl_lineinfo(line, NULL, &lineno, NULL, NULL, NULL);
	if (!file || lineno <= 0)
		return;
	out->file = ws_strpool_intern(strs, file);
	out->line = (uint32_t)lineno;
}

/*
 * The file's own address of data address @addr, placed through mapping @m of that file (which
 * holds @addr, or ends where the anonymous mapping holding it begins: the part of .bss past
 * the file's last page). The segment @m maps gives the load bias; @addr must fall in that
 * segment's memory size, .bss included.
 */
bool symelf_data_addr(const struct elf_file *f, const struct ws_map *m, uint64_t addr,
		      uint64_t *out)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);

	for (size_t i = 0; i < f->nsegs; i++) {
		const struct load_seg *g = &f->segs[i];
		uint64_t bias, va;

		if (m->offset < g->offset - g->offset % page ||
		    m->offset >= g->offset + (g->filesz ? g->filesz : 1))
			continue;
		/* the address of file offset g->offset in this process, less its ELF address */
		bias = m->start + (g->offset - m->offset) - g->vaddr;
		va = addr - bias;
		if (va >= g->vaddr && va - g->vaddr < g->memsz) {
			*out = va;
			return true;
		}
	}
	return false;
}

/* The data object that provably holds @look: an STT_OBJECT with a size covering it. */
const char *symelf_data_sym(struct elf_file *f, uint64_t look, uint64_t *off)
{
	GElf_Off o;
	GElf_Sym sym;
	const char *name;

	/* libdw leaves thread-local (STT_TLS) symbols out: their values are not addresses */
	name = dwfl_module_addrinfo(f->mod, look + f->bias, &o, &sym, NULL, NULL, NULL);
	if (!name || !*name || GELF_ST_TYPE(sym.st_info) != STT_OBJECT || !sym.st_size ||
	    o >= sym.st_size)
		return NULL;
	*off = o;
	return name;
}
