// SPDX-License-Identifier: MIT
/*
 * The blkio plugin, loaded as the core loads it (dlopen + entry symbol) and
 * driven through a fake host with synthetic completion records and wakeups.
 */
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <whyslow/plugin.h>

#include "fake_host.h"

#include "../../plugins/blkio/blkio_rec.h"
#include "../../plugins/blkio/blkio_swap.h"
#include "../../plugins/blkio/blkio_throttle.h"

#define MS 1000000ull

/* A device number no machine has, so its name falls back to "MAJ:MIN". */
#define FAKE_DEV ((4000u << 20) | 7u)

static const struct ws_plugin *pl;

static void load(void)
{
	pl = fake_load("blkio.so", true);
	cr_assert_str_eq(pl->name, "blkio");
	cr_assert_eq(pl->kind_base, WS_KIND_BLKIO);
	cr_assert_not_null(pl->decode);
	cr_assert_not_null(pl->infer);
	cr_assert_not_null(pl->describe);
}

static void unload(void)
{
	fake_unload();
	pl = NULL;
}

TestSuite(blkio, .init = load, .fini = unload);

/* A completion of a 4 KiB read at @sector, issued at @issue_ts. */
static struct ws_blkio_done done(uint16_t cpu, uint8_t ctx, uint32_t ctx_id, uint64_t ts,
				 uint64_t sector, uint64_t issue_ts)
{
	struct ws_blkio_done r;

	memset(&r, 0, sizeof(r));
	r.hdr.size = sizeof(r);
	r.hdr.kind = WS_BLKIO_DONE;
	r.hdr.cpu = cpu;
	r.hdr.ctx = ctx;
	r.hdr.ctx_id = ctx_id;
	r.hdr.ts = ts;
	r.sector = sector;
	r.insert_ts = issue_ts ? issue_ts - 10000 : 0;
	r.first_issue_ts = issue_ts;
	r.last_issue_ts = issue_ts;
	r.dev = FAKE_DEV;
	r.bytes = 4096;
	r.data_len = 4096;
	r.op = WS_BLKIO_OP_READ;
	r.sync = 1;
	r.nr_issues = 1;
	r.submit_tid = 4242;
	r.submit_pid = 4242;
	return r;
}

static void feed(const struct ws_blkio_done *r)
{
	cr_assert_eq(pl->decode(&fake.ctx, &r->hdr), 0);
}

/*
 * Ask about thread 100, blocked since @start in task state @off_state, woken at @ts on @cpu in
 * (@ctx, @ctx_id) by @waker.
 */
static int ask_by(uint64_t start, uint32_t off_state, uint16_t cpu, uint8_t ctx, uint32_t ctx_id,
		  uint64_t ts, uint32_t waker, struct ws_claim *out)
{
	struct ws_wake wk = {
		.sz = sizeof(wk),
		.ts = ts,
		.cpu = cpu,
		.ctx = ctx,
		.ctx_id = ctx_id,
		.waker_tid = waker,
		.wakee_tid = 100,
		.wakee_pid = 100,
	};
	struct ws_wait w = {
		.sz = sizeof(w),
		.tid = 100,
		.pid = 100,
		.start_ns = start,
		.off_state = off_state,
		.wake = &wk,
	};

	memset(out, 0, sizeof(*out));
	out->sz = sizeof(*out);
	return pl->infer(&fake.ctx, &w, out);
}

/* The same, for a wait in D woken inside an interrupt (whoever it hit: tid 0). */
static int ask(uint64_t start, uint16_t cpu, uint8_t ctx, uint32_t ctx_id, uint64_t ts,
	       struct ws_claim *out)
{
	return ask_by(start, 2, cpu, ctx, ctx_id, ts, 0, out);
}

static const struct ws_field *get(const struct ws_claim *c, const char *key)
{
	for (unsigned int i = 0; i < c->nfields; i++)
		if (!strcmp(c->fields[i].key, key))
			return &c->fields[i];
	cr_assert_fail("claim has no field %s", key);
	return NULL;
}

static uint64_t get_u64(const struct ws_claim *c, const char *key)
{
	const struct ws_field *f = get(c, key);

	cr_assert_eq(f->type, WS_FIELD_U64, "%s is not a number", key);
	return f->u;
}

static const char *get_str(const struct ws_claim *c, const char *key)
{
	const struct ws_field *f = get(c, key);

	cr_assert_eq(f->type, WS_FIELD_STR, "%s is not a string", key);
	return f->s;
}

