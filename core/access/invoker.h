/* SPDX-License-Identifier: MIT */
/*
 * Who root is working for: under sudo, the user who ran it (SUDO_USER, or
 * SUDO_UID/SUDO_GID when sudo left the name out). The command runs as that
 * user, and the files whyslow writes become theirs.
 */
#ifndef WS_INVOKER_H
#define WS_INVOKER_H

#include <stdbool.h>
#include <sys/types.h>

#define WS_INVOKER_MAX_GROUPS 256

struct ws_invoker {
	bool sudo; /* euid 0 on behalf of someone: the fields below are set */
	uid_t uid;
	gid_t gid;
	char name[64]; /* "" when the uid has no passwd entry */
	gid_t groups[WS_INVOKER_MAX_GROUPS];
	int ngroups;
};

/*
 * Fill @inv from the environment. 0 (inv->sudo false when not root or not
 * under sudo), or -EINVAL having printed one line (a SUDO_USER that does not
 * exist, a SUDO_UID or SUDO_GID that is not a number): never silently root.
 */
int ws_invoker_get(struct ws_invoker *inv);

/*
 * Open @path with @flags (O_CLOEXEC added) with @inv's credentials, in a
 * short-lived child that passes the descriptor back: the kernel's own
 * permission checks decide, as if the user had opened it. fd or -errno.
 */
int ws_invoker_open(const struct ws_invoker *inv, const char *path, int flags);

#endif
