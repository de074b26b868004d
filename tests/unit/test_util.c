// SPDX-License-Identifier: MIT
#include <criterion/criterion.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/proc_stat.h"
#include "base/util.h"

Test(util, parses_durations)
{
	uint64_t ns;

	cr_assert_eq(ws_parse_duration("10ms", &ns), 0);
	cr_assert_eq(ns, 10000000ULL);
	cr_assert_eq(ws_parse_duration("1.5s", &ns), 0);
	cr_assert_eq(ns, 1500000000ULL);
	cr_assert_eq(ws_parse_duration("250us", &ns), 0);
	cr_assert_eq(ns, 250000ULL);
	/* 7ms or 7s? refused, as the command line and the ini refuse it */
	cr_assert_eq(ws_parse_duration("7", &ns), -EINVAL, "a bare number has no unit");
	cr_assert(ws_duration_lacks_unit("7"));
	cr_assert(ws_duration_lacks_unit("1.5"));
	cr_assert_not(ws_duration_lacks_unit("7ms"));
	cr_assert_not(ws_duration_lacks_unit("0"), "0 needs no unit");
	cr_assert_not(ws_duration_lacks_unit("fast"));
	ns = 1;
	cr_assert_eq(ws_parse_duration("0", &ns), 0);
	cr_assert_eq(ns, 0);
	cr_assert_lt(ws_parse_duration("10 parsecs", &ns), 0);
	cr_assert_lt(ws_parse_duration("-5ms", &ns), 0);
	cr_assert_lt(ws_parse_duration("", &ns), 0);
}

Test(util, formats_durations_readably)
{
	char b[32];

	ws_format_duration(412000000, b, sizeof(b));
	cr_assert_str_eq(b, "412ms");
	ws_format_duration(1250000000, b, sizeof(b));
	cr_assert_str_eq(b, "1.25s");
	ws_format_duration(87000, b, sizeof(b));
	cr_assert_str_eq(b, "87us");
	ws_format_duration(999, b, sizeof(b));
	cr_assert_str_eq(b, "999ns");
}

Test(util, parses_sizes_and_bools)
{
	uint64_t v;
	int b;

	cr_assert_eq(ws_parse_u64("16M", &v), 0);
	cr_assert_eq(v, 16ULL << 20);
	cr_assert_lt(ws_parse_u64("12x", &v), 0);
	cr_assert_eq(ws_parse_bool("no", &b), 0);
	cr_assert_eq(b, 0);
	cr_assert_eq(ws_parse_bool("Yes", &b), 0);
	cr_assert_eq(b, 1);
	cr_assert_lt(ws_parse_bool("maybe", &b), 0);
}

/* Issue 11 #5: nothing a traced program names itself reaches the terminal as a control code */
Test(util, text_esc_escapes_control_characters)
{
	char buf[WS_ESC_LEN];

	cr_assert_str_eq(ws_text_esc("worker-1", buf, sizeof(buf)), "worker-1");
	cr_assert_str_eq(ws_text_esc("a\033[31mb", buf, sizeof(buf)), "a\\x1b[31mb");
	cr_assert_str_eq(ws_text_esc("bel\a cr\r lf\n del\177", buf, sizeof(buf)),
			 "bel\\x07 cr\\x0d lf\\x0a del\\x7f");
	/* C1 CSI as UTF-8 (U+009B) */
	cr_assert_str_eq(ws_text_esc("x\302\233y", buf, sizeof(buf)), "x\\xc2\\x9by");
	/* a backslash is doubled, so an escape cannot be forged; other UTF-8 passes */
	cr_assert_str_eq(ws_text_esc("a\\x1b", buf, sizeof(buf)), "a\\\\x1b");
	cr_assert_str_eq(ws_text_esc("caf\303\251 \342\200\224", buf, sizeof(buf)),
			 "caf\303\251 \342\200\224");
	/* truncation never splits an escape */
	char small[6];

	cr_assert_str_eq(ws_text_esc("ab\033", small, sizeof(small)), "ab");
	cr_assert_str_eq(ws_text_esc(NULL, buf, sizeof(buf)), "");
}