Test(blkio, softirq_wake_after_completion_is_block_io)
{
	static const char *const keys[] = { "dev",	  "sector",   "bytes",	   "op",
					    "sync",	  "queue_ns", "device_ns", "issued_by",
					    "latency_ns", "issues" };
	uint64_t start = 1000 * MS, issue = start + 299 * MS, end = start + 300 * MS;
	struct ws_blkio_done r = done(1, WS_CTX_SOFTIRQ, 77, end - 5000, 88213, issue);
	struct ws_claim c;
	char buf[160];

	feed(&r);
	cr_assert_eq(ask(start, 1, WS_CTX_SOFTIRQ, 77, end, &c), 1);
	cr_assert_eq(c.strength, WS_CLAIM_SPECIFIC);
	cr_assert_str_eq(c.kind, "block_io");
	cr_assert_eq(c.woken_by, 0);
	cr_assert(c.root);
	cr_assert_str_eq(c.evidence, "woken inside completion of the request on the same CPU");
	cr_assert_eq(c.nfields + fake.dropped, sizeof(keys) / sizeof(keys[0]));
	for (unsigned int i = 0; i < c.nfields; i++)
		cr_assert_str_eq(c.fields[i].key, keys[i], "field %u", i);
	cr_assert_str_eq(get_str(&c, "dev"), "4000:7");
	cr_assert_eq(get_u64(&c, "sector"), 88213);
	cr_assert_eq(get_u64(&c, "bytes"), 4096);
	cr_assert_str_eq(get_str(&c, "op"), "read");
	cr_assert_eq(get_u64(&c, "sync"), 1);
	cr_assert_eq(get_u64(&c, "queue_ns"), 299 * MS);
	cr_assert_eq(get_u64(&c, "device_ns"), 1 * MS);
	cr_assert_eq(get_u64(&c, "issued_by"), 4242);
	if (WS_CLAIM_FIELDS >= 10)
		cr_assert_eq(get_u64(&c, "latency_ns"), 1 * MS - 5000);

	pl->describe(&fake.ctx, &c, buf, sizeof(buf));
	cr_assert_str_eq(buf, "block I/O (dev 4000:7, sector 88213, 4096 bytes read; "
			      "299ms before the device, 1.0ms in it)");
}

Test(blkio, hardirq_wake_and_other_ops)
{
	struct ws_blkio_done r = done(0, WS_CTX_HARDIRQ, 5, 2000, 8, 1500);
	struct ws_claim c;

	r.op = WS_BLKIO_OP_WRITE;
	r.sync = 0;
	r.bytes = 65536;
	feed(&r);
	cr_assert_eq(ask(1000, 0, WS_CTX_HARDIRQ, 5, 2100, &c), 1);
	cr_assert_str_eq(get_str(&c, "op"), "write");
	cr_assert_eq(get_u64(&c, "sync"), 0);
	cr_assert_eq(get_u64(&c, "bytes"), 65536);
	cr_assert_eq(get_u64(&c, "queue_ns"), 500);
	cr_assert_eq(get_u64(&c, "device_ns"), 600);
}

Test(blkio, task_context_wake_is_not_claimed)
{
	struct ws_blkio_done r = done(1, WS_CTX_SOFTIRQ, 77, 2000, 8, 1500);
	struct ws_claim c;

	feed(&r);
	cr_assert_eq(ask(1000, 1, WS_CTX_TASK, 77, 2100, &c), 0);
	cr_assert_eq(c.strength, WS_CLAIM_NONE);
	cr_assert_eq(c.nfields, 0);
}

Test(blkio, completion_outside_interrupt_is_not_claimed)
{
	struct ws_blkio_done r = done(1, WS_CTX_TASK, 77, 2000, 8, 1500);
	struct ws_claim c;

	feed(&r);
	cr_assert_eq(ask(1000, 1, WS_CTX_SOFTIRQ, 77, 2100, &c), 0);
}

/* Thread 100, blocked since 1000 in state @off_state, woken in task context on CPU 1. */
static int ask_task(uint32_t waker, uint32_t off_state, uint32_t ctx_id, uint64_t ts,
		    struct ws_claim *out)
{
	return ask_by(1000, off_state, 1, WS_CTX_TASK, ctx_id, ts, waker, out);
}

