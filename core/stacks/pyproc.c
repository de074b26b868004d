// SPDX-License-Identifier: MIT
/* Which processes run CPython, and where their threads are: see pyproc.h. */
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pyproc.h"
#include "symfile.h"

/*
 * Offsets from CPython's own headers (Include/cpython/pystate.h, Include/internal/
 * pycore_runtime.h, pycore_interp.h, pycore_frame.h, Include/cpython/code.h, unicodeobject.h,
 * bytesobject.h), the same for every patch release of a minor version: 3.11 (Debian's 3.11.2,
 * pyenv's 3.11.7), 3.12 (3.12.1's headers), 3.13 (3.13.0's). 3.12 drops is_entry: each
 * evaluation's first frame follows a C shim frame (owner FRAME_OWNED_BY_CSTACK); 3.13 keeps
 * the current frame in the thread state itself and points at the current instruction.
 * The GIL: the same struct _gil_runtime_state in all three (pycore_gil.h), inside _PyRuntime
 * for the main interpreter: 3.11 in _PyRuntime.ceval, 3.12 and 3.13 in the main interpreter's
 * own state (_PyRuntime._main_interpreter._gil: 76392 + 1040, 88352 + 7752), which its
 * ceval.gil points at.
 */
static const struct ws_py_layout layouts[] = {
	{
		.minor = 11,
		.walk = { .interp_head = 40,
			  .threads_head = 16,
			  .ts_next = 8,
			  .ts_native_tid = 160,
			  .ts_cframe = 56,
			  .cur_frame = 8,
			  .fr_code = 32,
			  .fr_previous = 48,
			  .fr_instr = 56,
			  .fr_owner = 69,
			  .fr_entry = 68,
			  .gil = 360,
			  .interp_main = 48,
			  .interp_gil = WS_PY_NO_OFF,
			  .gil_locked = 16,
			  .gil_last_holder = 8,
			  .gil_switch_number = 24,
			  .gil_mutex = 80 },
		.ob_type = 8,
		.ob_size = 16,
		.co_firstlineno = 72,
		.co_filename = 112,
		.co_name = 120,
		.co_qualname = 128,
		.co_linetable = 136,
		.co_code = 184,
		.str_state = 32,
		.str_length = 16,
		.str_ascii_data = 48,
		.str_compact_data = 72,
		.bytes_data = 32,
		.owner_max = 2,
		.owner_cstack = 0xff,
		.gil_cond = 32,
		.gil_switch_cond = 120,
		.gil_switch_mutex = 168,
		.cond_size = 48,
		.mutex_size = 40,
	},
	{
		.minor = 12,
		.walk = { .interp_head = 40,
			  .threads_head = 72,
			  .ts_next = 8,
			  .ts_native_tid = 144,
			  .ts_cframe = 56,
			  .cur_frame = 0,
			  .fr_code = 0,
			  .fr_previous = 8,
			  .fr_instr = 56,
			  .fr_owner = 70,
			  .fr_entry = WS_PY_NO_OFF,
			  .gil = 77432,
			  .interp_main = 48,
			  .interp_gil = 384,
			  .gil_locked = 16,
			  .gil_last_holder = 8,
			  .gil_switch_number = 24,
			  .gil_mutex = 80 },
		.ob_type = 8,
		.ob_size = 16,
		.co_firstlineno = 68,
		.co_filename = 112,
		.co_name = 120,
		.co_qualname = 128,
		.co_linetable = 136,
		.co_code = 192,
		.str_state = 32,
		.str_length = 16,
		.str_ascii_data = 40,
		.str_compact_data = 56,
		.bytes_data = 32,
		.owner_max = 3,
		.owner_cstack = 3,
		.gil_cond = 32,
		.gil_switch_cond = 120,
		.gil_switch_mutex = 168,
		.cond_size = 48,
		.mutex_size = 40,
	},
	{
		.minor = 13,
		.walk = { .interp_head = 632,
			  .threads_head = 7344,
			  .ts_next = 8,
			  .ts_native_tid = 160,
			  .ts_cframe = WS_PY_NO_OFF,
			  .cur_frame = 72,
			  .fr_code = 0,
			  .fr_previous = 8,
			  .fr_instr = 56,
			  .fr_owner = 70,
			  .fr_entry = WS_PY_NO_OFF,
			  .gil = 96104,
			  .interp_main = 640,
			  .interp_gil = 16,
			  .gil_locked = 16,
			  .gil_last_holder = 8,
			  .gil_switch_number = 24,
			  .gil_mutex = 80 },
		.ob_type = 8,
		.ob_size = 16,
		.co_firstlineno = 68,
		.co_filename = 112,
		.co_name = 120,
		.co_qualname = 128,
		.co_linetable = 136,
		.co_code = 200,
		.str_state = 32,
		.str_length = 16,
		.str_ascii_data = 40,
		.str_compact_data = 56,
		.bytes_data = 32,
		.owner_max = 3,
		.owner_cstack = 3,
		.gil_cond = 32,
		.gil_switch_cond = 120,
		.gil_switch_mutex = 168,
		.cond_size = 48,
		.mutex_size = 40,
	},
};

