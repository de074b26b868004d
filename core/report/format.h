/* SPDX-License-Identifier: MIT */
/*
 * The output formats, one enum for every command and the ini's [core] format: each reader
 * parses the name here, with the set of formats it can write, so "xml" is refused the same
 * way everywhere.
 */
#ifndef WS_FORMAT_H
#define WS_FORMAT_H

#include <stddef.h>

enum ws_format {
	WS_FORMAT_TEXT,
	WS_FORMAT_JSON,
	WS_FORMAT_FOLDED,   /* folded stacks for flame graphs; no summary */
	WS_FORMAT_PERFETTO, /* trace-event JSON: report only (live: --perfetto FILE) */
	WS_FORMAT_PPROF,    /* the folded stacks as a gzipped profile.proto (pprof.h) */
};

#define WS_FORMAT_BIT(f) (1u << (f))
/* What a live report (run, attach, record --live, [core] format) can write. */
#define WS_FORMATS_LIVE                                                  \
	(WS_FORMAT_BIT(WS_FORMAT_TEXT) | WS_FORMAT_BIT(WS_FORMAT_JSON) | \
	 WS_FORMAT_BIT(WS_FORMAT_FOLDED) | WS_FORMAT_BIT(WS_FORMAT_PPROF))
#define WS_FORMATS_REPORT (WS_FORMATS_LIVE | WS_FORMAT_BIT(WS_FORMAT_PERFETTO))
#define WS_FORMATS_STUCK (WS_FORMAT_BIT(WS_FORMAT_TEXT) | WS_FORMAT_BIT(WS_FORMAT_JSON))

/* @s among the formats in @allowed (WS_FORMAT_BIT mask). 0, or -EINVAL. */
int ws_format_parse(const char *s, unsigned int allowed, enum ws_format *out);
const char *ws_format_name(enum ws_format f);
/* Is @f binary (not for a terminal)? */
static inline int ws_format_binary(enum ws_format f)
{
	return f == WS_FORMAT_PPROF;
}
/* "text, json or folded" (@sep ", " and " or "), or "text json folded" (@sep " "). */
void ws_format_list(unsigned int allowed, const char *sep, char *buf, size_t len);

#endif
