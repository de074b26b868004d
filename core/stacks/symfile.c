// SPDX-License-Identifier: MIT
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* memfd_create, F_ADD_SEALS */
#endif
#include <elfutils/libdwelf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "symfile.h"

/* the reader is one thread; a context is set around each process's calls */
static __thread const struct ws_symfile_ctx *current;

/* a debug file whose CRC must be computed is read whole: a bigger one is not taken */
#define CRC_MAX_BYTES (256ULL << 20)
/* an ELF file someone other than root owns is copied before it is read: at most this much */
#define COPY_MAX_BYTES (512ULL << 20)

void ws_symfile_log_free(struct ws_symfile_log *log)
{
	for (size_t i = 0; i < log->n; i++)
		free(log->items[i].path);
	memset(log, 0, sizeof(*log));
}

static void log_refusal(struct ws_symfile_log *log, const char *path, int err)
{
	for (size_t i = 0; i < log->n; i++)
		if (!strcmp(log->items[i].path, path))
			return;
	log->total++;
	if (log->n < WS_SYMFILE_REFUSALS) {
		log->items[log->n].path = strdup(path);
		log->items[log->n].err = err;
		if (log->items[log->n].path)
			log->n++;
	}
}

const struct ws_symfile_ctx *ws_symfile_use(const struct ws_symfile_ctx *ctx)
{
	const struct ws_symfile_ctx *prev = current;

	current = ctx;
	return prev;
}

int ws_symfile_open(const char *path, unsigned int flags)
{
	const struct ws_symfile_ctx *c = current;
	int fd = ws_useropen(c ? c->uo : NULL, c ? c->id : NULL, path, flags);

	if (fd < 0 && fd != -ENOENT && fd != -ENOTDIR && c && c->log)
		log_refusal(c->log, path, fd);
	return fd;
}

/*
 * @fd made safe to hand to libelf, which maps it: an ELF file (anything else, libdwfl would
 * decompress without bound), and, when root does not own it, a sealed copy — its owner could
 * truncate the original under the mapping and kill the reader with SIGBUS.
 */
static int elf_only(int fd)
{
	unsigned char magic[4];
	struct stat st;
	int copy;

	if (pread(fd, magic, sizeof(magic), 0) != sizeof(magic) || memcmp(magic, "\177ELF", 4) ||
	    fstat(fd, &st)) {
		close(fd);
		return WS_SYMFILE_ENOTELF;
	}
	if (st.st_uid == 0)
		return fd;
	if ((unsigned long long)st.st_size > COPY_MAX_BYTES) {
		close(fd);
		return -EFBIG;
	}
	copy = memfd_create("whyslow-symbols", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (copy < 0) {
		close(fd);
		return -errno;
	}
	for (off_t at = 0; at < st.st_size;) {
		ssize_t n = sendfile(copy, fd, &at, (size_t)(st.st_size - at));

		if (n <= 0)
			break; /* shorter now: the copy is what there was */
	}
	close(fd);
	if (fcntl(copy, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL)) {
		int err = -errno;

		close(copy);
		return err;
	}
	return copy;
}

int ws_symfile_elf_only(const char *path, int fd)
{
	const struct ws_symfile_ctx *c = current;

	fd = elf_only(fd);
	if (fd < 0 && c && c->log)
		log_refusal(c->log, path, fd);
	return fd;
}

int ws_symfile_open_elf(const char *path, unsigned int flags)
{
	int fd = ws_symfile_open(path, flags);

	return fd < 0 ? fd : ws_symfile_elf_only(path, fd);
}

bool ws_symfile_plain_name(const char *name)
{
	return name && *name && !strchr(name, '/') && strcmp(name, ".") && strcmp(name, "..");
}

int ws_symfile_find_elf(Dwfl_Module *mod, void **userdata, const char *module_name, Dwarf_Addr base,
			char **file_name, Elf **elfp)
{
	int fd;

	/* "[vdso]" and the like: the kernel's own image, read from the process's memory */
	if (!module_name || module_name[0] != '/')
		return dwfl_linux_proc_find_elf(mod, userdata, module_name, base, file_name, elfp);
	fd = ws_symfile_open_elf(module_name, 0);
	if (fd < 0)
		return -1;
	*file_name = strdup(module_name);
	if (!*file_name) {
		close(fd);
		return -1;
	}
	return fd;
}

static bool crc_matches(int fd, GElf_Word want)
{
	unsigned char buf[65536];
	uLong crc = crc32(0L, Z_NULL, 0);
	unsigned long long total = 0;
	struct stat st;
	ssize_t n;

	if (fstat(fd, &st) || (unsigned long long)st.st_size > CRC_MAX_BYTES)
		return false;
	while ((n = pread(fd, buf, sizeof(buf), (off_t)total)) > 0) {
		crc = crc32(crc, buf, (uInt)n);
		total += (unsigned long long)n;
		if (total > CRC_MAX_BYTES)
			return false;
	}
	return n == 0 && (GElf_Word)crc == want;
}

/* Is the debug file @fd the one for the module (its build-id @id, or without one its @crc)? */
static bool debug_matches(int fd, const unsigned char *id, int idlen, GElf_Word crc)
{
	Elf *elf;
	const void *did;
	ssize_t dlen;
	bool ok;

	if (idlen <= 0)
		return crc_matches(fd, crc);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf)
		return false;
	dlen = dwelf_elf_gnu_build_id(elf, &did);
	ok = dlen == idlen && !memcmp(did, id, (size_t)idlen);
	elf_end(elf);
	return ok;
}

