// SPDX-License-Identifier: MIT
/*
 * core/stacks/symbols.c on real processes: tests/programs/sym_target.c prints the addresses of its
 * own functions, in three builds — with .symtab and DWARF, stripped (only .dynsym), and stripped
 * with a .gnu_debuglink to a debug file — and the test resolves them through the live process's
 * maps. Also: a perf map the test writes, a library loaded after the maps were read, a process that
 * has exited, a kernel address from /proc/kallsyms, and addresses nothing covers.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "stacks/procmaps.h"
#include "stacks/stack_fmt.h"
#include "stacks/symbols.h"

struct target {
	pid_t pid;
	FILE *to, *from;
	uint64_t alpha, hidden, beta;
	int alpha_first, alpha_last;
};

static uint64_t read_addr(FILE *f, const char *want)
{
	char word[32];
	void *p = NULL;

	cr_assert_eq(fscanf(f, "%31s %p", word, &p), 2, "sym_target said nothing for %s", want);
	cr_assert_str_eq(word, want);
	return (uint64_t)(uintptr_t)p;
}

static void target_start(struct target *t, const char *exe)
{
	int in[2], out[2];
	char word[32];

	memset(t, 0, sizeof(*t));
	cr_assert_eq(pipe(in), 0);
	cr_assert_eq(pipe(out), 0);
	t->pid = fork();
	cr_assert_geq(t->pid, 0);
	if (t->pid == 0) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		close(in[1]);
		close(out[0]);
		execl(exe, exe, ST_DL_LIB, (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	t->to = fdopen(in[1], "w");
	t->from = fdopen(out[0], "r");
	t->alpha = read_addr(t->from, "st_alpha");
	t->hidden = read_addr(t->from, "st_hidden");
	t->beta = read_addr(t->from, "st_beta");
	cr_assert_eq(fscanf(t->from, "%31s %d %d", word, &t->alpha_first, &t->alpha_last), 3);
}

/* Send a command line, read back "NAME ADDRESS". */
static uint64_t target_ask(struct target *t, const char *cmd, const char *name)
{
	fprintf(t->to, "%s\n", cmd);
	fflush(t->to);
	return read_addr(t->from, name);
}

static void target_stop(struct target *t)
{
	int st;

	fclose(t->to);
	fclose(t->from);
	cr_assert_eq(waitpid(t->pid, &st, 0), t->pid);
	cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 0, "sym_target failed");
}

static const char *base(const char *path)
{
	const char *b = path ? strrchr(path, '/') : NULL;

	return b ? b + 1 : path;
}

/* Where the first mapping of @path (file offset 0) starts: a PIE's load address, so the file's own
 * address of X is X minus it. */
static uint64_t load_base(pid_t pid, const char *path)
{
	struct ws_procmaps pm;
	uint64_t start = 0;

	cr_assert_eq(ws_procmaps_read(pid, &pm), 0);
	for (size_t i = 0; i < pm.n; i++)
		if (pm.maps[i].path && !strcmp(pm.maps[i].path, path) && pm.maps[i].offset == 0) {
			start = pm.maps[i].start;
			break;
		}
	ws_procmaps_free(&pm);
	cr_assert_neq(start, 0, "%s is not mapped", path);
	return start;
}

static void expect_sym(struct ws_symbols *s, pid_t pid, uint64_t ip, bool ret, const char *sym,
		       uint64_t off, const char *module)
{
	struct ws_frame f;
	char buf[512];

	cr_assert_eq(ws_symbols_resolve(s, pid, ip, ret, &f), 0);
	ws_frame_format(&f, buf, sizeof(buf));
	cr_log_info("0x%" PRIx64 " -> %s", ip, buf);
	cr_assert_eq(f.ip, ip);
	cr_assert_str_eq(f.sym ? f.sym : "(none)", sym, "0x%" PRIx64 " gave %s", ip, buf);
	cr_assert_eq(f.off, off, "0x%" PRIx64 " gave %s", ip, buf);
	cr_assert_str_eq(base(f.module) ? base(f.module) : "(none)", module);
}

