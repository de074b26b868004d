// SPDX-License-Identifier: MIT
/* Resolved stack records: encode/decode round trip, malformed records refused, and the store's
 * lookups by thread and time (core/stacks/stackrec.c, core/stacks/stacks.c,
 * core/stacks/stack_fmt.c). */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/syscall_fmt.h"
#include "stacks/stack_fmt.h"
#include "stacks/stackrec.h"
#include "stacks/stacks.h"

static struct ws_sframe frames[] = {
	{ { 0x7f0000001234, "__lll_lock_wait", 0x2b, "/usr/lib/x86_64-linux-gnu/libc.so.6", NULL,
	    0 },
	  false },
	{ { 0x7f0000005678, "pthread_mutex_lock@GLIBC_2.2.5", 0x112,
	    "/usr/lib/x86_64-linux-gnu/libc.so.6", NULL, 0 },
	  false },
	{ { 0x555500001000, "gt_lock", 0x10, "/opt/gt/gt_mutex_disk", "gt_common.c", 295 }, false },
	{ { 0x555500002000, "victim", 0x40, "/opt/gt/gt_mutex_disk", "gt_mutex_disk.c", 57 },
	  false },
	{ { 0x555500003000, NULL, 0x3000, "/opt/gt/gt_mutex_disk", NULL, 0 }, false },
	{ { 0xffffffff81000000ULL, "__schedule", 0x300, "[kernel]", NULL, 0 }, true },
	{ { 0xffffffff81001000ULL, "futex_wait_queue", 0x50, "[kernel]", NULL, 0 }, true },
};

static struct ws_rec_hdr *make(uint32_t tid, uint8_t role, uint64_t start, uint64_t end, uint32_t n)
{
	struct ws_stack st = { .tid = tid,
			       .pid = 100,
			       .wait_tid = tid,
			       .role = role,
			       .ustop = 1,
			       .wait_start = start,
			       .wait_end = end,
			       .n = n,
			       .frames = frames };
	struct ws_rec_hdr hdr = { .ts = end - 1, .cpu = 1 }, *rec = NULL;

	cr_assert_eq(ws_stackrec_encode(&hdr, &st, &rec), 0);
	return rec;
}

Test(stackrec, round_trip)
{
	struct ws_rec_hdr *rec = make(7, WS_STACK_WAITER, 1000, 5000, 7);
	struct ws_stack *st;

	cr_assert_eq(rec->kind, WS_KIND_STACK);
	cr_assert_eq(ws_stackrec_decode(rec, &st), 0);
	cr_assert_eq(st->n, 7);
	cr_assert_eq(st->wait_start, 1000);
	cr_assert_eq(st->wait_end, 5000);
	for (int i = 0; i < 7; i++) {
		const struct ws_frame *a = &frames[i].f, *b = &st->frames[i].f;

		cr_assert_eq(a->ip, b->ip);
		cr_assert_eq(a->off, b->off);
		cr_assert_eq(a->line, b->line);
		cr_assert_eq(frames[i].kernel, st->frames[i].kernel);
		cr_assert_eq(!a->sym, !b->sym);
		if (a->sym)
			cr_assert_str_eq(a->sym, b->sym);
		cr_assert_str_eq(a->module, b->module);
		cr_assert_eq(!a->file, !b->file);
	}
	ws_stack_free(st);
	free(rec);
}

Test(stackrec, malformed_is_refused)
{
	struct ws_rec_hdr *rec = make(7, WS_STACK_WAITER, 1000, 5000, 7);
	struct ws_rec_stack *r = (void *)rec;
	struct ws_stack *st;
	uint16_t size = rec->size;

	/* cut short: the last frame's strings are missing */
	rec->size = size - 12;
	cr_assert_eq(ws_stackrec_decode(rec, &st), -EINVAL);
	rec->size = size;
	/* more frames claimed than present */
	r->nframes = 9;
	cr_assert_eq(ws_stackrec_decode(rec, &st), -EINVAL);
	r->nframes = 7;
	/* a string without its NUL */
	((char *)rec)[size - 1] = 'x';
	cr_assert_eq(ws_stackrec_decode(rec, &st), 0, "padding is not a string");
	ws_stack_free(st);
	r->role = 9;
	cr_assert_eq(ws_stackrec_decode(rec, &st), -EINVAL);
	rec->size = sizeof(*r) - 1;
	cr_assert_eq(ws_stackrec_decode(rec, &st), -EINVAL);
	free(rec);
}

