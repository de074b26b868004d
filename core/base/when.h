/* SPDX-License-Identifier: MIT */
/*
 * Moments given on the command line (report --since/--until): a time of day as the text report
 * prints it ("14:32:07.001", local time) or a duration from the start of the recording ("2s",
 * "1500ms"). Parsed when the option is read, placed on the recording's clock once it is known.
 */
#ifndef WS_WHEN_H
#define WS_WHEN_H

#include <stdbool.h>
#include <stdint.h>

#include "clock.h"

struct ws_when {
	bool time_of_day; /* ns since local midnight; else ns after the start */
	uint64_t ns;
};

/* 0, or -EINVAL when @s is neither a time of day nor a duration with its unit. */
int ws_when_parse(const char *s, struct ws_when *w);

/*
 * The CLOCK_MONOTONIC moment @w names in a recording whose clock anchor is @clk (taken at its
 * start). A time of day is taken on the start's local date, or on the next day when it lies more
 * than 12 hours before the start (a recording over midnight). Before the anchor: 0.
 */
uint64_t ws_when_resolve(const struct ws_when *w, const struct ws_clock *clk);

#endif
