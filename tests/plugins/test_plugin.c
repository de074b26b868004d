// SPDX-License-Identifier: MIT
/*
 * A plugin with one thing wrong, chosen at build time, for the loader tests:
 * BAD_MAJOR, ABI1, ABI2, NEWER_MINOR, NEWER_MEMBER, NO_NAME, SMALL_SZ, NO_ENTRY; none of them: a
 * good one. ABI1 is a plugin built against the 1.x SDK (its descriptor is 1.1's size); ABI2 one
 * built against the 2.5 SDK (it says 2.5; its host table would be 2.x's). NEWER_MINOR says a newer
 * minor but sets nothing this core lacks; NEWER_MEMBER also sets a callback appended after it
 * (in what is this core's reserved space).
 */
#include <whyslow/plugin.h>

#ifdef NEWER_MEMBER
static void not_known_here(void)
{
}
#endif

static const struct ws_plugin desc = {
#ifdef SMALL_SZ
	.sz = 16,
#elif defined(ABI1)
	.sz = offsetof(struct ws_plugin, init) + 6 * sizeof(void *),
#else
	.sz = sizeof(struct ws_plugin),
#endif
#ifdef BAD_MAJOR
	.abi_major = WS_ABI_MAJOR + 1,
#elif defined(ABI1)
	.abi_major = 1,
#elif defined(ABI2)
	.abi_major = 2,
#else
	.abi_major = WS_ABI_MAJOR,
#endif
#if defined(NEWER_MINOR) || defined(NEWER_MEMBER)
	.abi_minor = WS_ABI_MINOR + 1,
#elif defined(ABI1)
	.abi_minor = 1,
#elif defined(ABI2)
	.abi_minor = 5,
#else
	.abi_minor = WS_ABI_MINOR,
#endif
#ifndef NO_NAME
	.name = PLUGIN_NAME,
#endif
	.description = "a plugin for the loader tests",
	.version = "0",
	.kind_base = 0x7000,
#ifdef NEWER_MEMBER
	.reserved = { not_known_here },
#endif
};

#ifdef NO_ENTRY
WS_PLUGIN_EXPORT const struct ws_plugin *not_the_entry(void);
WS_PLUGIN_EXPORT const struct ws_plugin *not_the_entry(void)
{
	return &desc;
}
#else
WS_PLUGIN_DEFINE(desc)
#endif
