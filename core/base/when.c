// SPDX-License-Identifier: MIT
#include <ctype.h>
#include <errno.h>
#include <string.h>
#include <time.h>

#include "when.h"
#include "util.h"

#define NS 1000000000ULL
#define HALF_DAY_NS (12ULL * 3600 * NS)
#define DAY_NS (24ULL * 3600 * NS)

/* @n digits (1 or 2) of a clock field no larger than @max, into *v; the characters read. */
static int field(const char *s, unsigned int max, unsigned int *v)
{
	int n = 0;

	*v = 0;
	while (n < 2 && isdigit((unsigned char)s[n]))
		*v = *v * 10 + (unsigned int)(s[n++] - '0');
	return n && *v <= max ? n : -1;
}

/* "H:MM", "HH:MM:SS" or "HH:MM:SS.fffffffff" */
static int parse_tod(const char *s, uint64_t *ns)
{
	unsigned int h, m, sec = 0;
	uint64_t frac = 0, scale = NS;
	int n;

	if ((n = field(s, 23, &h)) < 0 || s[n] != ':')
		return -EINVAL;
	s += n + 1;
	if ((n = field(s, 59, &m)) != 2)
		return -EINVAL;
	s += n;
	if (*s == ':') {
		if ((n = field(++s, 59, &sec)) != 2)
			return -EINVAL;
		s += n;
		if (*s == '.') {
			if (!isdigit((unsigned char)*++s))
				return -EINVAL;
			for (; isdigit((unsigned char)*s) && scale > 1; s++) {
				scale /= 10;
				frac += (uint64_t)(*s - '0') * scale;
			}
		}
	}
	if (*s)
		return -EINVAL;
	*ns = ((uint64_t)h * 3600 + m * 60 + sec) * NS + frac;
	return 0;
}

int ws_when_parse(const char *s, struct ws_when *w)
{
	size_t n = s ? strlen(s) : 0;

	memset(w, 0, sizeof(*w));
	if (!n)
		return -EINVAL;
	if (strchr(s, ':')) {
		w->time_of_day = true;
		return parse_tod(s, &w->ns);
	}
	/* a bare number is ambiguous (seconds? ms?): the unit is required, as for --min-block */
	if (!(s[n - 1] >= 'a' && s[n - 1] <= 'z') && strcmp(s, "0"))
		return -EINVAL;
	return ws_parse_duration(s, &w->ns) ? -EINVAL : 0;
}

uint64_t ws_when_resolve(const struct ws_when *w, const struct ws_clock *clk)
{
	time_t start_s = clk->wall_ns / NS;
	uint64_t wall, midnight;
	struct tm tm;

	if (!w->time_of_day)
		return clk->mono_ns + w->ns;
	localtime_r(&start_s, &tm);
	tm.tm_hour = tm.tm_min = tm.tm_sec = 0;
	tm.tm_isdst = -1;
	midnight = (uint64_t)mktime(&tm) * NS;
	wall = midnight + w->ns;
	if (wall + HALF_DAY_NS < clk->wall_ns)
		wall += DAY_NS;
	if (wall <= clk->wall_ns)
		return clk->mono_ns > clk->wall_ns - wall ? clk->mono_ns - (clk->wall_ns - wall)
							  : 0;
	return clk->mono_ns + (wall - clk->wall_ns);
}
