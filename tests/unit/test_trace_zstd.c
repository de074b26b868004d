// SPDX-License-Identifier: MIT
/*
 * Compressed recordings (format 1.6): read as the same records as raw ones, cut ones read up to
 * their last flush, and hostile streams (corrupt, bombs, huge windows, unknown methods) refused
 * with an offset.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "record/trace.h"
#include "record/trace_zstd.h"

#define NEVENTS 20000
#define FLUSH_AT 5000 /* the events before this were flushed: a cut file keeps them */

struct seen {
	int metas, events, summaries, ended;
	uint64_t ts_sum, ended_at, hash;
	struct ws_trace_meta meta;
	struct ws_trace_summary sum;
};

static int on_meta(void *ctx, const struct ws_trace_meta *m)
{
	struct seen *s = ctx;

	s->metas++;
	s->meta = *m;
	return 0;
}

static int on_event(void *ctx, const struct ws_rec_hdr *rec)
{
	struct seen *s = ctx;
	const uint8_t *p = (const void *)rec;

	s->events++;
	s->ts_sum += rec->ts;
	for (size_t i = 0; i < rec->size; i++)
		s->hash = s->hash * 1099511628211ULL ^ p[i];
	return 0;
}

static int on_summary(void *ctx, const struct ws_trace_summary *sum, const char *lost_json)
{
	struct seen *s = ctx;

	(void)lost_json;
	s->summaries++;
	s->sum = *sum;
	return 0;
}

static int on_ended_early(void *ctx, uint64_t off)
{
	struct seen *s = ctx;

	s->ended++;
	s->ended_at = off;
	return 0;
}

static const struct ws_trace_ops ops = { .meta = on_meta,
					 .event = on_event,
					 .summary = on_summary };
static const struct ws_trace_ops ops_cut = {
	.meta = on_meta, .event = on_event, .summary = on_summary, .ended_early = on_ended_early
};

struct ev {
	struct ws_rec_hdr hdr;
	uint64_t a, b;
};

/* The same recording stored as @how; *@flushed: the file's length after the mid-way flush. */
static char *make(enum ws_trace_compress how, size_t *len, size_t *flushed)
{
	static struct ws_trace_meta m;
	struct ws_trace_summary sum = { .records = NEVENTS, .duration_ns = 42 };
	struct ws_trace_writer w;
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);

	memset(&m, 0, sizeof(m));
	strcpy(m.sources, "sched,futex");
	strcpy(m.command, "./app");
	m.ncpus = 2;
	cr_assert_eq(ws_trace_write_begin(&w, f, how), 0);
	cr_assert_eq(ws_trace_write_meta(&w, &m), 0);
	for (int i = 0; i < NEVENTS; i++) {
		/* like a real stream: times rising, a few fields varying */
		struct ev e = { .hdr = { .size = sizeof(e),
					 .kind = 0x101 + i % 3,
					 .cpu = i % 2,
					 .ts = 1000000 + 977ULL * i },
				.a = (uint64_t)i * i % 1013,
				.b = i / 7 };

		cr_assert_eq(ws_trace_write_event(&w, &e.hdr), 0);
		if (i + 1 == FLUSH_AT) {
			cr_assert_eq(ws_trace_flush(&w), 0);
			*flushed = *len; /* open_memstream's length is current after a flush */
		}
	}
	cr_assert_eq(ws_trace_write_summary(&w, &sum, ""), 0);
	cr_assert_eq(ws_trace_write_end(&w), 0);
	fclose(f);
	return buf;
}

static int read_buf(const void *buf, size_t len, const struct ws_trace_ops *o, struct seen *s,
		    char *err, size_t errlen)
{
	FILE *f = fmemopen((void *)buf, len, "r");
	int rc;

	cr_assert_not_null(f);
	memset(s, 0, sizeof(*s));
	rc = ws_trace_read(f, "t.data", o, s, err, errlen);
	fclose(f);
	return rc;
}

