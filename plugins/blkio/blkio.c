// SPDX-License-Identifier: MIT
/*
 * blkio source, user side: remembers the last completions on each CPU and
 * explains a wait as block I/O when the wakeup that ended it ran inside the
 * interrupt bracket of one of them.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <whyslow/plugin.h>
#include <whyslow/recent.h>

#include "blkio_open.h"
#include "blkio_rec.h"
#include "blkio_swap.h"
#include "blkio_throttle.h"
#include "blkio.skel.h"

#define NAME "blkio"

/*
 * Completions kept per CPU. The wakeup a completion causes follows it within
 * the same bracket, and a bracket completes a few requests at most, so a few
 * are plenty.
 */
#define DONE_PER_CPU 8

/* A claim field holds this much of a string (struct ws_field.s, its 0 included). */
#define FIELD_LEN 40

/* The root of a wait an I/O limit held back ("I/O limit of /batch (...)"); metrics.c knows it. */
#define WS_IO_LIMIT_PREFIX "I/O limit of "
/* The roots of a read under a page fault (metrics.c knows them): of swap, of anything else. */
#define WS_SWAP_IN_PREFIX "swap-in from "
#define WS_FAULT_READ_PREFIX "page fault reading "

/* The plugin's state for one session (ws_plugin_ctx.priv). */
struct blkio {
	struct ws_recent done; /* struct ws_blkio_done, DONE_PER_CPU a CPU */
};

/*
 * Every block device's name, from sysfs, into the host's name table (which a
 * recording keeps): a request's device may be gone by the time it is reported.
 */
static void scan_disks(struct ws_plugin_ctx *ctx)
{
	DIR *d = opendir("/sys/class/block");
	struct dirent *e;

	while (d && (e = readdir(d))) {
		char path[PATH_MAX], line[32];
		unsigned int maj, min;
		FILE *f;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/sys/class/block/%s/dev", e->d_name);
		f = fopen(path, "re");
		if (!f)
			continue;
		if (fgets(line, sizeof(line), f) && sscanf(line, "%u:%u", &maj, &min) == 2)
			ctx->host->name_set(ctx, (uint64_t)maj << 20 | min, e->d_name);
		fclose(f);
	}
	if (d)
		closedir(d);
}

/* A disk that appeared after the scan: its uevent names it. */
static int sysfs_disk_name(uint32_t dev, char *buf, size_t len)
{
	char path[64], line[128];
	int err = -ENOENT;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/uevent", dev >> 20, dev & 0xfffff);
	f = fopen(path, "re");
	while (f && err && fgets(line, sizeof(line), f)) {
		if (strncmp(line, "DEVNAME=", 8))
			continue;
		size_t n = strcspn(line + 8, "\n");

		if (!len)
			break;
		n = n < len ? n : len - 1;
		memcpy(buf, line + 8, n);
		buf[n] = 0;
		err = 0;
	}
	if (f)
		fclose(f);
	return err;
}

/* The disk's name: the name table (sysfs live, the recording's offline), else "MAJ:MIN". */
static const char *dev_name(struct ws_plugin_ctx *ctx, uint32_t dev, char *buf, size_t len)
{
	if (!ctx->host->name_get(ctx, dev, buf, len))
		return buf;
	if (!ctx->replay && !sysfs_disk_name(dev, buf, len)) {
		ctx->host->name_set(ctx, dev, buf);
		return buf;
	}
	snprintf(buf, len, "%u:%u", dev >> 20, dev & 0xfffff);
	return buf;
}

static const void *blkio_bpf_object(size_t *size)
{
	return blkio_bpf__elf_bytes(size);
}

static int blkio_init(struct ws_plugin_ctx *ctx)
{
	struct blkio *b = calloc(1, sizeof(*b));

	if (!b)
		return -ENOMEM;
	ws_recent_init(&b->done, sizeof(struct ws_blkio_done), DONE_PER_CPU);
	ctx->priv = b;
	if (!ctx->replay) {
		scan_disks(ctx);
		blkio_swap_scan(ctx);
	}
	return 0;
}

static void blkio_fini(struct ws_plugin_ctx *ctx)
{
	struct blkio *b = ctx->priv;

	if (b)
		ws_recent_free(&b->done);
	free(b);
	ctx->priv = NULL;
}

