/* SPDX-License-Identifier: MIT */
/*
 * The flight recorder of `whyslow watch`: the records a recording would hold (what the session's
 * tap hands over, in time order), kept in memory for the last @keep_ns of stream time and in at
 * most @max_bytes, oldest dropped first. One buffer allocated at start and written round: memory
 * stays bounded whatever the load (only the pages written count in RSS), and a push never
 * allocates. What was dropped is counted, by why: older than the window (the window itself) or
 * pushed out for room before it was that old (the window was shorter than asked: said in a dump).
 */
#ifndef WS_FLIGHT_H
#define WS_FLIGHT_H

#include <stddef.h>
#include <stdint.h>

#include <whyslow/record.h>

struct ws_flight;

struct ws_flight_stats {
	uint64_t records, bytes; /* held now (bytes: of the buffer, with each entry's header) */
	uint64_t oldest_ts, newest_ts;	 /* of the records held; 0 when none */
	uint64_t aged;			 /* dropped for being older than the window */
	uint64_t evicted, evicted_bytes; /* dropped for room while still inside the window */
	uint64_t too_big;	   /* never held: a record larger than a quarter of the buffer */
	uint64_t first_evicted_ts; /* of the newest record evicted for room; 0: none */
};

/* 0 or -errno (-EINVAL for a buffer too small to hold a record, -ENOMEM). */
int ws_flight_new(struct ws_flight **out, uint64_t keep_ns, size_t max_bytes);
/* A copy of @rec, the oldest records dropped to make room and those older than the window. */
void ws_flight_push(struct ws_flight *f, const struct ws_rec_hdr *rec);
/*
 * Each record held, oldest first; a non-zero return of @fn stops the walk and is returned.
 * The buffer must not be pushed to meanwhile.
 */
int ws_flight_each(const struct ws_flight *f, int (*fn)(void *ctx, const struct ws_rec_hdr *rec),
		   void *ctx);
void ws_flight_stats(const struct ws_flight *f, struct ws_flight_stats *st);
void ws_flight_free(struct ws_flight *f);

#endif
