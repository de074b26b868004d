// SPDX-License-Identifier: MIT
/*
 * profile.proto written by hand (github.com/google/pprof, proto/profile.proto): the few
 * messages a profile of named frames needs, each field encoded as protobuf's wire format says
 * (a varint key of field number and wire type, then a varint or a length and the bytes). No
 * mapping and no addresses: a frame here is a link of a chain, and pprof shows functions.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "pprof.h"

/* profile.proto's field numbers */
enum {
	PROFILE_SAMPLE_TYPE = 1,
	PROFILE_SAMPLE = 2,
	PROFILE_MAPPING = 3,
	PROFILE_LOCATION = 4,
	PROFILE_FUNCTION = 5,
	PROFILE_STRING_TABLE = 6,
	PROFILE_DURATION_NANOS = 10,
	PROFILE_PERIOD_TYPE = 11,
	PROFILE_PERIOD = 12,
	PROFILE_COMMENT = 13,
	PROFILE_DEFAULT_SAMPLE_TYPE = 14,
	VALUE_TYPE_TYPE = 1,
	VALUE_TYPE_UNIT = 2,
	SAMPLE_LOCATION_ID = 1,
	SAMPLE_VALUE = 2,
	MAPPING_ID = 1,
	MAPPING_FILENAME = 5,
	MAPPING_HAS_FUNCTIONS = 7,
	LOCATION_ID = 1,
	LOCATION_MAPPING_ID = 2,
	LOCATION_LINE = 4,
	LINE_FUNCTION_ID = 1,
	FUNCTION_ID = 1,
	FUNCTION_NAME = 2,
	FUNCTION_SYSTEM_NAME = 3,
};

enum {
	WIRE_VARINT = 0,
	WIRE_LEN = 2
};

/* the strings before the frames' names: "" first, as profile.proto requires */
enum {
	STR_EMPTY,
	STR_OFF_CPU,
	STR_NANOSECONDS,
	STR_COMMENT,
	STR_MAPPING,
	STR_FIXED
};

struct pb {
	uint8_t *p;
	size_t n, cap;
	bool oom;
};

static void pb_put(struct pb *b, const void *data, size_t len)
{
	if (b->oom)
		return;
	if (b->n + len > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;
		uint8_t *p;

		while (cap < b->n + len)
			cap *= 2;
		if (!(p = realloc(b->p, cap))) {
			b->oom = true;
			return;
		}
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->n, data, len);
	b->n += len;
}

static void pb_varint(struct pb *b, uint64_t v)
{
	uint8_t out[10];
	size_t n = 0;

	do {
		out[n++] = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
		v >>= 7;
	} while (v);
	pb_put(b, out, n);
}

static void pb_uint(struct pb *b, int field, uint64_t v)
{
	pb_varint(b, (uint64_t)field << 3 | WIRE_VARINT);
	pb_varint(b, v);
}

static void pb_bytes(struct pb *b, int field, const void *data, size_t len)
{
	pb_varint(b, (uint64_t)field << 3 | WIRE_LEN);
	pb_varint(b, len);
	pb_put(b, data, len);
}

/* @sub as field @field of @b, and @sub emptied for the next message */
static void pb_msg(struct pb *b, int field, struct pb *sub)
{
	pb_bytes(b, field, sub->p, sub->n);
	b->oom |= sub->oom;
	sub->n = 0;
}

/* Distinct byte strings, each with a value: the frames' ids, the stacks' samples. */
struct key {
	const char *s;
	size_t len;
	uint64_t v;
};

struct keys {
	struct key *t;
	size_t cap, n;
};

static uint64_t hash(const char *s, size_t len)
{
	uint64_t h = 14695981039346656037ull;

	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
	return h;
}

static struct key *slot(struct key *t, size_t cap, const char *s, size_t len)
{
	for (size_t i = hash(s, len) & (cap - 1);; i = (i + 1) & (cap - 1))
		if (!t[i].s || (t[i].len == len && !memcmp(t[i].s, s, len)))
			return &t[i];
}

/* The entry of @s, which is there. */
static const struct key *keys_find(const struct keys *k, const char *s, size_t len)
{
	return slot(k->t, k->cap, s, len);
}

/* The entry of @s, made (value 0, *@made set) if new; NULL without memory. */
static struct key *keys_get(struct keys *k, const char *s, size_t len, bool *made)
{
	struct key *e;

