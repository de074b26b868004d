// SPDX-License-Identifier: MIT
/*
 * The victim of the watch tests (tests/e2e/watch_*.sh): pairs of threads, a holder that takes a
 * mutex and sleeps with it, and a victim that then waits for the mutex. Every round but one
 * (--slow-round) is fast (--fast-ms); the slow one makes the victim wait --slow-ms for the holder,
 * whose own wait is that sleep. The chain of the slow wait is therefore known: the victim blocked
 * on a futex, woken by the holder, which was blocked on a sleep.
 *
 *   watch_victim --go FILE --truth FILE [--pairs N] [--rounds N] [--slow-round K|-1]
 *                [--fast-ms MS] [--slow-ms MS]
 *
 * Waits for FILE (--go) to exist before its first round, so a watch can be started on it first.
 * --slow-round -1: every round is slow (the storm). The truth: one line per pair,
 * "victim TID holder TID", then "slow_rounds N" (the slow waits made in all).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

struct pair {
	pthread_t victim, holder;
	pthread_mutex_t m;
	sem_t locked, done;
	pid_t victim_tid, holder_tid;
};

static int rounds = 40, slow_round = 20, fast_ms = 20, slow_ms = 400;

static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };

	while (nanosleep(&ts, &ts))
		;
}

static void *holder(void *arg)
{
	struct pair *p = arg;

	p->holder_tid = syscall(SYS_gettid);
	for (int i = 0; i < rounds; i++) {
		pthread_mutex_lock(&p->m);
		sem_post(&p->locked);
		sleep_ms(slow_round < 0 || i == slow_round ? slow_ms : fast_ms);
		pthread_mutex_unlock(&p->m);
		sem_wait(&p->done); /* the victim had its turn before the next round */
	}
	return NULL;
}

static void *victim(void *arg)
{
	struct pair *p = arg;

	p->victim_tid = syscall(SYS_gettid);
	for (int i = 0; i < rounds; i++) {
		sem_wait(&p->locked);
		pthread_mutex_lock(&p->m); /* waits for the holder's sleep */
		pthread_mutex_unlock(&p->m);
		sem_post(&p->done);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	const char *go = NULL, *truth = NULL;
	int npairs = 1;
	struct pair *pairs;
	FILE *f;

	for (int i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--go"))
			go = argv[i + 1];
		else if (!strcmp(argv[i], "--truth"))
			truth = argv[i + 1];
		else if (!strcmp(argv[i], "--pairs"))
			npairs = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--rounds"))
			rounds = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--slow-round"))
			slow_round = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--fast-ms"))
			fast_ms = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--slow-ms"))
			slow_ms = atoi(argv[i + 1]);
	}
	if (!go || !truth || npairs < 1 || npairs > 256 || rounds < 1) {
		fprintf(stderr,
			"usage: watch_victim --go FILE --truth FILE [--pairs N] [--rounds N] "
			"[--slow-round K] [--fast-ms MS] [--slow-ms MS]\n");
		return 2;
	}
	while (access(go, F_OK))
		sleep_ms(10);
	pairs = calloc(npairs, sizeof(*pairs));
	if (!pairs)
		return 1;
	for (int i = 0; i < npairs; i++) {
		pthread_mutex_init(&pairs[i].m, NULL);
		sem_init(&pairs[i].locked, 0, 0);
		sem_init(&pairs[i].done, 0, 0);
		pthread_create(&pairs[i].holder, NULL, holder, &pairs[i]);
		if (i)
			pthread_create(&pairs[i].victim, NULL, victim, &pairs[i]);
	}
	/* the first victim is this thread: a join waits for no more than the end of a round, so
	 * no wait but the victims' is long enough to trigger */
	victim(&pairs[0]);
	for (int i = 0; i < npairs; i++) {
		pthread_join(pairs[i].holder, NULL);
		if (i)
			pthread_join(pairs[i].victim, NULL);
	}
	f = fopen(truth, "w");
	for (int i = 0; f && i < npairs; i++)
		fprintf(f, "victim %d holder %d\n", pairs[i].victim_tid, pairs[i].holder_tid);
	free(pairs);
	if (!f)
		return 1;
	fprintf(f, "slow_rounds %d\n", npairs * (slow_round < 0 ? rounds : slow_round < rounds));
	return fclose(f) ? 1 : 0;
}
