// SPDX-License-Identifier: MIT
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* setresuid, O_PATH, close_range */
#endif
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/magic.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <time.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include "useropen.h"
#include "fdpass.h"
#include "base/util.h"

#ifndef FUSE_SUPER_MAGIC
#define FUSE_SUPER_MAGIC 0x65735546
#endif

#if defined(__x86_64__)
#define NATIVE_AUDIT_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define NATIVE_AUDIT_ARCH AUDIT_ARCH_AARCH64
#endif

/* helpers kept at once (one per set of credentials); the least recently used goes first */
#define HELPERS 8
/* timed-out opens after which a user's files are no longer tried this session, and after which
 * no one's are: each one stalls the reader for a whole deadline */
#define TIMEOUTS_MAX 3
#define TIMEOUTS_SESSION_MAX 10
/* users whose timeouts are remembered (past it, the session's budget still bounds the stalls) */
#define TIMEOUT_USERS 64
/* helpers killed but not yet reaped: one stuck in an uninterruptible wait (a FUSE request its
 * daemon read and never answers) outlives SIGKILL, and is never waited for */
#define DYING_MAX 64
/* the user nobody: whose permissions open a file when the process's user is not known */
#define NOBODY_ID 65534
#define DEFAULT_TIMEOUT_MS 1000

struct helper {
	struct ws_reader_id id;
	bool used_slot;
	pid_t pid; /* 0: not running (never started, or killed) */
	int sock;
	uint64_t used;
};

struct ws_useropen {
	struct helper h[HELPERS];
	uint64_t clock;
	int timeout_ms;
	struct {
		uid_t uid;
		unsigned int n;
	} timeouts[TIMEOUT_USERS];
	unsigned int ntimeout_users, timeouts_total;
	pid_t dying[DYING_MAX];
	unsigned int ndying;
};

struct request {
	uint32_t flags;
	char path[PATH_MAX];
};

/* --- /proc/PID/status ---------------------------------------------------------------------- */

/* The 4th number of "Uid:\tR\tE\tS\tFS": the filesystem id. */
static int fourth_id(const char *line, unsigned int *out)
{
	unsigned long v[4];

	if (sscanf(line, "%lu %lu %lu %lu", &v[0], &v[1], &v[2], &v[3]) != 4 || v[3] > UINT_MAX)
		return -EINVAL;
	*out = (unsigned int)v[3];
	return 0;
}

int ws_reader_id_parse(const char *status, struct ws_reader_id *id)
{
	bool have_uid = false, have_gid = false;
	unsigned int v;

	memset(id, 0, sizeof(*id));
	for (const char *l = status; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		if (!strncmp(l, "Uid:", 4) && !fourth_id(l + 4, &v)) {
			id->uid = v;
			have_uid = true;
		} else if (!strncmp(l, "Gid:", 4) && !fourth_id(l + 4, &v)) {
			id->gid = v;
			have_gid = true;
		} else if (!strncmp(l, "Groups:", 7)) {
			const char *p = l + 7;
			char *end;

			while (id->ngroups < WS_READER_MAX_GROUPS) {
				unsigned long g;

				while (*p == ' ' || *p == '\t')
					p++;
				if (*p < '0' || *p > '9')
					break;
				g = strtoul(p, &end, 10);
				if (g > UINT_MAX)
					return -EINVAL;
				id->groups[id->ngroups++] = (gid_t)g;
				p = end;
			}
		}
	}
	return have_uid && have_gid ? 0 : -EINVAL;
}

int ws_reader_id_of(pid_t pid, struct ws_reader_id *id)
{
	char path[40], *text = NULL;
	size_t len;
	int err;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if ((err = ws_read_file(path, 2048, &text, &len)))
		return err == -ESRCH ? -ENOENT : err;
	err = ws_reader_id_parse(text, id);
	free(text);
	return err;
}

/* --- what may be read: the same checks in the helper and, again, in root's process ---------- */

/* The kernel's own files look regular, and reading some consumes what others wait for (the
 * kernel log, a trace pipe): none holds a program's symbols. */
static bool pseudo_fs(unsigned long type)
{
	static const unsigned long types[] = {
		PROC_SUPER_MAGIC, SYSFS_MAGIC,	      DEBUGFS_MAGIC,	   TRACEFS_MAGIC,
		SECURITYFS_MAGIC, CGROUP_SUPER_MAGIC, CGROUP2_SUPER_MAGIC, BPF_FS_MAGIC,
		PSTOREFS_MAGIC,	  EFIVARFS_MAGIC,     DEVPTS_SUPER_MAGIC,
	};

	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		if (type == types[i])
			return true;
	return false;
}