/* Task 55 (a kworker) completes, in task context on CPU 1 at 2000, a request of @submitter. */
static void feed_task_completion(uint32_t ctx_id, uint32_t submitter)
{
	struct ws_blkio_done r = done(1, WS_CTX_TASK, ctx_id, 2000, 8, 1500);

	r.hdr.tid = 55;
	r.submit_tid = submitter;
	feed(&r);
}

Test(blkio, task_context_completion_of_the_wakees_own_request)
{
	/*
	 * The kworker completes thread 100's request in task context, then wakes it in the same
	 * stretch (ctx_id 90): proven, as inside an interrupt.
	 */
	struct ws_claim c;

	feed_task_completion(90, 100);
	cr_assert_eq(ask_task(55, 2, 90, 2100, &c), 1);
	cr_assert_str_eq(c.kind, "block_io");
	cr_assert_eq(c.strength, WS_CLAIM_SPECIFIC);
	cr_assert_eq(get_u64(&c, "issued_by"), 100);
	cr_assert(strstr(c.evidence, "same run of tid 55"), "%s", c.evidence);
	/* not after a switch on that CPU (another stretch), nor by another task */
	cr_assert_eq(ask_task(55, 2, 91, 2100, &c), 0);
	cr_assert_eq(ask_task(56, 2, 90, 2100, &c), 0);
	/* not a wait that was not in D: a futex or a pipe, woken later by the same task */
	cr_assert_eq(ask_task(55, 1, 90, 2100, &c), 0);
}

Test(blkio, task_context_completion_of_another_threads_request_is_not_claimed)
{
	/* in task context the request must be the wakee's: a stretch wakes for other reasons */
	struct ws_claim c;

	feed_task_completion(92, 4242);
	cr_assert_eq(ask_task(55, 2, 92, 2100, &c), 0);
}

Test(blkio, completion_on_another_cpu_is_not_claimed)
{
	struct ws_blkio_done r = done(0, WS_CTX_SOFTIRQ, 77, 2000, 8, 1500);
	struct ws_claim c;

	feed(&r);
	cr_assert_eq(ask(1000, 1, WS_CTX_SOFTIRQ, 77, 2100, &c), 0);
}

Test(blkio, later_interrupt_on_same_cpu_is_not_claimed)
{
	struct ws_blkio_done r = done(1, WS_CTX_SOFTIRQ, 77, 2000, 8, 1500);
	struct ws_claim c;

	feed(&r);
	cr_assert_eq(ask(1000, 1, WS_CTX_SOFTIRQ, 78, 2100, &c), 0);
	cr_assert_eq(ask(1000, 1, WS_CTX_SOFTIRQ, 77, 2100, &c), 1);
}

Test(blkio, completion_after_wake_is_not_claimed)
{
	struct ws_blkio_done r = done(1, WS_CTX_SOFTIRQ, 77, 2200, 8, 1500);
	struct ws_claim c;

	feed(&r);
	cr_assert_eq(ask(1000, 1, WS_CTX_SOFTIRQ, 77, 2100, &c), 0);
}

Test(blkio, each_wake_gets_most_recent_preceding_completion)
{
	struct ws_blkio_done a = done(1, WS_CTX_SOFTIRQ, 9, 2000, 100, 1500);
	struct ws_blkio_done b = done(1, WS_CTX_SOFTIRQ, 9, 2200, 200, 1600);
	struct ws_claim c;

	/* Interleaved, as the core delivers them: A, wake 1, B, wake 2. */
	feed(&a);
	cr_assert_eq(ask(1000, 1, WS_CTX_SOFTIRQ, 9, 2100, &c), 1);
	cr_assert_eq(get_u64(&c, "sector"), 100);
	feed(&b);
	cr_assert_eq(ask(1000, 1, WS_CTX_SOFTIRQ, 9, 2300, &c), 1);
	cr_assert_eq(get_u64(&c, "sector"), 200);
	/* Both already decoded: a wake between them still gets A. */
	cr_assert_eq(ask(1000, 1, WS_CTX_SOFTIRQ, 9, 2100, &c), 1);
	cr_assert_eq(get_u64(&c, "sector"), 100);
}

Test(blkio, old_completions_roll_out)
{
	struct ws_claim c;

	for (unsigned int i = 0; i < 20; i++) {
		struct ws_blkio_done r = done(1, WS_CTX_SOFTIRQ, 100 + i, 2000 + i, i, 1500);

		feed(&r);
	}
	cr_assert_eq(ask(1000, 1, WS_CTX_SOFTIRQ, 119, 3000, &c), 1);
	cr_assert_eq(get_u64(&c, "sector"), 19);
	cr_assert_eq(ask(1000, 1, WS_CTX_SOFTIRQ, 100, 3000, &c), 0);
}

