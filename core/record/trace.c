// SPDX-License-Identifier: MIT
/* The recording file: writer and reader (format: docs/trace-format.md). */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "trace.h"
#include "trace_zstd.h"
#include "base/util.h"

#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the trace format is little-endian; this writer and reader store native fields"
#endif

/* The part of the file header every version shares: enough to tell the version. */
#define HDR_MIN 16
#define HDR_MAX 4096

_Static_assert(sizeof(struct ws_trace_file_hdr) == 24, "file header layout");
_Static_assert(sizeof(struct ws_trace_rec_hdr) == 8, "record header layout");
_Static_assert(sizeof(struct ws_trace_thread) == 32, "thread record layout");
_Static_assert(sizeof(struct ws_trace_summary) == 32, "summary record layout");

/* ---- writing ----------------------------------------------------------------------------- */

static int put(struct ws_trace_writer *w, const void *p, size_t len)
{
	if (w->err)
		return w->err;
	if (w->z)
		w->err = ws_tz_write(w->z, p, len);
	else if (len && fwrite(p, 1, len, w->f) != len)
		w->err = errno ? -errno : -EIO;
	return w->err;
}

int ws_trace_write_begin(struct ws_trace_writer *w, FILE *f, enum ws_trace_compress how)
{
	struct ws_trace_file_hdr h = {
		.hdr_size = sizeof(h),
		.major = WS_TRACE_MAJOR,
		.minor = WS_TRACE_MINOR,
		.flags = how,
	};

	memset(w, 0, sizeof(*w));
	w->f = f;
	memcpy(h.magic, WS_TRACE_MAGIC, sizeof(h.magic));
	/* the header stays uncompressed: it says how the rest is stored, and its version */
	if (put(w, &h, sizeof(h)))
		return w->err;
	if (how == WS_TRACE_ZSTD)
		w->err = ws_tz_writer_new(&w->z, f);
	return w->err;
}

/* A record in two pieces, so callers need not assemble one in memory. */
static int write_rec2(struct ws_trace_writer *w, uint16_t type, const void *a, size_t alen,
		      const void *b, size_t blen)
{
	struct ws_trace_rec_hdr h = { .type = type };

	if (sizeof(h) + alen + blen > WS_TRACE_MAX_REC)
		return -E2BIG;
	h.size = sizeof(h) + alen + blen;
	put(w, &h, sizeof(h));
	put(w, a, alen);
	return put(w, b, blen);
}

int ws_trace_write_rec(struct ws_trace_writer *w, uint16_t type, const void *p, size_t len)
{
	return write_rec2(w, type, p, len, NULL, 0);
}

static void kv(FILE *f, const char *k, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void kv(FILE *f, const char *k, const char *fmt, ...)
{
	va_list ap;

	fputs(k, f);
	fputc(0, f);
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	fputc(0, f);
}

int ws_trace_write_meta(struct ws_trace_writer *w, const struct ws_trace_meta *m)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	int err;

	if (!f)
		return -ENOMEM;
	kv(f, "whyslow", "%s", m->version);
	kv(f, "kernel", "%s", m->kernel);
	kv(f, "hostname", "%s", m->hostname);
	if (m->boot_id[0])
		kv(f, "boot_id", "%s", m->boot_id);
	kv(f, "clock_mono_ns", "%" PRIu64, m->clock.mono_ns);
	kv(f, "clock_wall_ns", "%" PRIu64, m->clock.wall_ns);
	kv(f, "sources", "%s", m->sources);
	kv(f, "source_versions", "%s", m->versions);
	kv(f, "command", "%s", m->command);
	kv(f, "min_block_ns", "%" PRIu64, m->min_block_ns);
	kv(f, "max_window_ns", "%" PRIu64, m->max_window_ns);
	kv(f, "max_history", "%" PRIu64, m->max_history);
	kv(f, "resolution_ns", "%" PRIu64, m->resolution_ns);
	if (m->ncpus)
		kv(f, "ncpus", "%" PRIu32, m->ncpus);
	if (m->has_stack_min)
		kv(f, "stack_min_ns", "%" PRIu64, m->stack_min_ns);
	fputs("pids", f);
	fputc(0, f);
	for (int i = 0; i < m->npids; i++)
		fprintf(f, "%s%u", i ? "," : "", m->pids[i]);
	fputc(0, f);
	if (fclose(f)) {
		free(buf);
		return -ENOMEM;
	}
	err = ws_trace_write_rec(w, WS_TR_META, buf, len);
	free(buf);
	return err;
}