Test(stacks, found_by_thread_and_overlap)
{
	struct ws_stacks *s = ws_stacks_new();
	const struct ws_stack *out[WS_STACK_PARTS];
	struct ws_rec_hdr *a = make(7, WS_STACK_WAITER, 1000, 5000, 5);
	struct ws_rec_hdr *b = make(7, WS_STACK_WAITER, 1000, 5000, 7); /* its other half */
	struct ws_rec_hdr *c = make(7, WS_STACK_WAITER, 9000, 12000, 3);
	struct ws_rec_hdr *w = make(8, WS_STACK_WAKER, 1000, 4990, 4);

	((struct ws_rec_stack *)w)->wait_tid = 7;
	cr_assert_eq(ws_stacks_add(s, a), 0);
	cr_assert_eq(ws_stacks_add(s, b), 0);
	cr_assert_eq(ws_stacks_add(s, c), 0);
	cr_assert_eq(ws_stacks_add(s, w), 0);
	cr_assert_eq(ws_stacks_find(s, WS_STACK_WAITER, 7, 1500, 4800, out), 2);
	cr_assert_eq(out[0]->wait_end, 5000);
	cr_assert_eq(out[1]->wait_end, 5000);
	cr_assert_eq(ws_stacks_find(s, WS_STACK_WAITER, 7, 9500, 9600, out), 1);
	cr_assert_eq(out[0]->n, 3);
	cr_assert_eq(ws_stacks_find(s, WS_STACK_WAITER, 7, 6000, 8000, out), 0, "no wait then");
	cr_assert_eq(ws_stacks_find(s, WS_STACK_WAITER, 8, 1000, 5000, out), 0, "another thread");
	cr_assert_eq(ws_stacks_find(s, WS_STACK_WAKER, 7, 1000, 5000, out), 1);
	cr_assert_eq(out[0]->tid, 8);
	ws_stacks_evict(s, 6000);
	cr_assert_eq(ws_stacks_find(s, WS_STACK_WAITER, 7, 1500, 4800, out), 0, "evicted");
	cr_assert_eq(ws_stacks_find(s, WS_STACK_WAITER, 7, 9500, 9600, out), 1);
	ws_stacks_free(s);
	free(a);
	free(b);
	free(c);
	free(w);
}

Test(stack_fmt, text_starts_in_the_programs_code)
{
	struct ws_rec_hdr *a = make(7, WS_STACK_WAITER, 1000, 5000, 7);
	struct ws_stack *st;
	const struct ws_stack *parts[1];
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	setenv("LC_ALL", "C", 1);
	cr_assert_eq(ws_stackrec_decode(a, &st), 0);
	parts[0] = st;
	cr_assert_eq(ws_stack_text(f, parts, 1, 2), 1);
	fclose(f);
	cr_assert(strstr(text, "in gt_lock") == text, "got: %s", text);
	cr_assert(strstr(text, "victim (gt_mutex_disk)"), "got: %s", text);
	cr_assert(strstr(text, "via pthread_mutex_lock (libc.so.6)"), "got: %s", text);
	cr_assert(strstr(text, "[kernel: futex_wait_queue]"), "scheduler frames skipped: %s", text);
	free(text);
	ws_stack_free(st);
	free(a);
}

Test(syscall_fmt, fd_named_by_its_path)
{
	struct ws_syscall fdatasync = { .nr = 75, .arch = WS_ARCH_X86_64, .args = { 7 } };
	struct ws_syscall futex = { .nr = 202, .arch = WS_ARCH_X86_64, .args = { 0x1000, 128 } };
	char b[128];

	cr_assert_eq(ws_syscall_fd(&fdatasync), 7);
	cr_assert_eq(ws_syscall_fd(&futex), -1);
	ws_syscall_format_path(&fdatasync, "/var/lib/x", b, sizeof(b));
	cr_assert(!strcmp(b, "fdatasync(fd 7 -> /var/lib/x)") ||
			  !strcmp(b, "fdatasync(fd 7 \u2192 /var/lib/x)"),
		  "got %s", b);
	ws_syscall_format_path(&fdatasync, NULL, b, sizeof(b));
	cr_assert_str_eq(b, "fdatasync(fd 7)");
	ws_syscall_format_path(&futex, "/nope", b, sizeof(b));
	cr_assert_str_eq(b, "futex_wait(0x1000)", "a call without an fd takes no path");
}