Test(blkio, requeued_request_counts_from_last_issue)
{
	uint64_t start = 1000 * MS, end = start + 300 * MS;
	struct ws_blkio_done r = done(1, WS_CTX_SOFTIRQ, 3, end, 4096, start + 299 * MS);
	struct ws_claim c;

	r.first_issue_ts = start + 10 * MS; /* given back by the driver, issued again */
	r.nr_issues = 2;
	r.nr_requeues = 1;
	r.submit_tid = 555;
	feed(&r);
	cr_assert_eq(ask(start, 1, WS_CTX_SOFTIRQ, 3, end, &c), 1);
	cr_assert_eq(get_u64(&c, "queue_ns"), 299 * MS);
	cr_assert_eq(get_u64(&c, "device_ns"), 1 * MS);
	cr_assert_eq(get_u64(&c, "issued_by"), 555);
	if (WS_CLAIM_FIELDS >= 10) {
		cr_assert_eq(get_u64(&c, "issues"), 2);
		cr_assert_eq(get_u64(&c, "latency_ns"), 1 * MS);
	}
}

Test(blkio, issue_before_wait_and_unknown_issue)
{
	struct ws_blkio_done r = done(1, WS_CTX_SOFTIRQ, 3, 5000, 1, 500);
	struct ws_claim c;

	/* Issued before the thread blocked: all of the wait was in the device. */
	feed(&r);
	cr_assert_eq(ask(1000, 1, WS_CTX_SOFTIRQ, 3, 5100, &c), 1);
	cr_assert_eq(get_u64(&c, "queue_ns"), 0);
	cr_assert_eq(get_u64(&c, "device_ns"), 4100);
	/* Issued before tracing began: nothing known about the submitter. */
	r = done(1, WS_CTX_SOFTIRQ, 4, 6000, 2, 0);
	r.submit_tid = 0;
	feed(&r);
	cr_assert_eq(ask(5500, 1, WS_CTX_SOFTIRQ, 4, 6100, &c), 1);
	cr_assert_eq(get_u64(&c, "issued_by"), 0);
	cr_assert_eq(get_u64(&c, "device_ns"), 600);
	/* Inconsistent times never make device_ns wrap below zero. */
	r = done(1, WS_CTX_SOFTIRQ, 5, 7000, 3, 7200);
	feed(&r);
	cr_assert_eq(ask(6500, 1, WS_CTX_SOFTIRQ, 5, 7100, &c), 1);
	cr_assert_eq(get_u64(&c, "queue_ns"), 600);
	cr_assert_eq(get_u64(&c, "device_ns"), 0);
}

Test(blkio, short_record_is_rejected)
{
	struct ws_blkio_done r = done(1, WS_CTX_SOFTIRQ, 3, 5000, 1, 500);

	r.hdr.size = offsetof(struct ws_blkio_done, flags) - 4;
	cr_assert_eq(pl->decode(&fake.ctx, &r.hdr), -EINVAL);
	r.hdr.size = sizeof(struct ws_rec_hdr);
	cr_assert_eq(pl->decode(&fake.ctx, &r.hdr), -EINVAL);
}

Test(blkio, durations_are_human_readable)
{
	static const struct {
		uint64_t q, d;
		const char *want;
	} t[] = {
		{ 0, 950, "0ns before the device, 950ns in it" },
		{ 1500, 12345678, "1.5us before the device, 12ms in it" },
		{ 2500000000ull, 42000, "2.5s before the device, 42us in it" },
	};
	struct ws_claim c;
	char buf[160];

	for (unsigned int i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		memset(&c, 0, sizeof(c));
		fake_claim_str(&c, "dev", "vda");
		fake_claim_u64(&c, "sector", 1);
		fake_claim_u64(&c, "bytes", 512);
		fake_claim_str(&c, "op", "flush");
		fake_claim_u64(&c, "queue_ns", t[i].q);
		fake_claim_u64(&c, "device_ns", t[i].d);
		pl->describe(&fake.ctx, &c, buf, sizeof(buf));
		cr_assert(strstr(buf, t[i].want), "%s lacks %s", buf, t[i].want);
	}
}

