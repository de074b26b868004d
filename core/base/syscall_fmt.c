// SPDX-License-Identifier: MIT
/*
 * A wait's syscall in words. Only the arguments that identify what the thread
 * waited for are shown: the futex word, the file descriptor, the timeout
 * when it is a plain number. fd numbers are not turned into paths here.
 */
#include <inttypes.h>
#include <stdint.h>
#include <string.h>

#include <whyslow/syscall_names.h>

#include "syscall_fmt.h"
#include "util.h"

enum shape {
	SHAPE_NONE,    /* name() */
	SHAPE_FD,      /* first argument is the fd waited on */
	SHAPE_FUTEX,   /* futex(uaddr, op, ...) */
	SHAPE_UADDR,   /* futex_wait/futex_wake(uaddr, ...) */
	SHAPE_EPOLL,   /* epoll_wait(epfd, events, max, timeout ms) */
	SHAPE_POLL,    /* poll(fds, n, timeout ms) */
	SHAPE_WAITPID, /* wait4(pid, ...) */
};

static const struct {
	const char *name;
	enum shape shape;
} shapes[] = {
	{ "read", SHAPE_FD },	       { "write", SHAPE_FD },
	{ "pread64", SHAPE_FD },       { "pwrite64", SHAPE_FD },
	{ "readv", SHAPE_FD },	       { "writev", SHAPE_FD },
	{ "preadv", SHAPE_FD },	       { "pwritev", SHAPE_FD },
	{ "preadv2", SHAPE_FD },       { "pwritev2", SHAPE_FD },
	{ "recvfrom", SHAPE_FD },      { "recvmsg", SHAPE_FD },
	{ "recvmmsg", SHAPE_FD },      { "sendto", SHAPE_FD },
	{ "sendmsg", SHAPE_FD },       { "sendmmsg", SHAPE_FD },
	{ "accept", SHAPE_FD },	       { "accept4", SHAPE_FD },
	{ "connect", SHAPE_FD },       { "fsync", SHAPE_FD },
	{ "fdatasync", SHAPE_FD },     { "sync_file_range", SHAPE_FD },
	{ "flock", SHAPE_FD },	       { "fcntl", SHAPE_FD },
	{ "ioctl", SHAPE_FD },	       { "splice", SHAPE_FD },
	{ "sendfile", SHAPE_FD },      { "futex", SHAPE_FUTEX },
	{ "futex_wait", SHAPE_UADDR }, { "futex_wake", SHAPE_UADDR },
	{ "epoll_wait", SHAPE_EPOLL }, { "epoll_pwait", SHAPE_EPOLL },
	{ "poll", SHAPE_POLL },	       { "wait4", SHAPE_WAITPID },
	{ "waitid", SHAPE_WAITPID },
};

static enum shape shape_of(const char *name)
{
	/*
	 * The last few names asked about, by address (the names table's own strings): every
	 * wakeup normalises its syscall, and a score of string compares each time was a twentieth
	 * of `report` on a busy database.
	 */
	static __thread struct {
		const char *name;
		enum shape shape;
	} seen[4];
	static __thread unsigned int next;
	enum shape sh = SHAPE_NONE;

	for (size_t i = 0; i < sizeof(seen) / sizeof(seen[0]); i++)
		if (seen[i].name == name)
			return seen[i].shape;
	for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++)
		if (!strcmp(shapes[i].name, name)) {
			sh = shapes[i].shape;
			break;
		}
	seen[next].name = name;
	seen[next].shape = sh;
	next = (next + 1) % (sizeof(seen) / sizeof(seen[0]));
	return sh;
}

/* futex(2) command names as functions (uapi <linux/futex.h>). */
static const char *const futex_cmds[] = {
	"futex_wait",		"futex_wake",	     "futex_fd",	  "futex_requeue",
	"futex_cmp_requeue",	"futex_wake_op",     "futex_lock_pi",	  "futex_unlock_pi",
	"futex_trylock_pi",	"futex_wait_bitset", "futex_wake_bitset", "futex_wait_requeue_pi",
	"futex_cmp_requeue_pi", "futex_lock_pi2",
};

static const char *futex_cmd(uint64_t op)
{
	unsigned int cmd = op & 127; /* without FUTEX_PRIVATE_FLAG, FUTEX_CLOCK_REALTIME */

	return cmd < sizeof(futex_cmds) / sizeof(futex_cmds[0]) ? futex_cmds[cmd] : "futex";
}

static const char *name_of(const struct ws_syscall *s)
{
	return ws_syscall_known(s) ? ws_syscall_name(s->arch, s->nr) : NULL;
}

