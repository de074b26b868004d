// SPDX-License-Identifier: MIT
/*
 * Address -> symbol.  User addresses go through the process's maps to the mapped ELF file, whose
 * symbols and line tables libdw's Dwfl reads (one offline Dwfl per file, cached by build-id: the
 * address a process uses is translated to the file's own addresses first, so the cache does not
 * depend on where a process loaded the file).  Kernel addresses go to /proc/kallsyms, anonymous
 * code to the process's perf map.
 */
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "symbols.h"
#include "demangle.h"
#include "ksyms.h"
#include "perfmap.h"
#include "procmaps.h"
#include "symelf.h"
#include "symfile.h"
#include "base/util.h"

/* Kernel addresses have the top bit set on x86_64 and arm64; user addresses never do. */
#define KERNEL_ADDR(a) ((a) >> 63)

/* --- processes ---------------------------------------------------------------------------- */

struct proc {
	pid_t pid;
	bool live; /* maps read from /proc; re-read when an address is not covered */
	bool have_maps;
	struct ws_procmaps maps;
	struct elf_file **files; /* per mapping; NULL: not looked up yet */
	bool *file_tried;
	struct ws_perf_map perf;
	struct proc *next;
};

/* What one address of one file resolved to: libdw searches a symbol table linearly (~60 us per
 * lookup in glibc's), and a stack's return addresses repeat. */
struct addr_memo {
	const struct elf_file *f;
	uint64_t look;
	const char *name; /* NULL: no symbol covers it */
	uint64_t start;
	const char *file;
	uint32_t line;
};

struct ws_symbols {
	struct ws_strpool strs;
	struct ws_table memo; /* hash of (file, address), probed on past a collision -> addr_memo */
	bool no_lines;
	struct elf_file *files;
	struct proc *procs;
	char *perf_map_dir;
	struct ws_ksyms ksyms;
};

int ws_symbols_new(struct ws_symbols **out)
{
	struct ws_symbols *s = calloc(1, sizeof(*s));

	if (!s)
		return -ENOMEM;
	s->perf_map_dir = strdup("/tmp");
	if (!s->perf_map_dir) {
		free(s);
		return -ENOMEM;
	}
	ws_strpool_init(&s->strs);
	ws_table_init(&s->memo, sizeof(struct addr_memo));
	elf_version(EV_CURRENT);
	*out = s;
	return 0;
}

int ws_symbols_preload_kernel(struct ws_symbols *s)
{
	return ws_ksyms_preload(&s->ksyms);
}

static void proc_free(struct proc *p)
{
	ws_procmaps_free(&p->maps);
	free(p->files);
	free(p->file_tried);
	ws_perf_map_free(&p->perf);
	free(p);
}

void ws_symbols_free(struct ws_symbols *s)
{
	if (!s)
		return;
	while (s->procs) {
		struct proc *p = s->procs;

		s->procs = p->next;
		proc_free(p);
	}
	while (s->files) {
		struct elf_file *f = s->files;

		s->files = f->next;
		symelf_free(f);
	}
	ws_table_free(&s->memo);
	ws_ksyms_free(&s->ksyms);
	free(s->perf_map_dir);
	ws_strpool_free(&s->strs);
	free(s);
}

void ws_symbols_set_lines(struct ws_symbols *s, bool lines)
{
	s->no_lines = !lines;
}

int ws_symbols_set_perf_map_dir(struct ws_symbols *s, const char *dir)
{
	char *d = strdup(dir);

	if (!d)
		return -ENOMEM;
	free(s->perf_map_dir);
	s->perf_map_dir = d;
	return 0;
}

static struct proc *proc_find(struct ws_symbols *s, pid_t pid)
{
	for (struct proc *p = s->procs; p; p = p->next)
		if (p->pid == pid)
			return p;
	return NULL;
}

void ws_symbols_forget(struct ws_symbols *s, pid_t pid)
{
	for (struct proc **pp = &s->procs; *pp; pp = &(*pp)->next) {
		if ((*pp)->pid == pid) {
			struct proc *p = *pp;

			*pp = p->next;
			proc_free(p);
			return;
		}
	}
}

/* Install @pm as @p's maps (taking it over), with no file looked up yet. */
static int proc_set_maps(struct proc *p, struct ws_procmaps *pm)
{
	struct elf_file **files = calloc(pm->n ? pm->n : 1, sizeof(*files));
	bool *tried = calloc(pm->n ? pm->n : 1, sizeof(*tried));

	if (!files || !tried) {
		free(files);
		free(tried);
		ws_procmaps_free(pm);
		return -ENOMEM;
	}
	ws_procmaps_free(&p->maps);
	free(p->files);
	free(p->file_tried);
	p->maps = *pm;
	p->files = files;
	p->file_tried = tried;
	p->have_maps = true;
	return 0;
}

static struct proc *proc_new(struct ws_symbols *s, pid_t pid)
{
	struct proc *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->pid = pid;
	p->next = s->procs;
	s->procs = p;
	return p;
}

