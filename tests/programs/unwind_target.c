/*
 * A process whose threads block at known places, three calls deep, for tests/unit/test_unwind.c.
 * Built -O2 -fomit-frame-pointer: like Debian's binaries and glibc, nothing on its stacks links
 * one frame to the next, so only DWARF CFI (.eh_frame) can walk them.
 *
 *   victim: victim_thread -> victim_wait -> gt_lock -> pthread_mutex_lock  (the holder has it)
 *   holder: holder_thread -> holder_io -> holder_read -> read(pipe)       (until stdin closes)
 *
 * Prints "victim TID" and "holder TID", then waits for stdin to close; exits 0.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t held;
static int wake_pipe[2];

/* Global, noinline, and with work after each call: the names stay as written (no .isra or
 * .constprop clones) and no call becomes a tail jump that would drop a frame. */
#define KEEP __attribute__((noinline, noclone, used))
#define AFTER_CALL() __asm__ volatile("" ::: "memory")

KEEP int gt_lock(void)
{
	int r = pthread_mutex_lock(&lock);

	AFTER_CALL();
	if (r == 0)
		pthread_mutex_unlock(&lock);
	return r;
}

KEEP int victim_wait(void)
{
	int r = gt_lock();

	AFTER_CALL();
	return r + 1;
}

KEEP void *victim_thread(void *arg)
{
	(void)arg;
	printf("victim %d\n", gettid());
	fflush(stdout);
	if (victim_wait() != 1)
		abort();
	AFTER_CALL();
	return NULL;
}

KEEP ssize_t holder_read(void)
{
	char c;
	ssize_t r = read(wake_pipe[0], &c, 1);

	AFTER_CALL();
	return r;
}

KEEP ssize_t holder_io(void)
{
	ssize_t r = holder_read();

	AFTER_CALL();
	return r + 1;
}

KEEP void *holder_thread(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&lock);
	printf("holder %d\n", gettid());
	fflush(stdout);
	pthread_barrier_wait(&held);
	if (holder_io() != 2)
		abort();
	AFTER_CALL();
	pthread_mutex_unlock(&lock);
	return NULL;
}

int main(void)
{
	pthread_t h, v;
	char buf[64];

	alarm(60); /* never outlive a broken test */
	if (pipe(wake_pipe) || pthread_barrier_init(&held, NULL, 2) ||
	    pthread_create(&h, NULL, holder_thread, NULL))
		return 1;
	pthread_barrier_wait(&held);
	if (pthread_create(&v, NULL, victim_thread, NULL))
		return 1;
	while (fgets(buf, sizeof(buf), stdin))
		;
	if (write(wake_pipe[1], "x", 1) != 1)
		return 1;
	pthread_join(h, NULL);
	pthread_join(v, NULL);
	return 0;
}
