// SPDX-License-Identifier: MIT
/* The recording file: round trip, forward compatibility, and hostile input. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "record/trace.h"

struct seen {
	int metas, devs, threads, events, summaries;
	struct ws_trace_meta meta;
	uint64_t dev;
	char devname[32], source[16];
	struct ws_trace_thread thread;
	uint64_t ts_sum;
	struct ws_trace_summary sum;
	char lost_json[64];
};

static int on_meta(void *ctx, const struct ws_trace_meta *m)
{
	struct seen *s = ctx;

	s->metas++;
	s->meta = *m;
	return 0;
}

static int on_dev(void *ctx, const char *source, uint64_t dev, const char *name)
{
	struct seen *s = ctx;

	s->devs++;
	s->dev = dev;
	snprintf(s->source, sizeof(s->source), "%s", source);
	snprintf(s->devname, sizeof(s->devname), "%s", name);
	return 0;
}

static int on_thread(void *ctx, const struct ws_trace_thread *t)
{
	struct seen *s = ctx;

	s->threads++;
	s->thread = *t;
	return 0;
}

static int on_event(void *ctx, const struct ws_rec_hdr *rec)
{
	struct seen *s = ctx;

	cr_assert_geq(rec->size, sizeof(*rec));
	s->events++;
	s->ts_sum += rec->ts;
	return 0;
}

static int on_summary(void *ctx, const struct ws_trace_summary *sum, const char *lost_json)
{
	struct seen *s = ctx;

	s->summaries++;
	s->sum = *sum;
	snprintf(s->lost_json, sizeof(s->lost_json), "%s", lost_json ? lost_json : "");
	return 0;
}

static const struct ws_trace_ops ops = {
	.meta = on_meta,
	.name = on_dev,
	.thread = on_thread,
	.event = on_event,
	.summary = on_summary,
};

struct big_rec {
	struct ws_rec_hdr hdr;
	uint64_t payload[3];
};

/* A small recording in memory; @unknown adds records of types no reader knows. */
static char *make_file_as(size_t *len, bool unknown, bool legacy_devname)
{
	static struct ws_trace_meta m;
	struct ws_trace_thread t = { .ts = 5, .tid = 101, .pid = 100, .comm = "worker" };
	struct ws_trace_summary sum = {
		.records = 3, .lost = 7, .lost_recursion = 1, .duration_ns = 123456789
	};
	struct ws_trace_writer w;
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);

	memset(&m, 0, sizeof(m));
	strcpy(m.version, "0.1.0");
	strcpy(m.kernel, "Linux 6.18.0 x86_64");
	strcpy(m.hostname, "box");
	strcpy(m.boot_id, "856c28f2-59c7-406c-8e70-1643a6858bd0");
	strcpy(m.sources, "sched,futex,blkio");
	strcpy(m.versions, "sched=0.1.0,futex=0.1.0,blkio=0.1.0");
	strcpy(m.command, "./app --x");
	m.clock.mono_ns = 1000;
	m.clock.wall_ns = 1800000000000000000ULL;
	m.min_block_ns = 10000000;
	m.max_window_ns = 60000000000ULL;
	m.pids[0] = 100;
	m.pids[1] = 200;
	m.npids = 2;

	cr_assert_eq(ws_trace_write_begin(&w, f, WS_TRACE_RAW), 0);
	cr_assert_eq(ws_trace_write_meta(&w, &m), 0);
	if (legacy_devname) {
		/* a format 1.0 recording: blkio's device name in its own record type */
		struct {
			struct ws_trace_devname d;
			char name[6];
		} __attribute__((packed)) rec = { { 7 << 20 | 3 }, "loop3" };

		cr_assert_eq(ws_trace_write_rec(&w, WS_TR_DEVNAME, &rec, sizeof(rec)), 0);
	} else {
		cr_assert_eq(ws_trace_write_name(&w, "blkio", 7 << 20 | 3, "loop3"), 0);
	}
	if (unknown) {
		char junk[300];

		memset(junk, 0xab, sizeof(junk));
		cr_assert_eq(ws_trace_write_rec(&w, 999, junk, sizeof(junk)), 0);
		cr_assert_eq(ws_trace_write_rec(&w, 0xffff, NULL, 0), 0);
	}
	cr_assert_eq(ws_trace_write_thread(&w, &t), 0);
	for (int i = 0; i < 3; i++) {
		struct big_rec r = { .hdr = { .size = sizeof(r), .kind = 0x101, .ts = 10 + i } };

		cr_assert_eq(ws_trace_write_event(&w, &r.hdr), 0);
	}
	cr_assert_eq(ws_trace_write_summary(&w, &sum, "{\"cpu0\":{\"0x101\":7}}"), 0);
	cr_assert_eq(ws_trace_write_end(&w), 0);
	fclose(f);
	return buf;
}