Test(symbols, symtab_and_line_info)
{
	struct ws_symbols *s;
	struct target t;
	struct ws_frame f;

	target_start(&t, SYM_TARGET);
	cr_assert_eq(ws_symbols_new(&s), 0);
	expect_sym(s, t.pid, t.alpha, false, "st_alpha", 0, "sym_target");
	expect_sym(s, t.pid, t.alpha + 3, false, "st_alpha", 3, "sym_target");
	expect_sym(s, t.pid, t.hidden, false, "st_hidden", 0, "sym_target");
	expect_sym(s, t.pid, t.beta + 1, false, "st_beta", 1, "sym_target");
	/* A return address just past st_alpha's first byte belongs to st_alpha; exactly at
	 * st_hidden's start it is the call at the end of whatever precedes st_hidden. */
	expect_sym(s, t.pid, t.alpha + 1, true, "st_alpha", 1, "sym_target");

	cr_assert_eq(ws_symbols_resolve(s, t.pid, t.alpha, false, &f), 0);
	cr_assert_not_null(f.file, "no line info from the DWARF in sym_target");
	cr_assert_str_eq(base(f.file), "sym_target.c");
	cr_assert(f.line > (uint32_t)t.alpha_first && f.line < (uint32_t)t.alpha_last,
		  "line %u outside st_alpha (%d..%d)", f.line, t.alpha_first, t.alpha_last);
	/* Asked again (from the memo), the same answer. */
	cr_assert_eq(ws_symbols_resolve(s, t.pid, t.alpha + 3, false, &f), 0);
	cr_assert_str_eq(f.sym, "st_alpha");
	cr_assert_eq(f.off, 3);
	ws_symbols_free(s);

	/* Names only, when line info is not wanted. */
	cr_assert_eq(ws_symbols_new(&s), 0);
	ws_symbols_set_lines(s, false);
	cr_assert_eq(ws_symbols_resolve(s, t.pid, t.alpha, false, &f), 0);
	cr_assert_str_eq(f.sym, "st_alpha");
	cr_assert_null(f.file);
	ws_symbols_free(s);
	target_stop(&t);
}

/* Only .dynsym: exported names resolve, and the hidden function between them — which the nearest
 * dynamic symbol before it would wrongly claim — is module+offset. */
Test(symbols, dynsym_only_never_borrows_a_name)
{
	struct ws_symbols *s;
	struct target t;
	struct ws_frame f;
	uint64_t lb;
	char buf[256];

	target_start(&t, SYM_TARGET_STRIPPED);
	lb = load_base(t.pid, SYM_TARGET_STRIPPED);
	cr_assert_eq(ws_symbols_new(&s), 0);
	expect_sym(s, t.pid, t.alpha + 2, false, "st_alpha", 2, "sym_target_stripped");
	expect_sym(s, t.pid, t.beta, false, "st_beta", 0, "sym_target_stripped");
	expect_sym(s, t.pid, t.hidden + 4, false, "(none)", t.hidden + 4 - lb,
		   "sym_target_stripped");
	cr_assert_eq(ws_symbols_resolve(s, t.pid, t.hidden + 4, false, &f), 0);
	cr_assert_null(f.file, "a stripped binary has no line info");
	ws_frame_format(&f, buf, sizeof(buf));
	snprintf(buf + 128, 128, "sym_target_stripped+0x%" PRIx64, t.hidden + 4 - lb);
	cr_assert_str_eq(buf, buf + 128);
	ws_symbols_free(s);
	target_stop(&t);
}

/* Stripped, with a .gnu_debuglink to a debug file next to it: the debug file's .symtab names
 * the hidden function and its DWARF gives the line. */
Test(symbols, debuglink_gives_names_and_lines)
{
	struct ws_symbols *s;
	struct target t;
	struct ws_frame f;

	target_start(&t, SYM_TARGET_LINKED);
	cr_assert_eq(ws_symbols_new(&s), 0);
	expect_sym(s, t.pid, t.hidden + 4, false, "st_hidden", 4, "sym_target_linked");
	cr_assert_eq(ws_symbols_resolve(s, t.pid, t.alpha, false, &f), 0);
	cr_assert_not_null(f.file, "the debug file's line info was not found");
	cr_assert_str_eq(base(f.file), "sym_target.c");
	cr_assert(f.line > (uint32_t)t.alpha_first && f.line < (uint32_t)t.alpha_last);
	ws_symbols_free(s);
	target_stop(&t);
}