const struct ws_py_layout *ws_py_layout_of(unsigned minor)
{
	for (size_t i = 0; i < sizeof(layouts) / sizeof(layouts[0]); i++)
		if (layouts[i].minor == minor)
			return &layouts[i];
	return NULL;
}

/* "python3.11", "python3.11d", "libpython3.11.so.1.0": a file that may hold the runtime. */
static bool python_name(const char *path)
{
	const char *b = strrchr(path, '/');

	b = b ? b + 1 : path;
	if (!strncmp(b, "lib", 3))
		b += 3;
	return !strncmp(b, "python3.", 8) && b[8] >= '0' && b[8] <= '9';
}

bool ws_pyproc_maybe(const char *text)
{
	return text && strstr(text, "python3.");
}

/* The symbols looked for, and what was found. */
struct wanted {
	const char *name;
	GElf_Sym sym;
	bool found;
};

enum {
	W_RUNTIME,
	W_CODE,
	W_UNICODE,
	W_BYTES,
	W_VERSION,
	W_COUNT
};

static void find_syms(Elf *e, struct wanted *w)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(e, scn))) {
		Elf_Data *d;
		size_t n;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNSYM || !sh.sh_entsize)
			continue;
		d = elf_getdata(scn, NULL);
		n = sh.sh_size / sh.sh_entsize;
		for (size_t i = 0; d && i < n; i++) {
			GElf_Sym s;
			const char *name;

			if (!gelf_getsym(d, (int)i, &s) || s.st_shndx == SHN_UNDEF)
				continue;
			name = elf_strptr(e, sh.sh_link, s.st_name);
			for (int k = 0; name && k < W_COUNT; k++)
				if (!w[k].found && !strcmp(name, w[k].name)) {
					w[k].sym = s;
					w[k].found = true;
				}
		}
	}
}

/* Py_Version's value, from the file's own bytes (it is a constant). 0: not read. */
static uint32_t version_of(Elf *e, const GElf_Sym *s)
{
	Elf_Scn *scn = elf_getscn(e, s->st_shndx);
	GElf_Shdr sh;
	Elf_Data *d;
	uint32_t v;

	if (!scn || !gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS ||
	    s->st_value < sh.sh_addr || s->st_value - sh.sh_addr + sizeof(v) > sh.sh_size)
		return 0;
	d = elf_getdata(scn, NULL);
	if (!d || !d->d_buf || d->d_size < sh.sh_size)
		return 0;
	memcpy(&v, (const char *)d->d_buf + (s->st_value - sh.sh_addr), sizeof(v));
	return v;
}

