// SPDX-License-Identifier: MIT
/*
 * short_futex [ROUNDS]: two threads hand a turn back and forth through one futex word ROUNDS
 * times (default 20000), each waiting in FUTEX_WAIT_PRIVATE on it until the other hands it over:
 * thousands of waits far shorter than the default resolution (156us), which the kernel sums by
 * cause (tests/e2e/short_causes.sh). Prints the word's address, then the two threads' tids.
 */
#include <linux/futex.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

static _Atomic int turn; /* whose turn: 0 the main thread, 1 the other */
static long rounds = 20000;

/* Wait until it is @me's turn: sleep on the word while it says the other's. */
static void wait_turn(int me)
{
	int v;

	while ((v = atomic_load(&turn)) != me)
		syscall(SYS_futex, &turn, FUTEX_WAIT_PRIVATE, v, NULL, NULL, 0);
}

static void give_turn(int other)
{
	atomic_store(&turn, other);
	syscall(SYS_futex, &turn, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

static void *other(void *arg)
{
	(void)arg;
	printf("%ld\n", (long)gettid());
	fflush(stdout);
	for (long i = 0; i < rounds; i++) {
		wait_turn(1);
		give_turn(0);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t;

	if (argc > 1)
		rounds = atol(argv[1]);
	printf("%p\n%ld\n", (void *)&turn, (long)gettid());
	fflush(stdout);
	if (pthread_create(&t, NULL, other, NULL))
		return 1;
	for (long i = 0; i < rounds; i++) {
		give_turn(1);
		wait_turn(0);
	}
	pthread_join(t, NULL);
	return 0;
}