static int blkio_decode(struct ws_plugin_ctx *ctx, const struct ws_rec_hdr *rec)
{
	struct blkio *b = ctx->priv;
	const struct ws_blkio_done *d;
	char name[32];

	if (rec->kind != WS_BLKIO_DONE) {
		ctx->host->log(ctx, WS_LOG_DEBUG, "unknown record kind %#x", rec->kind);
		return 0;
	}
	/* recordings made before ws_blkio_done.flags have shorter records */
	if (rec->size < offsetof(struct ws_blkio_done, flags))
		return -EINVAL;
	/* held_until_ts and held_cgroup read as 0 from an older record: ws_recent_push zeroes */
	d = ws_recent_push(&b->done, rec);
	if (!d)
		return -ENOMEM;
	/* resolve the name now, while the device surely still exists (the host keeps it) */
	dev_name(ctx, d->dev, name, sizeof(name));
	/* and a throttle's cgroup and limit while the group exists: a recording keeps them */
	if (d->held_cgroup && !ctx->replay) {
		char path[256], limit[FIELD_LEN];

		blkio_throttle_of(ctx, d->held_cgroup, d->dev, d->op == WS_BLKIO_OP_WRITE, path,
				  sizeof(path), limit, sizeof(limit));
	}
	return 0;
}

/* A record's or a wakeup's context (WS_CTX_*): inside a hardware interrupt or a softirq. */
static bool in_interrupt(uint8_t ctx)
{
	return ctx & (WS_CTX_HARDIRQ | WS_CTX_SOFTIRQ);
}

/* A completion that ran in the same interrupt bracket as the wakeup @arg, before it. */
static bool in_bracket(const void *rec, const void *arg)
{
	const struct ws_blkio_done *d = rec;
	const struct ws_wake *wk = arg;

	return d->hdr.ctx_id == wk->ctx_id && d->hdr.ts <= wk->ts && in_interrupt(d->hdr.ctx);
}

/*
 * A completion that ran in task context in the same stretch of the same task
 * as the wakeup @arg (same CPU, no switch between: the task-context ctx_id),
 * before it. Some completions run so: a kworker's direct-I/O completion work,
 * or a request finished where it was submitted.
 */
static bool in_stretch(const void *rec, const void *arg)
{
	const struct ws_blkio_done *d = rec;
	const struct ws_wake *wk = arg;

	return d->hdr.ctx_id == wk->ctx_id && d->hdr.ts <= wk->ts && d->hdr.tid == wk->waker_tid &&
	       !in_interrupt(d->hdr.ctx);
}

/*
 * The same, of a request the wakee itself queued. A task's stretch can wake
 * threads for other reasons after a completion, as an interrupt bracket
 * cannot, so there the request must be the woken thread's own.
 */
static bool own_in_stretch(const void *rec, const void *arg)
{
	const struct ws_blkio_done *d = rec;
	const struct ws_wake *wk = arg;

	return in_stretch(rec, arg) && d->submit_tid == wk->wakee_tid;
}

/*
 * The completion that ran in the same interrupt bracket as @wk (or, in task
 * context, the same stretch), before it: the wakeup happened inside that
 * completion. Most recent first, because a bracket completing several
 * requests wakes each waiter right after its own. With @before, the latest
 * one older than that (in decode order), of any task's request.
 */
static const struct ws_blkio_done *completion_in(const struct blkio *b, const struct ws_wake *wk,
						 uint64_t before, uint64_t *seq)
{
	ws_recent_match_fn match = in_interrupt(wk->ctx) ? in_bracket
				   : before		 ? in_stretch
							 : own_in_stretch;

	return ws_recent_newest(&b->done, wk->cpu, before, match, wk, seq);
}

/*
 * The request whose completion woke @wk. An fsync's or fdatasync's empty write is ended by
 * the kernel's flush machinery, which has cleared its PREFLUSH flag by then: what shows it
 * was a flush is the flush request (REQ_OP_FLUSH) completed just before it in the same
 * bracket; that request is returned, as its times are the wait's before and in the device.
 */
static const struct ws_blkio_done *completion_of(const struct blkio *b, const struct ws_wake *wk)
{
	uint64_t seq;
	const struct ws_blkio_done *d = completion_in(b, wk, 0, &seq), *f;

	if (!d)
		return NULL;
	if (d->op == WS_BLKIO_OP_WRITE && d->bytes == 0 && d->data_len == 0 &&
	    (f = completion_in(b, wk, seq, NULL)) && f->op == WS_BLKIO_OP_FLUSH)
		return f;
	return d;
}

