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

static bool log_exec;

/* STEP 9: configure runs after open, before load: read settings, set rodata. */
static int template_configure(const struct ws_host *host, struct bpf_object *obj)
{
	uint32_t on = 1;
	int err;

	host->config_bool("template", "log_exec", &log_exec);
	err = host->set_rodata(obj, "template_enabled", &on, sizeof(on));
	if (err) {
		host->log(WS_LOG_ERROR, "template", "cannot set template_enabled: %s",
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
static int template_decode(const struct ws_host *host, const struct ws_rec_hdr *rec)
{
	const struct template_exec *e = (const void *)rec;
	char comm[sizeof(e->comm) + 1];

	if (rec->kind != TEMPLATE_EXEC || rec->size < sizeof(*e))
		return -EINVAL;
	memcpy(comm, e->comm, sizeof(e->comm));
	comm[sizeof(e->comm)] = 0;
	if (log_exec)
		host->log(WS_LOG_INFO, "template", "tid %u exec %s", rec->tid, comm);
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
static int template_infer(const struct ws_host *host, const struct ws_wait *w, struct ws_claim *out)
{
	(void)host;
	(void)w;
	(void)out;
	/*
	 * A claim would look like:
	 *	out->strength = WS_CLAIM_SPECIFIC;
	 *	snprintf(out->kind, sizeof(out->kind), "template");
	 *	out->woken_by = w->wake->waker_tid;
	 *	snprintf(out->evidence, sizeof(out->evidence), "waker did X on the same Y");
	 *	host->claim_hex(out, "object", addr);
	 *	return 1;
	 */
	return 0;
}

/* STEP 12: the words after "blocked 12ms on" for a claim of yours. */
static int template_describe(const struct ws_claim *claim, char *buf, size_t len)
{
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
	.configure = template_configure,
	.decode = template_decode,
	.infer = template_infer,
	.describe = template_describe,
	.fini = NULL,
};

/* STEP 14: export the entry symbol, the only one the .so exports (-fvisibility=hidden). */
WS_PLUGIN_DEFINE(template_plugin)