int ws_trace_write_name(struct ws_trace_writer *w, const char *source, uint64_t key,
			const char *name)
{
	struct ws_trace_name n = { .key = key };
	size_t slen = strlen(source) + 1, nlen = strlen(name) + 1;
	char text[WS_TRACE_STR * 2];

	if (slen + nlen > sizeof(text))
		return -E2BIG;
	memcpy(text, source, slen);
	memcpy(text + slen, name, nlen);
	return write_rec2(w, WS_TR_NAME, &n, sizeof(n), text, slen + nlen);
}

int ws_trace_write_thread(struct ws_trace_writer *w, const struct ws_trace_thread *t)
{
	return ws_trace_write_rec(w, WS_TR_THREAD, t, sizeof(*t));
}

int ws_trace_write_event(struct ws_trace_writer *w, const struct ws_rec_hdr *rec)
{
	int err = ws_trace_write_rec(w, WS_TR_EVENT, rec, rec->size);

	if (!err)
		w->events++;
	return err;
}

int ws_trace_write_summary(struct ws_trace_writer *w, const struct ws_trace_summary *s,
			   const char *lost_json)
{
	if (!lost_json)
		lost_json = "";
	return write_rec2(w, WS_TR_SUMMARY, s, sizeof(*s), lost_json, strlen(lost_json) + 1);
}

static int flush(struct ws_trace_writer *w, bool end)
{
	if (!w->err && w->z)
		w->err = ws_tz_flush(w->z, end);
	if (!w->err && fflush(w->f) == EOF)
		w->err = errno ? -errno : -EIO;
	return w->err;
}

int ws_trace_flush(struct ws_trace_writer *w)
{
	return flush(w, false);
}

int ws_trace_write_end(struct ws_trace_writer *w)
{
	struct ws_trace_end e = { .events = w->events };

	ws_trace_write_rec(w, WS_TR_END, &e, sizeof(e));
	flush(w, true);
	ws_trace_writer_free(w);
	return w->err;
}

void ws_trace_writer_free(struct ws_trace_writer *w)
{
	ws_tz_writer_free(w->z);
	w->z = NULL;
}

/* ---- reading ----------------------------------------------------------------------------- */

static void copy_str(char *dst, size_t cap, const char *src)
{
	snprintf(dst, cap, "%s", src);
}

static int parse_u64(const char *s, uint64_t *out)
{
	char *end;

	errno = 0;
	*out = strtoull(s, &end, 10);
	return errno || end == s || *end ? -EINVAL : 0;
}

static int parse_pids(const char *s, struct ws_trace_meta *m)
{
	m->npids = 0;
	while (*s) {
		char *end;
		unsigned long v;

		errno = 0;
		v = strtoul(s, &end, 10);
		if (errno || end == s || v == 0 || v > UINT32_MAX || (*end && *end != ','))
			return -EINVAL;
		/* more than we keep: the rest join through their fork records, or not at all */
		if (m->npids < WS_TRACE_MAX_PIDS)
			m->pids[m->npids++] = v;
		s = *end ? end + 1 : end;
	}
	return 0;
}

/* No machine has more CPUs than a kernel can: a larger count is not a recording's. */
static int parse_ncpus(const char *s, struct ws_trace_meta *m)
{
	uint64_t v;

	if (parse_u64(s, &v) || v == 0 || v > WS_MAX_CPUS)
		return -EINVAL;
	m->ncpus = v;
	return 0;
}