/* Issue 11 #8: no wrap-around, no NaN, nothing that rounds to "no limit" */
Test(util, parse_rejects_overflow_nan_and_sub_nanosecond)
{
	uint64_t v;

	cr_assert_eq(ws_parse_u64("17179869185G", &v), -ERANGE);
	cr_assert_eq(ws_parse_u64("18014398509481984K", &v), -ERANGE);
	cr_assert_eq(ws_parse_u64("16G", &v), 0);
	cr_assert_eq(v, 16ULL << 30);
	cr_assert_lt(ws_parse_duration("nan", &v), 0);
	cr_assert_lt(ws_parse_duration("nanms", &v), 0);
	cr_assert_lt(ws_parse_duration("inf", &v), 0);
	cr_assert_lt(ws_parse_duration("infs", &v), 0);
	cr_assert_lt(ws_parse_duration("1e-12s", &v), 0);
	cr_assert_lt(ws_parse_duration("0x10ms", &v), 0);
	cr_assert_eq(ws_parse_duration("0", &v), 0);
	cr_assert_eq(v, 0);
	cr_assert_eq(ws_parse_duration("1.5s", &v), 0);
	cr_assert_eq(v, 1500000000ULL);
	cr_assert_eq(ws_parse_duration(".5ms", &v), 0);
	cr_assert_eq(v, 500000ULL);
}

/* fill @a[from, to) with its indices */
static void fill_indices(uint64_t *a, size_t from, size_t to)
{
	for (size_t i = from; i < to; i++)
		a[i] = i;
}

Test(util, big_array_keeps_its_room_and_its_elements_through_a_shrink)
{
	uint64_t *a = NULL;
	size_t cap = 0, n = 1 << 18, kept = 1000, room; /* 2 MiB of elements */

	cr_assert_eq(ws_grow((void **)&a, &cap, n, sizeof(*a)), 0);
	cr_assert_geq(cap, n);
	fill_indices(a, 0, n);
	room = cap;
	/* mostly empty now: its pages go back, its room and the elements kept stay */
	cr_assert_eq(ws_shrink((void **)&a, &cap, kept, sizeof(*a)), 0);
	cr_assert_eq(cap, room);
	for (size_t i = 0; i < kept; i++)
		cr_assert_eq(a[i], i);
	/* and it grows again in place, as far as its room goes */
	cr_assert_eq(ws_grow((void **)&a, &cap, room, sizeof(*a)), 0);
	cr_assert_eq(cap, room);
	fill_indices(a, kept, room);
	for (size_t i = 0; i < room; i += 4096)
		cr_assert_eq(a[i], i);
	free(a);
}

Test(util, small_array_shrinks_by_reallocating)
{
	uint64_t *a = NULL;
	size_t cap = 0;

	cr_assert_eq(ws_grow((void **)&a, &cap, 4096, sizeof(*a)), 0); /* 32 KiB */
	fill_indices(a, 0, 10);
	cr_assert_gt(ws_shrink((void **)&a, &cap, 10, sizeof(*a)), 0);
	cr_assert_eq(cap, 256);
	for (size_t i = 0; i < 10; i++)
		cr_assert_eq(a[i], i);
	free(a);
}

/* ws_read_file on a file of @n bytes, starting from a buffer of @initial: all of it, in order. */
static void read_back(size_t n, size_t initial)
{
	char path[] = "/tmp/whyslow-test-read.XXXXXX", *text = NULL;
	char *data = malloc(n + 1);
	size_t len = 0;
	int fd = mkstemp(path);

	cr_assert(fd >= 0 && data);
	for (size_t i = 0; i < n; i++)
		data[i] = 'a' + i % 26;
	cr_assert_eq(write(fd, data, n), (ssize_t)n);
	close(fd);
	cr_assert_eq(ws_read_file(path, initial, &text, &len), 0);
	unlink(path);
	cr_expect_eq(len, n, "%zu bytes from a start of %zu: read %zu", n, initial, len);
	cr_expect(!memcmp(text, data, n), "%zu bytes from a start of %zu: contents differ", n,
		  initial);
	cr_expect_eq(text[n], 0);
	free(text);
	free(data);
}

Test(util, reads_a_whole_file_whatever_its_size)
{
	/* empty; smaller than the buffer; one byte short of it (the NUL fits); exactly it and one
	 * byte over (the buffer must grow); many times it */
	const size_t sizes[] = { 0, 10, 63, 64, 65, 100000 };

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		read_back(sizes[i], 64);
}

Test(util, read_file_says_why_it_cannot)
{
	char *text = NULL;

	cr_expect_eq(ws_read_file("/nonexistent/whyslow", 64, &text, NULL), -ENOENT);
	cr_expect_eq(ws_read_file("/tmp", 64, &text, NULL), -EISDIR);
	cr_expect_null(text);
}

/* ws_json_str's output for @s, for exact-byte comparison */
static char *json_of(const char *s)
{
	char *out = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&out, &len);

	cr_assert_not_null(m);
	ws_json_str(m, s);
	cr_assert_eq(fclose(m), 0);
	return out;
}

