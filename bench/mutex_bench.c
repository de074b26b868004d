/*
 * Futex-heavy pthread benchmark for bench/overhead.sh: a mutex + condition variable
 * ping-pong. THREADS threads pass a turn around a ring; each hand-off is a
 * pthread_cond_signal (FUTEX_WAKE) to a thread sleeping in pthread_cond_wait
 * (FUTEX_WAIT_BITSET) under a contended default mutex (FUTEX_WAIT/WAKE), so every
 * operation is futex calls, a wakeup and a context switch. Prints ns per hand-off.
 * Build: cc -O2 -pthread -o mutex_bench mutex_bench.c
 * Usage: mutex_bench [THREADS=2] [HANDOFFS=200000] [pin]
 * pin: thread i runs on CPU i (mod the CPU count). Unpinned, the scheduler puts the two threads
 * on one CPU in some runs and on two in others, and the time per hand-off differs by ~2x between
 * the two; pinned, every hand-off is a wakeup across CPUs.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <time.h>

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static long turn, total;
static int nthreads, pin;

static void *run(void *arg)
{
	long me = (long)arg;

	if (pin) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(me % sysconf(_SC_NPROCESSORS_ONLN), &set);
		if (pthread_setaffinity_np(pthread_self(), sizeof(set), &set)) {
			fprintf(stderr, "mutex_bench: cannot pin thread %ld\n", me);
			exit(1);
		}
	}

	pthread_mutex_lock(&mu);
	for (;;) {
		while (turn < total && turn % nthreads != me)
			pthread_cond_wait(&cv, &mu);
		if (turn >= total)
			break;
		turn++;
		pthread_cond_broadcast(&cv);
	}
	pthread_mutex_unlock(&mu);
	return NULL;
}

int main(int argc, char **argv)
{
	struct timespec a, b;
	pthread_t t[64];

	nthreads = argc > 1 ? atoi(argv[1]) : 2;
	total = argc > 2 ? atol(argv[2]) : 200000;
	pin = argc > 3 && !strcmp(argv[3], "pin");
	if (nthreads < 2 || nthreads > 64)
		return 2;
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (long i = 0; i < nthreads; i++)
		pthread_create(&t[i], NULL, run, (void *)i);
	for (int i = 0; i < nthreads; i++)
		pthread_join(t[i], NULL);
	clock_gettime(CLOCK_MONOTONIC, &b);
	double ns = (b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec);
	printf("mutex_bench: %d threads, %ld hand-offs: %.1f ns/op %.0f ops/s\n", nthreads, total,
	       ns / total, total / ns * 1e9);
	return 0;
}
