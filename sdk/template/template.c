// SPDX-License-Identifier: MIT
/*
 * A whyslow source plugin to copy from. Follow the numbered STEPs (1 and 2
 * are in template_rec.h, 3 to 5 in template.bpf.c) and see docs/PLUGINS.md.
 *
 * This one records execve() of traced processes and claims no waits: it shows
 * the shape of every callback without competing with real sources.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* STEP 6: the SDK's one user-space header (pkg-config --cflags whyslow-plugin). */
#include <whyslow/plugin.h>

#include "template_rec.h"
/* STEP 7: the skeleton the build made with `bpftool gen skeleton`: it embeds the BPF object. */
#include "template.skel.h"

/* STEP 8: ini keys of your section ([template] in whyslow.ini), NULL-terminated. */
static const struct ws_config_key template_keys[] = {
	{ "log_exec", WS_CFG_BOOL, "no", 0, 0, "log every execve of a traced process" },
	{ NULL },
};

/*
 * STEP 9: your state lives in ctx->priv, one per session (never in file
 * statics: two sessions may run in one process). init runs first, when
 * tracing and when replaying a recording; fini frees what init made.
 */
struct template_state {
	bool log_exec;
};

static int template_init(struct ws_plugin_ctx *ctx)
{
	struct template_state *st = calloc(1, sizeof(*st));

	if (!st)
		return -ENOMEM;
	ctx->host->config_bool(ctx, "log_exec", &st->log_exec);
	ctx->priv = st;
	return 0;
}

static void template_fini(struct ws_plugin_ctx *ctx)
{
	free(ctx->priv);
	ctx->priv = NULL;
}

/* STEP 9b: configure runs after open, before load (tracing only): set rodata. */
static int template_configure(struct ws_plugin_ctx *ctx, struct bpf_object *obj)
{
	uint32_t on = 1;
	int err;

	err = ctx->host->set_rodata(ctx, obj, "template_enabled", &on, sizeof(on));
	if (err) {
		ctx->host->log(ctx, WS_LOG_ERROR, "cannot set template_enabled: %s",
			       strerror(-err));
		return err;
	}
	return 0;
}

/*
 * STEP 10: decode your records, in timestamp order. Check the size you need
 * (records only grow), keep the state infer will need, return -EINVAL for a
 * malformed record.
 */
static int template_decode(struct ws_plugin_ctx *ctx, const struct ws_rec_hdr *rec)
{
	const struct template_exec *e = (const void *)rec;
	char comm[sizeof(e->comm) + 1];

	if (rec->kind != TEMPLATE_EXEC || rec->size < sizeof(*e))
		return -EINVAL;
	memcpy(comm, e->comm, sizeof(e->comm));
	comm[sizeof(e->comm)] = 0;
	if (((const struct template_state *)ctx->priv)->log_exec)
		ctx->host->log(ctx, WS_LOG_INFO, "tid %u exec %s", rec->tid, comm);
	return 0;
}

/*
 * STEP 11: edge inference. Thread w->tid slept from w->start_ns until
 * w->wake. Fill @out and return 1 only when your own records prove why:
 * e.g. "the waker was inside X on the same object as the sleeper" — never
 * because two things overlapped in time. Say WS_CLAIM_SPECIFIC for a named
 * resource, set woken_by to the thread whose timeline explains the wait
 * next, root when the chain must end here. A wakeup in interrupt context
 * (w->wake->ctx & WS_CTX_HARDIRQ/SOFTIRQ) was not done by waker_tid.
 */
static int template_infer(struct ws_plugin_ctx *ctx, const struct ws_wait *w, struct ws_claim *out)
{
	(void)ctx;
	(void)w;
	(void)out;
	/*
	 * A claim would look like:
	 *	out->strength = WS_CLAIM_SPECIFIC;
	 *	snprintf(out->kind, sizeof(out->kind), "template");
	 *	out->woken_by = w->wake->waker_tid;
	 *	snprintf(out->evidence, sizeof(out->evidence), "waker did X on the same Y");
	 *	ctx->host->claim_hex(out, "object", addr);
	 *	return 1;
	 */
	return 0;
}

/* STEP 12: the words after "blocked 12ms on" for a claim of yours. */
static int template_describe(struct ws_plugin_ctx *ctx, const struct ws_claim *claim, char *buf,
			     size_t len)
{
	(void)ctx;
	return snprintf(buf, len, "template (%s)", claim->evidence);
}

static const void *template_bpf_object(size_t *size)
{
	return template_bpf__elf_bytes(size);
}

/*
 * STEP 13: the descriptor. sz and the ABI numbers record what you built
 * against; the name must equal the file name (template.so) and your ini
 * section. Every callback may be NULL (see plugin.h for what that means).
 */
static const struct ws_plugin template_plugin = {
	.sz = sizeof(struct ws_plugin),
	.abi_major = WS_ABI_MAJOR,
	.abi_minor = WS_ABI_MINOR,
	.name = "template",
	.description = "template: records execve of traced processes, claims nothing",
	.version = "1.0",
	.kind_base = TEMPLATE_KIND_BASE,
	.bpf_object = template_bpf_object,
	.config_keys = template_keys,
	.init = template_init,
	.configure = template_configure,
	.decode = template_decode,
	.infer = template_infer,
	.describe = template_describe,
	.fini = template_fini,
};

/* STEP 14: export the entry symbol, the only one the .so exports (-fvisibility=hidden). */
WS_PLUGIN_DEFINE(template_plugin)