/* Each call's shape is remembered by its name: more names than are remembered, in turns, must
 * each still be formatted by its own shape. */
Test(stackrec, syscall_shapes_in_turns)
{
	static const struct {
		struct ws_syscall s;
		const char *want;
	} cases[] = {
		{ { .nr = 75, .arch = WS_ARCH_X86_64, .args = { 7 } }, "fdatasync(fd 7)" },
		{ { .nr = 202, .arch = WS_ARCH_X86_64, .args = { 0x1000, 128 } },
		  "futex_wait(0x1000)" },
		{ { .nr = 232, .arch = WS_ARCH_X86_64, .args = { 3, 0, 8, (uint64_t)-1 } },
		  "epoll_wait(no timeout)" },
		{ { .nr = 7, .arch = WS_ARCH_X86_64, .args = { 0, 1, 250 } },
		  "poll(timeout 250ms)" },
		{ { .nr = 61, .arch = WS_ARCH_X86_64, .args = { 42 } }, "wait4(pid 42)" },
		{ { .nr = 0, .arch = WS_ARCH_X86_64, .args = { 5 } }, "read(fd 5)" },
	};
	char b[128];

	for (int round = 0; round < 3; round++)
		for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
			ws_syscall_format(&cases[i].s, b, sizeof(b));
			cr_expect_str_eq(b, cases[i].want, "round %d case %zu", round, i);
		}
}

/* Two stacks are the same to the report: every field, and the strings by content. */
static void assert_same(const struct ws_stack *a, const struct ws_stack *b)
{
	cr_assert_eq(a->tid, b->tid);
	cr_assert_eq(a->pid, b->pid);
	cr_assert_eq(a->wait_tid, b->wait_tid);
	cr_assert_eq(a->role, b->role);
	cr_assert_eq(a->ustop, b->ustop);
	cr_assert_eq(a->nouser, b->nouser);
	cr_assert_eq(a->wait_start, b->wait_start);
	cr_assert_eq(a->wait_end, b->wait_end);
	cr_assert_eq(a->fd, b->fd);
	cr_assert_eq(a->gil, b->gil);
	cr_assert_eq(a->gil_holder, b->gil_holder);
	cr_assert_eq(a->nholder, b->nholder);
	for (uint32_t i = 0; i < a->nholder; i++) {
		cr_assert_eq(a->holder[i].f.line, b->holder[i].f.line);
		cr_assert_eq(a->holder[i].python, b->holder[i].python);
		cr_assert_str_eq(a->holder[i].f.sym, b->holder[i].f.sym);
		cr_assert_str_eq(a->holder[i].f.file, b->holder[i].f.file);
	}
	cr_assert_eq(!a->path, !b->path);
	if (a->path)
		cr_assert_str_eq(a->path, b->path);
	cr_assert_eq(a->n, b->n);
	for (uint32_t i = 0; i < a->n; i++) {
		const struct ws_frame *x = &a->frames[i].f, *y = &b->frames[i].f;
		const char *xs[] = { x->sym, x->module, x->file },
			   *ys[] = { y->sym, y->module, y->file };

		cr_assert_eq(x->ip, y->ip);
		cr_assert_eq(x->off, y->off);
		cr_assert_eq(x->line, y->line);
		cr_assert_eq(a->frames[i].kernel, b->frames[i].kernel);
		for (int k = 0; k < 3; k++) {
			cr_assert_eq(!xs[k], !ys[k], "frame %u string %d", i, k);
			if (xs[k])
				cr_assert_str_eq(xs[k], ys[k]);
		}
	}
}

/*
 * What the tracer keeps in-process (ws_stack_dup) is what a replay decodes from the recording,
 * and the recording is the same whether encoded from the original or from the copy: long
 * strings cut, empty ones absent, frames beyond one record left out, the path and its fd.
 */