int ws_symbols_set_maps(struct ws_symbols *s, pid_t pid, const char *maps_text)
{
	struct ws_procmaps pm;
	struct proc *p;
	int err = ws_procmaps_parse(maps_text, &pm);

	if (err)
		return err;
	ws_symbols_forget(s, pid);
	p = proc_new(s, pid);
	if (!p) {
		ws_procmaps_free(&pm);
		return -ENOMEM;
	}
	return proc_set_maps(p, &pm);
}

static int proc_reread(struct proc *p)
{
	struct ws_procmaps pm;
	int err = ws_procmaps_read(p->pid, &pm);

	if (err)
		return err;
	return proc_set_maps(p, &pm);
}

static struct proc *proc_get(struct ws_symbols *s, pid_t pid)
{
	struct proc *p = proc_find(s, pid);

	if (p)
		return p;
	p = proc_new(s, pid);
	if (!p)
		return NULL;
	p->live = true;
	proc_reread(p); /* a process that is gone has no maps: its addresses stay unmapped */
	return p;
}

/*
 * The file mapping @m of @p, opened where the process sees it.  For a live process that is
 * /proc/PID/root/PATH (its mount namespace); the plain path is kept when it is the same file, so
 * debug files next to it are found after the process is gone.  Either way the file must still be
 * the inode the process mapped: a binary replaced since would give wrong names.
 */
static struct elf_file *proc_file(struct ws_symbols *s, struct proc *p, size_t idx)
{
	const struct ws_map *m = &p->maps.maps[idx];
	char *path = NULL;
	struct stat st, st2;
	int fd = -1, fd2;

	if (p->file_tried[idx])
		return p->files[idx];
	p->file_tried[idx] = true;
	if (!m->path || m->path[0] != '/' || m->deleted)
		return NULL;
	/* both opened as the process's user: root walks none of the paths it names */
	if (p->live && asprintf(&path, "/proc/%d/root%s", (int)p->pid, m->path) >= 0) {
		fd = ws_symfile_open(path, WS_UOPEN_NOFOLLOW);
		if (fd >= 0 && fstat(fd, &st) == 0 &&
		    (fd2 = ws_symfile_open(m->path, WS_UOPEN_NOFOLLOW)) >= 0) {
			if (fstat(fd2, &st2) == 0 && st.st_dev == st2.st_dev &&
			    st.st_ino == st2.st_ino) {
				close(fd);
				fd = fd2;
				free(path);
				path = NULL;
			} else {
				close(fd2);
			}
		}
	}
	if (fd < 0 || !path) {
		free(path);
		path = strdup(m->path);
		if (!path) {
			if (fd >= 0)
				close(fd);
			return NULL;
		}
		if (fd < 0)
			fd = ws_symfile_open(path, WS_UOPEN_NOFOLLOW);
	}
	/* the inode checked on the file itself, then (a copy, if the user owns it) mapped */
	if (fd >= 0 && (fstat(fd, &st) != 0 || (uint64_t)st.st_ino != m->inode)) {
		close(fd);
		fd = -1;
	}
	if (fd >= 0 && fstat(fd, &st) == 0 && (fd = ws_symfile_elf_only(path, fd)) >= 0)
		p->files[idx] = symelf_open(&s->files, path, &st, fd);
	if (fd >= 0)
		close(fd);
	free(path);
	/* The same file mapped again (each segment is a mapping) shares the entry. */
	for (size_t i = 0; i < p->maps.n && p->files[idx]; i++) {
		const struct ws_map *o = &p->maps.maps[i];

		if (!p->file_tried[i] && o->inode == m->inode && o->path &&
		    !strcmp(o->path, m->path)) {
			p->file_tried[i] = true;
			p->files[i] = p->files[idx];
		}
	}
	return p->files[idx];
}

/* --- resolution --------------------------------------------------------------------------- */

/*
 * Keys are the hash of (file, address); entries with one hash take consecutive keys. Nothing
 * is ever removed, so a lookup that meets a free key has seen every entry of that hash.
 */
static uint64_t memo_key(const struct elf_file *f, uint64_t look)
{
	uint64_t key = ws_hash64(look ^ (uint64_t)(uintptr_t)f);

	return key ? key : 1;
}

static struct addr_memo *memo_find(struct ws_symbols *s, const struct elf_file *f, uint64_t look,
				   uint64_t *free_key)
{
	for (uint64_t key = memo_key(f, look);; key = key + 1 ? key + 1 : 1) {
		struct addr_memo *m = ws_table_get(&s->memo, key);

		if (!m) {
			*free_key = key;
			return NULL;
		}
		if (m->f == f && m->look == look)
			return m;
	}
}

/* Symbol and line of @look in @f, from the memo or from libdw. */
static const struct addr_memo *elf_resolve(struct ws_symbols *s, struct elf_file *f, uint64_t look,
					   struct addr_memo *tmp)
{
	uint64_t key;
	const struct addr_memo *m = memo_find(s, f, look, &key);
	struct ws_frame lf = { 0 };
	struct addr_memo *kept;
	const char *name;