int ws_syscall_format(const struct ws_syscall *s, char *buf, size_t len)
{
	const char *name = name_of(s);
	int timeout;

	if (len)
		buf[0] = 0;
	if (!ws_syscall_known(s))
		return 0;
	if (!name)
		return snprintf(buf, len, "syscall %d", s->nr);
	switch (shape_of(name)) {
	case SHAPE_FD:
		return snprintf(buf, len, "%s(fd %d)", name, (int)s->args[0]);
	case SHAPE_FUTEX:
		return snprintf(buf, len, "%s(0x%" PRIx64 ")", futex_cmd(s->args[1]),
				(uint64_t)s->args[0]);
	case SHAPE_UADDR:
		return snprintf(buf, len, "%s(0x%" PRIx64 ")", name, (uint64_t)s->args[0]);
	case SHAPE_EPOLL:
	case SHAPE_POLL:
		timeout = (int)s->args[shape_of(name) == SHAPE_EPOLL ? 3 : 2];
		if (timeout < 0)
			return snprintf(buf, len, "%s(no timeout)", name);
		return snprintf(buf, len, "%s(timeout %dms)", name, timeout);
	case SHAPE_WAITPID:
		return snprintf(buf, len, "%s(pid %d)", name,
				(int)s->args[strcmp(name, "waitid") ? 0 : 1]);
	case SHAPE_NONE:
		break;
	}
	return snprintf(buf, len, "%s()", name);
}

int ws_syscall_fd(const struct ws_syscall *s)
{
	const char *name = name_of(s);

	if (!name)
		return -1;
	switch (shape_of(name)) {
	case SHAPE_FD:
	case SHAPE_EPOLL:
		return (int)s->args[0] >= 0 ? (int)s->args[0] : -1;
	default:
		return -1;
	}
}

int ws_syscall_format_path(const struct ws_syscall *s, const char *path, char *buf, size_t len)
{
	int n = ws_syscall_format(s, buf, len);

	/* "read(fd 3)" -> "read(fd 3 → /path)": the fd is the call's first shown argument */
	if (n > 0 && path && ws_syscall_fd(s) >= 0 && (size_t)n < len && buf[n - 1] == ')') {
		buf[n - 1] = 0;
		return snprintf(buf + n - 1, len - (n - 1), " %s %s)", ws_arrow_to(), path) + n - 1;
	}
	return n;
}

void ws_syscall_json(FILE *f, const struct ws_syscall *s)
{
	const char *name = name_of(s);

	if (!ws_syscall_known(s))
		return;
	fprintf(f, ",\"syscall\":{\"nr\":%d,\"name\":", s->nr);
	ws_json_str(f, name ? name : "?");
	fprintf(f, ",\"args\":{");
	switch (name ? shape_of(name) : SHAPE_NONE) {
	case SHAPE_FD:
		fprintf(f, "\"fd\":%d", (int)s->args[0]);
		break;
	case SHAPE_FUTEX:
		fprintf(f, "\"uaddr\":\"0x%" PRIx64 "\",\"op\":%u,\"cmd\":", (uint64_t)s->args[0],
			(unsigned int)s->args[1]);
		ws_json_str(f, futex_cmd(s->args[1]));
		fprintf(f, ",\"timeout\":%s", s->args[3] ? "true" : "false");
		break;
	case SHAPE_UADDR:
		fprintf(f, "\"uaddr\":\"0x%" PRIx64 "\"", (uint64_t)s->args[0]);
		break;
	case SHAPE_EPOLL:
		fprintf(f, "\"fd\":%d,\"timeout_ms\":%d", (int)s->args[0], (int)s->args[3]);
		break;
	case SHAPE_POLL:
		fprintf(f, "\"timeout_ms\":%d", (int)s->args[2]);
		break;
	case SHAPE_WAITPID:
		fprintf(f, "\"pid\":%d", (int)s->args[strcmp(name, "waitid") ? 0 : 1]);
		break;
	case SHAPE_NONE:
		break;
	}
	fprintf(f, "}}");
}

void ws_syscall_normalize(struct ws_syscall *s)
{
	const char *name = name_of(s);
	uint64_t keep[6] = { 0 };

	if (!ws_syscall_known(s)) {
		memset(s, 0, sizeof(*s));
		return;
	}
	switch (name ? shape_of(name) : SHAPE_NONE) {
	case SHAPE_FD:
	case SHAPE_UADDR:
		keep[0] = s->args[0];
		break;
	case SHAPE_FUTEX:
		keep[0] = s->args[0];
		keep[1] = s->args[1];
		keep[3] = s->args[3] != 0; /* only whether it had a timeout */
		break;
	case SHAPE_EPOLL:
		keep[0] = s->args[0];
		keep[3] = s->args[3];
		break;
	case SHAPE_POLL:
		keep[2] = s->args[2];
		break;
	case SHAPE_WAITPID:
		keep[0] = s->args[0];
		keep[1] = s->args[1];
		break;
	case SHAPE_NONE:
		break;
	}
	memcpy(s->args, keep, sizeof(keep));
	s->reserved = 0;
}