Test(stackrec, dup_is_what_a_recording_gives_back)
{
	static char longsym[400], path[] = "/var/lib/db/table.dat";
	struct ws_sframe fr[WS_STACK_MAX_FRAMES];
	struct ws_rec_hdr hdr = { .ts = 4999, .cpu = 3 }, *r1, *r2;
	struct ws_stack st = { .tid = 9,
			       .pid = 8,
			       .wait_tid = 9,
			       .role = WS_STACK_WAITER,
			       .ustop = 2,
			       .nouser = 0,
			       .wait_start = 1000,
			       .wait_end = 5000,
			       .frames = fr,
			       .fd = 5,
			       .path = path };
	struct ws_stack *dup, *dec;

	memset(longsym, 's', sizeof(longsym) - 1);
	for (int i = 0; i < WS_STACK_MAX_FRAMES; i++) {
		/* 96 frames of three 255-byte strings: more than one record holds */
		fr[i] = (struct ws_sframe){ { 0x1000 + i, longsym, i, longsym, longsym, i },
					    i > 60 };
	}
	fr[1].f.sym = ""; /* an empty string is absent in a record */
	fr[2].f.file = NULL;
	st.n = WS_STACK_MAX_FRAMES;
	cr_assert_eq(ws_stackrec_encode(&hdr, &st, &r1), 0);
	cr_assert_eq(ws_stackrec_decode(r1, &dec), 0);
	cr_assert_lt(dec->n, WS_STACK_MAX_FRAMES, "some frames must not fit");
	cr_assert_eq(strlen(dec->frames[0].f.sym), 255);
	cr_assert_null(dec->frames[1].f.sym);
	cr_assert_eq(ws_stack_dup(&st, &dup), 0);
	assert_same(dup, dec);
	cr_assert_eq(ws_stackrec_encode(&hdr, dup, &r2), 0);
	cr_assert_eq(r1->size, r2->size);
	cr_assert_eq(memcmp(r1, r2, r1->size), 0, "the recording is the same");
	free(r1);
	free(r2);
	ws_stack_free(dec);
	ws_stack_free(dup);

	/* no path: fd -1 whatever it held; no frames */
	st.path = NULL;
	st.n = 0;
	cr_assert_eq(ws_stackrec_encode(&hdr, &st, &r1), 0);
	cr_assert_eq(ws_stackrec_decode(r1, &dec), 0);
	cr_assert_eq(ws_stack_dup(&st, &dup), 0);
	cr_assert_eq(dup->fd, -1);
	assert_same(dup, dec);
	free(r1);
	ws_stack_free(dec);
	ws_stack_free(dup);
}

/* A stack kept before the stream reaches its time is found by its interval and evicted by its
 * wait's end, as one kept from its record. */
Test(stacks, kept_struct_found_and_evicted_by_its_wait)
{
	struct ws_stacks *s = ws_stacks_new();
	struct ws_stack st = { .tid = 7,
			       .pid = 100,
			       .wait_tid = 7,
			       .role = WS_STACK_WAITER,
			       .wait_start = 1000,
			       .wait_end = 5000,
			       .n = 7,
			       .frames = frames,
			       .fd = -1 };
	const struct ws_stack *out[WS_STACK_PARTS];
	struct ws_stack *dup;

	cr_assert_eq(ws_stack_dup(&st, &dup), 0);
	cr_assert_eq(ws_stacks_keep(s, dup), 0);
	ws_stacks_evict(s, 5000); /* ended at 5000: not before it */
	cr_assert_eq(ws_stacks_find(s, WS_STACK_WAITER, 7, 2000, 3000, out), 1);
	cr_assert_eq(out[0], dup);
	cr_assert_str_eq(out[0]->frames[0].f.sym, "__lll_lock_wait");
	ws_stacks_evict(s, 5001);
	cr_assert_eq(ws_stacks_find(s, WS_STACK_WAITER, 7, 2000, 3000, out), 0);
	ws_stacks_free(s);
}

/* ---- a Python waiter's read of the GIL (format 1.8): the last 8 bytes, said by a flag ---- */

static struct ws_rec_hdr *make_gil(uint8_t gil, uint32_t holder, const char *path)
{
	struct ws_stack st = { .tid = 7,
			       .pid = 100,
			       .wait_tid = 7,
			       .role = WS_STACK_WAITER,
			       .ustop = 1,
			       .wait_start = 1000,
			       .wait_end = 5000,
			       .n = 7,
			       .frames = frames,
			       .fd = path ? 5 : -1,
			       .path = path,
			       .gil = gil,
			       .gil_holder = holder };
	struct ws_rec_hdr hdr = { .ts = 4999, .cpu = 1, .flags = 0xfe }, *rec = NULL;

