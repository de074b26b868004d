// SPDX-License-Identifier: MIT
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "procsnap.h"
#include "base/clock.h"
#include "base/proc_cgroup.h"
#include "base/proc_stat.h"

static int read_text(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = 0;
	return 0;
}

/*
 * se.exec_start in /proc/.../sched (CONFIG_SCHED_DEBUG) is the sched clock at
 * the task's last run accounting: for a sleeper, when it switched out.
 * Printed as milliseconds with six decimals.
 */
static uint64_t exec_start_of(const char *sched_path)
{
	char buf[4096], *p;
	unsigned long long ms, frac;

	if (read_text(sched_path, buf, sizeof(buf)))
		return 0;
	p = strstr(buf, "se.exec_start");
	if (!p || !(p = strchr(p, ':')))
		return 0;
	if (sscanf(p + 1, " %llu.%6llu", &ms, &frac) != 2)
		return 0;
	return ms * 1000000ULL + frac;
}

uint64_t ws_procsnap_sched_now(void)
{
	/*
	 * Our own last accounting is no later than now: now minus a sleeper's
	 * exec_start is then a lower bound on how long it has been off CPU.
	 */
	return exec_start_of("/proc/thread-self/sched");
}

bool ws_task_blocked(const struct ws_task_snap *t)
{
	return t->state == 'S' || t->state == 'D' || t->state == 'T' || t->state == 't' ||
	       t->state == 'I';
}

uint32_t ws_procsnap_tgid(uint32_t tid)
{
	char path[64], buf[2048], *p;
	unsigned tgid;

	snprintf(path, sizeof(path), "/proc/%u/status", tid);
	if (read_text(path, buf, sizeof(buf)))
		return 0;
	p = strstr(buf, "\nTgid:");
	if (!p || sscanf(p + 6, "%u", &tgid) != 1)
		return 0;
	return tgid;
}

/* "S", comm: /proc/PID/task/TID/stat is "tid (comm) S ..." with comm possibly holding ')'. */
static int parse_stat(const char *buf, struct ws_task_snap *t)
{
	const char *f = ws_proc_stat_fields(buf);

	if (!f || ws_proc_stat_comm(buf, t->comm, sizeof(t->comm)))
		return -EINVAL;
	t->state = f[0];
	return 0;
}

/*
 * "202 0x55.. 0x80 ... SP PC" while blocked in a syscall (six arguments, then the user stack
 * pointer and program counter); "-1 SP PC" off CPU outside one; "running" otherwise.
 */
static void parse_syscall(const char *buf, struct ws_task_snap *t)
{
	unsigned long long a[8];
	long nr;
	int n = sscanf(buf, "%ld %llx %llx %llx %llx %llx %llx %llx %llx", &nr, &a[0], &a[1], &a[2],
		       &a[3], &a[4], &a[5], &a[6], &a[7]);

	t->in_syscall = false;
	t->have_user_regs = false;
	if (n == 3 && nr < 0) {
		t->have_user_regs = true;
		t->user_sp = a[0];
		t->user_pc = a[1];
		return;
	}
	if (n < 7 || nr < 0)
		return;
	t->in_syscall = true;
	t->nr = nr;
	for (int i = 0; i < 6; i++)
		t->args[i] = a[i];
	if (n == 9) {
		t->have_user_regs = true;
		t->user_sp = a[6];
		t->user_pc = a[7];
	}
}

/* "[<0>] futex_wait_queue+0x60/0x90" lines: keep the function names. */
static void parse_stack(char *buf, struct ws_task_snap *t)
{
	char *save = NULL;

	t->nkstack = 0;
	for (char *l = strtok_r(buf, "\n", &save); l && t->nkstack < WS_SNAP_KSTACK;
	     l = strtok_r(NULL, "\n", &save)) {
		char *f = strchr(l, ']');
		size_t len;

		if (!f)
			continue;
		f++;
		while (*f == ' ')
			f++;
		len = strcspn(f, "+ ");
		if (!len)
			continue;
		if (len >= sizeof(t->kstack[0]))
			len = sizeof(t->kstack[0]) - 1;
		memcpy(t->kstack[t->nkstack], f, len);
		t->kstack[t->nkstack++][len] = 0;
	}
}

