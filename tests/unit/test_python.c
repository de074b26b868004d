// SPDX-License-Identifier: MIT
/*
 * CPython frames named from process memory (core/stacks/pyframes.c): the 3.11 location table,
 * and code objects laid out as 3.11 lays them out, in this process's own memory, named only when
 * every pointer is of the interpreter's type ("python frames unreadable" otherwise).
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "stacks/pyframes.h"
#include "stacks/pygil.h"
#include "stacks/pyproc.h"
#include "stacks/pystack.h"

/* firstlineno 10; entries: no-column +0 (1 unit), one-line +1 (2 units), no location (1 unit),
 * long form -1 (3 units), short form (1 unit), no-column +40 in a two-byte varint (1 unit) */
static const uint8_t table[] = { 0xE8, 0x00, 0xD9, 0x04, 0x08, 0xF8, 0xF2, 0x03,
				 0x00, 0x01, 0x05, 0x80, 0x05, 0xE8, 0x50, 0x01 };

Test(pyline, entries_of_every_form)
{
	const int want[][2] = { { -2, 10 }, { 0, 10 },	{ 1, 10 },  { 2, 11 },
				{ 5, 11 },  { 6, -1 },	{ 8, 10 },  { 13, 10 },
				{ 14, 10 }, { 16, 50 }, { 17, 50 }, { 18, -1 } };

	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		cr_expect_eq(ws_py_line(table, sizeof(table), 10, want[i][0]), want[i][1],
			     "offset %d: line %d, want %d", want[i][0],
			     ws_py_line(table, sizeof(table), 10, want[i][0]), want[i][1]);
}

Test(pyline, cut_or_foreign_tables_give_no_line)
{
	const uint8_t cut[] = { 0xE8 };		  /* a varint the table ends inside */
	const uint8_t foreign[] = { 0x12, 0x34 }; /* no entry's first byte (3.10's lnotab) */

	cr_expect_eq(ws_py_line(cut, sizeof(cut), 7, 0), 7); /* delta read as 0 */
	cr_expect_eq(ws_py_line(foreign, sizeof(foreign), 7, 0), -1);
	cr_expect_eq(ws_py_line(table, 0, 7, 0), -1);
}

/* Objects as CPython 3.11 lays them out (x86_64/arm64), in this process. */
static char code_type, unicode_type, bytes_type; /* their addresses stand for the types */

struct fake_str {
	uint64_t refcnt, type, length, hash;
	uint32_t state, pad;
	uint64_t wstr;
	char data[32];
};

struct fake_bytes {
	uint64_t refcnt, type, size, hash;
	uint8_t data[16];
};

static struct fake_str *str_of(const char *s)
{
	struct fake_str *o = calloc(1, sizeof(*o));

	o->type = (uint64_t)(uintptr_t)&unicode_type;
	o->length = strlen(s);
	o->state = (1u << 2) | (1u << 5) | (1u << 6) | (1u << 7); /* 1-byte, compact, ascii */
	memcpy(o->data, s, o->length);
	return o;
}

static uint8_t *code_of(const char *name, const char *file, struct fake_bytes *lt)
{
	uint8_t *c = calloc(1, 184 + 64);
	uint64_t v;
	int32_t first = 10;

	v = (uint64_t)(uintptr_t)&code_type;
	memcpy(c + 8, &v, 8);
	v = 32; /* code units */
	memcpy(c + 16, &v, 8);
	memcpy(c + 72, &first, 4);
	v = (uint64_t)(uintptr_t)str_of(file);
	memcpy(c + 112, &v, 8);
	v = (uint64_t)(uintptr_t)str_of(name);
	memcpy(c + 128, &v, 8);
	v = (uint64_t)(uintptr_t)lt;
	memcpy(c + 136, &v, 8);
	return c;
}

/* code_of's object, its two strings and its line table, freed (LeakSanitizer runs these) */
static void code_free(uint8_t *c, struct fake_bytes *lt)
{
	uint64_t v;

	memcpy(&v, c + 112, 8);
	free((void *)(uintptr_t)v);
	memcpy(&v, c + 128, 8);
	free((void *)(uintptr_t)v);
	free(c);
	free(lt);
}

/*
 * Under qemu-user (the arm64 unit run: tools/arm64-test sets WHYSLOW_TEST_EMULATED) a guest
 * address is not the host's: /proc/self/pagemap and process_vm_readv, which the reader of
 * interpreter memory uses, see the emulator's memory. On a real kernel these tests always run.
 */
static void skip_if_emulated(void)
{
	if (getenv("WHYSLOW_TEST_EMULATED"))
		cr_skip_test("guest addresses are not the process's own under user-mode emulation");
}

static struct ws_py_info info_311(void)
{
	struct ws_py_info in = { 0 };

	in.layout = ws_py_layout_of(11);
	in.code_type = (uint64_t)(uintptr_t)&code_type;
	in.unicode_type = (uint64_t)(uintptr_t)&unicode_type;
	in.bytes_type = (uint64_t)(uintptr_t)&bytes_type;
	return in;
}

