// SPDX-License-Identifier: MIT
/*
 * Ground truth "timedwait": three CPU-bound threads pass one lock the way
 * CPython's GIL does. A thread that wants the lock waits on a condition
 * variable with a 5 ms timeout; when the wait times out it asks the holder
 * to drop the lock, and the holder, between slices of pure computation, hands
 * it over and signals. Nobody ever sleeps (main waits in pthread_join, the
 * workers stop by the clock): every off-CPU period of a worker is a timed
 * futex wait that either times out or is ended by the holder's signal.
 *
 *   gt_timedwait [--ms N]      run for N ms (default 600), then exit 0
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define THREADS 3
#define TIMEOUT_NS 5000000L

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv;
static bool held, drop_request, stop;
static volatile unsigned long sink;
static struct timespec end_at;

static bool past_end(void)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return now.tv_sec > end_at.tv_sec ||
	       (now.tv_sec == end_at.tv_sec && now.tv_nsec >= end_at.tv_nsec);
}

static void deadline(struct timespec *ts)
{
	clock_gettime(CLOCK_MONOTONIC, ts);
	ts->tv_nsec += TIMEOUT_NS;
	if (ts->tv_nsec >= 1000000000L) {
		ts->tv_nsec -= 1000000000L;
		ts->tv_sec++;
	}
}

static void take(void)
{
	struct timespec ts;

	pthread_mutex_lock(&mu);
	while (held && !stop) {
		deadline(&ts);
		/* a timeout means the holder kept it 5 ms: ask it to let go */
		if (pthread_cond_timedwait(&cv, &mu, &ts))
			drop_request = true;
	}
	held = true;
	pthread_mutex_unlock(&mu);
}

static void give(void)
{
	pthread_mutex_lock(&mu);
	if (past_end()) {
		stop = true;
		pthread_cond_broadcast(&cv);
	}
	held = false;
	drop_request = false;
	pthread_cond_signal(&cv);
	pthread_mutex_unlock(&mu);
}

static void *worker(void *arg)
{
	(void)arg;
	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		take();
		/* compute until asked to drop it (as the interpreter checks between bytecodes) */
		while (!__atomic_load_n(&drop_request, __ATOMIC_RELAXED) &&
		       !__atomic_load_n(&stop, __ATOMIC_RELAXED) && !past_end())
			for (int i = 0; i < 1000; i++)
				sink += i;
		give();
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_condattr_t ca;
	pthread_t t[THREADS];
	long ms = 600;

	if (argc == 3 && !strcmp(argv[1], "--ms"))
		ms = atol(argv[2]);
	else if (argc != 1) {
		fprintf(stderr, "usage: gt_timedwait [--ms N]\n");
		return 2;
	}
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&cv, &ca);
	clock_gettime(CLOCK_MONOTONIC, &end_at);
	end_at.tv_sec += ms / 1000;
	end_at.tv_nsec += (ms % 1000) * 1000000L;
	if (end_at.tv_nsec >= 1000000000L) {
		end_at.tv_nsec -= 1000000000L;
		end_at.tv_sec++;
	}
	for (int i = 0; i < THREADS; i++)
		if (pthread_create(&t[i], NULL, worker, NULL)) {
			fprintf(stderr, "gt_timedwait: pthread_create failed\n");
			return 1;
		}
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	return 0;
}
