/* Shared helpers for the ground-truth programs; see gt_common.h. */
#include "gt_common.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/fs.h>
#include <sched.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static const char *gt_prog = "gt";

void gt_set_prog(const char *name)
{
	gt_prog = name;
}

void gt_die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "gt: %s: FAIL: ", gt_prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	fflush(stderr);
	_exit(1);
}

void gt_log(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "gt: %s: ", gt_prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

uint64_t gt_now(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_MONOTONIC, &ts))
		gt_die("clock_gettime: %s", strerror(errno));
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

pid_t gt_gettid(void)
{
	return (pid_t)syscall(SYS_gettid);
}

void gt_setname(const char *name)
{
	int err = pthread_setname_np(pthread_self(), name);

	if (err)
		gt_die("pthread_setname_np(%s): %s", name, strerror(err));
}

long gt_parse_long(const char *opt, const char *s, long min, long max)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < min || v > max)
		gt_die("bad value for %s: '%s' (want %ld..%ld)", opt, s, min, max);
	return v;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: %s --dev /dev/loopN --cgroup DIR [--cgroup DIR...] [--truth FILE]\n"
		"          [--sleep-ms N] [--min-read-ms N]\n",
		gt_prog);
	exit(2);
}

void gt_parse(int argc, char **argv, struct gt_opts *o, int need_cgroups)
{
	static const struct option lopts[] = {
		{"dev", required_argument, NULL, 'd'},
		{"cgroup", required_argument, NULL, 'c'},
		{"truth", required_argument, NULL, 't'},
		{"sleep-ms", required_argument, NULL, 's'},
		{"min-read-ms", required_argument, NULL, 'm'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	char real[PATH_MAX];
	struct stat st;
	const char *base;
	int c;

	memset(o, 0, sizeof(*o));
	o->sleep_ms = 300;
	o->min_read_ms = 150;
	o->fd = -1;
	while ((c = getopt_long(argc, argv, "", lopts, NULL)) != -1) {
		switch (c) {
		case 'd': o->dev = optarg; break;
		case 'c':
			if (o->n_cgroups == GT_MAX_CGROUPS)
				gt_die("too many --cgroup options");
			o->cgroups[o->n_cgroups++] = optarg;
			break;
		case 't': o->truth = optarg; break;
		case 's': o->sleep_ms = gt_parse_long("--sleep-ms", optarg, 20, 5000); break;
		case 'm': o->min_read_ms = gt_parse_long("--min-read-ms", optarg, 0, 5000); break;
		default: usage();
		}
	}
	if (optind != argc || !o->dev)
		usage();
	if (o->n_cgroups < need_cgroups)
		gt_die("need %d --cgroup dir(s), got %d", need_cgroups, o->n_cgroups);
	for (int i = 0; i < o->n_cgroups; i++) {
		char p[PATH_MAX];

		snprintf(p, sizeof(p), "%s/tasks", o->cgroups[i]);
		if (access(p, W_OK))
			gt_die("cgroup dir %s: cannot write %s: %s", o->cgroups[i], p, strerror(errno));
	}
	if (!realpath(o->dev, real))
		gt_die("%s: %s", o->dev, strerror(errno));
	base = strrchr(real, '/');
	base = base ? base + 1 : real;
	if (strlen(base) >= sizeof(o->dev_name))
		gt_die("device name too long: %s", base);
	strcpy(o->dev_name, base);
	o->fd = open(o->dev, O_RDONLY | O_DIRECT | O_CLOEXEC);
	if (o->fd < 0)
		gt_die("open(%s, O_DIRECT): %s", o->dev, strerror(errno));
	if (fstat(o->fd, &st) || !S_ISBLK(st.st_mode))
		gt_die("%s is not a block device", o->dev);
	if (ioctl(o->fd, BLKGETSIZE64, &o->dev_size))
		gt_die("BLKGETSIZE64 %s: %s", o->dev, strerror(errno));
	if (o->dev_size < (1u << 20))
		gt_die("%s is too small (%" PRIu64 " bytes)", o->dev, o->dev_size);
}

/* Locks every file-backed mapping of the process in memory. Once in the group, every read of the
 * backing disk is throttled, not only the timed one: a page of the program or of a library that
 * the kernel dropped under memory pressure (a loaded CI machine) would be read back at 3 IOPS
 * during the timed hold and make the victim wait twice as long as the read. Best effort: a
 * mapping that cannot be locked is left as it is. */
static void pin_file_mappings(void)
{
	char line[PATH_MAX + 128];
	FILE *f = fopen("/proc/self/maps", "re");
	unsigned long start, end;
	int path_at;

	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		path_at = 0;
		if (sscanf(line, "%lx-%lx %*s %*s %*s %*s %n", &start, &end, &path_at) < 2 ||
		    !path_at || line[path_at] != '/')
			continue;
		(void)mlock((void *)start, end - start);
	}
	fclose(f);
}

void gt_join_cgroup(const char *dir)
{
	char p[PATH_MAX], buf[32];
	int fd, n;

	pin_file_mappings();
	snprintf(p, sizeof(p), "%s/tasks", dir);
	fd = open(p, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		gt_die("open %s: %s", p, strerror(errno));
	n = snprintf(buf, sizeof(buf), "%d\n", (int)gt_gettid());
	if (write(fd, buf, (size_t)n) != n)
		gt_die("write %s: %s", p, strerror(errno));
	close(fd);
}

uint64_t gt_pick_offset(const struct gt_opts *o, int index)
{
	/* 1 MiB in, then a pid-dependent 4 KiB block, so reruns do not reuse a sector. */
	uint64_t blocks = (o->dev_size - (1u << 20)) / GT_READ_BYTES;
	uint64_t b = ((uint64_t)getpid() * 7u + (uint64_t)index * 1031u) % (blocks - 1);

	return (1u << 20) + b * GT_READ_BYTES;
}

void gt_slow_read(const struct gt_opts *o, uint64_t offset, struct gt_read *r)
{
	void *buf;
	ssize_t n;
	int err;

	if (offset % GT_READ_BYTES || offset + GT_READ_BYTES > o->dev_size)
		gt_die("bad read offset %" PRIu64, offset);
	err = posix_memalign(&buf, GT_READ_BYTES, GT_READ_BYTES);
	if (err)
		gt_die("posix_memalign: %s", strerror(err));
	r->tid = gt_gettid();
	r->offset = offset;
	r->start_ns = gt_now();
	n = pread(o->fd, buf, GT_READ_BYTES, (off_t)offset);
	r->end_ns = gt_now();
	if (n != (ssize_t)GT_READ_BYTES)
		gt_die("pread(%s, 4096, %" PRIu64 ") = %zd: %s", o->dev, offset, n,
		       n < 0 ? strerror(errno) : "short read");
	free(buf);
	if (r->end_ns - r->start_ns < (uint64_t)o->min_read_ms * 1000000u)
		gt_die("slow read took only %.1f ms (< %ld ms): the blkio throttle did not hold it",
		       (double)(r->end_ns - r->start_ns) / 1e6, o->min_read_ms);
}

/* Reads "/proc/self/task/TID/<what>" into buf; returns 0 on success. */
static int read_task_file(pid_t tid, const char *what, char *buf, size_t len)
{
	char p[64];
	ssize_t n;
	int fd;

	/* /proc/TID (not listed, but there) also reaches threads of other processes */
	snprintf(p, sizeof(p), "/proc/%d/%s", (int)tid, what);
	fd = open(p, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	return 0;
}

void gt_wait_blocked_in_futex(pid_t tid)
{
	uint64_t deadline = gt_now() + (uint64_t)GT_WAIT_MS * 1000000u;
	char stat[512], sc[256];

	for (;;) {
		if (read_task_file(tid, "stat", stat, sizeof(stat)) == 0 &&
		    read_task_file(tid, "syscall", sc, sizeof(sc)) == 0) {
			const char *paren = strrchr(stat, ')');
			char state = paren && paren[1] == ' ' ? paren[2] : '?';
			char *end;
			long nr = strtol(sc, &end, 10);

			if (state == 'S' && end != sc && nr == SYS_futex)
				return;
		}
		if (gt_now() > deadline)
			gt_die("thread %d never blocked in futex() within %d ms", (int)tid, GT_WAIT_MS);
		sched_yield();
	}
}

void gt_sleep_ms(long ms)
{
	struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L};

	while (nanosleep(&ts, &ts))
		if (errno != EINTR)
			gt_die("nanosleep: %s", strerror(errno));
}

void gt_steps_init(struct gt_steps *s)
{
	pthread_condattr_t ca;

	if (pthread_mutex_init(&s->lock, NULL) || pthread_condattr_init(&ca) ||
	    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC) || pthread_cond_init(&s->cond, &ca))
		gt_die("cannot init step sync");
	pthread_condattr_destroy(&ca);
	s->step = 0;
}

void gt_steps_set(struct gt_steps *s, int step)
{
	gt_lock(&s->lock);
	if (step > s->step)
		s->step = step;
	pthread_cond_broadcast(&s->cond);
	gt_unlock(&s->lock);
}

void gt_steps_wait(struct gt_steps *s, int step)
{
	struct timespec dl;
	int err = 0;

	clock_gettime(CLOCK_MONOTONIC, &dl);
	dl.tv_sec += GT_WAIT_MS / 1000;
	gt_lock(&s->lock);
	while (s->step < step && err != ETIMEDOUT)
		err = pthread_cond_timedwait(&s->cond, &s->lock, &dl);
	if (s->step < step)
		gt_die("timed out waiting for step %d (at %d)", step, s->step);
	gt_unlock(&s->lock);
}

void gt_lock(pthread_mutex_t *m)
{
	int err = pthread_mutex_lock(m);

	if (err)
		gt_die("pthread_mutex_lock(%p): %s", (void *)m, strerror(err));
}

void gt_unlock(pthread_mutex_t *m)
{
	int err = pthread_mutex_unlock(m);

	if (err)
		gt_die("pthread_mutex_unlock(%p): %s", (void *)m, strerror(err));
}

/*
 * The truth file is written as root, so it must never replace a path this program did not
 * create: with no --truth nothing is kept; an existing path that is not a regular file (a
 * device such as /dev/null, a FIFO) is written straight, never renamed over; a symlink is
 * refused; a regular file or a new name gets a temporary file beside it, renamed over it at
 * the end. (The demo once passed /dev/null, and the rename replaced the machine's /dev/null.)
 */
static char tmp_path[PATH_MAX];
static bool truth_direct;

FILE *gt_truth_open(const struct gt_opts *o)
{
	struct stat st;
	FILE *f;
	int fd;

	truth_direct = false;
	if (!o->truth || lstat(o->truth, &st) == 0) {
		if (o->truth && S_ISLNK(st.st_mode))
			gt_die("--truth %s is a symbolic link; name the file itself", o->truth);
		if (!o->truth || !S_ISREG(st.st_mode)) {
			truth_direct = true;
			f = fopen(o->truth ? o->truth : "/dev/null", "we");
			if (!f)
				gt_die("cannot write %s: %s", o->truth, strerror(errno));
			return f;
		}
	} else if (errno != ENOENT) {
		gt_die("cannot check %s: %s", o->truth, strerror(errno));
	}
	if ((size_t)snprintf(tmp_path, sizeof(tmp_path), "%s.tmp.XXXXXX", o->truth) >=
	    sizeof(tmp_path))
		gt_die("truth path too long");
	fd = mkostemp(tmp_path, O_CLOEXEC);
	if (fd < 0 || !(f = fdopen(fd, "w")))
		gt_die("cannot write %s: %s", tmp_path, strerror(errno));
	return f;
}

void gt_truth_close(FILE *f, const struct gt_opts *o)
{
	struct stat st;

	if (fflush(f) || ferror(f) || fclose(f))
		gt_die("error writing %s", truth_direct ? o->truth : tmp_path);
	if (truth_direct)
		return;
	/* the target may have changed since open: replace only a regular file, or nothing */
	if (lstat(o->truth, &st) == 0 && !S_ISREG(st.st_mode)) {
		unlink(tmp_path);
		gt_die("%s is no longer a regular file; not replacing it", o->truth);
	}
	if (rename(tmp_path, o->truth))
		gt_die("rename %s -> %s: %s", tmp_path, o->truth, strerror(errno));
}

void gt_json_thread(FILE *f, const char *role, pid_t tid, const char *comm, int last)
{
	fprintf(f, "    \"%s\": {\"tid\": %d, \"comm\": \"%s\"}%s\n", role, (int)tid, comm,
		last ? "" : ",");
}

void gt_json_read(FILE *f, const struct gt_opts *o, const char *role, const struct gt_read *r,
		  int last)
{
	fprintf(f,
		"    \"%s\": {\"tid\": %d, \"dev\": \"%s\", \"sector\": %" PRIu64
		", \"bytes\": %u, \"op\": \"read\", \"offset\": %" PRIu64 ", \"start_ns\": %" PRIu64
		", \"end_ns\": %" PRIu64 ", \"latency_ns\": %" PRIu64 "}%s\n",
		role, (int)r->tid, o->dev_name, r->offset / 512, GT_READ_BYTES, r->offset,
		r->start_ns, r->end_ns, r->end_ns - r->start_ns, last ? "" : ",");
}

void gt_json_wait(FILE *f, const char *role, const struct gt_wait *w, int last)
{
	fprintf(f,
		"    \"%s\": {\"tid\": %d, \"what\": \"%s\", \"addr\": \"0x%" PRIxPTR
		"\", \"start_ns\": %" PRIu64 ", \"end_ns\": %" PRIu64 ", \"duration_ns\": %" PRIu64
		"}%s\n",
		role, (int)w->tid, w->what, w->addr, w->start_ns, w->end_ns, w->end_ns - w->start_ns,
		last ? "" : ",");
}
