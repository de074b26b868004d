/* SPDX-License-Identifier: MIT */
/* Small helpers shared by the core: durations, hashing, growable arrays. */
#ifndef WS_UTIL_H
#define WS_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <whyslow/plugin.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
/*
 * The most CPUs whyslow keeps state for: the largest NR_CPUS a kernel is built with (x86's
 * MAXSMP, powerpc). A recording declaring more is refused; one declaring none (before format
 * 1.4) is read as if it declared this many.
 */
#define WS_MAX_CPUS 8192

/*
 * Parse "10ms", "2s", "500us", "100ns", "1.5s" or "0". 0 or -EINVAL; a number without its unit
 * is refused (10ms or 10s?): ws_duration_lacks_unit() tells that case apart for messages.
 */
int ws_parse_duration(const char *s, uint64_t *ns);
/* "10", "1.5": a number that ws_parse_duration refuses for want of a unit. */
bool ws_duration_lacks_unit(const char *s);
/* Parse a decimal unsigned integer with an optional K/M/G suffix. 0 or -EINVAL. */
int ws_parse_u64(const char *s, uint64_t *out);
/* Parse yes/no/true/false/on/off/1/0. 0 or -EINVAL. */
int ws_parse_bool(const char *s, int *out);
/* "412ms", "1.25s", "87us": three significant digits at most. */
void ws_format_duration(uint64_t ns, char *buf, size_t len);

/*
 * @one when @n is 1, else @many: "1 wait", "2 waits" (and "1 process", "was"/"were"). Both
 * words stay whole in the caller's source, so a grep for either finds the line printing it.
 */
const char *ws_plural(uint64_t n, const char *one, const char *many);

/* "←" in a UTF-8 locale, "<-" otherwise (LC_ALL=C): text output only shows what it can. */
const char *ws_arrow(void);
/* "→" in a UTF-8 locale, "->" otherwise: "fd 7 → /path". */
const char *ws_arrow_to(void);
/* "—" in a UTF-8 locale, "-" otherwise. */
const char *ws_dash(void);

/* Write @s as a JSON string literal, quotes included, to @f. */
void ws_json_str(FILE *f, const char *s);
/*
 * @a, @b and @c one after the other into @buf (@len bytes), cut to fit and NUL-terminated
 * (when @len): what snprintf(buf, len, "%s%s%s", a, b, c) writes, without parsing a format
 * (labels and claim fields are made per event). Returns the length of the whole, as
 * snprintf does. ws_str_copy(): @a alone.
 */
size_t ws_str_cat3(char *buf, size_t len, const char *a, const char *b, const char *c);
static inline size_t ws_str_copy(char *buf, size_t len, const char *a)
{
	return ws_str_cat3(buf, len, a, "", "");
}
/* @v in decimal at @buf (room for 20 bytes), no NUL; returns its length. */
size_t ws_u64_dec(char *buf, uint64_t v);
/* A claim's extra keys as JSON members, each after a comma (",\"addr\":\"0x7f..\""). */
void ws_json_claim_fields(FILE *f, const struct ws_claim *c);

/*
 * @s for a terminal: control characters (C0, DEL, C1 as UTF-8)
 * become \xNN and a backslash \\, so a thread name or path cannot forge
 * lines or send escape sequences. Returns @buf (truncated to @len).
 */
const char *ws_text_esc(const char *s, char *buf, size_t len);
/* A buffer that holds any escaped name of up to 63 bytes. */
#define WS_ESC_LEN 256

uint64_t ws_hash64(uint64_t x);
uint64_t ws_hash_bytes(const void *p, size_t n);

/*
 * memset(@p, 0, @n) done by the C library's memset. For a struct of constant size GCC (-O2,
 * generic tuning) inlines `rep stosq` instead, which on the AMD EPYC this was measured on
 * takes 17.7 ns for a 1160-byte struct ws_claim against 6.3 ns for glibc's: a wakeup clears
 * one for each source and one more, and that was 6% of `report`.
 */
void ws_zero(void *p, size_t n);

/* ws_grow() when *@cap is short of @need: reallocate. 0 or -ENOMEM. */
int ws_grow_to(void **arr, size_t *cap, size_t need, size_t elem);

/*
 * Grow *@arr (element size @elem) to hold at least @need elements. 0 or -ENOMEM. Inline: it is
 * asked on every append to a timeline or a CPU's runs (twice per record), and nearly always
 * there is room already: the calls were 4% of `report`'s instructions.
 */
static inline int ws_grow(void **arr, size_t *cap, size_t need, size_t elem)
{
	return need <= *cap ? 0 : ws_grow_to(arr, cap, need, elem);
}

/*
 * Give back the memory of *@arr (capacity *@cap, @n in use) when it was sized for a burst and
 * is now mostly empty, so RSS follows what is kept, not its high-water mark. Returns the bytes
 * given back to malloc (0 when nothing was, or when a big array, which keeps its address space
 * to grow into, gave its pages straight back to the kernel).
 */
size_t ws_shrink(void **arr, size_t *cap, size_t n, size_t elem);

/*
 * The whole of @path into *@text (malloc'ed, NUL-terminated, *@len bytes when @len is not
 * NULL), for files whose size stat cannot tell (/proc's). @initial: the buffer to start with.
 * 0 or a negative errno.
 */
int ws_read_file(const char *path, size_t initial, char **text, size_t *len);

/* An anonymous read-write temporary file, closed on exec. NULL with errno set. */
FILE *ws_tmpfile(void);

#endif