int ws_procsnap_task(uint32_t pid, uint32_t tid, uint64_t sched_now, struct ws_task_snap *t)
{
	char path[96], buf[4096];
	unsigned long long run, wait, slices;
	bool v1;
	int err;

	memset(t, 0, sizeof(*t));
	t->tid = tid;
	t->pid = pid;
	t->arch = WS_ARCH_NATIVE;
	/* after @sched_now was read: now - off_cpu_ns is then no earlier than its last run */
	t->read_mono_ns = ws_clock_mono_now();
	snprintf(path, sizeof(path), "/proc/%u/task/%u/stat", pid, tid);
	if ((err = read_text(path, buf, sizeof(buf))))
		return err;
	if ((err = parse_stat(buf, t)))
		return err;
	snprintf(path, sizeof(path), "/proc/%u/task/%u/syscall", pid, tid);
	err = read_text(path, buf, sizeof(buf));
	if (!err)
		parse_syscall(buf, t);
	else
		t->syscall_denied = err == -EACCES || err == -EPERM;
	snprintf(path, sizeof(path), "/proc/%u/task/%u/stack", pid, tid);
	if (!read_text(path, buf, sizeof(buf)))
		parse_stack(buf, t);
	snprintf(path, sizeof(path), "/proc/%u/task/%u/schedstat", pid, tid);
	if (!read_text(path, buf, sizeof(buf)) &&
	    sscanf(buf, "%llu %llu %llu", &run, &wait, &slices) == 3) {
		t->timeslices = slices;
		t->have_timeslices = true;
	}
	snprintf(path, sizeof(path), "/proc/%u/task/%u/sched", pid, tid);
	t->exec_start_ns = exec_start_of(path);
	if (!ws_cgroup_of_thread(pid, tid, buf, sizeof(buf), &v1))
		ws_cgroup_path_fit(buf, t->cgroup, sizeof(t->cgroup));
	if (ws_task_blocked(t) && t->exec_start_ns && sched_now > t->exec_start_ns)
		t->off_cpu_ns = sched_now - t->exec_start_ns;
	return 0;
}

static int cmp_snap(const void *a, const void *b)
{
	const struct ws_task_snap *x = a, *y = b;

	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

int ws_procsnap_take(uint32_t pid, struct ws_task_snap **out, size_t *n)
{
	char path[64];
	struct ws_task_snap *v = NULL;
	size_t cnt = 0, cap = 0;
	uint64_t now;
	struct dirent *de;
	DIR *d;

	*out = NULL;
	*n = 0;
	snprintf(path, sizeof(path), "/proc/%u/task", pid);
	d = opendir(path);
	if (!d)
		return errno == ENOENT ? -ESRCH : -errno;
	now = ws_procsnap_sched_now();
	while ((de = readdir(d))) {
		char *end;
		unsigned long tid = strtoul(de->d_name, &end, 10);

		if (*end || !tid)
			continue;
		if (cnt == cap) {
			size_t nc = cap ? cap * 2 : 16;
			struct ws_task_snap *nv = realloc(v, nc * sizeof(*v));

			if (!nv) {
				free(v);
				closedir(d);
				return -ENOMEM;
			}
			v = nv;
			cap = nc;
		}
		/* a thread that exited between readdir and the read is simply gone */
		if (!ws_procsnap_task(pid, (uint32_t)tid, now, &v[cnt]))
			cnt++;
	}
	closedir(d);
	if (!cnt) {
		free(v);
		return -ESRCH;
	}
	qsort(v, cnt, sizeof(*v), cmp_snap);
	*out = v;
	*n = cnt;
	return 0;
}

int ws_procsnap_comm(uint32_t pid, uint32_t tid, char *buf, size_t len)
{
	char path[64], comm[64];
	FILE *f;
	int err = 0;

	if (tid)
		snprintf(path, sizeof(path), "/proc/%u/task/%u/comm", pid, tid);
	else
		snprintf(path, sizeof(path), "/proc/%u/comm", pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	if (fgets(comm, sizeof(comm), f)) {
		comm[strcspn(comm, "\n")] = 0;
		snprintf(buf, len, "%s", comm);
	} else {
		err = ferror(f) ? -EIO : -ENODATA;
	}
	fclose(f);
	return err;
}
