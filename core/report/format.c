// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "format.h"

static const char *const names[] = {
	[WS_FORMAT_TEXT] = "text",     [WS_FORMAT_JSON] = "json",
	[WS_FORMAT_FOLDED] = "folded", [WS_FORMAT_PERFETTO] = "perfetto",
	[WS_FORMAT_PPROF] = "pprof",
};

#define NFORMATS (sizeof(names) / sizeof(names[0]))

int ws_format_parse(const char *s, unsigned int allowed, enum ws_format *out)
{
	for (unsigned int f = 0; s && f < NFORMATS; f++) {
		if ((allowed & WS_FORMAT_BIT(f)) && !strcmp(s, names[f])) {
			*out = (enum ws_format)f;
			return 0;
		}
	}
	return -EINVAL;
}

const char *ws_format_name(enum ws_format f)
{
	return (unsigned int)f < NFORMATS ? names[f] : "?";
}

void ws_format_list(unsigned int allowed, const char *sep, char *buf, size_t len)
{
	unsigned int n = 0, left = 0;
	size_t at = 0;

	for (unsigned int f = 0; f < NFORMATS; f++)
		left += !!(allowed & WS_FORMAT_BIT(f));
	buf[0] = 0;
	for (unsigned int f = 0; f < NFORMATS && at < len; f++) {
		if (!(allowed & WS_FORMAT_BIT(f)))
			continue;
		/* the last of several is joined by " or " when the list is for people */
		at += snprintf(buf + at, len - at, "%s%s",
			       !n				   ? ""
			       : n + 1 == left && strcmp(sep, " ") ? " or "
								   : sep,
			       names[f]);
		n++;
	}
}
