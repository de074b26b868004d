/* SPDX-License-Identifier: MIT */
/*
 * The recording file (whyslow.data): a versioned stream of self-sized records
 * written by `whyslow record` and read by `whyslow report`. The layout is
 * specified in docs/trace-format.md; this is its only writer and reader.
 *
 * Both directions stream: the writer holds nothing but a stdio buffer (and,
 * compressed, zstd's window: trace_zstd.h), the reader one record of at most
 * WS_TRACE_MAX_REC bytes (and the decompressor's window). The reader trusts no
 * size in the file: every problem is reported as "FILE: offset N: what".
 */
#ifndef WS_TRACE_H
#define WS_TRACE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <whyslow/record.h>

#include "base/clock.h"

#define WS_TRACE_MAGIC "WHYSLOW" /* with its NUL: 8 bytes */
#define WS_TRACE_MAJOR 1
#define WS_TRACE_MINOR 14
#define WS_TRACE_MAX_REC (1u << 20) /* no record is larger; bounds the reader's buffer */
#define WS_TRACE_MAX_PIDS 4096	    /* traced pids kept from the metadata */
#define WS_TRACE_STR 256

/* File header, at offset 0. Little-endian, like every field in the file. */
struct ws_trace_file_hdr {
	char magic[8];	   /* "WHYSLOW\0" */
	uint32_t hdr_size; /* bytes of this header; records start here */
	uint16_t major;	   /* a reader refuses a major it does not know */
	uint16_t minor;	   /* additions a reader of the same major may ignore */
	uint32_t flags;	   /* low byte: enum ws_trace_compress (1.6); the rest ignored */
	uint32_t reserved;
};

/* How the records after the file header are stored (1.6; a reader refuses one it does not know). */
enum ws_trace_compress {
	WS_TRACE_RAW = 0,  /* as they are */
	WS_TRACE_ZSTD = 1, /* one zstd stream (trace_zstd.h) */
};
#define WS_TRACE_COMPRESS_MASK 0xffu

/* Every record starts with this; @size counts it. */
struct ws_trace_rec_hdr {
	uint32_t size;
	uint16_t type;	/* enum ws_trace_type */
	uint16_t flags; /* none defined */
};

enum ws_trace_type {
	WS_TR_META = 1,	      /* "key\0value\0" pairs; always the first record */
	WS_TR_DEVNAME = 2,    /* struct ws_trace_devname + name\0; read only (1.0: blkio's names) */
	WS_TR_THREAD = 3,     /* struct ws_trace_thread */
	WS_TR_EVENT = 4,      /* one ws_rec_hdr record, verbatim (its own size == payload) */
	WS_TR_SUMMARY = 5,    /* struct ws_trace_summary + lost-detail JSON\0 */
	WS_TR_END = 6,	      /* struct ws_trace_end; nothing follows */
	WS_TR_OPEN_WAITS = 7, /* the waits still open when tracing ended (stuck_rec.c), 1.1 */
	WS_TR_NAME = 8,	      /* struct ws_trace_name + source\0 + name\0 (format 1.2) */
};

/* A name a source gave one of its keys (ws_host.name_set): a device, an address. */
struct ws_trace_name {
	uint64_t key;
};

struct ws_trace_devname {
	uint32_t dev; /* major << 20 | minor, as the kernel's dev_t */
};

struct ws_trace_thread {
	uint64_t ts; /* CLOCK_MONOTONIC when the name was seen */
	uint32_t tid, pid;
	char comm[16];
};

struct ws_trace_summary {
	uint64_t records, lost, lost_recursion, duration_ns;
};

struct ws_trace_end {
	uint64_t events; /* WS_TR_EVENT records in the file: a check on completeness */
};