Test(trace_zstd, same_records_as_raw)
{
	size_t rlen, zlen, fl;
	char *raw = make(WS_TRACE_RAW, &rlen, &fl), *z = make(WS_TRACE_ZSTD, &zlen, &fl), err[256];
	struct ws_trace_file_hdr h;
	struct seen a, b;

	cr_assert_eq(read_buf(raw, rlen, &ops, &a, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(read_buf(z, zlen, &ops, &b, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(a.events, NEVENTS);
	cr_assert_eq(b.events, a.events);
	cr_assert_eq(b.ts_sum, a.ts_sum);
	cr_assert_eq(b.hash, a.hash);
	cr_assert_eq(b.summaries, 1);
	cr_assert_eq(b.sum.records, NEVENTS);
	cr_assert_str_eq(b.meta.sources, "sched,futex");
	memcpy(&h, z, sizeof(h));
	cr_assert_eq(h.flags, WS_TRACE_ZSTD);
	cr_assert_eq(h.minor, WS_TRACE_MINOR);
	cr_assert_lt(zlen * 4, rlen, "compressed %zu of %zu bytes", zlen, rlen);
	free(raw);
	free(z);
}

/*
 * Cut anywhere after the header, a compressed recording reads as a cut raw one does: what
 * decoded counts and the cut is named (never a crash); cut after the mid-way flush, every
 * event before the flush is there.
 */
Test(trace_zstd, truncated_reads_up_to_the_flush)
{
	size_t len, flushed;
	char *z = make(WS_TRACE_ZSTD, &len, &flushed), err[256];
	struct seen s;

	cr_assert_lt(flushed, len);
	cr_assert_eq(read_buf(z, flushed, &ops_cut, &s, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(s.ended, 1);
	cr_assert_eq(s.events, FLUSH_AT, "%d events", s.events);
	cr_assert_gt(s.ended_at, flushed, "offsets count the uncompressed bytes");
	for (size_t cut = flushed; cut < len; cut += 97) {
		cr_assert_eq(read_buf(z, cut, &ops_cut, &s, err, sizeof(err)), 0, "cut %zu: %s",
			     cut, err);
		cr_assert_eq(s.ended, 1, "cut %zu", cut);
		cr_assert_geq(s.events, FLUSH_AT, "cut %zu", cut);
		/* without the callback, a cut file is an error with its offset */
		cr_assert_eq(read_buf(z, cut, &ops, &s, err, sizeof(err)), -EINVAL, "cut %zu", cut);
		cr_assert(strstr(err, "t.data: offset "), "cut %zu: %s", cut, err);
	}
	/* cut inside the metadata: an error, as for a raw file */
	for (size_t cut = sizeof(struct ws_trace_file_hdr); cut < 40; cut++) {
		cr_assert_eq(read_buf(z, cut, &ops_cut, &s, err, sizeof(err)), -EINVAL, "cut %zu",
			     cut);
		cr_assert(strstr(err, "t.data: offset "), "cut %zu: %s", cut, err);
	}
	free(z);
}

Test(trace_zstd, corrupt_stream_refused)
{
	size_t len, fl;
	char *z = make(WS_TRACE_ZSTD, &len, &fl), err[256];
	struct seen s;

	for (size_t at = sizeof(struct ws_trace_file_hdr); at < len; at += len / 50) {
		char *c = malloc(len);

		memcpy(c, z, len);
		c[at] ^= 0x5a;
		/* a flipped byte: refused (by zstd, its checksum, or the records' own checks) */
		cr_assert_eq(read_buf(c, len, &ops, &s, err, sizeof(err)), -EINVAL, "at %zu", at);
		cr_assert(strstr(err, "t.data: offset "), "at %zu: %s", at, err);
		free(c);
	}
	free(z);
}

/* The last frame's checksum, after the end marker, is checked; cut, nothing was lost. */
Test(trace_zstd, checksum_after_the_end_marker)
{
	size_t len, fl;
	char *z = make(WS_TRACE_ZSTD, &len, &fl), err[256];
	struct seen s;

	cr_assert_eq(read_buf(z, len - 1, &ops, &s, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(s.events, NEVENTS);
	z[len - 1] ^= 1;
	cr_assert_eq(read_buf(z, len, &ops, &s, err, sizeof(err)), -EINVAL);
	cr_assert(strstr(err, "the compressed data is corrupt (zstd: "), "%s", err);
	free(z);
}

/* A header saying zstd, then @body compressed with @window_log (0: the default). */
static char *zfile(const void *body, size_t blen, int window_log, size_t *len)
{
	struct ws_trace_file_hdr h = {
		.hdr_size = sizeof(h), .major = 1, .minor = 6, .flags = WS_TRACE_ZSTD
	};
	size_t cap = ZSTD_compressBound(blen) + sizeof(h);
	char *out = malloc(cap);
	ZSTD_CCtx *c = ZSTD_createCCtx();
	ZSTD_outBuffer o = { out + sizeof(h), cap - sizeof(h), 0 };
	ZSTD_inBuffer in = { body, blen, 0 };

	memcpy(h.magic, WS_TRACE_MAGIC, sizeof(h.magic));
	memcpy(out, &h, sizeof(h));
	ZSTD_CCtx_setParameter(c, ZSTD_c_compressionLevel, 19);
	ZSTD_CCtx_setParameter(c, ZSTD_c_windowLog, window_log ? window_log : WS_TZ_WINDOW_LOG_MAX);
	/* streamed: the frame declares its window, not its content size */
	cr_assert(!ZSTD_isError(ZSTD_compressStream2(c, &o, &in, ZSTD_e_continue)));
	while (ZSTD_compressStream2(c, &o, &in, ZSTD_e_end))
		;
	ZSTD_freeCCtx(c);
	*len = sizeof(h) + o.pos;
	return out;
}

/* A metadata record, then @n copies of one event: compresses far beyond any recording. */
static char *repetitive(size_t n, size_t *blen)
{
	static const char meta[] = "sources\0sched\0";
	struct ws_trace_rec_hdr mh = { .size = sizeof(mh) + sizeof(meta) - 1, .type = WS_TR_META };
	struct ws_trace_rec_hdr eh = { .size = sizeof(eh) + sizeof(struct ev),
				       .type = WS_TR_EVENT };
	struct ev e = { .hdr = { .size = sizeof(e), .kind = 0x101 } };
	size_t one = sizeof(eh) + sizeof(e);
	char *b = malloc(sizeof(mh) + sizeof(meta) + n * one), *p = b;

	memcpy(p, &mh, sizeof(mh));
	memcpy(p += sizeof(mh), meta, sizeof(meta) - 1);
	p += sizeof(meta) - 1;
	for (size_t i = 0; i < n; i++, p += one) {
		memcpy(p, &eh, sizeof(eh));
		memcpy(p + sizeof(eh), &e, sizeof(e));
	}
	*blen = p - b;
	return b;
}

Test(trace_zstd, decompression_bomb_refused)
{
	size_t blen, len;
	char *body = repetitive((64u << 20) / 32, &blen), *z = zfile(body, blen, 0, &len), err[256];
	struct seen s;

	cr_assert_lt(len * WS_TZ_MAX_RATIO, blen, "not a bomb: %zu of %zu", len, blen);
	cr_assert_eq(read_buf(z, len, &ops_cut, &s, err, sizeof(err)), -EINVAL);
	cr_assert(strstr(err, "expands over 1000-fold"), "%s", err);
	cr_assert(strstr(err, "t.data: offset "), "%s", err);
	/* what it read before stopping is bounded by the ratio, not the stream's claim */
	cr_assert_lt((uint64_t)s.events * 32, len * WS_TZ_MAX_RATIO + WS_TZ_SLACK + (1u << 18));
	free(body);
	free(z);
}

Test(trace_zstd, large_window_refused)
{
	size_t blen, len;
	/* 8 MiB of varying events, compressed with an 8 MiB window */
	char *body = repetitive((8u << 20) / 32, &blen), *z, err[256];
	struct seen s;

	for (size_t off = 64; off + 8 <= blen; off += 32)
		memcpy(body + off, &off, sizeof(off)); /* no long repeats; no record is read */
	z = zfile(body, blen, 23, &len);
	cr_assert_eq(read_buf(z, len, &ops_cut, &s, err, sizeof(err)), -EINVAL);
	cr_assert(strstr(err, "asks for a window over 2048 KiB"), "%s", err);
	free(body);
	free(z);
}

Test(trace_zstd, unknown_method_refused)
{
	size_t len, fl;
	char *z = make(WS_TRACE_ZSTD, &len, &fl), err[256];
	struct ws_trace_file_hdr h;
	struct seen s;

	memcpy(&h, z, sizeof(h));
	h.flags = 7;
	memcpy(z, &h, sizeof(h));
	cr_assert_eq(read_buf(z, len, &ops, &s, err, sizeof(err)), -EINVAL);
	cr_assert(strstr(err, "t.data: offset 16: compressed with method 7"), "%s", err);
	cr_assert(strstr(err, "newer whyslow"), "%s", err);
	cr_assert_eq(s.metas, 0);
	free(z);
}
