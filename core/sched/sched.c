// SPDX-License-Identifier: MIT
/*
 * The scheduler model's descriptor (see sched.h): its BPF object, built with the core, and what
 * it sets in it before load.
 */
#include <string.h>

#include "sched.h"
#include "sched_claims.h"
#include "sched_open.h"
#include "sched_rec.h"
#include "sched.skel.h"

static const void *sched_object(size_t *size)
{
	return sched_bpf__elf_bytes(size);
}

/* Off-CPU periods shorter than the core's resolution are summarised in the kernel. */
static int sched_configure(struct ws_plugin_ctx *ctx, struct bpf_object *obj)
{
	uint64_t res = ctx->host->resolution_ns(ctx);
	int err;

	err = ctx->host->set_rodata(ctx, obj, "resolution_ns", &res, sizeof(res));
	if (err)
		ctx->host->log(ctx, WS_LOG_ERROR, "cannot set the resolution: %s", strerror(-err));
	return err;
}

/*
 * A descriptor like a plugin's, so the session lists, configures, loads and asks it as it does
 * every source (in the same order: kill and net attach before it, see their BPF programs); its
 * records do not go through decode (ws_sched_decode feeds the graph directly).
 */
const struct ws_plugin ws_sched_source = {
	.sz = sizeof(struct ws_plugin),
	.abi_major = WS_ABI_MAJOR,
	.abi_minor = WS_ABI_MINOR,
	.name = "sched",
	.description = "scheduler: context switches, wakeups (with interrupt context), thread life",
	.version = "1.7",
	.kind_base = WS_KIND_SCHED,
	.bpf_object = sched_object,
	.configure = sched_configure,
	.infer = ws_sched_infer,
	.describe = ws_sched_describe,
	.root_label = ws_sched_root_label,
	.describe_open = ws_sched_describe_open,
};
