// SPDX-License-Identifier: MIT
/*
 * churn [N] [AT_ONCE]: create N short-lived threads (default 50000), AT_ONCE (default 16) alive
 * at a time: each batch is created, then joined. Every thread sleeps a little so it blocks and
 * wakes once. One more thread waits for the whole run, as a program's idle thread does: a wait
 * in progress that long makes the tracer keep history (exited threads included) for up to its
 * max_window. Issue 36: a traced program that churns threads must cost whyslow work linear in
 * the threads, and memory bounded by those alive, not by every thread that ever lived
 * (tests/e2e/churn.sh). Prints its own CPU time (all its threads), so that a tracer's can be
 * told apart from it: `whyslow run`'s rusage includes its command's.
 */
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

static void *worker(void *arg)
{
	struct timespec ts = { 0, 20000 }; /* 20 us: one wait and one wakeup per thread */

	(void)arg;
	nanosleep(&ts, NULL);
	return NULL;
}

/* Blocked reading the pipe until main closes its end. */
static void *idle(void *arg)
{
	char c;

	return (void *)(long)read(*(int *)arg, &c, 1);
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 50000;
	long at_once = argc > 2 ? atol(argv[2]) : 16;
	pthread_t t[256], idler;
	int gate[2];
	pthread_attr_t a;
	long done = 0;
	struct rusage ru;

	if (n < 0 || at_once < 1 || at_once > 256) {
		fprintf(stderr, "usage: churn [N] [AT_ONCE (1..256)]\n");
		return 2;
	}
	pthread_attr_init(&a);
#ifdef __SANITIZE_ADDRESS__
	/* ASan's frames and redzones overflow small stacks */
	pthread_attr_setstacksize(&a, 512 * 1024);
#else
	pthread_attr_setstacksize(&a, 64 * 1024);
#endif
	if (pipe(gate) || pthread_create(&idler, &a, idle, &gate[0])) {
		fprintf(stderr, "churn: cannot start the idle thread\n");
		return 1;
	}
	while (done < n) {
		long k = n - done < at_once ? n - done : at_once, started = 0;

		for (long i = 0; i < k; i++)
			if (!pthread_create(&t[started], &a, worker, NULL))
				started++;
		for (long i = 0; i < started; i++)
			pthread_join(t[i], NULL);
		if (started < k) {
			fprintf(stderr, "churn: pthread_create failed after %ld threads\n",
				done + started);
			return 1;
		}
		done += k;
	}
	close(gate[1]);
	pthread_join(idler, NULL);
	if (getrusage(RUSAGE_SELF, &ru))
		return 1;
	printf("%ld threads cpu_us %lld\n", done,
	       (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000LL + ru.ru_utime.tv_usec +
		       ru.ru_stime.tv_usec);
	return 0;
}