static char *make_file(size_t *len, bool unknown)
{
	return make_file_as(len, unknown, false);
}

static int read_buf(const void *buf, size_t len, struct seen *s, char *err, size_t errlen)
{
	FILE *f = fmemopen((void *)buf, len ? len : 1, "r");
	int rc;

	cr_assert_not_null(f);
	if (!len)
		fgetc(f); /* fmemopen refuses size 0: make it an empty stream */
	memset(s, 0, sizeof(*s));
	rc = ws_trace_read(f, "t.data", &ops, s, err, errlen);
	fclose(f);
	return rc;
}

Test(trace, round_trip)
{
	size_t len;
	char *buf = make_file(&len, false), err[256];
	struct seen s;

	cr_assert_eq(read_buf(buf, len, &s, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(s.metas, 1);
	cr_assert_str_eq(s.meta.sources, "sched,futex,blkio");
	cr_assert_str_eq(s.meta.versions, "sched=0.1.0,futex=0.1.0,blkio=0.1.0");
	cr_assert_str_eq(s.meta.kernel, "Linux 6.18.0 x86_64");
	cr_assert_str_eq(s.meta.hostname, "box");
	cr_assert_str_eq(s.meta.boot_id, "856c28f2-59c7-406c-8e70-1643a6858bd0");
	cr_assert_str_eq(s.meta.command, "./app --x");
	cr_assert_eq(s.meta.clock.mono_ns, 1000);
	cr_assert_eq(s.meta.clock.wall_ns, 1800000000000000000ULL);
	cr_assert_eq(s.meta.min_block_ns, 10000000);
	cr_assert_eq(s.meta.npids, 2);
	cr_assert_eq(s.meta.pids[1], 200);
	cr_assert_eq(s.devs, 1);
	cr_assert_eq(s.dev, 7 << 20 | 3);
	cr_assert_str_eq(s.devname, "loop3");
	cr_assert_str_eq(s.source, "blkio");
	cr_assert_eq(s.threads, 1);
	cr_assert_eq(s.thread.tid, 101);
	cr_assert_str_eq(s.thread.comm, "worker");
	cr_assert_eq(s.events, 3);
	cr_assert_eq(s.ts_sum, 10 + 11 + 12);
	cr_assert_eq(s.summaries, 1);
	cr_assert_eq(s.sum.lost, 7);
	cr_assert_eq(s.sum.duration_ns, 123456789);
	cr_assert_str_eq(s.lost_json, "{\"cpu0\":{\"0x101\":7}}");
	free(buf);
}

Test(trace, unknown_types_skipped)
{
	size_t len;
	char *buf = make_file(&len, true), err[256];
	struct seen s;

	cr_assert_eq(read_buf(buf, len, &s, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(s.events, 3);
	cr_assert_eq(s.threads, 1);
	cr_assert_eq(s.summaries, 1);
	free(buf);
}

Test(trace, longer_header_of_newer_minor)
{
	size_t len;
	char *buf = make_file(&len, false), err[256];
	char *big = malloc(len + 40);
	struct ws_trace_file_hdr h;
	struct seen s;

	/* a newer minor with 40 more header bytes: skipped */
	memcpy(&h, buf, sizeof(h));
	h.hdr_size += 40;
	h.minor = 7;
	memcpy(big, &h, sizeof(h));
	memset(big + sizeof(h), 0x5a, 40);
	memcpy(big + sizeof(h) + 40, buf + sizeof(h), len - sizeof(h));
	cr_assert_eq(read_buf(big, len + 40, &s, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(s.events, 3);
	free(big);
	free(buf);
}

Test(trace, newer_major_refused)
{
	size_t len;
	char *buf = make_file(&len, false), err[256];
	struct ws_trace_file_hdr h;
	struct seen s;

	memcpy(&h, buf, sizeof(h));
	h.major = WS_TRACE_MAJOR + 1;
	memcpy(buf, &h, sizeof(h));
	cr_assert_eq(read_buf(buf, len, &s, err, sizeof(err)), -EINVAL);
	cr_assert(strstr(err, "t.data: offset 12: format version 2."), "%s", err);
	cr_assert(strstr(err, "newer whyslow"), "%s", err);
	cr_assert_eq(s.metas, 0);
	free(buf);
}

Test(trace, not_a_recording)
{
	char err[256];
	struct seen s;

	cr_assert_eq(read_buf("GARBAGE!and more bytes here....", 31, &s, err, sizeof(err)),
		     -EINVAL);
	cr_assert(strstr(err, "offset 0: not a whyslow recording"), "%s", err);
}

/* Every prefix of a valid file is refused with an offset, and nothing crashes. */
Test(trace, truncated_everywhere)
{
	size_t len;
	char *buf = make_file(&len, true), err[256];
	struct seen s;

	for (size_t cut = 0; cut < len; cut++) {
		cr_assert_eq(read_buf(buf, cut, &s, err, sizeof(err)), -EINVAL, "cut at %zu", cut);
		cr_assert(strstr(err, "t.data: offset "), "cut %zu: %s", cut, err);
	}
	/* cut at a record boundary: the missing end marker is named */
	cr_assert_eq(read_buf(buf, len - sizeof(struct ws_trace_rec_hdr) - 8, &s, err, sizeof(err)),
		     -EINVAL);
	cr_assert(strstr(err, "without an end marker"), "%s", err);
	free(buf);
}

/* Offset of the record of @type (the first one) in @buf. */
static size_t find_rec(const char *buf, size_t len, uint16_t type)
{
	size_t off = sizeof(struct ws_trace_file_hdr);

	while (off + sizeof(struct ws_trace_rec_hdr) <= len) {
		struct ws_trace_rec_hdr h;

		memcpy(&h, buf + off, sizeof(h));
		if (h.type == type)
			return off;
		off += h.size;
	}
	cr_assert_fail("no record of type %u", type);
	return 0;
}

static void set_size(char *buf, size_t off, uint32_t size)
{
	memcpy(buf + off, &size, sizeof(size));
}

Test(trace, corrupt_sizes)
{
	size_t len, off;
	char *buf = make_file(&len, false), *copy = malloc(len), err[256], want[64];
	struct seen s;
	const uint32_t sizes[] = { 0, 1, 7, 0xffffffffu, WS_TRACE_MAX_REC + 1, 0x7fffffffu };

	off = find_rec(buf, len, WS_TR_EVENT);
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		memcpy(copy, buf, len);
		set_size(copy, off, sizes[i]);
		cr_assert_eq(read_buf(copy, len, &s, err, sizeof(err)), -EINVAL, "size %u",
			     sizes[i]);
		snprintf(want, sizeof(want), "t.data: offset %zu: ", off);
		cr_assert(strstr(err, want), "size %u: %s", sizes[i], err);
	}
	/* a size that lands inside the next record: caught there or at the end marker */
	memcpy(copy, buf, len);
	set_size(copy, off, 8 + sizeof(struct big_rec) + 13);
	cr_assert_eq(read_buf(copy, len, &s, err, sizeof(err)), -EINVAL);
	/* the event's own size disagrees with its record's */
	memcpy(copy, buf, len);
	copy[off + 8] ^= 0x10;
	cr_assert_eq(read_buf(copy, len, &s, err, sizeof(err)), -EINVAL);
	cr_assert(strstr(err, "inner size"), "%s", err);
	free(copy);
	free(buf);
}

Test(trace, metadata_must_come_first_and_end_counts)
{
	size_t len, off;
	char *buf = make_file(&len, false), err[256];
	struct ws_trace_rec_hdr h;
	struct ws_trace_end e;
	struct seen s;

	off = find_rec(buf, len, WS_TR_END);
	memcpy(&e, buf + off + sizeof(h), sizeof(e));
	e.events++;
	memcpy(buf + off + sizeof(h), &e, sizeof(e));
	cr_assert_eq(read_buf(buf, len, &s, err, sizeof(err)), -EINVAL);
	cr_assert(strstr(err, "counts 4 events, the file holds 3"), "%s", err);

	off = find_rec(buf, len, WS_TR_META);
	memcpy(&h, buf + off, sizeof(h));
	h.type = 77;
	memcpy(buf + off, &h, sizeof(h));
	cr_assert_eq(read_buf(buf, len, &s, err, sizeof(err)), -EINVAL);
	cr_assert(strstr(err, "not metadata"), "%s", err);
	free(buf);
}

Test(trace, metadata_parse)
{
	struct ws_trace_meta m;
	const char ok[] = "sources\0sched\0future_key\0whatever\0pids\0001,2,3\0";
	const char no_value[] = "sources\0sched\0pids";
	const char bad_pid[] = "pids\0001,x\0";

	cr_assert_eq(ws_trace_meta_parse(ok, sizeof(ok) - 1, &m), 0);
	cr_assert_str_eq(m.sources, "sched");
	cr_assert_eq(m.npids, 3);
	cr_assert_eq(ws_trace_meta_parse(no_value, sizeof(no_value), &m), -EINVAL);
	cr_assert_eq(ws_trace_meta_parse(bad_pid, sizeof(bad_pid) - 1, &m), -EINVAL);
	cr_assert_eq(ws_trace_meta_parse("", 0, &m), 0);
}

/* Records larger than the cap are refused by the writer too. */
Test(trace, writer_cap)
{
	struct ws_trace_writer w;
	char *buf = NULL, *big = calloc(1, WS_TRACE_MAX_REC);
	size_t len;
	FILE *f = open_memstream(&buf, &len);

	cr_assert_eq(ws_trace_write_begin(&w, f, WS_TRACE_RAW), 0);
	cr_assert_eq(ws_trace_write_rec(&w, 99, big, WS_TRACE_MAX_REC), -E2BIG);
	fclose(f);
	free(big);
	free(buf);
}

/* The committed recording of the ground truth mutex_disk reads whole. */
Test(trace, committed_recording)
{
	FILE *f = fopen(TEST_SRC_DIR "/data/gt_mutex_disk.data", "r");
	char err[256];
	struct seen s = { 0 };

	cr_assert_not_null(f);
	cr_assert_eq(ws_trace_read(f, "gt_mutex_disk.data", &ops, &s, err, sizeof(err)), 0, "%s",
		     err);
	fclose(f);
	cr_assert_eq(s.metas, 1);
	cr_assert_gt(s.events, 10);
	cr_assert_eq(s.summaries, 1);
	cr_assert(strstr(s.meta.sources, "blkio"));
}

/* A recording from before names were generic: its device names reach blkio's table. */
Test(trace, legacy_device_names)
{
	size_t len;
	char *buf = make_file_as(&len, false, true), err[256];
	struct seen s;

	cr_assert_eq(read_buf(buf, len, &s, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(s.devs, 1);
	cr_assert_eq(s.dev, 7 << 20 | 3);
	cr_assert_str_eq(s.devname, "loop3");
	cr_assert_str_eq(s.source, "blkio");
	cr_assert_eq(s.events, 3);
	free(buf);
}

static int thread_fails(void *ctx, const struct ws_trace_thread *t)
{
	(void)ctx;
	(void)t;
	return *(const int *)ctx;
}

/*
 * A callback's error goes back as it is, with @err empty for its caller to explain: the
 * reader's "out of memory" and "malformed" are for its own failures only.
 */
Test(trace, callback_errors_are_the_callers)
{
	static const int codes[] = { -ENOMEM, -EBADMSG };
	struct ws_trace_ops fail_ops = { .thread = thread_fails };
	size_t len;
	char *buf = make_file(&len, false), err[256];

	for (size_t i = 0; i < sizeof(codes) / sizeof(codes[0]); i++) {
		FILE *f = fmemopen(buf, len, "r");
		int code = codes[i], rc;

		cr_assert_not_null(f);
		strcpy(err, "untouched");
		rc = ws_trace_read(f, "t.data", &fail_ops, (void *)&code, err, sizeof(err));
		fclose(f);
		cr_expect_eq(rc, code, "rc %d, want the callback's %d", rc, code);
		cr_expect_str_empty(err, "the reader explained the callback's error: %s", err);
	}
	free(buf);
}

/*
 * Events of every size, past the reader's chunks (it reads ahead a chunk at a time and hands
 * events out where they lie), some misaligned by an odd-sized record of an unknown type:
 * each one arrives whole, aligned, in order.
 */
struct order_seen {
	int n;
	uint64_t bad;
};

static int on_event_checked(void *ctx, const struct ws_rec_hdr *rec)
{
	struct order_seen *s = ctx;
	const unsigned char *p = (const void *)rec;

	if ((uintptr_t)rec % 8 || rec->ts != (uint64_t)s->n || rec->size != 32 + s->n % 200)
		s->bad++;
	for (size_t i = sizeof(*rec); i < rec->size; i++)
		if (p[i] != (unsigned char)(s->n + i))
			s->bad++;
	s->n++;
	return 0;
}

Test(trace, many_events_across_chunks_whole_and_aligned)
{
	static const struct ws_trace_ops checked = { .event = on_event_checked };
	struct ws_trace_writer w;
	struct ws_trace_meta m = { .npids = 0 };
	struct order_seen s = { 0 };
	unsigned char rec[256];
	char *buf = NULL, err[256];
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	int n = 20000;

	cr_assert_not_null(f);
	strcpy(m.sources, "sched");
	cr_assert_eq(ws_trace_write_begin(&w, f, WS_TRACE_RAW), 0);
	cr_assert_eq(ws_trace_write_meta(&w, &m), 0);
	for (int i = 0; i < n; i++) {
		struct ws_rec_hdr *h = (void *)rec;

		for (size_t k = 0; k < sizeof(rec); k++)
			rec[k] = (unsigned char)(i + k);
		memset(h, 0, sizeof(*h));
		h->size = 32 + i % 200;
		h->kind = 0x101;
		h->ts = i;
		cr_assert_eq(ws_trace_write_event(&w, h), 0);
		if (i % 997 == 0) /* 13 bytes: what follows is misaligned until the next one */
			cr_assert_eq(ws_trace_write_rec(&w, 999, "odd-size-rec", 13), 0);
	}
	cr_assert_eq(ws_trace_write_end(&w), 0);
	fclose(f);
	cr_assert_gt(len, 2 << 20, "the file spans many of the reader's chunks");
	f = fmemopen(buf, len, "r");
	cr_assert_not_null(f);
	cr_assert_eq(ws_trace_read(f, "t.data", &checked, &s, err, sizeof(err)), 0, "%s", err);
	fclose(f);
	cr_assert_eq(s.n, n);
	cr_assert_eq(s.bad, 0);
	free(buf);
}
