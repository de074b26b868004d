// SPDX-License-Identifier: MIT
/* The default plugin directory: see plugin_dir.h. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "plugin_dir.h"

/*
 * Meson passes the plugin directory as seen from the bindir
 * ("../lib/x86_64-linux-gnu/whyslow/plugins"); empty when the bindir or the
 * libdir was set absolute, where no such relation holds.
 */
#ifndef WS_PLUGINDIR_FROM_BIN
#define WS_PLUGINDIR_FROM_BIN ""
#endif

/*
 * @exe's directory with @rel applied: each leading "../" drops one trailing
 * component, so the result names no ".." (messages show it). 0, or -1 when it
 * does not fit or climbs above /.
 */
static int relocate(const char *exe, const char *rel, char *out, size_t len)
{
	char *slash;

	if (strlen(exe) >= len)
		return -1;
	strcpy(out, exe);
	slash = strrchr(out, '/');
	if (!slash)
		return -1;
	*slash = 0; /* the executable's directory */
	while (!strncmp(rel, "../", 3)) {
		slash = strrchr(out, '/');
		if (!slash || slash == out)
			return -1;
		*slash = 0;
		rel += 3;
	}
	if ((size_t)snprintf(out + strlen(out), len - strlen(out), "/%s", rel) >= len - strlen(out))
		return -1;
	return 0;
}

const char *ws_plugin_dir_default(void)
{
	static char dir[PATH_MAX];
	char exe[PATH_MAX];
	struct stat st;
	ssize_t n;

	if (!*WS_PLUGINDIR_FROM_BIN)
		return WS_PLUGINDIR;
	/* the file that runs, links resolved: a link in /usr/local/bin to a venv finds the venv */
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0 || exe[0] != '/')
		return WS_PLUGINDIR;
	exe[n] = 0;
	/*
	 * Only whether it exists is asked here (the build tree has none: the compiled-in one
	 * stays the default there); whether root may load from it is the loader's check.
	 */
	if (relocate(exe, WS_PLUGINDIR_FROM_BIN, dir, sizeof(dir)) || lstat(dir, &st))
		return WS_PLUGINDIR;
	return dir;
}

const char *ws_plugin_dir_pick(const char *given)
{
	const char *env = getenv("WHYSLOW_PLUGIN_DIR");

	if (given)
		return given;
	return env ? env : ws_plugin_dir_default();
}
