// SPDX-License-Identifier: MIT
/*
 * rel_threads [N] [SLEEP_MS]: start N threads (default 2000), each sleeping SLEEP_MS (default 50)
 * and exiting; join them all (tests/e2e/reliability/rel_hostile.sh).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static long sleep_ms = 50;

static void *worker(void *arg)
{
	struct timespec ts = { sleep_ms / 1000, (sleep_ms % 1000) * 1000000L };

	(void)arg;
	nanosleep(&ts, NULL);
	return NULL;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 2000;
	pthread_t *t = calloc(n, sizeof(*t));
	pthread_attr_t a;
	long started = 0;

	if (argc > 2)
		sleep_ms = atol(argv[2]);
	pthread_attr_init(&a);
#ifdef __SANITIZE_ADDRESS__
	/* ASan's frames and redzones overflow small stacks */
	pthread_attr_setstacksize(&a, 512 * 1024);
#else
	pthread_attr_setstacksize(&a, 64 * 1024);
#endif
	for (long i = 0; t && i < n; i++)
		if (!pthread_create(&t[i], &a, worker, NULL))
			started++;
	for (long i = 0; i < started; i++)
		pthread_join(t[i], NULL);
	printf("%ld threads\n", started);
	free(t);
	return started == n ? 0 : 1;
}
