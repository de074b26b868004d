// SPDX-License-Identifier: MIT
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* O_TMPFILE, mkostemp */
#endif
#include <ctype.h>
#include <stdbool.h>
#include <fcntl.h>
#include <math.h>
#include <unistd.h>
#include <errno.h>
#include <inttypes.h>
#include <langinfo.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>

#include "util.h"

int ws_parse_duration(const char *s, uint64_t *ns)
{
	static const struct {
		const char *suffix;
		double mult;
	} units[] = { { "ns", 1 }, { "us", 1e3 }, { "ms", 1e6 }, { "s", 1e9 }, { "m", 60e9 } };
	char *end;
	double v;

	/* a decimal number: not "nan", "inf", hex, or a sign */
	if (!s || !(isdigit((unsigned char)*s) || (*s == '.' && isdigit((unsigned char)s[1]))) ||
	    strpbrk(s, "xX"))
		return -EINVAL;
	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || v < 0 || !isfinite(v))
		return -EINVAL;
	/* "10" could be 10ms or 10s: a duration names its unit; 0 alone is unambiguous */
	if (!*end && v == 0) {
		*ns = 0;
		return 0;
	}
	for (size_t i = 0; i < ARRAY_SIZE(units); i++) {
		if (strcmp(end, units[i].suffix) == 0) {
			double r = v * units[i].mult;

			/* under 1ns would round to 0, which means "no limit" to some keys */
			if (r > 1.8e19 || (v > 0 && r < 0.5))
				return -ERANGE;
			*ns = (uint64_t)(r + 0.5);
			return 0;
		}
	}
	return -EINVAL;
}

bool ws_duration_lacks_unit(const char *s)
{
	uint64_t ns;
	size_t n = s ? strspn(s, "0123456789.") : 0;

	return n && !s[n] && ws_parse_duration(s, &ns) == -EINVAL;
}

