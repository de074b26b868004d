// SPDX-License-Identifier: MIT
/*
 * libFuzzer target for the recording reader (core/record/trace.c, and trace_zstd.c for
 * compressed recordings; the seeds zstd_*.data are compressed ones): whatever the
 * bytes, ws_trace_read() must return 0 or an error with a message, touch
 * nothing outside what it hands out, and allocate at most one record's cap.
 * Build and run: tests/fuzz/run.sh [SECONDS].
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "record/stuck_rec.h"
#include "record/trace.h"
#include "stacks/stackrec.h"

static volatile size_t sink;

static int on_meta(void *ctx, const struct ws_trace_meta *m)
{
	(void)ctx;
	sink += strlen(m->sources) + strlen(m->kernel) + strlen(m->versions) + (size_t)m->npids;
	for (int i = 0; i < m->npids; i++)
		sink += m->pids[i];
	return 0;
}

static int on_name(void *ctx, const char *source, uint64_t key, const char *name)
{
	(void)ctx;
	sink += key + strlen(source) + strlen(name);
	return 0;
}

static int on_thread(void *ctx, const struct ws_trace_thread *t)
{
	(void)ctx;
	sink += t->tid + strlen(t->comm);
	return 0;
}

static int on_event(void *ctx, const struct ws_rec_hdr *rec)
{
	const uint8_t *p = (const void *)rec;

	(void)ctx;
	/* the reader promises rec->size readable bytes */
	for (size_t i = 0; i < rec->size; i++)
		sink += p[i];
	/* resolved stacks: the decoder accepts only what it can hand out whole */
	if (rec->kind == WS_KIND_STACK) {
		struct ws_stack *st;

		if (!ws_stackrec_decode(rec, &st)) {
			for (uint32_t i = 0; i < st->n; i++) {
				const struct ws_frame *f = &st->frames[i].f;

				sink += f->ip + (f->sym ? strlen(f->sym) : 0) +
					(f->module ? strlen(f->module) : 0) +
					(f->file ? strlen(f->file) : 0);
			}
			/* a Python waiter's GIL holder's frames (format 1.8) */
			for (uint32_t i = 0; i < st->nholder; i++) {
				const struct ws_frame *f = &st->holder[i].f;

				sink += f->ip + f->line + (f->sym ? strlen(f->sym) : 0) +
					(f->file ? strlen(f->file) : 0);
			}
			ws_stack_free(st);
		}
	}
	return 0;
}

static int on_summary(void *ctx, const struct ws_trace_summary *s, const char *lost_json)
{
	(void)ctx;
	sink += s->records + (lost_json ? strlen(lost_json) : 0);
	return 0;
}

/* the open waits: decoded, then printed both ways as report would */
static int on_open_waits(void *ctx, const void *p, size_t len)
{
	struct ws_stuck st;
	FILE *null = fopen("/dev/null", "we");
	int err = ws_stuck_decode(p, len, &st);

	(void)ctx;
	if (!err && null) {
		ws_stuck_print(null, &st, 0, true, NULL);
		ws_stuck_print(null, &st, 0, false, "open waits");
	}
	if (null)
		fclose(null);
	ws_stuck_free(&st);
	return err == -EINVAL ? -EBADMSG : err;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct ws_trace_ops ops = {
		.meta = on_meta,
		.name = on_name,
		.thread = on_thread,
		.event = on_event,
		.summary = on_summary,
		.open_waits = on_open_waits,
	};
	char err[512];
	FILE *f;
	int rc;

	if (!size)
		return 0;
	f = fmemopen((void *)data, size, "r");
	if (!f)
		return 0;
	rc = ws_trace_read(f, "fuzz", &ops, NULL, err, sizeof(err));
	fclose(f);
	/* every refusal explains itself with an offset */
	if (rc && (!err[0] || !strstr(err, "offset ")))
		__builtin_trap();
	return 0;
}
