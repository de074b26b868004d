// SPDX-License-Identifier: MIT
/*
 * Plugins whose BPF cannot be loaded, for the reliability tests
 * (tests/e2e/reliability/rel_bad_input.sh):
 *   BAD_ELF:      bpf_object() returns bytes that are no ELF at all (libbpf refuses to open it);
 *   BAD_VERIFIER: a real BPF object (bad_verifier.bpf.c) the kernel's verifier rejects.
 * PLUGIN_NAME must match the file name (the loader insists).
 */
#include <errno.h>
#include <string.h>

#include <whyslow/plugin.h>

#ifdef BAD_VERIFIER
#include "bad_verifier.skel.h"

static const void *obj_bytes(size_t *size)
{
	return bad_verifier_bpf__elf_bytes(size);
}
#else
static const unsigned char garbage[] =
	"\177ELF this is not a BPF object, just garbage bytes \x01\x02\x03";

static const void *obj_bytes(size_t *size)
{
	*size = sizeof(garbage);
	return garbage;
}
#endif

static int decode(struct ws_plugin_ctx *ctx, const struct ws_rec_hdr *rec)
{
	(void)ctx, (void)rec;
	return 0;
}

static const struct ws_plugin desc = {
	.sz = sizeof(struct ws_plugin),
	.abi_major = WS_ABI_MAJOR,
	.abi_minor = WS_ABI_MINOR,
	.name = PLUGIN_NAME,
	.description = "a plugin whose BPF fails to load (reliability tests)",
	.version = "0",
	.kind_base = KIND_BASE,
	.bpf_object = obj_bytes,
	.decode = decode,
};

WS_PLUGIN_DEFINE(desc)
