// SPDX-License-Identifier: MIT
/* CPython code objects -> names, files and lines: see pyframes.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "pyframes.h"

#define CACHE_SLOTS 1024 /* code objects known at once (a clash replaces the older) */
#define MAX_READ 65536	 /* bytes of one object read at most (a line table) */
#define MAX_NAME 256	 /* characters of a function name */
#define MAX_FILE 1024	 /* characters of a file name */
#define PAGEMAP_PRESENT (1ULL << 63)

struct code_entry {
	uint32_t pid;
	uint64_t code;
	char *name, *file;
	uint8_t *lt; /* its co_linetable */
	size_t ltlen;
	int firstlineno;
	int64_t ncode; /* code units */
};

struct ws_pyframes {
	struct code_entry slots[CACHE_SLOTS];
};

int ws_pyframes_new(struct ws_pyframes **out)
{
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : -ENOMEM;
}

static void entry_clear(struct code_entry *e)
{
	free(e->name);
	free(e->file);
	free(e->lt);
	memset(e, 0, sizeof(*e));
}

void ws_pyframes_free(struct ws_pyframes *c)
{
	if (!c)
		return;
	for (int i = 0; i < CACHE_SLOTS; i++)
		entry_clear(&c->slots[i]);
	free(c);
}

void ws_pyframes_forget(struct ws_pyframes *c, uint32_t pid)
{
	for (int i = 0; c && i < CACHE_SLOTS; i++)
		if (c->slots[i].code && c->slots[i].pid == pid)
			entry_clear(&c->slots[i]);
}

/* Every page of [@addr, @addr + @len) resident in @pid now? (Then reading it faults nothing.) */
static bool resident(uint32_t pid, uint64_t addr, size_t len)
{
	uint64_t ent[MAX_READ / 4096 + 2], first = addr / 4096, last = (addr + len - 1) / 4096;
	size_t n = (size_t)(last - first + 1);
	char path[48];
	ssize_t got;
	int fd;

	if (n > sizeof(ent) / sizeof(ent[0]))
		return false;
	snprintf(path, sizeof(path), "/proc/%u/pagemap", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	got = pread(fd, ent, n * sizeof(ent[0]), (off_t)(first * sizeof(ent[0])));
	close(fd);
	if (got != (ssize_t)(n * sizeof(ent[0])))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!(ent[i] & PAGEMAP_PRESENT))
			return false;
	return true;
}

int ws_py_mem_read(uint32_t pid, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = { buf, len }, remote = { (void *)(uintptr_t)addr, len };

	if (!len || len > MAX_READ || addr + len < addr || !resident(pid, addr, len))
		return -EFAULT;
	return process_vm_readv((pid_t)pid, &local, 1, &remote, 1, 0) == (ssize_t)len ? 0 : -EFAULT;
}

static int read_u64(uint32_t pid, uint64_t addr, uint64_t *v)
{
	return ws_py_mem_read(pid, addr, v, sizeof(*v));
}

/* Append code point @c as UTF-8 to @o (room checked by the caller: 4 bytes). */
static size_t utf8_put(char *o, uint32_t c)
{
	if (c < 0x80) {
		o[0] = (char)c;
		return 1;
	}
	if (c < 0x800) {
		o[0] = (char)(0xc0 | c >> 6);
		o[1] = (char)(0x80 | (c & 0x3f));
		return 2;
	}
	if (c < 0x10000) {
		o[0] = (char)(0xe0 | c >> 12);
		o[1] = (char)(0x80 | ((c >> 6) & 0x3f));
		o[2] = (char)(0x80 | (c & 0x3f));
		return 3;
	}
	o[0] = (char)(0xf0 | c >> 18);
	o[1] = (char)(0x80 | ((c >> 12) & 0x3f));
	o[2] = (char)(0x80 | ((c >> 6) & 0x3f));
	o[3] = (char)(0x80 | (c & 0x3f));
	return 4;
}

/*
 * A str object at @addr, of at most @max characters, as UTF-8 (malloc'd). Compact strings only
 * (every name and file name the compiler makes is one): ASCII, Latin-1, UCS-2 or UCS-4 data
 * right after the header. NULL: not a str of this interpreter, too long, or unreadable.
 */