	if ((k->n + 1) * 2 > k->cap) {
		size_t cap = k->cap ? k->cap * 2 : 256;
		struct key *t = calloc(cap, sizeof(*t));

		if (!t)
			return NULL;
		for (size_t i = 0; i < k->cap; i++)
			if (k->t[i].s)
				*slot(t, cap, k->t[i].s, k->t[i].len) = k->t[i];
		free(k->t);
		k->t = t;
		k->cap = cap;
	}
	e = slot(k->t, k->cap, s, len);
	*made = !e->s;
	if (*made) {
		e->s = s;
		e->len = len;
		e->v = 0;
		k->n++;
	}
	return e;
}

struct folded_line {
	const char *stack;
	size_t len;
	uint64_t ns;
};

/* The line at @p (up to @end): its stack and weight; false if it has no weight. */
static bool parse_line(const char *p, const char *end, struct folded_line *l)
{
	const char *sp = NULL;
	uint64_t v = 0;

	for (const char *q = p; q < end; q++)
		if (*q == ' ')
			sp = q;
	if (!sp || sp == p || sp + 1 == end)
		return false;
	for (const char *q = sp + 1; q < end; q++) {
		if (*q < '0' || *q > '9' || v > (UINT64_MAX - 9) / 10)
			return false;
		v = v * 10 + (uint64_t)(*q - '0');
	}
	l->stack = p;
	l->len = (size_t)(sp - p);
	l->ns = v;
	return true;
}

struct profile {
	struct keys frames; /* name -> id (1-based, in order of first use) */
	struct keys stacks; /* stack -> index in lines */
	struct folded_line *lines;
	size_t nlines;
	const struct key **by_id; /* frames by id - 1 */
};

/* A stack seen for the first time: its line kept, its frames given ids. 0 or -ENOMEM. */
static int new_stack(struct profile *pr, const struct folded_line *l, size_t *cap)
{
	struct key *e;
	bool made;

	if (pr->nlines == *cap) {
		size_t n = *cap ? *cap * 2 : 256;
		struct folded_line *p = realloc(pr->lines, n * sizeof(*p));

		if (!p)
			return -ENOMEM;
		pr->lines = p;
		*cap = n;
	}
	pr->lines[pr->nlines++] = *l;
	for (const char *f = l->stack, *fe; f <= l->stack + l->len; f = fe + 1) {
		fe = memchr(f, ';', (size_t)(l->stack + l->len - f));
		fe = fe ? fe : l->stack + l->len;
		if (!(e = keys_get(&pr->frames, f, (size_t)(fe - f), &made)))
			return -ENOMEM;
		if (made)
			e->v = pr->frames.n;
	}
	return 0;
}

static int collect(struct profile *pr, const char *folded, size_t len)
{
	const char *p = folded, *end = folded + len;
	size_t cap = 0;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		struct folded_line l;
		struct key *e;
		bool made;

		if (!nl)
			nl = end;
		if (parse_line(p, nl, &l) && l.ns) {
			/* the same stack again (a request's part, a chain's piece): its weight
			 * added */
			if (!(e = keys_get(&pr->stacks, l.stack, l.len, &made)))
				return -ENOMEM;
			if (made) {
				e->v = pr->nlines;
				if (new_stack(pr, &l, &cap))
					return -ENOMEM;
			} else {
				pr->lines[e->v].ns += l.ns;
			}
		}
		p = nl + 1;
	}
	pr->by_id = calloc(pr->frames.n + 1, sizeof(*pr->by_id));
	if (!pr->by_id)
		return -ENOMEM;
	for (size_t i = 0; i < pr->frames.cap; i++)
		if (pr->frames.t[i].s)
			pr->by_id[pr->frames.t[i].v - 1] = &pr->frames.t[i];
	return 0;
}

/* A sample: its frames' ids leaf first (pprof's order; folded lines are root first). */
static void put_sample(const struct profile *pr, const struct folded_line *l, struct pb *b,
		       struct pb *sub, struct pb *ids)
{
	size_t end = l->len;

	for (;;) {
		size_t f = end;

		while (f > 0 && l->stack[f - 1] != ';')
			f--;
		pb_varint(ids, keys_find(&pr->frames, l->stack + f, end - f)->v);
		if (!f)
			break;
		end = f - 1;
	}
	pb_msg(sub, SAMPLE_LOCATION_ID, ids);
	pb_varint(ids, l->ns);
	pb_msg(sub, SAMPLE_VALUE, ids);
	pb_msg(b, PROFILE_SAMPLE, sub);
}