static struct fake_bytes *lt_of(void)
{
	struct fake_bytes *b = calloc(1, sizeof(*b));

	b->type = (uint64_t)(uintptr_t)&bytes_type;
	b->size = sizeof(table);
	memcpy(b->data, table, sizeof(table));
	return b;
}

Test(pyframes, names_valid_code_objects_with_lines)
{
	struct ws_py_info in = info_311();
	struct fake_bytes *lt;
	uint8_t *code;
	struct ws_py_raw raw = { .state = WS_PY_OK, .n = 1 };
	struct ws_pyframe out[4];
	struct ws_pyframes *c;
	int n;

	skip_if_emulated();
	lt = lt_of();
	code = code_of("Worker.wait", "/srv/app.py", lt);
	cr_assert_not_null(in.layout);
	cr_assert_eq(ws_pyframes_new(&c), 0);
	raw.f[0].code = (uint64_t)(uintptr_t)code;
	raw.f[0].instr = raw.f[0].code + 184 + 2 * 1; /* code unit 1: byte offset 2, line 11 */
	raw.f[0].entry = 1;
	n = ws_pyframes_resolve(c, (uint32_t)getpid(), &in, &raw, out, 4);
	cr_assert_eq(n, 1);
	cr_expect_str_eq(out[0].name, "Worker.wait");
	cr_expect_str_eq(out[0].file, "/srv/app.py");
	cr_expect_eq(out[0].line, 11);
	cr_expect(out[0].entry);
	ws_pyframes_clear(out, n);
	ws_pyframes_free(c);
	code_free(code, lt);
}

Test(pyframes, refuses_what_is_not_the_interpreters)
{
	struct ws_py_info in = info_311();
	struct fake_bytes *lt;
	uint8_t *code;
	struct ws_py_raw raw = { .state = WS_PY_OK, .n = 1 };
	struct ws_pyframe out[4];
	struct ws_pyframes *c;
	uint64_t name;

	skip_if_emulated();
	lt = lt_of();
	code = code_of("f", "/srv/app.py", lt);
	cr_assert_eq(ws_pyframes_new(&c), 0);
	raw.f[0].code = (uint64_t)(uintptr_t)code;
	raw.f[0].instr = raw.f[0].code + 184;
	/* not a code object of this interpreter: its type is another */
	in.code_type++;
	cr_expect_eq(ws_pyframes_resolve(c, (uint32_t)getpid(), &in, &raw, out, 4), -EFAULT);
	in.code_type--;
	/* an instruction pointer outside its code */
	raw.f[0].instr = raw.f[0].code + 184 + 2 * 32;
	cr_expect_eq(ws_pyframes_resolve(c, (uint32_t)getpid(), &in, &raw, out, 4), -EFAULT);
	raw.f[0].instr = raw.f[0].code + 184;
	/* a name that is no str: the code object is not named at all */
	memcpy(&name, code + 128, 8);
	((struct fake_str *)(uintptr_t)name)->type++;
	ws_pyframes_forget(c, (uint32_t)getpid());
	cr_expect_eq(ws_pyframes_resolve(c, (uint32_t)getpid(), &in, &raw, out, 4), -EFAULT);
	/* a pointer to nowhere */
	raw.f[0].code = 16;
	cr_expect_eq(ws_pyframes_resolve(c, (uint32_t)getpid(), &in, &raw, out, 4), -EFAULT);
	/* a frame owner no interpreter writes */
	raw.f[0].code = (uint64_t)(uintptr_t)code;
	raw.f[0].owner = 9;
	cr_expect_eq(ws_pyframes_resolve(c, (uint32_t)getpid(), &in, &raw, out, 4), -EFAULT);
	ws_pyframes_free(c);
	code_free(code, lt);
}

/*
 * A process whose python-named files do not hold the interpreter yet (pyenv's python3.12 before
 * ld.so maps its libpython) stays "not yet" however often its maps are read unchanged, and is
 * found once the interpreter's file is mapped: asked at every read, it used all its tries within
 * the first 100 ms on a loaded machine, and its frames were never read.
 */
