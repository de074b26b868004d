// SPDX-License-Identifier: MIT
/* report --since/--until: times of day as the text report prints them, durations from the start. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <time.h>

#include "base/when.h"

#define S 1000000000ULL

static void utc(void)
{
	setenv("TZ", "UTC", 1);
	tzset();
}

Test(when, parses_times_of_day)
{
	struct ws_when w;

	cr_assert_eq(ws_when_parse("14:32:07.001", &w), 0);
	cr_assert(w.time_of_day);
	cr_assert_eq(w.ns, (14 * 3600 + 32 * 60 + 7) * S + 1000000);
	cr_assert_eq(ws_when_parse("9:05", &w), 0);
	cr_assert_eq(w.ns, (9 * 3600 + 5 * 60) * S);
	cr_assert_eq(ws_when_parse("23:59:59.123456789", &w), 0);
	cr_assert_eq(w.ns, (23 * 3600 + 59 * 60 + 59) * S + 123456789);
}

Test(when, parses_durations_with_a_unit)
{
	struct ws_when w;

	cr_assert_eq(ws_when_parse("2s", &w), 0);
	cr_assert_not(w.time_of_day);
	cr_assert_eq(w.ns, 2 * S);
	cr_assert_eq(ws_when_parse("1500ms", &w), 0);
	cr_assert_eq(w.ns, 1500000000ULL);
	cr_assert_eq(ws_when_parse("0", &w), 0);
	cr_assert_eq(w.ns, 0);
}

Test(when, rejects_the_rest)
{
	const char *bad[] = { "",	 "5",	       "abc",	    "25:00",	 "12:60",
			      "1:2",	 "12:00:60",   "12:00:00.", "12:00:00x", "-1s",
			      "12:00:0", "1:00:00:00", "2 s",	    "s",	 ":30" };
	struct ws_when w;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		cr_assert_neq(ws_when_parse(bad[i], &w), 0, "'%s' accepted", bad[i]);
}

Test(when, resolves_on_the_recording_clock)
{
	/* 2026-11-30 14:00:00 UTC at CLOCK_MONOTONIC 1000s */
	struct ws_clock clk = { .mono_ns = 1000 * S, .wall_ns = 1796047200ULL * S };
	struct ws_when w;

	utc();
	ws_when_parse("14:00:02.5", &w);
	cr_assert_eq(ws_when_resolve(&w, &clk), 1002 * S + S / 2);
	ws_when_parse("13:59:59", &w);
	cr_assert_eq(ws_when_resolve(&w, &clk), 999 * S);
	ws_when_parse("2s", &w);
	cr_assert_eq(ws_when_resolve(&w, &clk), 1002 * S);
	/* more than 12 hours before the start: the next day (a recording over midnight) */
	ws_when_parse("00:30", &w);
	cr_assert_eq(ws_when_resolve(&w, &clk), 1000 * S + (10 * 3600 + 30 * 60) * S);
	/* long before the monotonic clock began */
	ws_when_parse("03:00", &w);
	cr_assert_eq(ws_when_resolve(&w, &clk), 0);
}