int ws_trace_meta_parse(const void *p, size_t len, struct ws_trace_meta *m)
{
	const char *s = p, *end = s + len;

	memset(m, 0, sizeof(*m));
	if (len && s[len - 1])
		return -EINVAL;
	while (s < end) {
		const char *k = s, *v = s + strlen(s) + 1;
		int err = 0;

		if (v >= end)
			return -EINVAL; /* a key without its value */
		s = v + strlen(v) + 1;
		if (!strcmp(k, "whyslow"))
			copy_str(m->version, sizeof(m->version), v);
		else if (!strcmp(k, "kernel"))
			copy_str(m->kernel, sizeof(m->kernel), v);
		else if (!strcmp(k, "hostname"))
			copy_str(m->hostname, sizeof(m->hostname), v);
		else if (!strcmp(k, "boot_id"))
			copy_str(m->boot_id, sizeof(m->boot_id), v);
		else if (!strcmp(k, "sources"))
			copy_str(m->sources, sizeof(m->sources), v);
		else if (!strcmp(k, "source_versions"))
			copy_str(m->versions, sizeof(m->versions), v);
		else if (!strcmp(k, "command"))
			copy_str(m->command, sizeof(m->command), v);
		else if (!strcmp(k, "clock_mono_ns"))
			err = parse_u64(v, &m->clock.mono_ns);
		else if (!strcmp(k, "clock_wall_ns"))
			err = parse_u64(v, &m->clock.wall_ns);
		else if (!strcmp(k, "min_block_ns"))
			err = parse_u64(v, &m->min_block_ns);
		else if (!strcmp(k, "max_window_ns"))
			err = parse_u64(v, &m->max_window_ns);
		else if (!strcmp(k, "max_history"))
			err = parse_u64(v, &m->max_history);
		else if (!strcmp(k, "resolution_ns"))
			err = parse_u64(v, &m->resolution_ns);
		else if (!strcmp(k, "pids"))
			err = parse_pids(v, m);
		else if (!strcmp(k, "ncpus"))
			err = parse_ncpus(v, m);
		else if (!strcmp(k, "stack_min_ns"))
			m->has_stack_min = !(err = parse_u64(v, &m->stack_min_ns));
		/* other keys: added by a newer minor; ignored */
		if (err)
			return err;
	}
	return 0;
}

/*
 * Bytes are read from the file a chunk at a time into the reader's own buffer, and an event
 * record (nearly all of a recording) is handed to the callback where it lies there: two
 * fread calls and a copy per record were a tenth of `report`'s time. The buffer keeps each
 * byte's alignment as it refills; an event that lies misaligned moves what is buffered once
 * (see realign()).
 */
#define READ_CHUNK (256u << 10)
#define READ_ALIGN 8

struct reader {
	FILE *f;
	struct ws_tz_reader *z; /* a compressed recording's records come through it */
	const char *name;
	uint64_t off; /* of the next byte to read */
	char *in;     /* READ_CHUNK bytes: read from the file, [pos, end) not yet taken */
	size_t pos, end;
	char *err;
	size_t errlen;
	const struct ws_trace_ops *ops;
	void *ctx;
	struct ws_trace_meta *meta; /* the first metadata record, parsed */
	uint64_t events;	    /* WS_TR_EVENT records read */
	bool realigned;		    /* realign() moved the buffer since the last refill */
	bool ended;		    /* the end marker was read */
	bool eof;		    /* refill() found the end of the records' bytes */
	int zerr;		    /* the decompression failed: its message is in @err */
};

