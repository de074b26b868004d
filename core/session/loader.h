/* SPDX-License-Identifier: MIT */
/* Finding, trusting and validating source plugins. */
#ifndef WS_LOADER_H
#define WS_LOADER_H

#include <stdbool.h>
#include <stddef.h>

#include <whyslow/plugin.h>

struct ws_loaded {
	/* the descriptor: @desc for a plugin (its own, normalised), the core's for a core source */
	const struct ws_plugin *p;
	struct ws_plugin desc;
	bool core; /* one of the core's own sources (sched/): no file, no dlopen */
	void *dl;
	int fd; /* the checked file, open while loaded: see ws_plugin_load */
	char path[512];
};

/*
 * Load @path and validate its descriptor, copied into @out->desc at this core's size (members
 * the plugin's SDK lacked are 0). On failure returns a negative errno and writes one line
 * naming the file and the reason into @err. @out must not be copied while loaded (@out->p
 * points into it).
 */
int ws_plugin_load(const char *path, struct ws_loaded *out, char *err, size_t errlen);
void ws_plugin_unload(struct ws_loaded *l);

/*
 * Refuse files an unprivileged user could have written: @path and every
 * directory above it must be owned by root or by us and not writable by group
 * or others (sticky directories such as /tmp excepted); symbolic links on the
 * way are followed only when nobody else could have placed them (trust.h).
 * 0, or -errno with a reason in @err. Checking alone leaves a race: to use the
 * file, use ws_trusted_open()'s descriptor instead.
 */
int ws_path_trusted(const char *path, char *err, size_t errlen);

/* Names of the plugins (*.so) in @dir, sorted; caller frees. Count or -errno. */
int ws_plugin_scan(const char *dir, char ***names);

/*
 * Names of every source: the core's own and the plugins in @dir, sorted (the order sources are
 * loaded, attached and asked in); caller frees. A file named like a core source is not listed
 * (never loaded): the core's is the one. Count or -errno.
 */
int ws_source_names(const char *dir, char ***names);

/* How many of ws_source_names() are the core's own sources, and the @i-th (NULL past them). */
int ws_core_sources(void);
const struct ws_plugin *ws_core_source_at(int i);

/*
 * The source @name: the core's own, or the plugin @dir/@name.so loaded as ws_plugin_load()
 * does (same errors).
 */
int ws_source_load(const char *dir, const char *name, struct ws_loaded *out, char *err,
		   size_t errlen);

#endif
