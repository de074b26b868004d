/* SPDX-License-Identifier: MIT */
/*
 * The compressed layer of a recording (format 1.6, docs/trace-format.md): the records after the
 * file header as one zstd stream. trace.c writes and reads records through it exactly as
 * through the file; this holds what zstd needs and the reader's limits on hostile input.
 *
 * Both directions stream, so memory stays bounded whatever the recording's length: the writer
 * holds zstd's window and one output block, the reader the window (at most
 * WS_TZ_WINDOW_LOG_MAX) and one input block.
 */
#ifndef WS_TRACE_ZSTD_H
#define WS_TRACE_ZSTD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* zstd -3, as the zstd CLI's default: most of the gain at a fraction of the cost of more */
#define WS_TZ_LEVEL 3
/*
 * The window both sides agree on: level 3's own (2 MiB). A frame asking for more is refused
 * rather than given the memory: no whyslow wrote it.
 */
#define WS_TZ_WINDOW_LOG_MAX 21
/*
 * Decompression-bomb bound: the output may exceed the input this many times over (plus
 * WS_TZ_SLACK). Recordings compress about 10:1; a stream that expands 1000-fold is not one.
 */
#define WS_TZ_MAX_RATIO 1000
#define WS_TZ_SLACK (1u << 20)

struct ws_tz_writer;
struct ws_tz_reader;

/* A compressor writing to @f. 0 or -ENOMEM. */
int ws_tz_writer_new(struct ws_tz_writer **zw, FILE *f);
/* Compress @len bytes; what zstd emits goes to the file. 0 or -errno. */
int ws_tz_write(struct ws_tz_writer *zw, const void *p, size_t len);
/*
 * Emit everything given so far as complete blocks (@end: and close the frame), so the file
 * decodes up to here if the writer dies next. The FILE is not flushed. 0 or -errno.
 */
int ws_tz_flush(struct ws_tz_writer *zw, bool end);
void ws_tz_writer_free(struct ws_tz_writer *zw);

/*
 * A decompressor of the stream that starts with the @len bytes at @pre (already read from @f)
 * and goes on in @f. 0 or -ENOMEM.
 */
int ws_tz_reader_new(struct ws_tz_reader **zr, FILE *f, const void *pre, size_t len);
/*
 * Up to @cap bytes of the decompressed stream into @out, *@got of them; *@got is 0 only at the
 * end of the file (a frame cut short there ends it too: what decoded before counts). 0, -EIO
 * (the file), -EBADMSG (corrupt or refused data) or -EFBIG (the bomb bound); ws_tz_why() says
 * which in words.
 */
int ws_tz_read(struct ws_tz_reader *zr, void *out, size_t cap, size_t *got);
/* The last ws_tz_read() error, for "FILE: offset N: WHY". */
const char *ws_tz_why(const struct ws_tz_reader *zr);
void ws_tz_reader_free(struct ws_tz_reader *zr);

#endif
