/* SPDX-License-Identifier: MIT */
/*
 * --format pprof: the folded towers (folded.h) as a gzipped profile.proto, the format of
 * `go tool pprof`, Grafana Pyroscope and Parca. One value, off-CPU time in nanoseconds; each
 * folded frame is a function of its own (no addresses: the frames are links of causal chains,
 * not code), so the totals are the folded output's by construction.
 */
#ifndef WS_PPROF_H
#define WS_PPROF_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct ws_pprof_info {
	uint64_t duration_ns; /* the traced span (0: not known) */
	const char *comment;  /* said in the profile's comments (losses), or NULL */
};

/*
 * Encode @len bytes of folded lines ("a;b;c 123\n", lines without a weight are skipped) from
 * @folded and write the gzipped profile to @out. 0 or a negative errno (-ENOMEM, -EIO).
 */
int ws_pprof_write(FILE *out, const char *folded, size_t len, const struct ws_pprof_info *info);

#endif