/* The metadata record, decoded (unknown keys are ignored). */
struct ws_trace_meta {
	char kernel[WS_TRACE_STR], hostname[WS_TRACE_STR], version[64];
	char boot_id[40];	     /* 1.12: the kernel's random boot id ("" not known) */
	char sources[WS_TRACE_STR];  /* "sched,futex,blkio" */
	char versions[WS_TRACE_STR]; /* "sched=0.1.0,futex=0.1.0,..." */
	char command[WS_TRACE_STR];  /* what was recorded, for people */
	struct ws_clock clock;
	uint64_t min_block_ns, max_window_ns, max_history; /* 0: not recorded */
	/* off-CPU periods shorter than this were summarised, not recorded (0: none were) */
	uint64_t resolution_ns;
	/*
	 * CPUs of the recording machine (its possible CPUs, 1.4; 0: not recorded): the reader
	 * keeps per-CPU state for these and refuses a record naming another (WS_MAX_CPUS at most)
	 */
	uint32_t ncpus;
	/* stacks were captured for waits of at least this long (1.5; 0: stacks off); only when
	 * @has_stack_min (before 1.5: min_block_ns, stacks being on by default) */
	uint64_t stack_min_ns;
	bool has_stack_min;
	uint32_t pids[WS_TRACE_MAX_PIDS]; /* thread groups traced from the start */
	int npids;
};

/* ---- writing ----------------------------------------------------------------------------- */

struct ws_tz_writer;

struct ws_trace_writer {
	FILE *f;
	struct ws_tz_writer *z; /* WS_TRACE_ZSTD: the records go through it */
	uint64_t events;
	int err; /* first write error, -errno; later writes do nothing */
};

/* Write the file header to @f; the records after it stored as @how. 0 or -errno. */
int ws_trace_write_begin(struct ws_trace_writer *w, FILE *f, enum ws_trace_compress how);
/* One record of @type with @len payload bytes. 0 or -errno (-E2BIG over the cap). */
int ws_trace_write_rec(struct ws_trace_writer *w, uint16_t type, const void *p, size_t len);
int ws_trace_write_meta(struct ws_trace_writer *w, const struct ws_trace_meta *m);
int ws_trace_write_name(struct ws_trace_writer *w, const char *source, uint64_t key,
			const char *name);
int ws_trace_write_thread(struct ws_trace_writer *w, const struct ws_trace_thread *t);
int ws_trace_write_event(struct ws_trace_writer *w, const struct ws_rec_hdr *rec);
int ws_trace_write_summary(struct ws_trace_writer *w, const struct ws_trace_summary *s,
			   const char *lost_json);
/*
 * Make everything written so far readable from the file if the writer dies next (compressed:
 * complete blocks), then flush @f. 0 or the first error of the whole file.
 */
int ws_trace_flush(struct ws_trace_writer *w);
/* The end marker, then flush; frees what ws_trace_write_begin() allocated. 0 or the first error. */
int ws_trace_write_end(struct ws_trace_writer *w);
/* A recording abandoned before its end: free what ws_trace_write_begin() allocated. */
void ws_trace_writer_free(struct ws_trace_writer *w);

/* ---- reading ----------------------------------------------------------------------------- */

/*
 * Callbacks for ws_trace_read(); NULL ones are skipped. A callback's non-zero
 * return stops the read and is returned (it has explained itself).
 */
struct ws_trace_ops {
	int (*meta)(void *ctx, const struct ws_trace_meta *m);
	/* a source's name for a key; a 1.0 recording's device names come as blkio's */
	int (*name)(void *ctx, const char *source, uint64_t key, const char *name);
	int (*thread)(void *ctx, const struct ws_trace_thread *t);
	int (*event)(void *ctx, const struct ws_rec_hdr *rec);
	int (*summary)(void *ctx, const struct ws_trace_summary *s, const char *lost_json);
	/*
	 * WS_TR_OPEN_WAITS, its payload as written (ws_stuck_decode() checks it);
	 * -EBADMSG: malformed, reported by the reader at its offset.
	 */
	int (*open_waits)(void *ctx, const void *p, size_t len);
	/*
	 * Optional: the file stops without an end marker, at a record boundary or
	 * inside its last record (a killed or unfinished recording). With it set,
	 * what was read counts and the reader returns its result; without it, an
	 * error as for any truncation. @off: where the complete records end.
	 */
	int (*ended_early)(void *ctx, uint64_t off);
};

/*
 * Read the whole of @f (named @name in messages), calling @ops in file order;
 * types this reader does not know are skipped. 0 when the end marker was
 * reached; -errno with "NAME: offset N: problem" in @err otherwise (or the
 * callback's own return, @err then empty).
 */
int ws_trace_read(FILE *f, const char *name, const struct ws_trace_ops *ops, void *ctx, char *err,
		  size_t errlen);

/* Parse a metadata payload (exposed for tests). 0 or -EINVAL. */
int ws_trace_meta_parse(const void *p, size_t len, struct ws_trace_meta *m);

#endif