/* A library dlopen()ed after the process's maps were read is found by reading them again. */
Test(symbols, rereads_maps_after_dlopen)
{
	struct ws_symbols *s;
	struct target t;
	uint64_t fn;

	target_start(&t, SYM_TARGET);
	cr_assert_eq(ws_symbols_new(&s), 0);
	expect_sym(s, t.pid, t.alpha, false, "st_alpha", 0, "sym_target");
	fn = target_ask(&t, "dlopen", "st_dl_fn");
	cr_assert_neq(fn, 0, "sym_target could not dlopen %s", ST_DL_LIB);
	expect_sym(s, t.pid, fn + 1, false, "st_dl_fn", 1, "st_dl_lib.so");
	ws_symbols_free(s);
	target_stop(&t);
}

/* JIT code named in /tmp/perf-PID.map (here in a directory of the test's own): entries resolve
 * with their sizes respected, an address no entry covers stays [anon]+offset, and entries
 * appended later are read. */
Test(symbols, perf_map_for_jit_code)
{
	char dir[] = "/tmp/ws-symtest-XXXXXX", path[128];
	struct ws_symbols *s;
	struct target t;
	uint64_t anon;
	FILE *f;

	cr_assert_not_null(mkdtemp(dir));
	target_start(&t, SYM_TARGET);
	anon = target_ask(&t, "mmap", "anon");
	cr_assert_neq(anon, 0);
	snprintf(path, sizeof(path), "%s/perf-%d.map", dir, t.pid);
	f = fopen(path, "wx");
	cr_assert_not_null(f);
	fprintf(f, "%" PRIx64 " 40 jit_first\n%" PRIx64 " 20 py::handle:/srv/app.py\n", anon,
		anon + 0x40);
	fclose(f);

	cr_assert_eq(ws_symbols_new(&s), 0);
	cr_assert_eq(ws_symbols_set_perf_map_dir(s, dir), 0);
	snprintf(path, sizeof(path), "perf-%d.map", t.pid);
	expect_sym(s, t.pid, anon + 0x10, false, "jit_first", 0x10, path);
	expect_sym(s, t.pid, anon + 0x45, false, "py::handle:/srv/app.py", 5, path);
	expect_sym(s, t.pid, anon + 0x100, false, "(none)", 0x100, "[anon]");

	snprintf(path, sizeof(path), "%s/perf-%d.map", dir, t.pid);
	f = fopen(path, "a");
	cr_assert_not_null(f);
	fprintf(f, "%" PRIx64 " 80 jit_late\n", anon + 0x100);
	fclose(f);
	snprintf(path, sizeof(path), "perf-%d.map", t.pid);
	expect_sym(s, t.pid, anon + 0x100, false, "jit_late", 0, path);

	ws_symbols_free(s);
	target_stop(&t);
	snprintf(path, sizeof(path), "%s/perf-%d.map", dir, t.pid);
	cr_assert_eq(unlink(path), 0);
	cr_assert_eq(rmdir(dir), 0);
}

/* Saved maps: names of a process that has exited. */
Test(symbols, saved_maps_after_exit)
{
	struct ws_symbols *s;
	struct target t;
	struct ws_frame f;
	char *maps;
	pid_t pid;

	target_start(&t, SYM_TARGET);
	cr_assert_eq(ws_procmaps_read_text(t.pid, &maps), 0);
	pid = t.pid;
	target_stop(&t);
	cr_assert_eq(ws_symbols_new(&s), 0);
	/* Without the saved maps nothing places the address. */
	cr_assert_eq(ws_symbols_resolve(s, pid, t.alpha, false, &f), 0);
	cr_assert_null(f.sym);
	cr_assert_null(f.module);
	cr_assert_eq(ws_symbols_set_maps(s, pid, maps), 0);
	expect_sym(s, pid, t.beta + 2, false, "st_beta", 2, "sym_target");
	free(maps);
	ws_symbols_free(s);
}

static void expect_data(struct ws_symbols *s, pid_t pid, uint64_t addr, const char *sym,
			uint64_t off)
{
	const char *name;
	uint64_t o;

	cr_assert_eq(ws_symbols_data(s, pid, addr, &name, &o), 0, "0x%" PRIx64 ": not named", addr);
	cr_assert_str_eq(name, sym);
	cr_assert_eq(o, off, "0x%" PRIx64 ": %s+0x%" PRIx64, addr, name, o);
}

/* The anonymous mapping holding @addr, or false when a file's mapping holds it. */
static bool in_anon(pid_t pid, uint64_t addr)
{
	struct ws_procmaps pm;
	const struct ws_map *m;
	bool anon;

	cr_assert_eq(ws_procmaps_read(pid, &pm), 0);
	m = ws_procmaps_find(&pm, addr);
	anon = m && !m->path;
	ws_procmaps_free(&pm);
	return anon;
}

