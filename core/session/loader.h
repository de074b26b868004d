/* SPDX-License-Identifier: MIT */
/* Finding, trusting and validating source plugins. */
#ifndef WS_LOADER_H
#define WS_LOADER_H

#include <stddef.h>

#include <whyslow/plugin.h>

struct ws_loaded {
	const struct ws_plugin *p;
	void *dl;
	int fd; /* the checked file, open while loaded: see ws_plugin_load */
	char path[512];
};

/*
 * Load @path and validate its descriptor. On failure returns a negative errno
 * and writes one line naming the file and the reason into @err.
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

#endif