int ws_parse_u64(const char *s, uint64_t *out)
{
	unsigned long long v;
	unsigned int shift = 0;
	char *end;

	if (!s || !isdigit((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
		return -EINVAL;
	switch (*end) {
	case 'K':
	case 'k':
		shift = 10;
		end++;
		break;
	case 'M':
	case 'm':
		shift = 20;
		end++;
		break;
	case 'G':
	case 'g':
		shift = 30;
		end++;
		break;
	default:
		break;
	}
	if (*end)
		return -EINVAL;
	/* 17179869185G must not wrap around to 1G */
	if (shift && v > (~0ULL >> shift))
		return -ERANGE;
	v <<= shift;
	*out = v;
	return 0;
}

int ws_parse_bool(const char *s, int *out)
{
	static const char *yes[] = { "yes", "true", "on", "1" },
			  *no[] = { "no", "false", "off", "0" };

	for (size_t i = 0; s && i < ARRAY_SIZE(yes); i++) {
		if (strcasecmp(s, yes[i]) == 0) {
			*out = 1;
			return 0;
		}
		if (strcasecmp(s, no[i]) == 0) {
			*out = 0;
			return 0;
		}
	}
	return -EINVAL;
}

void ws_format_duration(uint64_t ns, char *buf, size_t len)
{
	static const struct {
		const char *unit;
		double div;
	} units[] = { { "s", 1e9 }, { "ms", 1e6 }, { "us", 1e3 } };

	for (size_t i = 0; i < ARRAY_SIZE(units); i++) {
		if (ns >= units[i].div) {
			double v = ns / units[i].div;

			snprintf(buf, len,
				 v >= 100  ? "%.0f%s"
				 : v >= 10 ? "%.1f%s"
					   : "%.2f%s",
				 v, units[i].unit);
			/* "412.0ms" reads worse than "412ms" */
			char *dot = strchr(buf, '.');

			if (dot) {
				char *p = dot + strlen(dot);

				while (p > dot && !isdigit((unsigned char)p[-1]))
					p--;
				char *unit = p;
				char *q = p;

				while (q > dot + 1 && q[-1] == '0')
					q--;
				if (q == dot + 1)
					q = dot;
				memmove(q, unit, strlen(unit) + 1);
			}
			return;
		}
	}
	snprintf(buf, len, "%lluns", (unsigned long long)ns);
}

/*
 * Length of the well-formed UTF-8 sequence at @p (1..4), or, when it is
 * ill-formed, minus the length of its maximal ill-formed prefix (at least 1):
 * the bytes one U+FFFD stands for, as WHATWG's decoder counts them. Leads
 * C0, C1 and F5..FF and the second byte's range (Unicode's table 3-7) refuse
 * overlongs, surrogates and code points above U+10FFFF at their first or
 * second byte, so each of their bytes becomes a U+FFFD of its own.
 */
static int utf8_seq(const unsigned char *p)
{
	unsigned char lo = 0x80, hi = 0xbf;
	int need;

	if (*p < 0x80)
		return 1;
	if (*p >= 0xc2 && *p <= 0xdf)
		need = 1;
	else if (*p >= 0xe0 && *p <= 0xef)
		need = 2;
	else if (*p >= 0xf0 && *p <= 0xf4)
		need = 3;
	else
		return -1;
	if (*p == 0xe0)
		lo = 0xa0;
	else if (*p == 0xed)
		hi = 0x9f;
	else if (*p == 0xf0)
		lo = 0x90;
	else if (*p == 0xf4)
		hi = 0x8f;
	for (int i = 1; i <= need; i++) {
		/* a NUL ends the string here, and is out of range */
		if (p[i] < lo || p[i] > hi)
			return -i;
		lo = 0x80;
		hi = 0xbf;
	}
	return need + 1;
}

/* Is @p's sequence (@n bytes, well-formed) written as is inside a JSON string? */
static bool json_plain(const unsigned char *p, int n)
{
	if (n == 1)
		return *p >= 0x20 && *p != 0x7f && *p != '"' && *p != '\\';
	/* U+0080..U+009F (C1) are control codes to a terminal, like C0 and DEL */
	return !(n == 2 && *p == 0xc2 && p[1] <= 0x9f);
}

void ws_json_str(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");

	/* one lock for the string, not one per call (a report writes a string per request) */
	flockfile(f);
	putc_unlocked('"', f);
	while (*p) {
		const unsigned char *run = p;
		int n;

		/* a run of bytes written as they are goes out in one call: a report of many
		 * requests spent a sixth of its time locking the stream once per byte */
		while (*p && (n = utf8_seq(p)) > 0 && json_plain(p, n))
			p += n;
		if (p > run)
			fwrite_unlocked(run, 1, (size_t)(p - run), f);
		if (!*p)
			break;
		n = utf8_seq(p);
		if (n < 0) {
			/* an escape, not the raw U+FFFD: says the input was not UTF-8 */
			fputs_unlocked("\\ufffd", f);
			p += -n;
		} else if (n == 2) {
			fprintf(f, "\\u%04x", p[1]); /* C1 */
			p += 2;
		} else if (*p == '"' || *p == '\\') {
			putc_unlocked('\\', f);
			putc_unlocked(*p++, f);
		} else {
			/* \b \t \n \f \r have short forms; \v (the NUL here) has not */
			static const char shortform[] = "btn\0fr";

			if (*p >= '\b' && *p <= '\r' && shortform[*p - '\b'])
				fprintf(f, "\\%c", shortform[*p - '\b']);
			else
				fprintf(f, "\\u%04x", *p);
			p++;
		}
	}
	putc_unlocked('"', f);
	funlockfile(f);
}

size_t ws_str_cat3(char *buf, size_t len, const char *a, const char *b, const char *c)
{
	const char *part[3] = { a, b, c };
	size_t at = 0, total = 0;

	for (int i = 0; i < 3; i++) {
		size_t n = strlen(part[i]);

		if (len && at < len - 1) {
			size_t k = n < len - 1 - at ? n : len - 1 - at;

			memcpy(buf + at, part[i], k);
			at += k;
		}
		total += n;
	}
	if (len)
		buf[at] = 0;
	return total;
}

size_t ws_u64_dec(char *buf, uint64_t v)
{
	char tmp[20];
	size_t n = 0;

	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	for (size_t i = 0; i < n; i++)
		buf[i] = tmp[n - 1 - i];
	return n;
}

const char *ws_text_esc(const char *s, char *buf, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	size_t n = 0;

	if (!len)
		return "";
	for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
		/*
		 * C0, DEL, and C1 as UTF-8 (0xc2 0x80..0x9f): what a UTF-8 terminal
		 * acts on. Other bytes pass, so names in any script stay readable.
		 */
		bool c1 = *p == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f;
		int k = c1 && *p == 0xc2 ? 2 : 1;
		bool esc = *p < 0x20 || *p == 0x7f || *p == '\\' || c1;

		if (!esc) {
			if (n + 1 >= len)
				break;
			buf[n++] = *p;
			continue;
		}
		if (*p == '\\') {
			if (n + 2 >= len)
				break;
			buf[n++] = '\\';
			buf[n++] = '\\';
			continue;
		}
		if (n + 4 * k >= len)
			break;
		for (int i = 0; i < k; i++) {
			buf[n++] = '\\';
			buf[n++] = 'x';
			buf[n++] = hex[p[i] >> 4];
			buf[n++] = hex[p[i] & 15];
		}
		p += k - 1;
	}
	buf[n] = 0;
	return buf;
}

uint64_t ws_hash64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

uint64_t ws_hash_bytes(const void *p, size_t n)
{
	const unsigned char *b = p;
	uint64_t h = 0xcbf29ce484222325ULL ^ n, w;
	size_t i = 0;

	/*
	 * A word at a time, one multiply and a rotation each (the rotation brings the high bits
	 * the multiply made down to where the next one spreads them), the full mix once at the
	 * end: claims are a few hundred bytes and hashed on every wakeup, and a full mix per word
	 * was a twentieth of `report`.
	 */
	for (; i + 8 <= n; i += 8) {
		memcpy(&w, b + i, 8);
		h = (h ^ w) * 0x9e3779b97f4a7c15ULL;
		h = h << 31 | h >> 33;
	}
	for (; i < n; i++)
		h = (h ^ b[i]) * 0x100000001b3ULL;
	return ws_hash64(h);
}

void ws_zero(void *p, size_t n)
{
	memset(p, 0, n);
}

/* Arrays at least this big are asked for huge pages. */
#define HUGE_ARRAY (8u << 20)

/*
 * A big array that grows (a busy thread's timeline, a CPU's runs) is mostly memory touched
 * for the first time, one page fault per 4 KiB: a tenth of `report`'s time on a long
 * recording, and most of the time of the store that made the fault. Where the kernel gives
 * huge pages on request (transparent_hugepage "madvise", Debian's default) its 2 MiB pages
 * take one fault each. The advice covers every page the block touches: malloc gives a block
 * this big a mapping of its own, which must stay one mapping (whose flags are all alike) for
 * realloc to move it with mremap instead of copying. Advice only: a failure changes nothing.
 */
static void want_huge_pages(void *p, size_t len)
{
	uintptr_t page = sysconf(_SC_PAGESIZE);
	uintptr_t from = (uintptr_t)p & ~(page - 1);
	uintptr_t to = ((uintptr_t)p + len + page - 1) & ~(page - 1);

	madvise((void *)from, to - from, MADV_HUGEPAGE);
}

/*
 * An array past ROOMY_FROM bytes is given room for ROOMY_ROOM at once: address space only,
 * its pages are touched (and counted in RSS) as they are used. Growing by doubling moved it
 * (realloc's mremap) every time: each move split its huge pages and left the block it grew
 * into to be faulted in 4 KiB pages; in a VM a 4 KiB fault took 16 us, a seventh of a 2 MiB
 * one. On a 3M-record recording those faults were over a quarter of `report`'s CPU time.
 */
#define ROOMY_FROM (1u << 20)
#define ROOMY_ROOM (128u << 20)

/* Is an array of @cap elements of @elem bytes one given room ahead (ROOMY_FROM)? */
static bool roomy(size_t cap, size_t elem)
{
	return cap * elem > ROOMY_FROM;
}

int ws_grow_to(void **arr, size_t *cap, size_t need, size_t elem)
{
	size_t ncap = *cap ? *cap : 16;
	void *p = NULL;

	if (need <= *cap)
		return 0;
	while (ncap < need)
		ncap *= 2;
	/* the room is address space that may be refused (overcommit): then grow as before */
	if (roomy(ncap, elem) && ncap * elem < ROOMY_ROOM &&
	    (p = realloc(*arr, ROOMY_ROOM)) != NULL)
		ncap = ROOMY_ROOM / elem;
	if (!p)
		p = realloc(*arr, ncap * elem);
	if (!p)
		return -ENOMEM;
	if (ncap * elem >= HUGE_ARRAY)
		want_huge_pages(p, ncap * elem);
	*arr = p;
	*cap = ncap;
	return 0;
}

/*
 * Give the pages of [@p + @from, @p + @to) back to the kernel, keeping the address space: the
 * whole pages inside it only (another block may share a page at either end). They read as
 * zeroes if touched again.
 */
static void release_pages(char *p, size_t from, size_t to)
{
	uintptr_t page = sysconf(_SC_PAGESIZE);
	uintptr_t a = ((uintptr_t)p + from + page - 1) & ~(page - 1);
	uintptr_t b = ((uintptr_t)p + to) & ~(page - 1);

	if (a < b)
		madvise((void *)a, b - a, MADV_DONTNEED);
}

size_t ws_shrink(void **arr, size_t *cap, size_t n, size_t elem)
{
	size_t ncap = n * 2 < 256 ? 256 : n * 2;
	void *p;

	if (*cap <= 256 || *cap < 4 * n)
		return 0;
	/*
	 * A roomy array keeps its room (moving it again is what the room avoids) and gives back
	 * the pages past what it keeps instead: RSS follows what is kept all the same. Nothing
	 * went back to malloc, so nothing is counted for malloc_trim.
	 */
	if (roomy(*cap, elem)) {
		release_pages(*arr, ncap * elem, *cap * elem);
		return 0;
	}
	p = realloc(*arr, ncap * elem);
	if (!p)
		return 0;
	*arr = p;
	ncap = *cap - ncap;
	*cap -= ncap;
	return ncap * elem;
}

int ws_read_file(const char *path, size_t initial, char **text, size_t *len)
{
	size_t cap = initial > 16 ? initial : 16, n = 0;
	char *buf, *bigger;
	ssize_t r;
	int fd, err = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	buf = malloc(cap);
	while (buf) {
		r = read(fd, buf + n, cap - n - 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			err = r < 0 ? -errno : 0;
			break;
		}
		n += (size_t)r;
		if (n + 1 < cap)
			continue;
		bigger = realloc(buf, cap * 2);
		if (!bigger)
			free(buf);
		buf = bigger;
		cap *= 2;
	}
	close(fd);
	if (!buf)
		return -ENOMEM;
	if (err) {
		free(buf);
		return err;
	}
	buf[n] = 0;
	/* give back what the file did not fill */
	bigger = realloc(buf, n + 1);
	*text = bigger ? bigger : buf;
	if (len)
		*len = n;
	return 0;
}

FILE *ws_tmpfile(void)
{
	/* tmpfile() leaves the descriptor open across exec: the traced command would inherit it */
	char name[] = "/tmp/whyslow-spool.XXXXXX";
	int fd = open("/tmp", O_TMPFILE | O_RDWR | O_EXCL | O_CLOEXEC, 0600);
	FILE *f;

	if (fd < 0) {
		fd = mkostemp(name, O_CLOEXEC);
		if (fd >= 0)
			unlink(name);
	}
	if (fd < 0)
		return NULL;
	f = fdopen(fd, "w+e");
	if (!f)
		close(fd);
	return f;
}

/* the locale's character set, as main() selected it with setlocale(LC_CTYPE, "") */
static bool utf8_locale(void)
{
	const char *cs = nl_langinfo(CODESET);

	return cs && !strcmp(cs, "UTF-8");
}

const char *ws_plural(uint64_t n, const char *one, const char *many)
{
	return n == 1 ? one : many;
}

const char *ws_arrow(void)
{
	return utf8_locale() ? "←" : "<-";
}

const char *ws_arrow_to(void)
{
	return utf8_locale() ? "→" : "->";
}

const char *ws_dash(void)
{
	return utf8_locale() ? "—" : "-";
}

void ws_json_claim_fields(FILE *b, const struct ws_claim *c)
{
	for (unsigned int i = 0; c && i < c->nfields && i < WS_CLAIM_FIELDS; i++) {
		const struct ws_field *f = &c->fields[i];

		fprintf(b, ",");
		ws_json_str(b, f->key);
		switch (f->type) {
		case WS_FIELD_U64:
			fprintf(b, ":%" PRIu64, f->u);
			break;
		case WS_FIELD_HEX:
			fprintf(b, ":\"0x%" PRIx64 "\"", f->u);
			break;
		default:
			fprintf(b, ":");
			ws_json_str(b, f->s);
			break;
		}
	}
}
