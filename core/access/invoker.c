// SPDX-License-Identifier: MIT
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* setresuid */
#endif
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "invoker.h"
#include "fdpass.h"
#include "base/log.h"
#include "base/util.h"

static int parse_id(const char *var, const char *s, unsigned int *out)
{
	uint64_t v;

	/* digits only: strtoul("abc") is 0, and uid 0 is root */
	for (const char *p = s; *p; p++)
		if (*p < '0' || *p > '9')
			goto bad;
	if (!*s || ws_parse_u64(s, &v) || v >= 0xffffffffULL)
		goto bad;
	*out = v;
	return 0;
bad:
	ws_log(WS_LOG_ERROR,
	       "%s='%s' is not a user or group id; fix the sudo environment or use -u USER", var,
	       s);
	return -EINVAL;
}

int ws_invoker_get(struct ws_invoker *inv)
{
	const char *name = getenv("SUDO_USER"), *uid_s = getenv("SUDO_UID"),
		   *gid_s = getenv("SUDO_GID");
	struct passwd *pw;
	unsigned int id;

	memset(inv, 0, sizeof(*inv));
	if (geteuid() != 0 || (!name && !uid_s))
		return 0;
	if (name) {
		pw = getpwnam(name);
		if (!pw) {
			ws_log(WS_LOG_ERROR,
			       "SUDO_USER='%s' is not a known user; use -u USER or --as-root",
			       name);
			return -EINVAL;
		}
		inv->uid = pw->pw_uid;
		inv->gid = pw->pw_gid;
	} else {
		if (parse_id("SUDO_UID", uid_s, &id))
			return -EINVAL;
		inv->uid = id;
		inv->gid = id;
		if (gid_s) {
			if (parse_id("SUDO_GID", gid_s, &id))
				return -EINVAL;
			inv->gid = id;
		}
		pw = getpwuid(inv->uid);
	}
	if (pw) {
		snprintf(inv->name, sizeof(inv->name), "%s", pw->pw_name);
		inv->ngroups = WS_INVOKER_MAX_GROUPS;
		if (getgrouplist(pw->pw_name, inv->gid, inv->groups, &inv->ngroups) < 0)
			inv->ngroups = WS_INVOKER_MAX_GROUPS; /* truncated: the first ones */
	} else {
		inv->groups[0] = inv->gid;
		inv->ngroups = 1;
	}
	inv->sudo = true;
	return 0;
}

int ws_invoker_open(const struct ws_invoker *inv, const char *path, int flags)
{
	int sv[2], fd, err = EIO, status;
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sv))
		return -errno;
	pid = fork();
	if (pid < 0) {
		err = errno;
		close(sv[0]);
		close(sv[1]);
		return -err;
	}
	if (pid == 0) {
		/* async-signal-safe calls only: the parent may have threads */
		close(sv[0]);
		if (setgroups(inv->ngroups, inv->groups) ||
		    setresgid(inv->gid, inv->gid, inv->gid) ||
		    setresuid(inv->uid, inv->uid, inv->uid))
			err = errno;
		else if ((fd = open(path, flags | O_CLOEXEC)) >= 0 && !ws_fdpass_send(sv[1], 0, fd))
			_exit(0);
		else
			err = fd < 0 ? errno : EIO;
		ws_fdpass_send(sv[1], -err, -1);
		_exit(1);
	}
	close(sv[1]);
	fd = ws_fdpass_recv(sv[0], 0);
	close(sv[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	return fd;
}