#define expect_json(in, want)                                                    \
	do {                                                                     \
		char *got_ = json_of(in);                                        \
		cr_expect_str_eq(got_, want, "ws_json_str(%s) = %s", #in, got_); \
		free(got_);                                                      \
	} while (0)

/* Issue 35 #2: a thread named "schläfer" reads "schläfer" in jq, not "schlÃ¤fer" */
Test(util, json_str_keeps_valid_utf8)
{
	expect_json("worker-1", "\"worker-1\"");
	expect_json("", "\"\"");
	expect_json(NULL, "\"\"");
	expect_json("schl\303\244fer", "\"schl\303\244fer\"");
	/* 2-, 3- and 4-byte sequences at both ends of their ranges */
	expect_json("\302\240 \337\277", "\"\302\240 \337\277\"");
	expect_json("\340\240\200 \342\200\224 \355\237\277 \356\200\200 \357\277\275",
		    "\"\340\240\200 \342\200\224 \355\237\277 \356\200\200 \357\277\275\"");
	expect_json("\360\220\200\200 \360\237\230\264 \364\217\277\277",
		    "\"\360\220\200\200 \360\237\230\264 \364\217\277\277\"");
}

/* C0, DEL and C1 never reach a terminal from JSON either (README, Security) */
Test(util, json_str_escapes_quotes_and_controls)
{
	expect_json("a\"b\\c/", "\"a\\\"b\\\\c/\"");
	expect_json("\b\f\n\r\t", "\"\\b\\f\\n\\r\\t\"");
	expect_json("\001\033[2J\037", "\"\\u0001\\u001b[2J\\u001f\"");
	expect_json("del\177", "\"del\\u007f\"");
	/* U+0080, U+009B (C1 CSI), U+009F; U+00A0 is the first that passes */
	expect_json("\302\200\302\233\302\237\302\240", "\"\\u0080\\u009b\\u009f\302\240\"");
}

/* One U+FFFD per maximal ill-formed subsequence, as WHATWG's decoder and Python's "replace" */
Test(util, json_str_replaces_invalid_utf8)
{
	/* stray continuation bytes, one each */
	expect_json("a\200b", "\"a\\ufffdb\"");
	expect_json("\277\200", "\"\\ufffd\\ufffd\"");
	/* bytes that never start a sequence: C0, C1 (overlong 2-byte leads), F5..FF */
	expect_json("\300\257", "\"\\ufffd\\ufffd\"");
	expect_json("\301\277", "\"\\ufffd\\ufffd\"");
	expect_json("\365\200\200\200", "\"\\ufffd\\ufffd\\ufffd\\ufffd\"");
	expect_json("\377x", "\"\\ufffdx\"");
	/* overlong 3- and 4-byte forms: the lead is refused at its second byte */
	expect_json("\340\200\257", "\"\\ufffd\\ufffd\\ufffd\"");
	expect_json("\340\237\277", "\"\\ufffd\\ufffd\\ufffd\"");
	expect_json("\360\217\277\277", "\"\\ufffd\\ufffd\\ufffd\\ufffd\"");
	/* surrogates U+D800 and U+DFFF encoded in UTF-8 (CESU-8) */
	expect_json("\355\240\200", "\"\\ufffd\\ufffd\\ufffd\"");
	expect_json("\355\277\277", "\"\\ufffd\\ufffd\\ufffd\"");
	/* above U+10FFFF */
	expect_json("\364\220\200\200", "\"\\ufffd\\ufffd\\ufffd\\ufffd\"");
	/* truncated: a valid prefix cut short is one replacement, then the next byte as itself */
	expect_json("\342\202", "\"\\ufffd\"");
	expect_json("\342\202x", "\"\\ufffdx\"");
	expect_json("\360\237\230", "\"\\ufffd\"");
	expect_json("\360\237\"", "\"\\ufffd\\\"\"");
	expect_json("\303\303\244", "\"\\ufffd\303\244\"");
	expect_json("\342\202\n", "\"\\ufffd\\n\"");
}

Test(util, one_of_a_thing_is_singular)
{
	cr_assert_str_eq(ws_plural(1, "wait", "waits"), "wait");
	cr_assert_str_eq(ws_plural(0, "wait", "waits"), "waits");
	cr_assert_str_eq(ws_plural(2, "process", "processes"), "processes");
}

Test(util, proc_stat_fields_start_after_the_last_paren_of_the_comm)
{
	char comm[16], buf[256];
	const char *f;

	/* a comm may hold spaces and ')': "a) Z (b" must not be read as state Z */
	cr_assert_str_eq(ws_proc_stat_fields("42 (a) Z (b) S 1 42"), "S 1 42");
	cr_assert_eq(ws_proc_stat_comm("42 (a) Z (b) S 1 42", comm, sizeof(comm)), 0);
	cr_assert_str_eq(comm, "a) Z (b");
	cr_assert_eq(ws_proc_stat_comm("42 (averyveryverylongname) R 1", comm, 5), 0);
	cr_assert_str_eq(comm, "aver");
	cr_assert_null(ws_proc_stat_fields("42 (cut"));
	cr_assert_null(ws_proc_stat_fields("42 x) S 1"));
	cr_assert_null(ws_proc_stat_fields("42 (x)"));
	cr_assert_lt(ws_proc_stat_comm("no parens", comm, sizeof(comm)), 0);
	/* our own line, read from /proc: its state, then its parent's pid (qemu-user, which makes
	 * this file up, writes no state letter) */
	f = ws_proc_stat_read("/proc/self/stat", buf, sizeof(buf));
	cr_assert_not_null(f);
	cr_assert_eq(atoi(f + 2), getppid(), "%s", f);
	cr_assert_null(ws_proc_stat_read("/proc/nonexistent/stat", buf, sizeof(buf)));
}

static bool keep_all(uint32_t pid, void *ctx)
{
	(void)pid;
	++*(int *)ctx;
	return true;
}

Test(util, proc_scan_names_processes_not_itself)
{
	uint32_t ppid = 0, *pids = NULL;
	bool kthread = true, parent = false, self = false;
	size_t n = 0;
	int asked = 0;

	cr_assert_eq(ws_proc_stat_of((uint32_t)getpid(), &ppid, &kthread), 0);
	cr_assert_eq(ppid, (uint32_t)getppid());
	cr_assert(!kthread);
	/* pid 2 is kthreadd, a kernel thread, wherever /proc is the machine's */
	if (ws_proc_stat_of(2, &ppid, &kthread) == 0)
		cr_assert(kthread);
	cr_assert_eq(ws_proc_stat_of(0x7fffffff, &ppid, &kthread), -ESRCH);
	cr_assert_eq(ws_proc_pids(keep_all, &asked, &pids, &n), 0);
	for (size_t i = 0; i < n; i++) {
		parent |= pids[i] == (uint32_t)getppid();
		self |= pids[i] == (uint32_t)getpid();
	}
	cr_assert(parent, "its parent not among %zu processes", n);
	cr_assert(!self, "whyslow's own process is left out");
	cr_assert_eq((size_t)asked, n);
	free(pids);
}

Test(util, u64_dec_writes_every_width)
{
	static const uint64_t v[] = { 0, 7, 10, 99, 1000000007ULL, UINT64_MAX };
	char got[24], want[24];

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		size_t n = ws_u64_dec(got, v[i]);

		got[n] = 0;
		snprintf(want, sizeof(want), "%llu", (unsigned long long)v[i]);
		cr_expect_str_eq(got, want);
	}
}

