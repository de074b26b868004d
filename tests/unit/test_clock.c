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
	cr_assert_lt(diff < 0 ? -diff : diff, 5000000, "converted time is %lld ns off",
		     (long long)diff);
	/* differences are preserved exactly */
	cr_assert_eq(ws_clock_wall(&c, mono + 12345) - ws_clock_wall(&c, mono), 12345);
}

Test(clock, iso_format_is_utc_with_microseconds)
{
	char b[40];

	ws_clock_iso(1796049127001234567ULL, b, sizeof(b));
	cr_assert_str_eq(b, "2026-11-30T14:32:07.001234Z");
}

/* The second's text is kept between calls: each call must still say its own time, as the
 * calendar would, in the same second, the next one and an earlier one, and cut to the buffer. */
Test(clock, iso_format_follows_each_call)
{
	static const struct {
		uint64_t ns;
		const char *want;
	} cases[] = {
		{ 1796049127001234567ULL, "2026-11-30T14:32:07.001234Z" },
		{ 1796049127999999999ULL, "2026-11-30T14:32:07.999999Z" },
		{ 1796049128000000000ULL, "2026-11-30T14:32:08.000000Z" },
		{ 1796049127000000999ULL, "2026-11-30T14:32:07.000000Z" },
		{ 0, "1970-01-01T00:00:00.000000Z" },
		{ 1796049127001234567ULL, "2026-11-30T14:32:07.001234Z" },
	};
	char b[40], small[11];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		ws_clock_iso(cases[i].ns, b, sizeof(b));
		cr_expect_str_eq(b, cases[i].want, "case %zu", i);
	}
	ws_clock_iso(1796049127001234567ULL, small, sizeof(small));
	cr_expect_str_eq(small, "2026-11-30");
}
