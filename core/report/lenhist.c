// SPDX-License-Identifier: MIT
/* Lengths counted in a log histogram (lenhist.h). */
#include "lenhist.h"

size_t ws_lenhist_bucket(uint64_t v)
{
	int e;

	if (!v)
		return 0;
	e = 63 - __builtin_clzll(v);
	return (size_t)e * WS_LENHIST_SUB +
	       ((v << (63 - e)) >> (63 - WS_LENHIST_SUB_BITS) & (WS_LENHIST_SUB - 1));
}

uint64_t ws_lenhist_mid(size_t b)
{
	unsigned int e = b / WS_LENHIST_SUB;
	uint64_t sub = b % WS_LENHIST_SUB, lo, width;

	if (!b)
		return 0;
	/* (1 + sub / WS_LENHIST_SUB) * 2^e, without overflow at the top */
	lo = e >= WS_LENHIST_SUB_BITS ? (WS_LENHIST_SUB + sub) << (e - WS_LENHIST_SUB_BITS)
				      : ((WS_LENHIST_SUB + sub) << e) >> WS_LENHIST_SUB_BITS;
	width = e >= WS_LENHIST_SUB_BITS ? 1ull << (e - WS_LENHIST_SUB_BITS) : 1;
	return lo + width / 2;
}

size_t ws_lenhist_bucket_of_rank(const uint64_t *hist, uint64_t rank)
{
	uint64_t seen = 0;
	size_t i;

	for (i = 0; i < WS_LENHIST_BUCKETS - 1 && (seen += hist[i]) < (rank ? rank : 1); i++)
		;
	return i;
}

uint64_t ws_lenhist_percentile(const uint64_t *hist, uint64_t count, unsigned int p, uint64_t max)
{
	uint64_t v = ws_lenhist_mid(ws_lenhist_bucket_of_rank(hist, (count * p + 99) / 100));

	return v > max ? max : v;
}