/* Data addresses (a futex word in a global): the object holding them, .data and .bss, also the
 * part of .bss past the file's last page; never a function, never a neighbour's name. */
Test(symbols, data_objects)
{
	const char *exes[] = { SYM_TARGET, SYM_TARGET_STRIPPED };

	for (size_t i = 0; i < sizeof(exes) / sizeof(exes[0]); i++) {
		struct ws_symbols *s;
		struct target t;
		uint64_t data, bss, o;
		const char *name;
		pid_t pid;
		char *maps;

		target_start(&t, exes[i]);
		data = target_ask(&t, "data", "st_data");
		bss = target_ask(&t, "bss", "st_bss");
		cr_assert(in_anon(t.pid, bss + 65535), "st_bss ends in the file's mapping");
		cr_assert_eq(ws_symbols_new(&s), 0);
		expect_data(s, t.pid, data, "st_data", 0);
		expect_data(s, t.pid, data + 60, "st_data", 60);
		expect_data(s, t.pid, bss + 8, "st_bss", 8);
		expect_data(s, t.pid, bss + 65535, "st_bss", 65535);
		/* code is not data; past an object's size is not that object */
		cr_expect_eq(ws_symbols_data(s, t.pid, t.alpha, &name, &o), -ENOENT);
		if (ws_symbols_data(s, t.pid, bss + 65536, &name, &o) == 0)
			cr_expect_str_neq(name, "st_bss");
		/* a process that is gone: its maps, saved before, place the address */
		cr_assert_eq(ws_procmaps_read_text(t.pid, &maps), 0);
		pid = t.pid;
		target_stop(&t);
		ws_symbols_free(s);
		cr_assert_eq(ws_symbols_new(&s), 0);
		cr_expect_eq(ws_symbols_data(s, pid, data, &name, &o), -ESRCH);
		cr_assert_eq(ws_symbols_set_maps(s, pid, maps), 0);
		expect_data(s, pid, data + 4, "st_data", 4);
		free(maps);
		ws_symbols_free(s);
	}
}

Test(symbols, kernel_addresses_from_kallsyms)
{
	FILE *f = fopen("/proc/kallsyms", "r");
	uint64_t addr = 0, a;
	char line[512], type, name[256];
	struct ws_symbols *s;
	struct ws_frame fr;

	cr_assert_not_null(f);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%" SCNx64 " %c %255s", &a, &type, name) == 3 &&
		    !strcmp(name, "schedule") && (type == 'T' || type == 't')) {
			addr = a;
			break;
		}
	fclose(f);
	if (!addr)
		cr_skip_test("/proc/kallsyms hides addresses here (kptr_restrict)");
	cr_assert_eq(ws_symbols_new(&s), 0);
	expect_sym(s, 0, addr + 4, false, "schedule", 4, "[kernel]");
	/* Far past the end of every symbol: unnamed. */
	cr_assert_eq(ws_symbols_resolve(s, 0, 0xfffffffffffff000ULL, false, &fr), 0);
	cr_assert_null(fr.sym);
	ws_symbols_free(s);
}

Test(symbols, unmapped_addresses_and_formats)
{
	struct ws_symbols *s;
	struct ws_frame f;
	char buf[128];

	cr_assert_eq(ws_symbols_new(&s), 0);
	cr_assert_eq(ws_symbols_resolve(s, getpid(), 0x10, false, &f), 0);
	cr_assert_null(f.sym);
	cr_assert_null(f.module);
	ws_frame_format(&f, buf, sizeof(buf));
	cr_assert_str_eq(buf, "0x10");

	f = (struct ws_frame){ .ip = 1,
			       .sym = "XLogFlush",
			       .off = 0x2a,
			       .module = "/usr/bin/pg",
			       .file = "xlog.c",
			       .line = 2513 };
	ws_frame_format(&f, buf, sizeof(buf));
	cr_assert_str_eq(buf, "XLogFlush+0x2a (pg) xlog.c:2513");
	f.file = NULL;
	ws_frame_format(&f, buf, sizeof(buf));
	cr_assert_str_eq(buf, "XLogFlush+0x2a (pg)");
	f.sym = NULL;
	ws_frame_format(&f, buf, sizeof(buf));
	cr_assert_str_eq(buf, "pg+0x2a");
	cr_assert_eq(ws_symbols_set_maps(s, 42, "garbage\n"), -EINVAL);
	ws_symbols_free(s);
}