static int check_fd(int fd, unsigned int flags, uid_t owner)
{
	struct statfs sfs;
	struct stat st;

	if (fstat(fd, &st))
		return -errno;
	if (S_ISLNK(st.st_mode)) /* O_PATH|O_NOFOLLOW opens the link itself */
		return -ELOOP;
	if (!S_ISREG(st.st_mode))
		return WS_UOPEN_ENOTREG;
	if ((flags & WS_UOPEN_OWNED) && st.st_uid != owner && st.st_uid != 0)
		return WS_UOPEN_EOWNER;
	if (fstatfs(fd, &sfs))
		return -errno;
	if ((unsigned long)sfs.f_type == FUSE_SUPER_MAGIC)
		return WS_UOPEN_EFUSE;
	if (pseudo_fs((unsigned long)sfs.f_type))
		return WS_UOPEN_ENOTREG;
	return 0;
}

/*
 * Open @path for reading by our rules: looked up first with O_PATH, which opens nothing (a
 * device's or a FIFO's open() has effects, or blocks), and opened for reading only once it is
 * known to be a regular file, through the descriptor, so it is the same inode.
 */
static int open_checked(const char *path, unsigned int flags, uid_t owner)
{
	int pfd = open(path, O_PATH | O_CLOEXEC | ((flags & WS_UOPEN_NOFOLLOW) ? O_NOFOLLOW : 0));
	char self[40];
	int fd, err;

	if (pfd < 0)
		return -errno;
	if ((err = check_fd(pfd, flags, owner))) {
		close(pfd);
		return err;
	}
	snprintf(self, sizeof(self), "/proc/self/fd/%d", pfd);
	fd = open(self, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	err = fd < 0 ? -errno : 0;
	close(pfd);
	return fd < 0 ? err : fd;
}

/* --- the helper --------------------------------------------------------------------------- */

#ifdef NATIVE_AUDIT_ARCH
#define ALLOW(nr)                                        \
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (nr), 0, 1), \
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)

/* Receiving a request, opening, checking and sending the result back: nothing else. */
static int install_seccomp(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, NATIVE_AUDIT_ARCH, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
#ifdef __NR_open
		ALLOW(__NR_open),
#endif
#ifdef __NR_fstat
		ALLOW(__NR_fstat),
#endif
		ALLOW(__NR_openat),
		ALLOW(__NR_newfstatat),
		ALLOW(__NR_statx),
		ALLOW(__NR_fstatfs),
		ALLOW(__NR_close),
		ALLOW(__NR_recvfrom),
		ALLOW(__NR_recvmsg),
		ALLOW(__NR_sendto),
		ALLOW(__NR_sendmsg),
		ALLOW(__NR_exit),
		ALLOW(__NR_exit_group),
		ALLOW(__NR_rt_sigreturn),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
	};
	struct sock_fprog prog = { .len = sizeof(f) / sizeof(f[0]), .filter = f };

	return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0);
}
#else
static int install_seccomp(void)
{
	return 0; /* no filter for an architecture we do not know the numbers of */
}
#endif

/* The child's whole life: system calls only (the parent may have threads), no allocation. */
static void __attribute__((noreturn))
helper_main(int sock, const struct ws_reader_id *id, pid_t parent)
{
	static const struct rlimit no_core = { 0, 0 };
	struct request rq;

	/* a Ctrl-C at the terminal is for whyslow, not for it; and the user it runs as may signal
	 * it: no signal but SIGKILL and SIGSTOP does anything, none dumps a core of root's memory
	 */
	setpgid(0, 0);
	for (int sig = 1; sig < NSIG; sig++)
		if (sig != SIGKILL && sig != SIGSTOP)
			signal(sig, SIG_IGN);
	if (setrlimit(RLIMIT_CORE, &no_core))
		_exit(1);
	/* nothing of whyslow's: a BPF link or map held here would outlive it */
	if (sock != 3) {
		if (dup2(sock, 3) < 0)
			_exit(1);
		sock = 3;
	}
	syscall(SYS_close_range, 0, 2, 0);
	syscall(SYS_close_range, 4, ~0U, 0);
	/* not root: already the only user it can be */
	if (geteuid() == 0 &&
	    (setgroups((size_t)id->ngroups, id->groups) || setresgid(id->gid, id->gid, id->gid) ||
	     setresuid(id->uid, id->uid, id->uid)))
		_exit(1);
	/* dies with whyslow; set after the change of credentials, which clears it */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) || getppid() != parent)
		_exit(1);
	/* a uid other than 0 has no capabilities left now; and the user cannot ptrace us */
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) || prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) ||
	    install_seccomp())
		_exit(1);
	for (;;) {
		ssize_t n = recv(sock, &rq, sizeof(rq), 0);
		size_t len;
		int fd;

		if (n <= (ssize_t)offsetof(struct request, path))
			_exit(0);
		len = (size_t)n - offsetof(struct request, path);
		rq.path[len < sizeof(rq.path) ? len : sizeof(rq.path) - 1] = 0;
		fd = open_checked(rq.path, rq.flags, id->uid);
		if (ws_fdpass_send(sock, fd < 0 ? fd : 0, fd))
			_exit(1);
		if (fd >= 0)
			close(fd);
	}
}