/* fdatasync's cache flush: a request of 0 bytes at sector 0 with PREFLUSH (rwbs "FF"). */
Test(blkio, cache_flush_is_named_a_flush_not_a_zero_byte_write)
{
	struct ws_blkio_done r = done(1, WS_CTX_SOFTIRQ, 3, 5000, 0, 1000);
	struct ws_claim c;
	char buf[200];

	r.op = WS_BLKIO_OP_WRITE;
	r.bytes = 0;
	r.data_len = 0;
	r.flags = WS_BLKIO_F_KNOWN | WS_BLKIO_F_PREFLUSH | WS_BLKIO_F_SYNC;
	feed(&r);
	cr_assert_eq(ask(500, 1, WS_CTX_SOFTIRQ, 3, 5100, &c), 1);
	cr_assert_str_eq(get_str(&c, "op"), "flush");
	cr_assert_str_eq(get_str(&c, "flags"), "preflush,sync");
	pl->describe(&fake.ctx, &c, buf, sizeof(buf));
	cr_assert_str_eq(buf, "block I/O (dev 4000:7, cache flush; 500ns before the device, 4.1us "
			      "in it)");
	cr_assert_null(strstr(buf, "sector"), "%s", buf);

	for (unsigned int i = 0; i < c.nfields; i++)
		cr_assert_str_neq(c.fields[i].key, "sector", "a flush has no sector");

	/*
	 * As the kernel really ends it: the flush request (REQ_OP_FLUSH, sector -1) completes,
	 * then in the same bracket the empty write, its PREFLUSH flag already cleared.
	 */
	r = done(1, WS_CTX_SOFTIRQ, 9, 9000, UINT64_MAX, 8000);
	r.op = WS_BLKIO_OP_FLUSH;
	r.bytes = 0;
	r.data_len = 0;
	r.flags = WS_BLKIO_F_KNOWN | WS_BLKIO_F_PREFLUSH;
	feed(&r);
	r = done(1, WS_CTX_SOFTIRQ, 9, 9001, 0, 0);
	r.op = WS_BLKIO_OP_WRITE;
	r.bytes = 0;
	r.data_len = 0;
	r.flags = WS_BLKIO_F_KNOWN | WS_BLKIO_F_SYNC;
	feed(&r);
	cr_assert_eq(ask(7000, 1, WS_CTX_SOFTIRQ, 9, 9002, &c), 1);
	cr_assert_str_eq(get_str(&c, "op"), "flush");
	cr_assert_eq(get_u64(&c, "queue_ns"), 1000, "the flush request's issue time counts");
	/* without the flush request before it in the bracket, an empty write stays a write */
	r = done(1, WS_CTX_SOFTIRQ, 10, 9500, 0, 9100);
	r.op = WS_BLKIO_OP_WRITE;
	r.bytes = 0;
	r.data_len = 0;
	r.flags = WS_BLKIO_F_KNOWN;
	feed(&r);
	cr_assert_eq(ask(9050, 1, WS_CTX_SOFTIRQ, 10, 9600, &c), 1);
	cr_assert_str_eq(get_str(&c, "op"), "write");

	/* the flush request the block layer issues for it: REQ_OP_FLUSH */
	r = done(1, WS_CTX_SOFTIRQ, 4, 6000, 0, 5500);
	r.op = WS_BLKIO_OP_FLUSH;
	r.bytes = 0;
	r.data_len = 0;
	r.flags = WS_BLKIO_F_KNOWN | WS_BLKIO_F_PREFLUSH;
	feed(&r);
	cr_assert_eq(ask(5400, 1, WS_CTX_SOFTIRQ, 4, 6100, &c), 1);
	cr_assert_str_eq(get_str(&c, "op"), "flush");
}

