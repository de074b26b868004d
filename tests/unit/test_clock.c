// SPDX-License-Identifier: MIT
#include <criterion/criterion.h>
#include <string.h>
#include <time.h>

#include "base/clock.h"

Test(clock, anchor_maps_monotonic_to_wall_time)
{
	struct ws_clock c;
	struct timespec w;
	uint64_t mono, wall_now;
	int64_t diff;

	ws_clock_anchor(&c);
	mono = ws_clock_mono_now();
	clock_gettime(CLOCK_REALTIME, &w);
	wall_now = (uint64_t)w.tv_sec * 1000000000ULL + w.tv_nsec;
	diff = (int64_t)(ws_clock_wall(&c, mono) - wall_now);
	cr_assert_lt(diff < 0 ? -diff : diff, 5000000, "converted time is %lld ns off", (long long)diff);
	/* differences are preserved exactly */
	cr_assert_eq(ws_clock_wall(&c, mono + 12345) - ws_clock_wall(&c, mono), 12345);
}

Test(clock, iso_format_is_utc_with_microseconds)
{
	char b[40];

	ws_clock_iso(1796049127001234567ULL, b, sizeof(b));
	cr_assert_str_eq(b, "2026-11-30T14:32:07.001234Z");
}