static int fail(struct reader *r, uint64_t off, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int fail(struct reader *r, uint64_t off, const char *fmt, ...)
{
	va_list ap;
	int n;

	/* a short read after the decompression failed: that failure is the one to say */
	if (r->zerr)
		return r->zerr;
	n = snprintf(r->err, r->errlen, "%s: offset %" PRIu64 ": ", r->name, off);
	va_start(ap, fmt);
	if (n >= 0 && (size_t)n < r->errlen)
		vsnprintf(r->err + n, r->errlen - n, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* The reader's own allocation failed (a callback's -ENOMEM is the callback's to say). */
static int oom(struct reader *r)
{
	snprintf(r->err, r->errlen, "%s: out of memory", r->name);
	return -ENOMEM;
}

/*
 * Up to @cap more bytes of the records, decompressed; 0 at their end or on an error (a
 * decompression error is said here, at the offset it was found: r->zerr).
 */
static size_t unzip(struct reader *r, char *p, size_t cap)
{
	/* where the decompressed bytes reached: what was taken and what is buffered */
	uint64_t at = r->off + (r->end - r->pos);
	size_t n;
	int err = ws_tz_read(r->z, p, cap, &n);

	if (err) {
		fail(r, at, "%s", ws_tz_why(r->z));
		r->zerr = err == -EFBIG || err == -EBADMSG ? -EINVAL : err;
		return 0;
	}
	r->eof = !n;
	return n;
}

/* More of the file after what is buffered; 0 at its end (r->eof) or on an error. */
static size_t refill(struct reader *r)
{
	size_t keep = r->end - r->pos, to = r->pos % READ_ALIGN, n;

	memmove(r->in + to, r->in + r->pos, keep);
	r->pos = to;
	r->end = to + keep;
	if (r->z) {
		n = unzip(r, r->in + r->end, READ_CHUNK - r->end);
	} else {
		n = fread(r->in + r->end, 1, READ_CHUNK - r->end, r->f);
		r->eof = feof(r->f);
	}
	r->end += n;
	r->realigned = false;
	return n;
}

/*
 * Move what is buffered so that r->pos lies aligned for a record. A recording's first records
 * (metadata, names) have odd sizes, and the events after them, whose sizes are multiples of 8,
 * all lie misaligned in the file: moved once, they lie aligned here from then on and are
 * handed over where they lie, not copied out one by one. At most once per refill, so a file
 * whose records are misaligned every other one costs a move per chunk, not one per record.
 */
static bool realign(struct reader *r)
{
	size_t keep = r->end - r->pos;

	if (r->realigned)
		return false;
	memmove(r->in, r->in + r->pos, keep);
	r->pos = 0;
	r->end = keep;
	r->realigned = true;
	return true;
}

/* Read exactly @len bytes; the count actually read otherwise. */
static size_t get(struct reader *r, void *p, size_t len)
{
	size_t got = 0;

	while (got < len) {
		size_t n = r->end - r->pos;

		if (!n && !refill(r))
			break;
		n = r->end - r->pos;
		if (n > len - got)
			n = len - got;
		memcpy((char *)p + got, r->in + r->pos, n);
		r->pos += n;
		got += n;
	}
	r->off += got;
	return got;
}

/*
 * get() of a record header: nearly always whole in the buffer, and then copied inline (a
 * constant size) instead of by a memcpy call of get()'s variable length, once per record.
 */
static size_t get_hdr(struct reader *r, struct ws_trace_rec_hdr *h)
{
	if (r->end - r->pos < sizeof(*h))
		return get(r, h, sizeof(*h));
	memcpy(h, r->in + r->pos, sizeof(*h));
	r->pos += sizeof(*h);
	r->off += sizeof(*h);
	return sizeof(*h);
}

/*
 * The next @len bytes where they lie in the buffer, taken, when they are all there (or can
 * be, without the end of the file) and start aligned for a record; NULL with nothing taken
 * otherwise (the caller copies them out with get(), which says how many there were).
 */
static const char *take(struct reader *r, size_t len)
{
	const char *p;

	if (len > READ_CHUNK - READ_ALIGN)
		return NULL;
	while (r->end - r->pos < len)
		if (!refill(r))
			return NULL;
	if ((uintptr_t)(r->in + r->pos) % READ_ALIGN && !realign(r))
		return NULL;
	p = r->in + r->pos;
	r->pos += len;
	r->off += len;
	return p;
}

/* The records after the header: raw, or through a decompressor (format 1.6). */
static int read_compression(struct reader *r, uint32_t flags)
{
	unsigned int how = flags & WS_TRACE_COMPRESS_MASK;

	if (how == WS_TRACE_RAW)
		return 0;
	if (how != WS_TRACE_ZSTD)
		return fail(
			r, 16,
			"compressed with method %u: this whyslow reads uncompressed or zstd recordings only; report it with a newer whyslow",
			how);
	/* what the header's read took past it is the compressed stream's start (no seek: pipes) */
	if (ws_tz_reader_new(&r->z, r->f, r->in + r->pos, r->end - r->pos))
		return oom(r);
	r->pos = r->end = 0;
	r->eof = false;
	return 0;
}

static int read_header(struct reader *r)
{
	struct ws_trace_file_hdr h = { 0 };
	char skip[64];
	size_t n = get(r, &h, HDR_MIN);
	uint32_t left;

	if (n < 8 || memcmp(h.magic, WS_TRACE_MAGIC, 8))
		return fail(r, 0, "not a whyslow recording (no \"WHYSLOW\" magic)");
	if (n < HDR_MIN)
		return fail(r, n, "truncated file header");
	if (h.major != WS_TRACE_MAJOR)
		return fail(r, 12, "format version %u.%u: this whyslow reads version %d.x only%s",
			    h.major, h.minor, WS_TRACE_MAJOR,
			    h.major > WS_TRACE_MAJOR ? "; report it with a newer whyslow" : "");
	if (h.hdr_size < HDR_MIN || h.hdr_size > HDR_MAX)
		return fail(r, 8, "header size %u is not within %d..%d", h.hdr_size, HDR_MIN,
			    HDR_MAX);
	/* the flags, when the header holds them (it does from 1.0 on; 16 bytes is the minimum) */
	left = h.hdr_size - HDR_MIN;
	if (left >= sizeof(h.flags)) {
		if (get(r, &h.flags, sizeof(h.flags)) != sizeof(h.flags))
			return fail(r, r->off, "truncated file header");
		left -= sizeof(h.flags);
	}
	/* a longer header is a newer minor's: skip what we do not know */
	while (left) {
		size_t want = left < sizeof(skip) ? left : sizeof(skip);

		if (get(r, skip, want) != want)
			return fail(r, r->off, "truncated file header");
		left -= want;
	}
	return read_compression(r, h.flags);
}

/*
 * One reader per record type: 0, a negative errno (the callback's own, or -ENOMEM), or
 * MALFORMED for a payload that is not what its type says (the caller names the record, by its
 * kind's .malformed, and its offset). A callback's error goes back as it is.
 */
#define MALFORMED 1
static int read_meta(struct reader *r, uint64_t at, const char *buf, size_t len)
{
	(void)at;
	if (r->meta) /* one is enough; a later one is ignored */
		return 0;
	r->meta = malloc(sizeof(*r->meta));
	if (!r->meta)
		return oom(r);
	if (ws_trace_meta_parse(buf, len, r->meta))
		return MALFORMED;
	return r->ops->meta ? r->ops->meta(r->ctx, r->meta) : 0;
}

static int read_devname(struct reader *r, uint64_t at, const char *buf, size_t len)
{
	struct ws_trace_devname d;

	(void)at;
	if (len < sizeof(d) + 1 || buf[len - 1])
		return MALFORMED;
	memcpy(&d, buf, sizeof(d));
	/* before names were generic, only blkio had them */
	return r->ops->name ? r->ops->name(r->ctx, "blkio", d.dev, buf + sizeof(d)) : 0;
}

static int read_name(struct reader *r, uint64_t at, const char *buf, size_t len)
{
	struct ws_trace_name n;
	const char *source = buf + sizeof(n);
	size_t slen = len > sizeof(n) ? strnlen(source, len - sizeof(n)) : 0;

	(void)at;
	/* source\0name\0: both present and NUL-terminated inside the payload */
	if (len < sizeof(n) + 2 || !slen || sizeof(n) + slen + 1 >= len || buf[len - 1])
		return MALFORMED;
	memcpy(&n, buf, sizeof(n));
	return r->ops->name ? r->ops->name(r->ctx, source, n.key, source + slen + 1) : 0;
}

static int read_thread(struct reader *r, uint64_t at, const char *buf, size_t len)
{
	struct ws_trace_thread t;

	(void)at;
	if (len < sizeof(t))
		return MALFORMED;
	memcpy(&t, buf, sizeof(t));
	t.comm[sizeof(t.comm) - 1] = 0;
	return r->ops->thread ? r->ops->thread(r->ctx, &t) : 0;
}

static int read_event(struct reader *r, uint64_t at, const char *buf, size_t len)
{
	const struct ws_rec_hdr *rec = (const void *)buf;

	/* aligned as malloc's or a buffer's (see take()); its own size must be the payload's */
	if (len < sizeof(*rec) || rec->size != len)
		return fail(r, at, "event record: inner size %u does not match its %zu bytes",
			    len >= sizeof(*rec) ? rec->size : 0, len);
	r->events++;
	return r->ops->event ? r->ops->event(r->ctx, rec) : 0;
}

static int read_summary(struct reader *r, uint64_t at, const char *buf, size_t len)
{
	struct ws_trace_summary s;

	(void)at;
	if (len < sizeof(s) + 1 || buf[len - 1])
		return MALFORMED;
	memcpy(&s, buf, sizeof(s));
	return r->ops->summary
		       ? r->ops->summary(r->ctx, &s, buf[sizeof(s)] ? buf + sizeof(s) : NULL)
		       : 0;
}

static int read_open_waits(struct reader *r, uint64_t at, const char *buf, size_t len)
{
	int rc = r->ops->open_waits ? r->ops->open_waits(r->ctx, buf, len) : 0;

	(void)at;
	/* its decoding is the callback's (ws_stuck_decode): -EBADMSG is the payload's fault */
	return rc == -EBADMSG ? MALFORMED : rc;
}

static int read_end(struct reader *r, uint64_t at, const char *buf, size_t len)
{
	struct ws_trace_end e;

	if (len < sizeof(e))
		return MALFORMED;
	memcpy(&e, buf, sizeof(e));
	r->ended = true;
	if (e.events != r->events)
		return fail(r, at,
			    "the end marker counts %" PRIu64 " events, the file holds %" PRIu64,
			    e.events, r->events);
	return 0;
}

static const struct rec_kind {
	uint16_t type;
	int (*read)(struct reader *r, uint64_t at, const char *buf, size_t len);
	const char *malformed;
} rec_kinds[] = {
	/* first: nearly every record is an event, and the search for its kind stops here */
	{ WS_TR_EVENT, read_event, NULL },
	{ WS_TR_META, read_meta, "malformed metadata record" },
	{ WS_TR_DEVNAME, read_devname, "malformed device-name record" },
	{ WS_TR_NAME, read_name, "malformed name record" },
	{ WS_TR_THREAD, read_thread, "malformed thread-name record" },
	{ WS_TR_SUMMARY, read_summary, "malformed summary record" },
	{ WS_TR_OPEN_WAITS, read_open_waits, "malformed open-waits record" },
	{ WS_TR_END, read_end, "malformed end marker" },
};

/* The recording was cut short at @at, after complete records: 1 when the caller accepts it. */
static int ended_early(struct reader *r, uint64_t at)
{
	int rc = r->ops->ended_early(r->ctx, at);

	return rc ? rc : 1;
}

/* The payload of one record (@len bytes at @at) copied into *@buf, grown as needed, with a
 * NUL after it; 1 at a clean end of the file (see read_rec()), 0, or a negative errno. */
static int copy_payload(struct reader *r, uint64_t at, const struct ws_trace_rec_hdr *h, size_t len,
			char **buf, size_t *cap)
{
	if (len + 1 > *cap) {
		/* +1: a NUL after the payload, so strings in it always end */
		char *nb = realloc(*buf, len + 1);

		if (!nb)
			return oom(r);
		*buf = nb;
		*cap = len + 1;
	}
	if (get(r, *buf, len) != len) {
		if (r->eof && r->meta && r->ops->ended_early)
			return ended_early(r, at);
		return fail(r, at, "record of %u bytes is truncated at offset %" PRIu64, h->size,
			    r->off);
	}
	(*buf)[len] = 0;
	return 0;
}

/*
 * The payload of one record into *@payload: an event where it lies in the reader's buffer,
 * anything else (or an event that does not lie whole and aligned there) in *@buf with a NUL
 * after it. 1 at a clean end of the file (killed mid-recording, with ops->ended_early), 0, or
 * a negative errno.
 */
static int read_rec(struct reader *r, struct ws_trace_rec_hdr *h, const char **payload, char **buf,
		    size_t *cap)
{
	uint64_t at = r->off;
	size_t n = get_hdr(r, h), len;
	bool first = !r->meta;
	int rc;

	/* at the end of the file, with records complete up to @at: killed mid-recording */
	if (n < sizeof(*h) && r->eof && !first && r->ops->ended_early)
		return ended_early(r, at);
	if (n == 0)
		return fail(
			r, at,
			"the file ends without an end marker (an interrupted recording, or a truncated file)");
	if (n < sizeof(*h))
		return fail(r, at, "truncated record header");
	if (h->size < sizeof(*h))
		return fail(r, at, "record size %u is smaller than a record header", h->size);
	if (h->size > WS_TRACE_MAX_REC)
		return fail(r, at, "record size %u exceeds the limit of %u bytes (corrupt file?)",
			    h->size, WS_TRACE_MAX_REC);
	len = h->size - sizeof(*h);
	*payload = h->type == WS_TR_EVENT ? take(r, len) : NULL;
	if (!*payload) {
		if ((rc = copy_payload(r, at, h, len, buf, cap)))
			return rc;
		*payload = *buf;
	}
	if (first && h->type != WS_TR_META)
		return fail(r, at, "the first record is of type %u, not metadata", h->type);
	return 0;
}

/*
 * After the end marker, a compressed recording is decoded to its end (and the bytes dropped):
 * zstd checks a frame's checksum only there. A stream cut after the end marker lost nothing.
 */
static int finish_stream(struct reader *r)
{
	do
		r->pos = r->end;
	while (refill(r));
	return r->zerr;
}

int ws_trace_read(FILE *f, const char *name, const struct ws_trace_ops *ops, void *ctx, char *err,
		  size_t errlen)
{
	struct reader r = {
		.f = f, .name = name, .err = err, .errlen = errlen, .ops = ops, .ctx = ctx
	};
	char *buf = NULL;
	const char *payload = NULL;
	size_t cap = 0;
	int rc;

	if (errlen)
		err[0] = 0;
	r.in = malloc(READ_CHUNK);
	if (!r.in)
		return oom(&r);
	rc = read_header(&r);
	while (!rc && !r.ended) {
		struct ws_trace_rec_hdr h;
		uint64_t at = r.off;

		rc = read_rec(&r, &h, &payload, &buf, &cap);
		if (rc) {
			rc = rc > 0 ? 0 : rc;
			break;
		}
		for (size_t k = 0; k < sizeof(rec_kinds) / sizeof(rec_kinds[0]); k++) {
			if (rec_kinds[k].type != h.type)
				continue;
			rc = rec_kinds[k].read(&r, at, payload, h.size - sizeof(h));
			if (rc == MALFORMED)
				rc = fail(&r, at, "%s", rec_kinds[k].malformed);
			break;
		}
		/* a type from a newer minor is skipped */
	}
	if (!rc && r.ended && r.z)
		rc = finish_stream(&r);
	free(buf);
	free(r.in);
	free(r.meta);
	ws_tz_reader_free(r.z);
	return rc;
}