	cr_assert_eq(ws_stackrec_encode(&hdr, &st, &rec), 0);
	return rec;
}

Test(stackrec, gil_read_round_trip)
{
	struct ws_rec_hdr *plain = make(7, WS_STACK_WAITER, 1000, 5000, 7);
	struct ws_rec_hdr *rec = make_gil(WS_GIL_HELD, 4242, "/tmp/x");
	struct ws_stack *st, *d;

	cr_assert_eq(plain->flags, 0, "no read: a 1.7 record, flags cleared");
	cr_assert_eq(rec->flags, WS_STACK_REC_GIL);
	cr_assert_eq(ws_stackrec_decode(rec, &st), 0);
	cr_assert_eq(st->gil, WS_GIL_HELD);
	cr_assert_eq(st->gil_holder, 4242);
	cr_assert_eq(st->n, 7);
	cr_assert_str_eq(st->path, "/tmp/x");
	cr_assert_eq(ws_stack_dup(st, &d), 0);
	assert_same(st, d);
	ws_stack_free(d);
	ws_stack_free(st);
	free(rec);
	/* a holder is kept only with WS_GIL_HELD */
	rec = make_gil(WS_GIL_CHANGING, 4242, NULL);
	cr_assert_eq(ws_stackrec_decode(rec, &st), 0);
	cr_assert_eq(st->gil, WS_GIL_CHANGING);
	cr_assert_eq(st->gil_holder, 0);
	ws_stack_free(st);
	free(rec);
	/* a record without the flag (1.7) has no read */
	cr_assert_eq(ws_stackrec_decode(plain, &st), 0);
	cr_assert_eq(st->gil, WS_GIL_NOT_READ);
	ws_stack_free(st);
	free(plain);
}

/* A 1.7 reader parses frames and path by their lengths: the 8 bytes after them are unread. */
Test(stackrec, gil_read_is_invisible_to_the_frames)
{
	struct ws_rec_hdr *rec = make_gil(WS_GIL_HELD, 4242, NULL);
	struct ws_stack *st;
	struct ws_stack_gil g;

	memcpy(&g, (char *)rec + rec->size - sizeof(g), sizeof(g));
	cr_assert_eq(g.state, WS_GIL_HELD);
	cr_assert_eq(g.holder_tid, 4242);
	/* as the old reader sees it: no flag, the same frames */
	rec->flags = 0;
	cr_assert_eq(ws_stackrec_decode(rec, &st), 0);
	cr_assert_eq(st->n, 7);
	cr_assert_eq(st->gil, WS_GIL_NOT_READ);
	ws_stack_free(st);
	free(rec);
}

Test(stackrec, gil_read_malformed_is_refused_or_unknown)
{
	struct ws_rec_hdr *rec = make_gil(WS_GIL_HELD, 4242, NULL);
	struct ws_stack_gil g;
	struct ws_stack *st;
	uint16_t size = rec->size;

	/* a state this version does not know: no holder */
	memcpy(&g, (char *)rec + size - sizeof(g), sizeof(g));
	g.state = 77;
	memcpy((char *)rec + size - sizeof(g), &g, sizeof(g));
	cr_assert_eq(ws_stackrec_decode(rec, &st), 0);
	cr_assert_eq(st->gil, WS_GIL_UNREADABLE);
	cr_assert_eq(st->gil_holder, 0);
	ws_stack_free(st);
	/* flagged, but the frames run into the block */
	rec->size = size - 8;
	cr_assert_eq(ws_stackrec_decode(rec, &st), -EINVAL);
	/* flagged, and too short for even the block */
	rec->size = sizeof(struct ws_rec_stack) + 4;
	((struct ws_rec_stack *)rec)->nframes = 0;
	cr_assert_eq(ws_stackrec_decode(rec, &st), -EINVAL);
	free(rec);
}