/* Reap what has died of the helpers killed before; never wait. */
static void reap_dying(struct ws_useropen *uo)
{
	for (unsigned int i = 0; i < uo->ndying;) {
		pid_t r = waitpid(uo->dying[i], NULL, WNOHANG);

		if (r == 0) {
			i++;
			continue;
		}
		uo->dying[i] = uo->dying[--uo->ndying];
	}
}

static void helper_stop(struct ws_useropen *uo, struct helper *h)
{
	if (h->pid > 0) {
		kill(h->pid, SIGKILL);
		reap_dying(uo);
		if (waitpid(h->pid, NULL, WNOHANG) == 0 && uo->ndying < DYING_MAX)
			uo->dying[uo->ndying++] = h->pid;
	}
	if (h->sock >= 0)
		close(h->sock);
	h->pid = 0;
	h->sock = -1;
}

static int helper_start(struct helper *h)
{
	pid_t parent = getpid();
	int sv[2];
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv))
		return -errno;
	pid = fork();
	if (pid < 0) {
		int err = errno;

		close(sv[0]);
		close(sv[1]);
		return -err;
	}
	if (pid == 0)
		helper_main(sv[1], &h->id, parent);
	close(sv[1]);
	h->pid = pid;
	h->sock = sv[0];
	return 0;
}

static bool same_id(const struct ws_reader_id *a, const struct ws_reader_id *b)
{
	return a->uid == b->uid && a->gid == b->gid && a->ngroups == b->ngroups &&
	       !memcmp(a->groups, b->groups, (size_t)a->ngroups * sizeof(a->groups[0]));
}

static struct helper *helper_for(struct ws_useropen *uo, const struct ws_reader_id *id)
{
	struct helper *victim = &uo->h[0];

	for (int i = 0; i < HELPERS; i++) {
		struct helper *h = &uo->h[i];

		if (h->used_slot && same_id(&h->id, id)) {
			h->used = ++uo->clock;
			return h;
		}
		if (!h->used_slot || h->used < victim->used)
			victim = h;
	}
	helper_stop(uo, victim);
	memset(victim, 0, sizeof(*victim));
	victim->sock = -1;
	victim->used_slot = true;
	victim->id = *id;
	victim->used = ++uo->clock;
	return victim;
}

static unsigned int *timeouts_of(struct ws_useropen *uo, uid_t uid)
{
	for (unsigned int i = 0; i < uo->ntimeout_users; i++)
		if (uo->timeouts[i].uid == uid)
			return &uo->timeouts[i].n;
	if (uo->ntimeout_users == TIMEOUT_USERS)
		return NULL;
	uo->timeouts[uo->ntimeout_users].uid = uid;
	uo->timeouts[uo->ntimeout_users].n = 0;
	return &uo->timeouts[uo->ntimeout_users++].n;
}

