/* SPDX-License-Identifier: MIT */
/*
 * Lengths counted in a log histogram, for percentiles whose memory must not grow with the run
 * (reasons.c: a reason's waits; request_conns.c: the requests): WS_LENHIST_SUB linear buckets per
 * power of two, 16 KiB of counts for any number of lengths. A percentile read from it is its
 * bucket's middle: within 1/(2 * WS_LENHIST_SUB) = 1.6% of the true nearest-rank value.
 */
#ifndef WS_LENHIST_H
#define WS_LENHIST_H

#include <stddef.h>
#include <stdint.h>

#define WS_LENHIST_SUB_BITS 5
#define WS_LENHIST_SUB (1u << WS_LENHIST_SUB_BITS)
#define WS_LENHIST_BUCKETS (64 * WS_LENHIST_SUB)

/* The bucket of @v: its power of two, then the WS_LENHIST_SUB_BITS bits below its leading one. */
size_t ws_lenhist_bucket(uint64_t v);
/* The middle of bucket @b. */
uint64_t ws_lenhist_mid(size_t b);
/* The bucket holding the @rank-th smallest (from 1) of the lengths counted in @hist. */
size_t ws_lenhist_bucket_of_rank(const uint64_t *hist, uint64_t rank);
/* The nearest-rank percentile @p (0..100) of the @count lengths in @hist, never above @max. */
uint64_t ws_lenhist_percentile(const uint64_t *hist, uint64_t count, unsigned int p, uint64_t max);

#endif /* WS_LENHIST_H */
