// SPDX-License-Identifier: MIT
/*
 * rel_pingpong [ROUNDS]: two threads bounce one byte through a pair of pipes ROUNDS times
 * (default 200000): as many context switches and wakeups as a machine can make, to overflow a
 * small ring buffer (tests/e2e/reliability/rel_lost.sh).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static int ab[2], ba[2];
static long rounds = 200000;

static void *pong(void *arg)
{
	char c;

	(void)arg;
	for (long i = 0; i < rounds; i++)
		if (read(ab[0], &c, 1) != 1 || write(ba[1], &c, 1) != 1)
			exit(2);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t;
	char c = 'x';

	if (argc > 1)
		rounds = atol(argv[1]);
	if (pipe(ab) || pipe(ba) || pthread_create(&t, NULL, pong, NULL))
		return 1;
	for (long i = 0; i < rounds; i++)
		if (write(ab[1], &c, 1) != 1 || read(ba[0], &c, 1) != 1)
			return 2;
	pthread_join(t, NULL);
	return 0;
}