/* Claims are told apart by this hash: every byte and the length must count. */
Test(util, hash_bytes_sees_every_byte)
{
	unsigned char a[40] = { 0 }, b[40] = { 0 };

	cr_expect_neq(ws_hash_bytes(a, 16), ws_hash_bytes(a, 24), "length");
	for (size_t i = 0; i < sizeof(a); i++) {
		b[i] = 1;
		cr_expect_neq(ws_hash_bytes(a, sizeof(a)), ws_hash_bytes(b, sizeof(b)), "byte %zu",
			      i);
		b[i] = 0;
	}
	cr_expect_eq(ws_hash_bytes(a, sizeof(a)), ws_hash_bytes(b, sizeof(b)));
}

/* ws_str_cat3 writes what snprintf("%s%s%s") writes, at every buffer size, and returns the same. */
Test(util, str_cat3_is_snprintf_of_three)
{
	static const char *const a[] = { "", "kind", "block I/O on vda" };
	static const char *const b[] = { "", " in " };
	static const char *const c[] = { "", "postgres", "x" };
	char got[32], want[32];

	for (size_t i = 0; i < 3; i++)
		for (size_t j = 0; j < 2; j++)
			for (size_t k = 0; k < 3; k++)
				for (size_t len = 0; len <= sizeof(got); len++) {
					int n;
					size_t m;

					memset(got, '#', sizeof(got));
					memset(want, '#', sizeof(want));
					n = snprintf(want, len, "%s%s%s", a[i], b[j], c[k]);
					m = ws_str_cat3(got, len, a[i], b[j], c[k]);
					cr_assert_eq(m, (size_t)n);
					cr_assert_eq(memcmp(got, want, sizeof(got)), 0,
						     "%zu %zu %zu len %zu", i, j, k, len);
				}
	cr_expect_eq(ws_str_copy(got, 5, "postgres"), 8);
	cr_expect_str_eq(got, "post");
}
