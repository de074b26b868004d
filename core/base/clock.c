// SPDX-License-Identifier: MIT
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "util.h"

static uint64_t ns_of(const struct timespec *ts)
{
	return (uint64_t)ts->tv_sec * 1000000000ULL + ts->tv_nsec;
}

uint64_t ws_clock_mono_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ns_of(&ts);
}

void ws_clock_anchor(struct ws_clock *c)
{
	uint64_t best = UINT64_MAX;

	for (int i = 0; i < 5; i++) {
		struct timespec m1, w, m2;

		clock_gettime(CLOCK_MONOTONIC, &m1);
		clock_gettime(CLOCK_REALTIME, &w);
		clock_gettime(CLOCK_MONOTONIC, &m2);
		if (ns_of(&m2) - ns_of(&m1) < best) {
			best = ns_of(&m2) - ns_of(&m1);
			c->mono_ns = ns_of(&m1) + best / 2;
			c->wall_ns = ns_of(&w);
		}
	}
}

uint64_t ws_clock_wall(const struct ws_clock *c, uint64_t mono_ns)
{
	return c->wall_ns + (mono_ns - c->mono_ns);
}

void ws_clock_iso(uint64_t wall_ns, char *buf, size_t len)
{
	/* the second's text is kept: a report stamps thousands of requests per second, and the
	 * calendar and printf were a sixth of writing each one's line */
	static __thread time_t last = -1;
	static __thread char sec[32]; /* "2026-12-07T16:32:21.": room for any year an int holds */
	static __thread int sec_len;
	time_t s = wall_ns / 1000000000ULL;
	unsigned us = (unsigned)(wall_ns % 1000000000ULL / 1000);
	char out[40];

	if (s != last) {
		struct tm tm;

		if (!gmtime_r(&s, &tm))
			memset(&tm, 0, sizeof(tm));
		sec_len = snprintf(sec, sizeof(sec), "%04d-%02d-%02dT%02d:%02d:%02d.",
				   tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
				   tm.tm_min, tm.tm_sec);
		last = s;
	}
	memcpy(out, sec, sec_len);
	for (int i = 5; i >= 0; i--, us /= 10)
		out[sec_len + i] = (char)('0' + us % 10);
	out[sec_len + 6] = 'Z';
	out[sec_len + 7] = 0;
	ws_str_copy(buf, len, out);
}

void ws_clock_hms(uint64_t wall_ns, char *buf, size_t len)
{
	time_t s = wall_ns / 1000000000ULL;
	struct tm tm;

	localtime_r(&s, &tm);
	snprintf(buf, len, "%02d:%02d:%02d.%03u", tm.tm_hour, tm.tm_min, tm.tm_sec,
		 (unsigned)(wall_ns % 1000000000ULL / 1000000));
}