Test(pystack, not_yet_is_asked_again_only_when_the_files_change)
{
	char dir[] = "/tmp/ws-pystack.XXXXXX", exe[64], maps[512], both[1024];
	struct ws_pystack *p = NULL;
	struct ws_py_proc proc;
	struct stat st, py;
	int ret = 0;

	if (access("/usr/bin/python3.11", R_OK))
		cr_skip_test("no /usr/bin/python3.11");
	/* as root the files are opened by a helper under a seccomp filter, which qemu-user (the
	 * arm64 unit run) cannot run: every open fails there, and "not yet" is never "not one" */
	if (geteuid() == 0 && getenv("WHYSLOW_TEST_EMULATED"))
		cr_skip_test("the file opener's helper runs under seccomp, which qemu-user cannot");
	cr_assert_not_null(mkdtemp(dir));
	/* the interpreter's files are opened as the process's user would: not through a 0700 dir */
	cr_assert_eq(chmod(dir, 0755), 0);
	snprintf(exe, sizeof(exe), "%s/python3.12", dir);
	/* an ELF named like an interpreter, without one: /bin/true's bytes */
	{
		char cmd[160];

		snprintf(cmd, sizeof(cmd), "cp /bin/true '%s'", exe);
		cr_assert_eq(system(cmd), 0);
	}
	cr_assert_eq(stat(exe, &st), 0);
	cr_assert_eq(stat("/usr/bin/python3.11", &py), 0);
	snprintf(maps, sizeof(maps), "55550000-55551000 r-xp 00000000 00:00 %lu %s\n",
		 (unsigned long)st.st_ino, exe);
	snprintf(both, sizeof(both),
		 "%s7f000000-7f400000 r--p 00000000 00:00 %lu /usr/bin/python3.11\n", maps,
		 (unsigned long)py.st_ino);
	cr_assert_eq(ws_pystack_new(&p), 0);
	for (int i = 0; i < 50; i++)
		cr_assert_eq(ws_pystack_check(p, 4242, maps, false, NULL, &proc), WS_PYSTACK_SAME);
	ret = ws_pystack_check(p, 4242, both, false, NULL, &proc);
	ws_pystack_free(p);
	unlink(exe);
	rmdir(dir);
	cr_assert_eq(ret, WS_PYSTACK_FOUND, "the interpreter mapped after 50 unchanged reads: %d",
		     ret);
}

/* ---- the GIL's futex words (core/stacks/pygil.c), per version, without any header ---- */

static struct ws_py_info info_at(unsigned minor, uint64_t runtime)
{
	struct ws_py_info in = { 0 };

	in.layout = ws_py_layout_of(minor);
	cr_assert_not_null(in.layout, "no layout for 3.%u", minor);
	in.bpf = in.layout->walk;
	in.bpf.runtime = runtime;
	in.version = 0x03000000u | minor << 16;
	return in;
}

Test(pygil, words_of_each_version)
{
	/* Debian's 3.11.2: its GIL waits sleep on _PyRuntime+0x1b0 and +0x1b4 (nm -D, observed:
	 * docs/REAL-PROGRAMS.md), the condition variable's two signal words */
	struct ws_py_info in = info_at(11, 0xa5b740);
	char name[64];

	cr_expect_eq(ws_py_gil_part(&in, 0xa5b740 + 0x1b0), WS_PY_GIL_COND);
	cr_expect_eq(ws_py_gil_part(&in, 0xa5b740 + 0x1b4), WS_PY_GIL_COND);
	cr_expect_eq(ws_py_gil_part(&in, 0xa5b740 + 0x1b8), WS_PY_GIL_MUTEX);
	cr_expect_eq(ws_py_gil_part(&in, 0xa5b740 + 360 + 120), WS_PY_GIL_SWITCH_COND);
	cr_expect_eq(ws_py_gil_part(&in, 0xa5b740 + 360 + 168), WS_PY_GIL_SWITCH_MUTEX);
	/* before the condition variable (locked, last_holder) and after the last mutex: no */
	cr_expect_eq(ws_py_gil_part(&in, 0xa5b740 + 360 + 16), WS_PY_GIL_NONE);
	cr_expect_eq(ws_py_gil_part(&in, 0xa5b740 + 360 + 208), WS_PY_GIL_NONE);
	cr_expect_eq(ws_py_gil_part(&in, 0), WS_PY_GIL_NONE);
	cr_expect_eq(ws_py_gil_name(&in, 4821, name, sizeof(name)), 29);
	cr_expect_str_eq(name, "the GIL (python3.11 pid 4821)");
	/* 3.12 and 3.13: the main interpreter's own GIL, deeper in _PyRuntime */
	in = info_at(12, 0x1000000);
	cr_expect_eq(ws_py_gil_part(&in, 0x1000000 + 77432 + 32 + 40), WS_PY_GIL_COND);
	cr_expect_eq(ws_py_gil_part(&in, 0x1000000 + 0x1b0), WS_PY_GIL_NONE);
	in = info_at(13, 0x1000000);
	cr_expect_eq(ws_py_gil_part(&in, 0x1000000 + 96104 + 80), WS_PY_GIL_MUTEX);
	ws_py_gil_name(&in, 7, name, sizeof(name));
	cr_expect_str_eq(name, "the GIL (python3.13 pid 7)");
	cr_expect_str_eq(ws_py_gil_part_name(WS_PY_GIL_SWITCH_COND), "switch_cond");
	cr_expect_null(ws_py_gil_part_name(WS_PY_GIL_NONE));
}

Test(pygil, nothing_without_a_layout)
{
	struct ws_py_info in = { 0 };

	cr_expect_eq(ws_py_gil_part(&in, 0x1b0), WS_PY_GIL_NONE);
	in = info_at(11, 0);
	cr_expect_eq(ws_py_gil_part(&in, 0x1b0), WS_PY_GIL_NONE, "no runtime address: nothing");
}