/* Module address = file address + bias, from the mapping of the file's first loaded page. */
static bool bias_of(Elf *e, const struct ws_map *m, uint64_t *bias)
{
	size_t n = 0;
	GElf_Phdr ph;

	if (elf_getphdrnum(e, &n))
		return false;
	for (size_t i = 0; i < n; i++) {
		if (!gelf_getphdr(e, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		/* the segment that the mapping's file offset falls in */
		if (m->offset < (ph.p_offset & ~0xfffULL) || m->offset >= ph.p_offset + ph.p_filesz)
			continue;
		*bias = m->start - m->offset - (ph.p_vaddr - ph.p_offset);
		return true;
	}
	return false;
}

/* The ELF file of mapping @m, opened as the process's user where the process sees it. */
static int open_module(uint32_t pid, bool live, const struct ws_map *m)
{
	char path[512];
	struct stat st;
	int fd;

	if (live &&
	    snprintf(path, sizeof(path), "/proc/%u/root%s", pid, m->path) < (int)sizeof(path))
		fd = ws_symfile_open(path, WS_UOPEN_NOFOLLOW);
	else
		fd = ws_symfile_open(m->path, WS_UOPEN_NOFOLLOW);
	/* the very file it mapped: another would give other addresses */
	if (fd >= 0 && (fstat(fd, &st) || (uint64_t)st.st_ino != m->inode)) {
		close(fd);
		return -ESTALE;
	}
	return fd >= 0 ? ws_symfile_elf_only(m->path, fd) : fd;
}

static int fill(struct ws_py_info *out, const struct wanted *w, uint64_t bias, Elf *e)
{
	uint32_t v = version_of(e, &w[W_VERSION].sym);

	out->version = v;
	if (v >> 24 != 3)
		return WS_PYPROC_VERSION;
	out->layout = ws_py_layout_of((v >> 16) & 0xff);
	if (!out->layout)
		return WS_PYPROC_VERSION;
	out->bpf = out->layout->walk;
	out->bpf.runtime = w[W_RUNTIME].sym.st_value + bias;
	out->code_type = w[W_CODE].sym.st_value + bias;
	out->unicode_type = w[W_UNICODE].sym.st_value + bias;
	out->bytes_type = w[W_BYTES].sym.st_value + bias;
	return 1;
}

/* Is the file of mapping @m a CPython runtime? 1, 0 (not one), or -errno. */
static int try_module(uint32_t pid, bool live, const struct ws_map *m, struct ws_py_info *out)
{
	struct wanted w[W_COUNT] = { { "_PyRuntime" },
				     { "PyCode_Type" },
				     { "PyUnicode_Type" },
				     { "PyBytes_Type" },
				     { "Py_Version" } };
	uint64_t bias = 0;
	int fd, ret = 0;
	Elf *e;

	fd = open_module(pid, live, m);
	if (fd < 0)
		return fd;
	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!e) {
		close(fd);
		return -ENOEXEC;
	}
	find_syms(e, w);
	if (w[W_RUNTIME].found && w[W_CODE].found && w[W_UNICODE].found && w[W_BYTES].found &&
	    w[W_VERSION].found) {
		ret = bias_of(e, m, &bias) ? fill(out, w, bias, e) : -ENOEXEC;
		snprintf(out->module, sizeof(out->module), "%s", m->path);
		out->module_start = m->start;
	}
	elf_end(e);
	close(fd);
	return ret;
}

uint64_t ws_pyproc_files_hash(const struct ws_procmaps *pm)
{
	uint64_t h = 14695981039346656037ULL; /* FNV-1a */

	for (size_t i = 0; i < pm->n; i++) {
		const struct ws_map *m = &pm->maps[i];

		if (!m->path || m->path[0] != '/' || !python_name(m->path))
			continue;
		for (const char *c = m->path; *c; c++)
			h = (h ^ (uint8_t)*c) * 1099511628211ULL;
		h = (h ^ m->inode ^ m->start ^ m->deleted) * 1099511628211ULL;
	}
	return h;
}

int ws_pyproc_detect(uint32_t pid, bool live, const struct ws_procmaps *pm, struct ws_py_info *out)
{
	int ret = 0, err;

	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < pm->n; i++) {
		const struct ws_map *m = &pm->maps[i];

		/* a file's first mapping only: the others are the same file */
		if (!m->path || m->path[0] != '/' || m->deleted || !python_name(m->path) ||
		    (i && pm->maps[i - 1].path && !strcmp(pm->maps[i - 1].path, m->path)))
			continue;
		err = try_module(pid, live, m, out);
		if (err == 1 || err == WS_PYPROC_VERSION)
			return err;
		/* python3.11's first file is the executable; libpython may follow it */
		if (err < 0)
			ret = WS_PYPROC_LATER;
	}
	return ret;
}
