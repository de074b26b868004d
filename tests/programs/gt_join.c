// SPDX-License-Identifier: MIT
/*
 * Ground truth "join" (issue 34, item 3), checked by tests/e2e/gt_join.sh: the main thread
 * works a little, then waits in pthread_join for a thread that reads a pipe nobody writes to,
 * so it blocks for good; the tracer's --duration ends tracing with both waits still open.
 * glibc's pthread_join sleeps in futex(FUTEX_WAIT_BITSET) on the joined thread's tid word.
 *
 * Once the reader is asleep in its read, one JSON line with the truth goes to stdout:
 * {"case":"join","pid":..,"main_tid":..,"reader_tid":..}. Ended by a signal (alarm: 60 s).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static int fds[2];
static volatile pid_t reader_tid;
static volatile unsigned long sink;

static void *reader(void *arg)
{
	char c;

	(void)arg;
	reader_tid = (pid_t)syscall(SYS_gettid);
	/* the write end stays open in this process: this read never returns */
	if (read(fds[0], &c, 1) < 0)
		perror("gt_join: read");
	return NULL;
}

/* Sleeping in read, as /proc shows it: state S with syscall 0 (read). */
static int asleep_in_read(pid_t tid)
{
	char path[64], buf[256], *p;
	FILE *f;
	int ok = 0;

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", tid);
	f = fopen(path, "re");
	if (f && fgets(buf, sizeof(buf), f) && (p = strrchr(buf, ')')) && p[2] == 'S') {
		fclose(f);
		snprintf(path, sizeof(path), "/proc/self/task/%d/syscall", tid);
		f = fopen(path, "re");
		ok = f && fgets(buf, sizeof(buf), f) && atoi(buf) == SYS_read;
	}
	if (f)
		fclose(f);
	return ok;
}

int main(void)
{
	struct timespec t0, t;
	pthread_t th;

	alarm(60);
	if (pipe(fds) || pthread_create(&th, NULL, reader, NULL)) {
		perror("gt_join");
		return 1;
	}
	for (int i = 0; i < 1000 && !(reader_tid && asleep_in_read(reader_tid)); i++)
		usleep(1000);
	if (!reader_tid || !asleep_in_read(reader_tid)) {
		fprintf(stderr, "gt: gt_join: the reader never slept in read\n");
		return 1;
	}
	printf("{\"case\":\"join\",\"pid\":%d,\"main_tid\":%d,\"reader_tid\":%d}\n", getpid(),
	       getpid(), reader_tid);
	fflush(stdout);
	/* some CPU work of its own: the critical path has more than the wait in it */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		for (int i = 0; i < 10000; i++)
			sink += i;
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) < 20000000L);
	pthread_join(th, NULL);
	return 0;
}
