// SPDX-License-Identifier: MIT
/*
 * Ground truth "minor_root" (issue 34.4: a root never contradicts its segments). The victim
 * (the main thread) waits for a worker, which hands a helper jobs one at a time and waits on one
 * futex for each answer: for all but the last the helper sleeps (--sleep-ms, a timer), for the
 * last it computes (--spin-ms of its own CPU time), the longest of the worker's waits. Most of
 * the victim's wait traces back to the helper's sleeps; only that longest wait, the one a
 * chain's links follow, to its CPU work. Seen on Redis: an 18.7 s chain rooted at 249 ms of CPU
 * work while its segments were 10.3 s of socket waits.
 *
 *   gt_minor_root [--jobs N] [--sleep-ms N] [--spin-ms N]      (default 10, 40, 90)
 */
#include <getopt.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "gt_common.h"

static atomic_int job, answer, done;
static int jobs = 10;
static long sleep_ms = 40, spin_ms = 90;

/* Wait while *@w is @val (a plain FUTEX_WAIT: the futex source names the word). */
static void fwait(atomic_int *w, int val)
{
	syscall(SYS_futex, w, FUTEX_WAIT_PRIVATE, val, NULL, NULL, 0);
}

static void fwake(atomic_int *w)
{
	syscall(SYS_futex, w, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

/* @ms of this thread's own CPU time: preemption does not shorten the work. */
static void spin(long ms)
{
	struct timespec t0, t;
	volatile unsigned long sink = 0;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
	do {
		for (int i = 0; i < 10000; i++)
			sink += i;
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	} while ((t.tv_sec - t0.tv_sec) * 1000L + (t.tv_nsec - t0.tv_nsec) / 1000000L < ms);
}

static void *helper(void *arg)
{
	(void)arg;
	gt_setname("gt-helper");
	for (int i = 1; i <= jobs; i++) {
		int j;

		while ((j = atomic_load(&job)) < i)
			fwait(&job, j);
		if (i < jobs)
			gt_sleep_ms(sleep_ms);
		else
			spin(spin_ms);
		atomic_store(&answer, i);
		fwake(&answer);
	}
	return NULL;
}

static void *worker(void *arg)
{
	pid_t victim = *(pid_t *)arg;

	gt_setname("gt-worker");
	gt_wait_blocked_in_futex(victim); /* the victim's wait spans every job */
	for (int i = 1; i <= jobs; i++) {
		int a;

		atomic_store(&job, i);
		fwake(&job);
		while ((a = atomic_load(&answer)) < i)
			fwait(&answer, a);
	}
	atomic_store(&done, 1);
	fwake(&done);
	return NULL;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = { { "jobs", required_argument, NULL, 'j' },
					      { "sleep-ms", required_argument, NULL, 's' },
					      { "spin-ms", required_argument, NULL, 'c' },
					      { NULL, 0, NULL, 0 } };
	pthread_t w, h;
	pid_t self;
	int c;

	gt_set_prog("gt_minor_root");
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (c == 'j')
			jobs = atoi(optarg);
		else if (c == 's')
			sleep_ms = atol(optarg);
		else if (c == 'c')
			spin_ms = atol(optarg);
		else
			gt_die("usage: gt_minor_root [--jobs N] [--sleep-ms N] [--spin-ms N]");
	}
	if (jobs < 2 || sleep_ms < 1 || spin_ms <= sleep_ms)
		gt_die("need --jobs >= 2 and --spin-ms > --sleep-ms > 0");
	/*
	 * Ahead of whatever else runs (as root; the threads inherit it): on a loaded 2-CPU machine
	 * the helper's computation is otherwise mostly a wait for a CPU, not the CPU work.
	 */
	setpriority(PRIO_PROCESS, 0, -20);
	gt_setname("gt-victim");
	self = gt_gettid();
	if (pthread_create(&h, NULL, helper, NULL) || pthread_create(&w, NULL, worker, &self))
		gt_die("pthread_create failed");
	while (!atomic_load(&done))
		fwait(&done, 0);
	pthread_join(w, NULL);
	pthread_join(h, NULL);
	gt_log("victim %d waited for %d jobs: %d sleeps of %ld ms, then %ld ms of CPU work", self,
	       jobs, jobs - 1, sleep_ms, spin_ms);
	return 0;
}