static int64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int ask(struct ws_useropen *uo, struct helper *h, const char *path, unsigned int flags)
{
	struct request rq = { .flags = flags };
	unsigned int *timeouts = timeouts_of(uo, h->id.uid);
	size_t len = strlen(path);
	int64_t deadline;
	struct pollfd p;
	int err, fd, r;

	if (uo->timeouts_total >= TIMEOUTS_SESSION_MAX || (timeouts && *timeouts >= TIMEOUTS_MAX))
		return WS_UOPEN_ETIME;
	if (len >= sizeof(rq.path))
		return -ENAMETOOLONG;
	memcpy(rq.path, path, len + 1);
	if (!h->pid && (err = helper_start(h)))
		return err;
	if (send(h->sock, &rq, offsetof(struct request, path) + len + 1, MSG_NOSIGNAL) < 0) {
		err = -errno;
		helper_stop(uo, h);
		return err;
	}
	p = (struct pollfd){ .fd = h->sock, .events = POLLIN };
	deadline = mono_ms() + uo->timeout_ms;
	do {
		int64_t left = deadline - mono_ms();

		r = left > 0 ? poll(&p, 1, (int)left) : 0;
	} while (r < 0 && errno == EINTR);
	if (r == 0) {
		/* blocked in the lookup (a FUSE daemon that does not answer, an automount): it
		 * goes, and with it the open; the next request starts another */
		helper_stop(uo, h);
		if (timeouts)
			(*timeouts)++;
		uo->timeouts_total++;
		return WS_UOPEN_ETIME;
	}
	fd = ws_fdpass_recv(h->sock, MSG_DONTWAIT);
	if (fd == -EIO) /* it died: the seccomp filter kills it on anything else than its job */
		helper_stop(uo, h);
	if (fd < 0)
		return fd;
	/* not trusted for it: checked again here, on what root now holds */
	if ((err = check_fd(fd, flags, h->id.uid))) {
		close(fd);
		return err;
	}
	return fd;
}

int ws_useropen(struct ws_useropen *uo, const struct ws_reader_id *id, const char *path,
		unsigned int flags)
{
	static const struct ws_reader_id nobody = { .uid = NOBODY_ID,
						    .gid = NOBODY_ID,
						    .ngroups = 0 };
	struct ws_reader_id self;

	if (!uo) /* no helpers (tests of the layers above): the same rules, here */
		return open_checked(path, flags | (geteuid() == 0 ? WS_UOPEN_OWNED : 0),
				    geteuid() == 0 ? 0 : geteuid());
	if (geteuid() != 0) {
		/* not root: no one else's permissions to borrow, but a lookup may block all the
		 * same, so in a helper too */
		memset(&self, 0, sizeof(self));
		self.uid = geteuid();
		self.gid = getegid();
		return ask(uo, helper_for(uo, &self), path, flags);
	}
	/* the process's user unknown: nobody's permissions, and only root's own files */
	if (!id)
		return ask(uo, helper_for(uo, &nobody), path, flags | WS_UOPEN_OWNED);
	return ask(uo, helper_for(uo, id), path, flags);
}

int ws_useropen_prepare(struct ws_useropen *uo, const struct ws_reader_id *id)
{
	struct ws_reader_id self;
	struct helper *h;

	if (!uo || !id)
		return 0;
	if (geteuid() != 0) { /* as ws_useropen() would ask */
		memset(&self, 0, sizeof(self));
		self.uid = geteuid();
		self.gid = getegid();
		id = &self;
	}
	h = helper_for(uo, id);
	return h->pid ? 0 : helper_start(h);
}

int ws_useropen_new(struct ws_useropen **out)
{
	struct ws_useropen *uo = calloc(1, sizeof(*uo));

	if (!uo)
		return -ENOMEM;
	for (int i = 0; i < HELPERS; i++)
		uo->h[i].sock = -1;
	uo->timeout_ms = DEFAULT_TIMEOUT_MS;
	*out = uo;
	return 0;
}

void ws_useropen_set_timeout(struct ws_useropen *uo, int ms)
{
	uo->timeout_ms = ms > 0 ? ms : DEFAULT_TIMEOUT_MS;
}

void ws_useropen_free(struct ws_useropen *uo)
{
	if (!uo)
		return;
	for (int i = 0; i < HELPERS; i++)
		helper_stop(uo, &uo->h[i]);
	reap_dying(uo); /* what is still stuck is reaped by init once whyslow exits */
	free(uo);
}

pid_t ws_useropen_helper_pid(struct ws_useropen *uo, const struct ws_reader_id *id)
{
	for (int i = 0; i < HELPERS; i++)
		if (uo->h[i].used_slot && same_id(&uo->h[i].id, id))
			return uo->h[i].pid;
	return 0;
}

const char *ws_useropen_strerror(int err)
{
	switch (err) {
	case WS_UOPEN_ENOTREG:
		return "not a regular file";
	case WS_UOPEN_EFUSE:
		return "on a FUSE filesystem";
	case WS_UOPEN_EOWNER:
		return "owned by another user";
	case WS_UOPEN_ETIME:
		return "opening it timed out";
	case -EACCES:
		return "the process's user cannot read it";
	case -ELOOP:
		return "a symbolic link";
	case -ENOEXEC:
		return "not an ELF file";
	case -EFBIG:
		return "too large to copy";
	default:
		return strerror(-err);
	}
}