static char *read_str(uint32_t pid, const struct ws_py_info *in, uint64_t addr, size_t max)
{
	const struct ws_py_layout *l = in->layout;
	uint64_t type, len;
	uint32_t state, kind, c;
	uint8_t *raw;
	char *out;
	size_t o = 0;

	if (read_u64(pid, addr + l->ob_type, &type) || type != in->unicode_type ||
	    read_u64(pid, addr + l->str_length, &len) || !len || len > max ||
	    ws_py_mem_read(pid, addr + l->str_state, &state, sizeof(state)))
		return NULL;
	kind = (state >> 2) & 7;
	/* compact (bit 5) and ready; ascii (bit 6) keeps its data after the shorter header */
	if (!(state & (1u << 5)) || (kind != 1 && kind != 2 && kind != 4) ||
	    ((state & (1u << 6)) && kind != 1))
		return NULL;
	raw = malloc(len * kind);
	out = malloc(len * 4 + 1);
	if (!raw || !out ||
	    ws_py_mem_read(pid,
			   addr + ((state & (1u << 6)) ? l->str_ascii_data : l->str_compact_data),
			   raw, len * kind))
		goto bad;
	for (uint64_t i = 0; i < len; i++) {
		c = kind == 1 ? raw[i] : kind == 2 ? ((uint16_t *)raw)[i] : ((uint32_t *)raw)[i];
		if (!c || c > 0x10ffff)
			goto bad;
		o += utf8_put(out + o, c);
	}
	out[o] = 0;
	free(raw);
	return out;
bad:
	free(raw);
	free(out);
	return NULL;
}

/* A bytes object's contents (malloc'd, *@len bytes). -EFAULT when not one. */
static int read_bytes(uint32_t pid, const struct ws_py_info *in, uint64_t addr, uint8_t **out,
		      size_t *len)
{
	const struct ws_py_layout *l = in->layout;
	uint64_t type, n;

	*out = NULL;
	if (read_u64(pid, addr + l->ob_type, &type) || type != in->bytes_type ||
	    read_u64(pid, addr + l->ob_size, &n) || n > MAX_READ)
		return -EFAULT;
	*len = n;
	if (!n)
		return 0;
	*out = malloc(n);
	if (!*out)
		return -ENOMEM;
	if (ws_py_mem_read(pid, addr + l->bytes_data, *out, n)) {
		free(*out);
		*out = NULL;
		return -EFAULT;
	}
	return 0;
}

/* Fill @e from the code object at @code of @pid. 0, -EFAULT or -ENOMEM. */
static int read_code(uint32_t pid, const struct ws_py_info *in, uint64_t code, struct code_entry *e)
{
	const struct ws_py_layout *l = in->layout;
	uint64_t type, name, file, lt, ncode;
	int32_t first;

	if (read_u64(pid, code + l->ob_type, &type) || type != in->code_type ||
	    read_u64(pid, code + l->ob_size, &ncode) || ncode > (1u << 28) ||
	    ws_py_mem_read(pid, code + l->co_firstlineno, &first, sizeof(first)) ||
	    read_u64(pid, code + l->co_qualname, &name) ||
	    read_u64(pid, code + l->co_filename, &file) ||
	    read_u64(pid, code + l->co_linetable, &lt))
		return -EFAULT;
	e->pid = pid;
	e->code = code;
	e->firstlineno = first;
	e->ncode = (int64_t)ncode;
	e->name = read_str(pid, in, name, MAX_NAME);
	e->file = read_str(pid, in, file, MAX_FILE);

	if (!e->name || !e->file || read_bytes(pid, in, lt, &e->lt, &e->ltlen)) {
		entry_clear(e);
		return -EFAULT;
	}
	return 0;
}

static const struct code_entry *code_of(struct ws_pyframes *c, uint32_t pid,
					const struct ws_py_info *in, uint64_t code)
{
	struct code_entry *e = &c->slots[((code >> 4) ^ pid) % CACHE_SLOTS];

	if (e->code == code && e->pid == pid)
		return e;
	entry_clear(e);
	return read_code(pid, in, code, e) ? NULL : e;
}