/* The holder's Python frames ride before the read, after the stack's own frames and path. */
Test(stackrec, gil_holder_frames_round_trip)
{
	static struct ws_sframe py[] = {
		{ { 0x7f0000100000, "compress", 38, "/usr/bin/python3.11", "/app/gil.py", 38 },
		  false,
		  true },
		{ { 0x7f0000200000, "Thread.run", 60, "/usr/bin/python3.11",
		    "/usr/lib/python3.11/threading.py", 975 },
		  false,
		  true },
	};
	struct ws_stack st = { .tid = 7,
			       .pid = 100,
			       .wait_tid = 7,
			       .role = WS_STACK_WAITER,
			       .n = 7,
			       .frames = frames,
			       .fd = 5,
			       .path = "/tmp/x",
			       .gil = WS_GIL_HELD,
			       .gil_holder = 4242,
			       .nholder = 2,
			       .holder = py };
	struct ws_rec_hdr hdr = { .ts = 4999 }, *rec = NULL;
	struct ws_stack *d, *e;
	struct ws_stack_gil g;

	cr_assert_eq(ws_stackrec_encode(&hdr, &st, &rec), 0);
	memcpy(&g, (char *)rec + rec->size - sizeof(g), sizeof(g));
	cr_assert_eq(g.nholder, 2);
	cr_assert_eq(g.holder_bytes % 8, 0);
	cr_assert_eq(ws_stackrec_decode(rec, &d), 0);
	assert_same(&st, d);
	cr_assert_str_eq(d->path, "/tmp/x");
	cr_assert_eq(ws_stack_dup(d, &e), 0);
	assert_same(d, e);
	ws_stack_free(e);
	ws_stack_free(d);
	/* as a 1.7 reader sees it: the waiter's frames and path, nothing more */
	rec->flags = 0;
	cr_assert_eq(ws_stackrec_decode(rec, &d), 0);
	cr_assert_eq(d->n, 7);
	cr_assert_eq(d->nholder, 0);
	cr_assert_str_eq(d->path, "/tmp/x");
	ws_stack_free(d);
	/* holder bytes claimed beyond the record, or not whole frames: refused */
	rec->flags = WS_STACK_REC_GIL;
	g.holder_bytes = rec->size;
	memcpy((char *)rec + rec->size - sizeof(g), &g, sizeof(g));
	cr_assert_eq(ws_stackrec_decode(rec, &d), -EINVAL);
	g.holder_bytes = 12;
	memcpy((char *)rec + rec->size - sizeof(g), &g, sizeof(g));
	cr_assert_eq(ws_stackrec_decode(rec, &d), -EINVAL);
	/* a holder's state other than held: its frames are not believed */
	g.holder_bytes = 0;
	g.state = WS_GIL_FREE;
	memcpy((char *)rec + rec->size - sizeof(g), &g, sizeof(g));
	cr_assert_eq(ws_stackrec_decode(rec, &d), 0);
	cr_assert_eq(d->nholder, 0);
	ws_stack_free(d);
	free(rec);
}

/* The waker's kernel part names its first named frame past the scheduler's: never the BPF
 * program's own unnamed JIT address above them ("[kernel]+0xffffffffc00334d9" before). */
Test(stack_fmt, kernel_part_skips_unnamed_frames)
{
	struct ws_sframe fr[4] = {
		{ .f = { .ip = 0xffffffffc00334d9,
			 .off = 0xffffffffc00334d9,
			 .module = "[kernel]" },
		  .kernel = true },
		{ .f = { .ip = 0xffffffff81100000, .sym = "try_to_wake_up", .module = "[kernel]" },
		  .kernel = true },
		{ .f = { .ip = 0xffffffff81200000, .sym = "futex_wake", .module = "[kernel]" },
		  .kernel = true },
		{ .f = { .ip = 0xffffffff81300000, .sym = "do_futex", .module = "[kernel]" },
		  .kernel = true },
	};
	struct ws_stack st = { .role = WS_STACK_WAKER, .n = 4, .frames = fr, .fd = -1 };
	const struct ws_stack *parts[1] = { &st };
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	cr_assert_eq(ws_stack_text(f, parts, 1, 2), 1);
	fclose(f);
	cr_assert_str_eq(text, "in [kernel: futex_wake]");
	free(text);
	/* nothing named at all: the first frame, as it is */
	fr[1].f.sym = fr[2].f.sym = fr[3].f.sym = NULL;
	text = NULL;
	f = open_memstream(&text, &len);
	cr_assert_eq(ws_stack_text(f, parts, 1, 2), 1);
	fclose(f);
	cr_assert_str_eq(text, "in [kernel: [kernel]+0xffffffffc00334d9]");
	free(text);
}