static int try_debug(const char *path, const char *self, const unsigned char *id, int idlen,
		     GElf_Word crc, char **out_name)
{
	int fd;

	if (self && !strcmp(path, self))
		return -1;
	fd = ws_symfile_open_elf(path, 0);
	if (fd < 0)
		return -1;
	if (!debug_matches(fd, id, idlen, crc) || !(*out_name = strdup(path))) {
		close(fd);
		return -1;
	}
	return fd;
}

int ws_symfile_find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
			      Dwarf_Addr base, const char *file_name, const char *debuglink_file,
			      GElf_Word debuglink_crc, char **debuginfo_file_name)
{
	const unsigned char *id = NULL;
	GElf_Addr id_vaddr;
	int idlen = dwfl_module_build_id(mod, &id, &id_vaddr);
	char path[PATH_MAX], dir[PATH_MAX];
	const char *slash;
	int fd, n;

	(void)userdata;
	(void)modname;
	(void)base;
	if (idlen > 1) {
		n = snprintf(path, sizeof(path), "/usr/lib/debug/.build-id/%02x/", id[0]);
		for (int i = 1; i < idlen && n < (int)sizeof(path) - 8; i++)
			n += snprintf(path + n, sizeof(path) - (size_t)n, "%02x", id[i]);
		snprintf(path + n, sizeof(path) - (size_t)n, ".debug");
		fd = try_debug(path, file_name, id, idlen, 0, debuginfo_file_name);
		if (fd >= 0)
			return fd;
	}
	/* a debuglink is a name, not a path: "../../root/x.debug" is not looked for */
	if (!ws_symfile_plain_name(debuglink_file) || !file_name ||
	    !(slash = strrchr(file_name, '/')))
		return -1;
	snprintf(dir, sizeof(dir), "%.*s", (int)(slash - file_name), file_name);
	static const char *const forms[] = { "%s/%s", "%s/.debug/%s", "/usr/lib/debug%s/%s" };
	for (size_t i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
		if (snprintf(path, sizeof(path), forms[i], dir, debuglink_file) >=
		    (int)sizeof(path))
			continue;
		fd = try_debug(path, file_name, id, idlen, debuglink_crc, debuginfo_file_name);
		if (fd >= 0)
			return fd;
	}
	return -1;
}