static void put_value_type(struct pb *b, int field, struct pb *sub)
{
	pb_uint(sub, VALUE_TYPE_TYPE, STR_OFF_CPU);
	pb_uint(sub, VALUE_TYPE_UNIT, STR_NANOSECONDS);
	pb_msg(b, field, sub);
}

static void encode(struct profile *pr, const struct ws_pprof_info *info, struct pb *b)
{
	struct pb sub = { 0 }, line = { 0 }, ids = { 0 };
	const char *fixed[STR_FIXED] = { "", "off_cpu", "nanoseconds",
					 info && info->comment ? info->comment : "", "[whyslow]" };

	put_value_type(b, PROFILE_SAMPLE_TYPE, &sub);
	for (size_t i = 0; i < pr->nlines; i++)
		put_sample(pr, &pr->lines[i], b, &sub, &ids);
	/*
	 * One mapping that says its functions are named already: pprof then neither looks for a
	 * binary to symbolise them with nor shortens a name at its first '(' as a C++ signature
	 * ("[waiting for a CPU (short waits)]")
	 */
	pb_uint(&sub, MAPPING_ID, 1);
	pb_uint(&sub, MAPPING_FILENAME, STR_MAPPING);
	pb_uint(&sub, MAPPING_HAS_FUNCTIONS, 1);
	pb_msg(b, PROFILE_MAPPING, &sub);
	for (uint64_t id = 1; id <= pr->frames.n; id++) {
		pb_uint(&sub, LOCATION_ID, id);
		pb_uint(&sub, LOCATION_MAPPING_ID, 1);
		pb_uint(&line, LINE_FUNCTION_ID, id);
		pb_msg(&sub, LOCATION_LINE, &line);
		pb_msg(b, PROFILE_LOCATION, &sub);
		pb_uint(&sub, FUNCTION_ID, id);
		pb_uint(&sub, FUNCTION_NAME, STR_FIXED + id - 1);
		pb_uint(&sub, FUNCTION_SYSTEM_NAME, STR_FIXED + id - 1);
		pb_msg(b, PROFILE_FUNCTION, &sub);
	}
	for (int i = 0; i < STR_FIXED; i++)
		pb_bytes(b, PROFILE_STRING_TABLE, fixed[i], strlen(fixed[i]));
	for (size_t i = 0; i < pr->frames.n; i++)
		pb_bytes(b, PROFILE_STRING_TABLE, pr->by_id[i]->s, pr->by_id[i]->len);
	if (info && info->duration_ns)
		pb_uint(b, PROFILE_DURATION_NANOS, info->duration_ns);
	put_value_type(b, PROFILE_PERIOD_TYPE, &sub);
	pb_uint(b, PROFILE_PERIOD, 1);
	if (info && info->comment)
		pb_uint(b, PROFILE_COMMENT, STR_COMMENT);
	pb_uint(b, PROFILE_DEFAULT_SAMPLE_TYPE, STR_OFF_CPU);
	b->oom |= sub.oom || line.oom || ids.oom;
	free(sub.p);
	free(line.p);
	free(ids.p);
}

/* @len bytes of @data gzipped to @out (gzip, not zlib's own wrapper: pprof reads gzip). */
static int gzip_to(FILE *out, const uint8_t *data, size_t len)
{
	z_stream z = { 0 };
	uint8_t chunk[65536];
	int zr;

	if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) !=
	    Z_OK)
		return -ENOMEM;
	z.next_in = (Bytef *)data;
	z.avail_in = (uInt)len; /* a profile over 4 GiB is refused below */
	do {
		z.next_out = chunk;
		z.avail_out = sizeof(chunk);
		zr = deflate(&z, Z_FINISH);
		if (zr == Z_STREAM_ERROR || fwrite(chunk, 1, sizeof(chunk) - z.avail_out, out) !=
						    sizeof(chunk) - z.avail_out)
			break;
	} while (zr != Z_STREAM_END);
	deflateEnd(&z);
	return zr == Z_STREAM_END ? 0 : -EIO;
}

int ws_pprof_write(FILE *out, const char *folded, size_t len, const struct ws_pprof_info *info)
{
	struct profile pr = { 0 };
	struct pb b = { 0 };
	int err = collect(&pr, folded ? folded : "", folded ? len : 0);

	if (!err) {
		encode(&pr, info, &b);
		err = b.oom ? -ENOMEM : b.n > UINT32_MAX ? -EFBIG : gzip_to(out, b.p, b.n);
	}
	free(b.p);
	free(pr.lines);
	free(pr.by_id);
	free(pr.frames.t);
	free(pr.stacks.t);
	return err;
}
