/* SPDX-License-Identifier: MIT */
/*
 * Opening files root is about to trust (plugins, the plugin directory, -c
 * config) without a window between the check and the use: the path is walked
 * one component at a time with O_NOFOLLOW, each directory and the file itself
 * is checked on the descriptor that was opened, and the caller uses that
 * descriptor (dlopen("/proc/self/fd/N"), fdopen) instead of the name.
 *
 * Rule: every directory and the file are owned by root or by us (euid) and
 * are not writable by group or others (a sticky directory such as /tmp
 * excepted). A symbolic link is followed only if it and the directory holding
 * it are owned by root or us and not writable by group or others (no sticky
 * exception), and its target passes the same walk; at most 40 links.
 */
#ifndef WS_TRUST_H
#define WS_TRUST_H

#include <stddef.h>

enum ws_trust_kind {
	WS_TRUST_FILE, /* a regular file, opened O_RDONLY */
	WS_TRUST_DIR,  /* a directory, opened O_RDONLY|O_DIRECTORY */
};

/*
 * Open @path as @kind after checking it and every directory above it (see
 * above). A descriptor (O_CLOEXEC), or -errno with one line naming @path and
 * the reason in @err.
 */
int ws_trusted_open(const char *path, enum ws_trust_kind kind, char *err, size_t errlen);

#endif
