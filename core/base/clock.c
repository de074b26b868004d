// SPDX-License-Identifier: MIT
#include <stdio.h>
#include <time.h>

#include "clock.h"

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
	time_t s = wall_ns / 1000000000ULL;
	struct tm tm;

	gmtime_r(&s, &tm);
	snprintf(buf, len, "%04d-%02d-%02dT%02d:%02d:%02d.%06uZ", tm.tm_year + 1900, tm.tm_mon + 1,
		 tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
		 (unsigned)(wall_ns % 1000000000ULL / 1000));
}

void ws_clock_hms(uint64_t wall_ns, char *buf, size_t len)
{
	time_t s = wall_ns / 1000000000ULL;
	struct tm tm;

	localtime_r(&s, &tm);
	snprintf(buf, len, "%02d:%02d:%02d.%03u", tm.tm_hour, tm.tm_min, tm.tm_sec,
		 (unsigned)(wall_ns % 1000000000ULL / 1000000));
}