Test(blkio, write_flags_are_named)
{
	struct ws_blkio_done r = done(1, WS_CTX_SOFTIRQ, 3, 5000, 64, 1000);
	struct ws_claim c;
	char buf[200];

	r.op = WS_BLKIO_OP_WRITE;
	r.flags = WS_BLKIO_F_KNOWN | WS_BLKIO_F_PREFLUSH | WS_BLKIO_F_FUA | WS_BLKIO_F_META;
	feed(&r);
	cr_assert_eq(ask(500, 1, WS_CTX_SOFTIRQ, 3, 5100, &c), 1);
	cr_assert_str_eq(get_str(&c, "op"), "write");
	pl->describe(&fake.ctx, &c, buf, sizeof(buf));
	cr_assert_str_eq(buf, "block I/O (dev 4000:7, sector 64, 4096 bytes write after a cache "
			      "flush, FUA, metadata; 500ns before the device, 4.1us in it)");

	r = done(1, WS_CTX_SOFTIRQ, 4, 6000, 128, 5500);
	r.flags = WS_BLKIO_F_KNOWN | WS_BLKIO_F_RAHEAD;
	feed(&r);
	cr_assert_eq(ask(5400, 1, WS_CTX_SOFTIRQ, 4, 6100, &c), 1);
	pl->describe(&fake.ctx, &c, buf, sizeof(buf));
	cr_assert(strstr(buf, "4096 bytes read, readahead;"), "%s", buf);

	r = done(1, WS_CTX_SOFTIRQ, 5, 7000, 256, 6500);
	r.op = WS_BLKIO_OP_WRITE_ZEROES;
	feed(&r);
	cr_assert_eq(ask(6400, 1, WS_CTX_SOFTIRQ, 5, 7100, &c), 1);
	cr_assert_str_eq(get_str(&c, "op"), "write_zeroes");
}

/* A recording made before the flags were recorded: accepted, no flags claimed. */
Test(blkio, record_from_before_flags_is_read_without_them)
{
	struct ws_blkio_done r = done(1, WS_CTX_SOFTIRQ, 3, 5000, 8, 1000);
	struct ws_claim c;

	r.flags = WS_BLKIO_F_KNOWN | WS_BLKIO_F_FUA; /* beyond the old size: must not be read */
	r.hdr.size = offsetof(struct ws_blkio_done, flags);
	cr_assert_eq(pl->decode(&fake.ctx, &r.hdr), 0);
	cr_assert_eq(ask(500, 1, WS_CTX_SOFTIRQ, 3, 5100, &c), 1);
	for (unsigned int i = 0; i < c.nfields; i++)
		cr_assert_str_neq(c.fields[i].key, "flags");
}

/* Every request on one disk is one resource, whatever its sector. */
Test(blkio, resource_is_the_disk)
{
	struct ws_blkio_done r = done(1, WS_CTX_SOFTIRQ, 3, 5000, 8, 1000);
	struct ws_claim c;
	char buf[64];

	cr_assert_not_null(pl->resource);
	feed(&r);
	cr_assert_eq(ask(500, 1, WS_CTX_SOFTIRQ, 3, 5100, &c), 1);
	cr_assert_gt(pl->resource(&fake.ctx, &c, buf, sizeof(buf)), 0);
	cr_assert_str_eq(buf, "block I/O on 4000:7");
}

/*
 * Issue 32: a request whose bio blk-throttle held back during the wait (the BPF side saw the
 * throttle's dispatch work queue it at held_until_ts). The recording named the cgroup and limit.
 */
static struct ws_claim held_claim(uint64_t start, uint64_t held_until, bool named)
{
	uint64_t issue = start + 299 * MS, end = start + 300 * MS;
	struct ws_blkio_done r = done(1, WS_CTX_SOFTIRQ, 77, end - 5000, 88213, issue);
	struct ws_claim c;

	r.held_until_ts = held_until;
	r.held_cgroup = 4242;
	if (named) {
		fake.ctx.host->name_set(&fake.ctx, blkio_throttle_path_key(4242), "/batch");
		fake.ctx.host->name_set(&fake.ctx, blkio_throttle_limit_key(4242, FAKE_DEV, false),
					"2 reads/s on 4000:7");
	}
	feed(&r);
	cr_assert_eq(ask(start, 1, WS_CTX_SOFTIRQ, 77, end, &c), 1);
	return c;
}

