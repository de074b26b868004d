// SPDX-License-Identifier: MIT
#include <criterion/criterion.h>
#include <string.h>

#include "util.h"

Test(util, parses_durations)
{
	uint64_t ns;

	cr_assert_eq(ws_parse_duration("10ms", &ns), 0);
	cr_assert_eq(ns, 10000000ULL);
	cr_assert_eq(ws_parse_duration("1.5s", &ns), 0);
	cr_assert_eq(ns, 1500000000ULL);
	cr_assert_eq(ws_parse_duration("250us", &ns), 0);
	cr_assert_eq(ns, 250000ULL);
	cr_assert_eq(ws_parse_duration("7", &ns), 0, "a bare number is milliseconds");
	cr_assert_eq(ns, 7000000ULL);
	cr_assert_lt(ws_parse_duration("10 parsecs", &ns), 0);
	cr_assert_lt(ws_parse_duration("-5ms", &ns), 0);
	cr_assert_lt(ws_parse_duration("", &ns), 0);
}

Test(util, formats_durations_readably)
{
	char b[32];

	ws_format_duration(412000000, b, sizeof(b));
	cr_assert_str_eq(b, "412ms");
	ws_format_duration(1250000000, b, sizeof(b));
	cr_assert_str_eq(b, "1.25s");
	ws_format_duration(87000, b, sizeof(b));
	cr_assert_str_eq(b, "87us");
	ws_format_duration(999, b, sizeof(b));
	cr_assert_str_eq(b, "999ns");
}

Test(util, parses_sizes_and_bools)
{
	uint64_t v;
	int b;

	cr_assert_eq(ws_parse_u64("16M", &v), 0);
	cr_assert_eq(v, 16ULL << 20);
	cr_assert_lt(ws_parse_u64("12x", &v), 0);
	cr_assert_eq(ws_parse_bool("no", &b), 0);
	cr_assert_eq(b, 0);
	cr_assert_eq(ws_parse_bool("Yes", &b), 0);
	cr_assert_eq(b, 1);
	cr_assert_lt(ws_parse_bool("maybe", &b), 0);
}