/* A cache flush: the flush request, or an empty write still flagged PREFLUSH. */
static bool is_flush(const struct ws_blkio_done *r)
{
	return r->op == WS_BLKIO_OP_FLUSH ||
	       ((r->flags & WS_BLKIO_F_PREFLUSH) && r->bytes == 0 && r->data_len == 0);
}

static const char *op_name(const struct ws_blkio_done *r)
{
	if (is_flush(r))
		return "flush";
	switch (r->op) {
	case WS_BLKIO_OP_READ:
		return "read";
	case WS_BLKIO_OP_WRITE:
		return "write";
	case WS_BLKIO_OP_DISCARD:
		return "discard";
	case WS_BLKIO_OP_SECURE_ERASE:
		return "secure_erase";
	case WS_BLKIO_OP_WRITE_ZEROES:
		return "write_zeroes";
	default:
		return "other";
	}
}

/* "preflush,fua,sync,meta,readahead", or "" */
static const char *flag_names(uint32_t f, char *buf, size_t len)
{
	static const struct {
		uint32_t bit;
		const char *name;
	} n[] = { { WS_BLKIO_F_PREFLUSH, "preflush" },
		  { WS_BLKIO_F_FUA, "fua" },
		  { WS_BLKIO_F_SYNC, "sync" },
		  { WS_BLKIO_F_META, "meta" },
		  { WS_BLKIO_F_RAHEAD, "readahead" } };
	size_t at = 0;

	buf[0] = 0;
	for (unsigned int i = 0; i < sizeof(n) / sizeof(n[0]); i++) {
		int k;

		if (!(f & n[i].bit))
			continue;
		k = snprintf(buf + at, len - at, "%s%s", at ? "," : "", n[i].name);
		if (k < 0 || (size_t)k >= len - at)
			break;
		at += k;
	}
	return buf;
}

/* @s into claim field @key; one too long keeps its end, "..." first (a path's own name). */
static void claim_tail(struct ws_plugin_ctx *ctx, struct ws_claim *out, const char *key,
		       const char *s)
{
	size_t n = strlen(s);
	char cut[FIELD_LEN];

	if (n < FIELD_LEN) {
		ctx->host->claim_str(out, key, s);
		return;
	}
	snprintf(cut, sizeof(cut), "...%s", s + n - (FIELD_LEN - 4));
	ctx->host->claim_str(out, key, cut);
}

/* The throttle's part of the wait: how long, the cgroup whose limit held it, that limit. */
static void claim_throttle(struct ws_plugin_ctx *ctx, const struct ws_blkio_done *r, uint64_t held,
			   struct ws_claim *out)
{
	char path[256], limit[FIELD_LEN] = "";

	ctx->host->claim_u64(out, "throttled_ns", held);
	if (blkio_throttle_of(ctx, r->held_cgroup, r->dev, r->op == WS_BLKIO_OP_WRITE, path,
			      sizeof(path), limit, sizeof(limit)))
		snprintf(path, sizeof(path), "cgroup id %" PRIu64, (uint64_t)r->held_cgroup);
	claim_tail(ctx, out, "throttle_cgroup", path);
	if (limit[0])
		ctx->host->claim_str(out, "throttle_limit", limit);
}

/*
 * Did the woken thread wait in a page fault? Its saved user registers were read (arch known)
 * and named no syscall: a user thread off CPU in the kernel outside any syscall is in an
 * exception, and the one that waits for a read is a page fault. A thread that runs no user code
 * (an io_uring worker) has no registers of its own: the sched source leaves its arch unknown.
 */
static bool in_page_fault(const struct ws_wake *wk)
{
	return wk->sz >= sizeof(*wk) && !wk->wakee_helper &&
	       wk->wakee_sys.arch != WS_ARCH_UNKNOWN && wk->wakee_sys.nr == WS_SYSCALL_NONE;
}

/*
 * What a read under a page fault read: "swap_in" (a swap area's sectors, @area) or "file", and
 * which file when the request's first page is one the fault added to that file's page cache
 * (its dentry's name, "" when it has none, and inode; the BPF side matched the page itself).
 */