	if (m)
		return m;
	memset(tmp, 0, sizeof(*tmp));
	tmp->f = f;
	tmp->look = look;
	name = symelf_sym(f, look, &tmp->start);
	tmp->name = name ? ws_strpool_intern(&s->strs, name) : NULL;
	if (!s->no_lines) {
		symelf_line(&s->strs, f, look, &lf);
		tmp->file = lf.file;
		tmp->line = lf.line;
	}
	kept = ws_table_put(&s->memo, key, NULL);
	if (kept) /* without memory it is only not remembered */
		*kept = *tmp;
	return tmp;
}

static void resolve_user(struct ws_symbols *s, struct proc *p, uint64_t ip, uint64_t look,
			 struct ws_frame *out)
{
	const struct ws_map *m = p->have_maps ? ws_procmaps_find(&p->maps, look) : NULL;
	const struct perf_sym *ps;
	const char *perf_path;
	struct addr_memo tmp;
	uint64_t va, va_ip;
	struct elf_file *f;

	/* Not covered: maybe a library dlopen()ed since the maps were read. */
	if (!m && p->live && proc_reread(p) == 0)
		m = ws_procmaps_find(&p->maps, look);
	if (m && m->path && m->path[0] == '/') {
		out->module = ws_strpool_intern(&s->strs, m->path);
		out->off = ip - m->start + m->offset;
		f = proc_file(s, p, (size_t)(m - p->maps.maps));
		if (f && symelf_addr(f, m, look, &va)) {
			const struct addr_memo *r = elf_resolve(s, f, va, &tmp);

			va_ip = va + (ip - look);
			out->off = va_ip;
			if (r->name) {
				out->sym = r->name;
				out->off = va_ip - r->start;
			}
			out->file = r->file;
			out->line = r->line;
			if (out->sym)
				return;
		}
	}
	/* Code a JIT or an interpreter generated names itself in the perf map. */
	if (!m || !m->path || m->path[0] != '/') {
		ps = ws_perf_map_lookup(&p->perf, &s->strs, s->perf_map_dir, p->pid, look,
					&perf_path);
		if (ps) {
			out->sym = ps->name;
			out->off = ip - ps->start;
			out->module = perf_path;
			return;
		}
	}
	if (m && (!m->path || m->path[0] != '/')) {
		out->module = ws_strpool_intern(&s->strs, m->path ? m->path : "[anon]");
		out->off = ip - m->start;
	}
}

int ws_symbols_resolve(struct ws_symbols *s, pid_t pid, uint64_t ip, bool return_address,
		       struct ws_frame *out)
{
	uint64_t look = return_address && ip ? ip - 1 : ip;
	struct proc *p;

	memset(out, 0, sizeof(*out));
	out->ip = ip;
	out->off = ip;
	if (KERNEL_ADDR(ip)) {
		ws_ksyms_resolve(&s->ksyms, &s->strs, ip, look, out);
		return 0;
	}
	p = proc_get(s, pid);
	if (!p)
		return -ENOMEM;
	resolve_user(s, p, ip, look, out);
	return 0;
}

/* --- data ------------------------------------------------------------------------------- */

int ws_symbols_data(struct ws_symbols *s, pid_t pid, uint64_t addr, const char **sym, uint64_t *off)
{
	const struct ws_map *m, *fm;
	struct proc *p;
	struct elf_file *f;
	const char *name;
	uint64_t va;

	*sym = NULL;
	*off = 0;
	if (KERNEL_ADDR(addr))
		return -ENOENT;
	p = proc_get(s, pid);
	if (!p)
		return -ENOMEM;
	if (!p->have_maps)
		return -ESRCH;
	m = ws_procmaps_find(&p->maps, addr);
	if (!m && p->live && proc_reread(p) == 0)
		m = ws_procmaps_find(&p->maps, addr);
	if (!m)
		return -ENOENT;
	fm = m;
	/* .bss past the file's last page is anonymous memory right after the file's mapping */
	if (!m->path && m > p->maps.maps && m[-1].end == m->start)
		fm = m - 1;
	if (!fm->path || fm->path[0] != '/')
		return -ENOENT;
	f = proc_file(s, p, (size_t)(fm - p->maps.maps));
	if (!f || !symelf_data_addr(f, fm, addr, &va))
		return -ENOENT;
	name = symelf_data_sym(f, va, off);
	if (!name)
		return -ENOENT;
	*sym = ws_strpool_intern(&s->strs, name);
	return *sym ? 0 : -ENOMEM;
}

int ws_data_name_format(const char *sym, uint64_t off, char *buf, size_t len)
{
	char base[WS_DEMANGLE_MAX], d[WS_DEMANGLE_MAX], tail[24] = "";
	const char *name;
	size_t n, t;

	/* without its version ("@GLIBC_2.2.5"): a name, not a link target */
	snprintf(base, sizeof(base), "%.*s", (int)strcspn(sym, "@"), sym);
	name = ws_demangle(base, d, sizeof(d));
	if (off)
		snprintf(tail, sizeof(tail), "+0x%" PRIx64, off);
	n = strlen(name);
	t = strlen(tail);
	if (len < t + 5 || !n)
		return 0;
	if (n + t < len)
		return snprintf(buf, len, "%s%s", name, tail);
	return snprintf(buf, len, "%.*s...%s", (int)(len - 1 - t - 3), name, tail);
}