Test(blkio, held_by_an_io_limit_is_named_by_it)
{
	static const char *const keys[] = { "dev",
					    "sector",
					    "bytes",
					    "op",
					    "sync",
					    "queue_ns",
					    "device_ns",
					    "throttled_ns",
					    "throttle_cgroup",
					    "throttle_limit",
					    "issued_by" };
	uint64_t start = 1000 * MS;
	struct ws_claim c = held_claim(start, start + 290 * MS, true);
	char buf[256];

	cr_assert_str_eq(c.kind, "block_io");
	cr_assert_geq(c.nfields, sizeof(keys) / sizeof(keys[0]));
	for (unsigned int i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		cr_assert_str_eq(c.fields[i].key, keys[i], "field %u", i);
	/* the held part, then the device's queue and the device: they add up to the wait */
	cr_assert_eq(get_u64(&c, "throttled_ns"), 290 * MS);
	cr_assert_eq(get_u64(&c, "queue_ns"), 9 * MS);
	cr_assert_eq(get_u64(&c, "device_ns"), 1 * MS);
	cr_assert_str_eq(get_str(&c, "throttle_cgroup"), "/batch");
	cr_assert_str_eq(get_str(&c, "throttle_limit"), "2 reads/s on 4000:7");
	pl->describe(&fake.ctx, &c, buf, sizeof(buf));
	cr_assert_str_eq(buf,
			 "block I/O (dev 4000:7, sector 88213, 4096 bytes read; held back 290ms "
			 "by the I/O limit of /batch (2 reads/s on 4000:7), then 9.0ms before "
			 "the device, 1.0ms in it)");
	cr_assert_gt(pl->resource(&fake.ctx, &c, buf, sizeof(buf)), 0);
	cr_assert_str_eq(buf, "I/O limit of /batch (2 reads/s on 4000:7)");
}

/* Held for less than half of the wait: the device's part names the root, the throttle's is kept. */
Test(blkio, briefly_held_stays_the_disk)
{
	uint64_t start = 1000 * MS;
	struct ws_claim c = held_claim(start, start + 100 * MS, true);
	char buf[128];

	cr_assert_eq(get_u64(&c, "throttled_ns"), 100 * MS);
	cr_assert_eq(get_u64(&c, "queue_ns"), 199 * MS);
	cr_assert_gt(pl->resource(&fake.ctx, &c, buf, sizeof(buf)), 0);
	cr_assert_str_eq(buf, "block I/O on 4000:7");
}

/* A recording that did not name the group (it was gone): its id, and no limit made up. */
Test(blkio, unnamed_throttle_group_says_its_id)
{
	uint64_t start = 1000 * MS;
	struct ws_claim c = held_claim(start, start + 290 * MS, false);
	char buf[128];

	cr_assert_str_eq(get_str(&c, "throttle_cgroup"), "cgroup id 4242");
	for (unsigned int i = 0; i < c.nfields; i++)
		cr_assert_str_neq(c.fields[i].key, "throttle_limit");
	cr_assert_gt(pl->resource(&fake.ctx, &c, buf, sizeof(buf)), 0);
	cr_assert_str_eq(buf, "I/O limit of cgroup id 4242");
}

/* Released by the throttle before this wait began: not this wait's cause. */
Test(blkio, held_before_the_wait_is_not_its_cause)
{
	uint64_t start = 1000 * MS;
	struct ws_claim c = held_claim(start, start - 5 * MS, true);

	for (unsigned int i = 0; i < c.nfields; i++)
		cr_assert_str_neq(c.fields[i].key, "throttled_ns");
	cr_assert_eq(get_u64(&c, "queue_ns"), 299 * MS);
}

/*
 * Issue 32: a read whose waiter blocked in no syscall (its registers read, arch known) was
 * read under a page fault: of a swap area the recording names, a swap-in; else the fault's.
 */
static int ask_fault_of(int32_t nr, uint16_t arch, bool helper, const char *file,
			struct ws_claim *out)
{
	uint64_t start = 1000 * MS, end = start + 300 * MS;
	struct ws_blkio_done r = done(1, WS_CTX_SOFTIRQ, 77, end - 5000, 2048, start + MS);

	if (file) {
		r.fault_ino = 12;
		r.fault_dev = FAKE_DEV;
		snprintf(r.fault_name, sizeof(r.fault_name), "%s", file);
	}
	struct ws_wake wk = {
		.sz = sizeof(wk),
		.ts = end,
		.cpu = 1,
		.ctx = WS_CTX_SOFTIRQ,
		.ctx_id = 77,
		.wakee_tid = 100,
		.wakee_pid = 100,
		.wakee_helper = helper,
		.wakee_sys = { .nr = nr, .arch = arch },
	};
	struct ws_wait w = { .sz = sizeof(w),
			     .tid = 100,
			     .pid = 100,
			     .start_ns = start,
			     .off_state = 2,
			     .wake = &wk };

	feed(&r);
	memset(out, 0, sizeof(*out));
	out->sz = sizeof(*out);
	return pl->infer(&fake.ctx, &w, out);
}

static int ask_fault(int32_t nr, uint16_t arch, bool helper, struct ws_claim *out)
{
	return ask_fault_of(nr, arch, helper, NULL, out);
}

/* The BPF side matched the request's first page to one the fault added to a file's cache. */
Test(blkio, a_page_fault_names_the_file_of_its_page)
{
	struct ws_claim c;
	char buf[240];

	cr_assert_eq(ask_fault_of(WS_SYSCALL_NONE, WS_ARCH_X86_64, false, "data\n.bin", &c), 1);
	cr_assert_str_eq(get_str(&c, "fault"), "file");
	cr_assert_str_eq(get_str(&c, "file"), "data?.bin", "no control character kept");
	cr_assert_eq(get_u64(&c, "inode"), 12);
	pl->describe(&fake.ctx, &c, buf, sizeof(buf));
	cr_assert_str_eq(buf,
			 "page fault reading 4000:7 (file \"data?.bin\", inode 12, sector 2048, "
			 "4096 bytes; 1.0ms before the device, 299ms in it)");
	/* one cause per disk, whatever the file */
	pl->resource(&fake.ctx, &c, buf, sizeof(buf));
	cr_assert_str_eq(buf, "page fault reading 4000:7");
}

Test(blkio, read_in_no_syscall_is_a_page_fault)
{
	struct ws_claim c;
	char buf[200];

	cr_assert_eq(ask_fault(WS_SYSCALL_NONE, WS_ARCH_X86_64, false, &c), 1);
	cr_assert_str_eq(c.kind, "block_io");
	cr_assert_str_eq(get_str(&c, "fault"), "file");
	cr_assert_str_eq(c.evidence,
			 "woken inside the interrupt where its read completed, same CPU; "
			 "it blocked in no syscall");
	pl->describe(&fake.ctx, &c, buf, sizeof(buf));
	cr_assert_str_eq(buf, "page fault reading 4000:7 (sector 2048, 4096 bytes; "
			      "1.0ms before the device, 299ms in it)");
	pl->resource(&fake.ctx, &c, buf, sizeof(buf));
	cr_assert_str_eq(buf, "page fault reading 4000:7");
}

Test(blkio, read_of_a_swap_area_in_no_syscall_is_a_swap_in)
{
	struct ws_claim c;
	char buf[200];

	/* sectors 1024..3071 of the disk are /dev/fake2's swap area; 2048 is in it */
	fake.ctx.host->name_set(&fake.ctx, blkio_swap_key(0, FAKE_DEV), "1024 2048 /dev/fake2");
	cr_assert_eq(ask_fault(WS_SYSCALL_NONE, WS_ARCH_X86_64, false, &c), 1);
	cr_assert_str_eq(get_str(&c, "fault"), "swap_in");
	cr_assert_str_eq(get_str(&c, "swap_area"), "/dev/fake2");
	pl->describe(&fake.ctx, &c, buf, sizeof(buf));
	cr_assert_str_eq(buf, "swap-in from /dev/fake2 (dev 4000:7, sector 2048, 4096 bytes read "
			      "under a page fault; 1.0ms before the device, 299ms in it)");
	pl->resource(&fake.ctx, &c, buf, sizeof(buf));
	cr_assert_str_eq(buf, "swap-in from /dev/fake2");
}

Test(blkio, read_past_a_swap_area_is_no_swap_in)
{
	struct ws_claim c;

	fake.ctx.host->name_set(&fake.ctx, blkio_swap_key(0, FAKE_DEV), "0 2048 /dev/fake2");
	fake.ctx.host->name_set(&fake.ctx, blkio_swap_key(1, FAKE_DEV + 1), "0 4096 /dev/other");
	cr_assert_eq(ask_fault(WS_SYSCALL_NONE, WS_ARCH_X86_64, false, &c), 1);
	cr_assert_str_eq(get_str(&c, "fault"), "file");
}

/* In a syscall, registers not read (an older recording, a worker of no user code), a helper. */
Test(blkio, no_fault_without_the_registers_saying_so)
{
	const struct {
		int32_t nr;
		uint16_t arch;
		bool helper;
	} cases[] = { { 17 /* pread64 */, WS_ARCH_X86_64, false },
		      { WS_SYSCALL_NONE, WS_ARCH_UNKNOWN, false },
		      { WS_SYSCALL_NONE, WS_ARCH_X86_64, true } };

	for (unsigned int i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct ws_claim c;

		cr_assert_eq(ask_fault(cases[i].nr, cases[i].arch, cases[i].helper, &c), 1);
		for (unsigned int k = 0; k < c.nfields; k++)
			cr_assert_str_neq(c.fields[k].key, "fault", "case %u", i);
	}
}