static void claim_fault(struct ws_plugin_ctx *ctx, const struct ws_blkio_done *r,
			struct ws_claim *out)
{
	char area[FIELD_LEN], name[WS_BLKIO_FAULT_NAME];

	if (blkio_swap_of(ctx, r->dev, r->sector, area, sizeof(area))) {
		ctx->host->claim_str(out, "fault", "swap_in");
		claim_tail(ctx, out, "swap_area", area);
		return;
	}
	ctx->host->claim_str(out, "fault", "file");
	if (!r->fault_ino)
		return;
	/* a name the traced program chose, any bytes: cut at its 0, no control character left */
	memcpy(name, r->fault_name, sizeof(name));
	name[sizeof(name) - 1] = 0;
	for (char *p = name; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = '?';
	ctx->host->claim_str(out, "file", name);
	ctx->host->claim_u64(out, "inode", r->fault_ino);
}

static int blkio_infer(struct ws_plugin_ctx *ctx, const struct ws_wait *w, struct ws_claim *out)
{
	const struct ws_host *host = ctx->host;
	const struct ws_blkio_done *r;
	uint64_t wait, queue = 0, latency = 0, held = 0, device_from;
	char name[32], flags[48];
	bool fault;

	if (!w->wake)
		return 0;
	/* in task context, only a wait in D (as a block request's is) is looked at */
	if (!in_interrupt(w->wake->ctx) && !(w->off_state & 2 /* TASK_UNINTERRUPTIBLE */))
		return 0;
	r = completion_of(ctx->priv, w->wake);
	if (!r)
		return 0;
	wait = w->wake->ts > w->start_ns ? w->wake->ts - w->start_ns : 0;
	/*
	 * Held back by its cgroup's I/O limit: the request's bio left the throttle during the
	 * wait. Its submission is not seen (no tracepoint fires before blk_throtl_bio), so the
	 * held part runs from the wait's start, as the time before the device always has.
	 */
	if (r->held_until_ts > w->start_ns)
		held = r->held_until_ts - w->start_ns;
	if (held > wait)
		held = wait;
	/* Of the rest, the part before the request (last) reached the device. */
	device_from = w->start_ns + held;
	if (r->last_issue_ts > device_from)
		queue = r->last_issue_ts - device_from;
	if (queue > wait - held)
		queue = wait - held;
	if (r->last_issue_ts && r->hdr.ts > r->last_issue_ts)
		latency = r->hdr.ts - r->last_issue_ts;

	out->strength = WS_CLAIM_SPECIFIC;
	snprintf(out->kind, sizeof(out->kind), "block_io");
	out->woken_by = 0;
	out->root = true;
	if (in_interrupt(w->wake->ctx))
		snprintf(out->evidence, sizeof(out->evidence),
			 "woken inside completion of the request on the same CPU");
	else
		snprintf(
			out->evidence, sizeof(out->evidence),
			"woken right after its own request completed, same CPU, same run of tid %u",
			w->wake->waker_tid);
	host->claim_str(out, "dev", dev_name(ctx, r->dev, name, sizeof(name)));
	fault = r->op == WS_BLKIO_OP_READ && in_page_fault(w->wake);
	if (fault) {
		claim_fault(ctx, r, out);
		snprintf(out->evidence, sizeof(out->evidence),
			 "woken %s its read completed, same CPU; it blocked in no syscall",
			 in_interrupt(w->wake->ctx) ? "inside the interrupt where" : "right after");
	}
	if (!is_flush(r)) /* a flush has no sector (the kernel leaves it at -1 or 0) */
		host->claim_u64(out, "sector", r->sector);
	host->claim_u64(out, "bytes", r->bytes);
	host->claim_str(out, "op", op_name(r));
	/* a fault's read is always waited for: its room goes to what it read (the core adds the
	 * memory cgroup of a swap-in) */
	if (!fault) {
		host->claim_u64(out, "sync", r->sync);
		if (r->flags & WS_BLKIO_F_KNOWN)
			host->claim_str(out, "flags", flag_names(r->flags, flags, sizeof(flags)));
	}
	host->claim_u64(out, "queue_ns", queue);
	host->claim_u64(out, "device_ns", wait - held - queue);
	if (held)
		claim_throttle(ctx, r, held, out);
	host->claim_u64(out, "issued_by", r->submit_tid);
	/* Beyond WS_CLAIM_FIELDS (12) these are dropped by the host: with a throttle, both. */
	host->claim_u64(out, "latency_ns", latency);
	if (!fault) /* room for the memory cgroup's limit of a swap-in */
		host->claim_u64(out, "issues", r->nr_issues);
	return 1;
}

/* @ns with about three significant digits: "950ns", "1.5us", "299ms", "2.0s". */
static void fmt_ns(uint64_t ns, char *buf, size_t len)
{
	static const struct {
		uint64_t div;
		const char *unit;
	} u[] = { { 1000000000, "s" }, { 1000000, "ms" }, { 1000, "us" } };
	unsigned int i;

	for (i = 0; i < sizeof(u) / sizeof(u[0]); i++) {
		if (ns < u[i].div)
			continue;
		if (ns >= 10 * u[i].div)
			snprintf(buf, len, "%" PRIu64 "%s", (ns + u[i].div / 2) / u[i].div,
				 u[i].unit);
		else
			snprintf(buf, len, "%.1f%s", (double)ns / u[i].div, u[i].unit);
		return;
	}
	snprintf(buf, len, "%" PRIu64 "ns", ns);
}

/* "/whyslow-test-ab (1 reads/s on 7:0)", or the cgroup alone when its limit was not found. */
static const char *throttle_label(const struct ws_claim *c, char *buf, size_t len)
{
	const char *limit = ws_claim_str(c, "throttle_limit", NULL);

	if (limit)
		snprintf(buf, len, "%s (%s)", ws_claim_str(c, "throttle_cgroup", "?"), limit);
	else
		snprintf(buf, len, "%s", ws_claim_str(c, "throttle_cgroup", "?"));
	return buf;
}

/* Whether the claim's "flags" list has @name. */
static bool has_flag(const struct ws_claim *c, const char *name)
{
	const struct ws_field *f = ws_claim_field(c, "flags");
	size_t n = strlen(name);

	for (const char *p = f && f->type == WS_FIELD_STR ? f->s : ""; (p = strstr(p, name));
	     p += n)
		if ((p == f->s || p[-1] == ',') && (p[n] == 0 || p[n] == ','))
			return true;
	return false;
}

/* The memory cgroup the core named a swap-in with: its path, or its id (a recording's). */
static const char *memcg_name(const struct ws_claim *c, char *buf, size_t len)
{
	const char *path = ws_claim_str(c, "memory_cgroup", NULL);

	if (path)
		snprintf(buf, len, "%s", path);
	else
		snprintf(buf, len, "id %" PRIu64, ws_claim_u64(c, "memory_cgroup_id", 0));
	return buf;
}

static int blkio_describe(struct ws_plugin_ctx *ctx, const struct ws_claim *c, char *buf,
			  size_t len)
{
	const char *op = ws_claim_str(c, "op", "?"), *fault = ws_claim_str(c, "fault", "");
	char q[24], d[24], what[160], held[160] = "";

	if (ws_claim_u64(c, "throttled_ns", 0)) {
		char t[24];

		fmt_ns(ws_claim_u64(c, "throttled_ns", 0), t, sizeof(t));
		snprintf(held, sizeof(held), "held back %s by the I/O limit of %s, then ", t,
			 throttle_label(c, what, sizeof(what)));
	}
	fmt_ns(ws_claim_u64(c, "queue_ns", 0), q, sizeof(q));
	fmt_ns(ws_claim_u64(c, "device_ns", 0), d, sizeof(d));
	if (!strcmp(fault, "swap_in") && ws_claim_field(c, "limit_bytes"))
		return snprintf(
			buf, len,
			"swap-in from %s (dev %s, sector %" PRIu64 ", %" PRIu64
			" bytes read under a page fault; %s%s before the device, %s in it; memory cgroup %s reclaimed at its limit (%" PRIu64
			" MB) in the same run on CPU)",
			ws_claim_str(c, "swap_area", "?"), ws_claim_str(c, "dev", "?"),
			ws_claim_u64(c, "sector", 0), ws_claim_u64(c, "bytes", 0), held, q, d,
			memcg_name(c, what, sizeof(what)), ws_claim_u64(c, "limit_bytes", 0) >> 20);
	if (!strcmp(fault, "swap_in"))
		return snprintf(buf, len,
				"swap-in from %s (dev %s, sector %" PRIu64 ", %" PRIu64
				" bytes read under a page fault; %s%s before the device, %s in it)",
				ws_claim_str(c, "swap_area", "?"), ws_claim_str(c, "dev", "?"),
				ws_claim_u64(c, "sector", 0), ws_claim_u64(c, "bytes", 0), held, q,
				d);
	if (!strcmp(fault, "file") && ws_claim_field(c, "inode"))
		return snprintf(buf, len,
				"page fault reading %s (file \"%s\", inode %" PRIu64
				", sector %" PRIu64 ", %" PRIu64
				" bytes; %s%s before the device, %s in it)",
				ws_claim_str(c, "dev", "?"), ws_claim_str(c, "file", ""),
				ws_claim_u64(c, "inode", 0), ws_claim_u64(c, "sector", 0),
				ws_claim_u64(c, "bytes", 0), held, q, d);
	if (!strcmp(fault, "file"))
		return snprintf(buf, len,
				"page fault reading %s (sector %" PRIu64 ", %" PRIu64
				" bytes; %s%s before the device, %s in it)",
				ws_claim_str(c, "dev", "?"), ws_claim_u64(c, "sector", 0),
				ws_claim_u64(c, "bytes", 0), held, q, d);
	if (!strcmp(op, "flush"))
		snprintf(what, sizeof(what), "cache flush");
	else
		/* a write with PREFLUSH flushes first; FUA writes through the cache */
		snprintf(what, sizeof(what), "sector %" PRIu64 ", %" PRIu64 " bytes %s%s%s%s%s",
			 ws_claim_u64(c, "sector", 0), ws_claim_u64(c, "bytes", 0), op,
			 has_flag(c, "preflush") ? " after a cache flush" : "",
			 has_flag(c, "fua") ? ", FUA" : "", has_flag(c, "meta") ? ", metadata" : "",
			 has_flag(c, "readahead") ? ", readahead" : "");
	(void)ctx;
	return snprintf(buf, len, "block I/O (dev %s, %s; %s%s before the device, %s in it)",
			ws_claim_str(c, "dev", "?"), what, held, q, d);
}

/*
 * Every request on one disk is one cause when a waker's waits are weighed; a wait whose request
 * an I/O limit held back for at least half of it is that limit's (the root of the chain, the
 * critical path's part, the metrics' io_throttle class), its device time in its fields. A read
 * under a page fault is the swap area's (the metrics' memory class) or the fault's on its disk.
 */
static int blkio_resource(struct ws_plugin_ctx *ctx, const struct ws_claim *c, char *buf,
			  size_t len)
{
	const char *fault = ws_claim_str(c, "fault", "");
	uint64_t held = ws_claim_u64(c, "throttled_ns", 0);
	uint64_t rest = ws_claim_u64(c, "queue_ns", 0) + ws_claim_u64(c, "device_ns", 0);
	char label[160];

	(void)ctx;
	if (held && held >= rest)
		return snprintf(buf, len, "%s%s", WS_IO_LIMIT_PREFIX,
				throttle_label(c, label, sizeof(label)));
	if (!strcmp(fault, "swap_in"))
		return snprintf(buf, len, "%s%s", WS_SWAP_IN_PREFIX,
				ws_claim_str(c, "swap_area", "?"));
	if (!strcmp(fault, "file"))
		return snprintf(buf, len, "%s%s", WS_FAULT_READ_PREFIX,
				ws_claim_str(c, "dev", "?"));
	return snprintf(buf, len, "block I/O on %s", ws_claim_str(c, "dev", "?"));
}

static const struct ws_plugin blkio_plugin = {
	.sz = sizeof(struct ws_plugin),
	.abi_major = WS_ABI_MAJOR,
	.abi_minor = WS_ABI_MINOR,
	.name = NAME,
	.description = "block requests: queue and device time of the I/O a wakeup completed",
	.version = "1.0",
	.kind_base = WS_KIND_BLKIO,
	.bpf_object = blkio_bpf_object,
	.init = blkio_init,
	.decode = blkio_decode,
	.infer = blkio_infer,
	.describe = blkio_describe,
	.fini = blkio_fini,
	.resource = blkio_resource,
	.describe_open = blkio_describe_open,
};

WS_PLUGIN_DEFINE(blkio_plugin)
