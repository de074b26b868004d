// SPDX-License-Identifier: MIT
/* The compressed layer of a recording: see trace_zstd.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>
#include <zstd_errors.h>

#include "trace_zstd.h"

/* ---- writing ----------------------------------------------------------------------------- */

struct ws_tz_writer {
	ZSTD_CCtx *c;
	FILE *f;
	/*
	 * Records are small (an event: ~100 bytes, given in two or three pieces): they are
	 * gathered here and handed to zstd a block at a time, not one call per piece.
	 */
	char *stage;
	size_t staged, stage_cap;
	char *out;
	size_t out_cap;
};

int ws_tz_writer_new(struct ws_tz_writer **zw, FILE *f)
{
	struct ws_tz_writer *z = calloc(1, sizeof(*z));

	*zw = NULL;
	if (!z)
		return -ENOMEM;
	z->f = f;
	z->c = ZSTD_createCCtx();
	z->stage_cap = ZSTD_CStreamInSize();
	z->out_cap = ZSTD_CStreamOutSize();
	z->stage = malloc(z->stage_cap);
	z->out = malloc(z->out_cap);
	if (!z->c || !z->stage || !z->out ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(z->c, ZSTD_c_compressionLevel, WS_TZ_LEVEL)) ||
	    /* the reader refuses a larger window: say it, whatever a level would choose */
	    ZSTD_isError(ZSTD_CCtx_setParameter(z->c, ZSTD_c_windowLog, WS_TZ_WINDOW_LOG_MAX)) ||
	    /* a checksum per frame: a flipped bit is an error, not a wrong report */
	    ZSTD_isError(ZSTD_CCtx_setParameter(z->c, ZSTD_c_checksumFlag, 1))) {
		ws_tz_writer_free(z);
		return -ENOMEM;
	}
	*zw = z;
	return 0;
}

/* Compress what is staged with @mode; everything zstd emits goes to the file. */
static int compress(struct ws_tz_writer *z, ZSTD_EndDirective mode)
{
	ZSTD_inBuffer in = { z->stage, z->staged, 0 };
	size_t left;

	do {
		ZSTD_outBuffer out = { z->out, z->out_cap, 0 };

		left = ZSTD_compressStream2(z->c, &out, &in, mode);
		if (ZSTD_isError(left))
			return -EIO;
		if (out.pos && fwrite(z->out, 1, out.pos, z->f) != out.pos)
			return errno ? -errno : -EIO;
		/* e_continue: until zstd took the input; flush and end: until it emitted all */
	} while (mode == ZSTD_e_continue ? in.pos < in.size : left != 0);
	z->staged = 0;
	return 0;
}

int ws_tz_write(struct ws_tz_writer *zw, const void *p, size_t len)
{
	while (len) {
		size_t n = zw->stage_cap - zw->staged;
		int err;

		if (n > len)
			n = len;
		memcpy(zw->stage + zw->staged, p, n);
		zw->staged += n;
		p = (const char *)p + n;
		len -= n;
		if (zw->staged == zw->stage_cap && (err = compress(zw, ZSTD_e_continue)))
			return err;
	}
	return 0;
}

int ws_tz_flush(struct ws_tz_writer *zw, bool end)
{
	return compress(zw, end ? ZSTD_e_end : ZSTD_e_flush);
}

void ws_tz_writer_free(struct ws_tz_writer *zw)
{
	if (!zw)
		return;
	ZSTD_freeCCtx(zw->c);
	free(zw->stage);
	free(zw->out);
	free(zw);
}

/* ---- reading ----------------------------------------------------------------------------- */

struct ws_tz_reader {
	ZSTD_DCtx *d;
	FILE *f;
	ZSTD_inBuffer in;
	char *inbuf;
	size_t incap;
	uint64_t total_in, total_out; /* for the bomb bound */
	bool eof;
	char why[160];
};

int ws_tz_reader_new(struct ws_tz_reader **zr, FILE *f, const void *pre, size_t len)
{
	struct ws_tz_reader *z = calloc(1, sizeof(*z));

	*zr = NULL;
	if (!z)
		return -ENOMEM;
	z->f = f;
	z->d = ZSTD_createDCtx();
	z->incap = ZSTD_DStreamInSize();
	if (z->incap < len)
		z->incap = len;
	z->inbuf = malloc(z->incap);
	z->in.src = z->inbuf;
	if (z->inbuf && len) {
		memcpy(z->inbuf, pre, len);
		z->in.size = len;
		z->total_in = len;
	}
	/* memory: a hostile frame's window request is refused, not allocated */
	if (!z->d || !z->inbuf ||
	    ZSTD_isError(ZSTD_DCtx_setParameter(z->d, ZSTD_d_windowLogMax, WS_TZ_WINDOW_LOG_MAX))) {
		ws_tz_reader_free(z);
		return -ENOMEM;
	}
	*zr = z;
	return 0;
}

static int why(struct ws_tz_reader *z, int err, size_t zret)
{
	if (err == -EBADMSG && ZSTD_getErrorCode(zret) == ZSTD_error_frameParameter_windowTooLarge)
		snprintf(
			z->why, sizeof(z->why),
			"the compressed data asks for a window over %u KiB (not written by whyslow)",
			(1u << WS_TZ_WINDOW_LOG_MAX) >> 10);
	else if (err == -EBADMSG)
		snprintf(z->why, sizeof(z->why), "the compressed data is corrupt (zstd: %s)",
			 ZSTD_getErrorName(zret));
	else if (err == -EFBIG)
		snprintf(
			z->why, sizeof(z->why),
			"the compressed data expands over %d-fold (not a recording; not read further)",
			WS_TZ_MAX_RATIO);
	else
		snprintf(z->why, sizeof(z->why), "cannot read the file: %s", strerror(-err));
	return err;
}

int ws_tz_read(struct ws_tz_reader *zr, void *out, size_t cap, size_t *got)
{
	ZSTD_outBuffer o = { out, cap, 0 };

	*got = 0;
	/* zstd may take input without giving output (a frame header): until some comes, or none */
	while (!o.pos && cap) {
		size_t ret;

		if (zr->in.pos == zr->in.size && !zr->eof) {
			size_t n = fread(zr->inbuf, 1, zr->incap, zr->f);

			if (!n && ferror(zr->f))
				return why(zr, errno ? -errno : -EIO, 0);
			zr->eof = !n;
			zr->in.size = n;
			zr->in.pos = 0;
			zr->total_in += n;
		}
		/* at the end of the file too: zstd may still hold decoded bytes to hand out */
		ret = ZSTD_decompressStream(zr->d, &o, &zr->in);
		if (ZSTD_isError(ret))
			return why(zr, -EBADMSG, ret);
		/* nothing more will come; a frame cut short ends here, and the caller sees a cut
		 * file */
		if (!o.pos && zr->eof)
			break;
	}
	zr->total_out += o.pos;
	if (zr->total_out > zr->total_in * WS_TZ_MAX_RATIO + WS_TZ_SLACK)
		return why(zr, -EFBIG, 0);
	*got = o.pos;
	return 0;
}

const char *ws_tz_why(const struct ws_tz_reader *zr)
{
	return zr->why;
}

void ws_tz_reader_free(struct ws_tz_reader *zr)
{
	if (!zr)
		return;
	ZSTD_freeDCtx(zr->d);
	free(zr->inbuf);
	free(zr);
}