static uint32_t varint(const uint8_t **p, const uint8_t *end)
{
	uint32_t v = 0, shift = 0;
	uint8_t b;

	do {
		if (*p >= end || shift > 28)
			return 0;
		b = *(*p)++;
		v |= (uint32_t)(b & 63) << shift;
		shift += 6;
	} while (b & 64);
	return v;
}

static int svarint(const uint8_t **p, const uint8_t *end)
{
	uint32_t u = varint(p, end);

	return u & 1 ? -(int)(u >> 1) : (int)(u >> 1);
}

int ws_py_line(const uint8_t *lt, size_t len, int firstlineno, int addrq)
{
	const uint8_t *p = lt, *end = lt + len;
	int line = firstlineno, start = 0;

	if (addrq < 0)
		return firstlineno;
	while (p < end) {
		uint8_t b = *p;
		int code = (b >> 3) & 15, units = (b & 7) + 1, delta = 0;
		const uint8_t *q = p + 1;

		if (!(b & 128))
			return -1; /* not at an entry's first byte: a table this reader does not
				      know */
		if (code == 13 || code == 14)
			delta = svarint(&q, end);
		else if (code >= 10 && code <= 12)
			delta = code - 10;
		line += delta;
		if (addrq < start + units * 2)
			return code == 15 ? -1 : line;
		start += units * 2;
		/* the next entry begins at the next byte with its top bit set */
		for (p++; p < end && !(*p & 128); p++)
			;
	}
	return -1;
}

/* Fill @o from raw frame @f; -EFAULT when it names no code object of this interpreter. */
static int name_frame(struct ws_pyframes *c, uint32_t pid, const struct ws_py_info *in,
		      const struct ws_py_raw_frame *f, struct ws_pyframe *o)
{
	const struct code_entry *e = code_of(c, pid, in, f->code);
	int64_t lasti;
	int line;

	if (!e)
		return -EFAULT;
	/* prev_instr: the code unit before the next instruction (-1: not started) */
	lasti = ((int64_t)f->instr - (int64_t)(f->code + in->layout->co_code)) / 2;
	if ((int64_t)f->instr < (int64_t)(f->code + in->layout->co_code) - 2 || lasti >= e->ncode)
		return -EFAULT;
	line = ws_py_line(e->lt, e->ltlen, e->firstlineno, (int)lasti * 2);
	o->name = strdup(e->name);
	o->file = strdup(e->file);
	if (!o->name || !o->file) {
		free(o->name);
		free(o->file);
		return -ENOMEM;
	}
	o->line = line > 0 ? (uint32_t)line : 0;
	o->code = f->code;
	o->off = lasti < 0 ? 0 : (uint64_t)lasti * 2;
	o->entry = f->entry != 0;
	return 0;
}

int ws_pyframes_resolve(struct ws_pyframes *c, uint32_t pid, const struct ws_py_info *info,
			const struct ws_py_raw *raw, struct ws_pyframe *out, int max)
{
	const struct ws_py_layout *l = info->layout;
	int n = 0, err;

	for (int i = 0; i < raw->n && i < WS_PY_MAX_FRAMES && n < max; i++) {
		const struct ws_py_raw_frame *f = &raw->f[i];

		if (f->owner > l->owner_max)
			return -EFAULT;
		if (f->owner == l->owner_cstack) {
			/* a C shim: the frame inner to it was its evaluation's first */
			if (n)
				out[n - 1].entry = true;
			continue;
		}
		if ((err = name_frame(c, pid, info, f, &out[n]))) {
			ws_pyframes_clear(out, n);
			return err;
		}
		n++;
	}
	return n;
}

int ws_pyframes_warm(struct ws_pyframes *c, uint32_t pid, const struct ws_py_info *info,
		     uint64_t code)
{
	return code_of(c, pid, info, code) ? 0 : -EFAULT;
}

void ws_pyframes_clear(struct ws_pyframe *f, int n)
{
	for (int i = 0; i < n; i++) {
		free(f[i].name);
		free(f[i].file);
		f[i].name = f[i].file = NULL;
	}
}
