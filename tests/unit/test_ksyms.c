// SPDX-License-Identifier: MIT
/*
 * core/stacks/ksyms.c on made-up kallsyms files: which addresses get a name (text symbols, up to
 * the next symbol of any kind), modules named and listed out of address order, lines that do not
 * parse skipped, and nothing resolved when kptr_restrict hides the addresses.
 */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "stacks/ksyms.h"

static char path[64];

/* A kallsyms file holding @text; the test's ws_ksyms reads it. */
static void write_kallsyms(const char *text)
{
	int fd;

	strcpy(path, "/tmp/whyslow-test-ksyms.XXXXXX");
	fd = mkstemp(path);
	cr_assert(fd >= 0);
	cr_assert_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
}

static void remove_kallsyms(void)
{
	unlink(path);
}

struct want {
	uint64_t ip;
	const char *sym; /* NULL: no name */
	uint64_t off;
	const char *module;
};

static void check(const char *text, const struct want *w, size_t n)
{
	struct ws_ksyms k = { .path = path };
	struct ws_strpool strs;

	write_kallsyms(text);
	ws_strpool_init(&strs);
	for (size_t i = 0; i < n; i++) {
		struct ws_frame f = { .ip = w[i].ip };

		ws_ksyms_resolve(&k, &strs, w[i].ip, w[i].ip, &f);
		if (!w[i].sym) {
			cr_expect_null(f.sym, "%#llx: no name expected, got %s",
				       (unsigned long long)w[i].ip, f.sym);
			continue;
		}
		cr_expect(f.sym && !strcmp(f.sym, w[i].sym), "%#llx: want %s, got %s",
			  (unsigned long long)w[i].ip, w[i].sym, f.sym ? f.sym : "(none)");
		cr_expect_eq(f.off, w[i].off, "%#llx: offset %llu", (unsigned long long)w[i].ip,
			     (unsigned long long)f.off);
		cr_expect_str_eq(f.module, w[i].module);
	}
	ws_ksyms_free(&k);
	ws_strpool_free(&strs);
}

#define N(a) (sizeof(a) / sizeof((a)[0]))

static const char kernel[] = "ffffffff81000000 T _stext\n"
			     "ffffffff81000100 T schedule\n"
			     "ffffffff81000100 W schedule_alias\n"
			     "ffffffff81000200 t do_nanosleep\n"
			     "this line is not a symbol\n"
			     "ffffffff81000300 D some_data\n"
			     "ffffffff81000400 T far_away\n"
			     "ffffffff81300000 T _etext\n"
			     /* modules come after, in load order: not sorted */
			     "ffffffffc0002000 t mod_b_fn\t[mod_b]\n"
			     "ffffffffc0001000 T mod_a_fn\t[mod_a]\n"
			     "ffffffffc0001800 t mod_a_end\t[mod_a]\n"
			     "ffffffffc0003000 T last_of_all\t[mod_b]\n";

Test(ksyms, names_and_extents, .fini = remove_kallsyms)
{
	const struct want w[] = {
		{ 0xffffffff81000010, "_stext", 0x10, "[kernel]" },
		/* two names at one address, a weak one (a function too): either is right */
		{ 0xffffffff81000180, "schedule_alias", 0x80, "[kernel]" },
		{ 0xffffffff810002ff, "do_nanosleep", 0xff, "[kernel]" },
		/* past a data symbol: not in any function we know */
		{ 0xffffffff81000350, NULL, 0, NULL },
		/* more than 1 MiB past its symbol: not trusted */
		{ 0xffffffff81200000, NULL, 0, NULL },
		{ 0xffffffffc0001010, "mod_a_fn", 0x10, "[mod_a]" },
		{ 0xffffffffc0002004, "mod_b_fn", 0x4, "[mod_b]" },
		/* the last symbol has no known end */
		{ 0xffffffffc0003004, NULL, 0, NULL },
		/* below every symbol */
		{ 0xffffffff80000000, NULL, 0, NULL },
	};

	check(kernel, w, N(w));
}

Test(ksyms, hidden_addresses_resolve_nothing, .fini = remove_kallsyms)
{
	const struct want w[] = {
		{ 0xffffffff81000010, NULL, 0, NULL },
		{ 0, NULL, 0, NULL },
	};

	check("0000000000000000 T _stext\n0000000000000000 T schedule\n", w, N(w));
}

Test(ksyms, no_file_resolves_nothing)
{
	struct ws_ksyms k = { .path = "/nonexistent/kallsyms" };
	struct ws_strpool strs;
	struct ws_frame f = { 0 };

	ws_strpool_init(&strs);
	ws_ksyms_resolve(&k, &strs, 0xffffffff81000010, 0xffffffff81000010, &f);
	cr_expect_null(f.sym);
	cr_expect_str_eq(f.module, "[kernel]");
	ws_ksyms_free(&k);
	ws_strpool_free(&strs);
}

/*
 * This kernel's file, copied once (BPF programs and modules change it while it is read): every
 * line parses, and a function the kernel surely has resolves to itself.
 */
Test(ksyms, this_kernel, .fini = remove_kallsyms)
{
	struct ws_ksyms k = { .path = path };
	struct ws_strpool strs;
	struct ws_frame f = { 0 };
	unsigned long long addr, schedule = 0;
	char line[1024], name[512], type;
	FILE *in = fopen("/proc/kallsyms", "re"), *out;
	size_t lines = 0;
	int fd;

	cr_assert(in);
	strcpy(path, "/tmp/whyslow-test-ksyms.XXXXXX");
	fd = mkstemp(path);
	cr_assert(fd >= 0);
	out = fdopen(fd, "w");
	cr_assert(out);
	while (fgets(line, sizeof(line), in)) {
		fputs(line, out);
		if (sscanf(line, "%llx %c %511s", &addr, &type, name) != 3)
			continue;
		lines++;
		if (!strcmp(name, "schedule") && (type == 'T' || type == 't'))
			schedule = addr;
	}
	fclose(in);
	cr_assert_eq(fclose(out), 0);
	if (!schedule)
		cr_skip_test("kallsyms hides addresses here (kptr_restrict, not root)");
	ws_strpool_init(&strs);
	ws_ksyms_resolve(&k, &strs, schedule + 1, schedule + 1, &f);
	cr_expect_eq(k.n, lines, "%zu symbols parsed of %zu lines", k.n, lines);
	cr_expect(f.sym && !strcmp(f.sym, "schedule"), "schedule+1 resolved to %s",
		  f.sym ? f.sym : "(none)");
	cr_expect_eq(f.off, 1);
	ws_ksyms_free(&k);
	ws_strpool_free(&strs);
}
