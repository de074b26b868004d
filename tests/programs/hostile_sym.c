// SPDX-License-Identifier: MIT
/*
 * What an unprivileged user runs against root's whyslow (tests/e2e/reliability/rel_symbolizer.sh):
 *   hostile_sym sleep MS N     N sleeps of MS ms in hostile_sleep() (its copies carry hostile
 *                              debuglinks)
 *   hostile_sym anon MS N      N sleeps from code on an anonymous RWX page, so its name is looked
 *                              up in /tmp/perf-PID.map (x86_64 only; exit 77 elsewhere)
 *   hostile_sym fakemutex TID  waits for good on a process-shared "mutex" whose words it wrote
 *                              itself: locked, owner TID, kind PTHREAD_PROCESS_SHARED
 * Prints "ready PID" once set up.
 */
#include <linux/futex.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

__attribute__((noinline)) void hostile_sleep(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
	__asm__ volatile("" ::: "memory"); /* not a tail call: this frame stays on the stack */
}

static int anon(long ms, long n)
{
#if defined(__x86_64__)
	/* mov eax, SYS_nanosleep; syscall; ret */
	static const unsigned char code[] = { 0xb8, SYS_nanosleep, 0, 0, 0, 0x0f, 0x05, 0xc3 };
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	void *page = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	long (*fn)(const struct timespec *, struct timespec *);

	if (page == MAP_FAILED)
		return 1;
	memcpy(page, code, sizeof(code));
	fn = (long (*)(const struct timespec *, struct timespec *))page;
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	for (long i = 0; i < n; i++)
		fn(&ts, NULL);
	return 0;
#else
	(void)ms;
	(void)n;
	return 77;
#endif
}

/* The head of glibc's pthread_mutex_t (plugins/futex/futex_owner.h). */
struct mutex_words {
	int32_t lock, count, owner, nusers, kind;
};

static int fakemutex(int32_t owner)
{
	struct mutex_words *m =
		mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	if (m == MAP_FAILED)
		return 1;
	*m = (struct mutex_words){ .lock = 2, .owner = owner, .nusers = 1, .kind = 128 };
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	for (;;) /* a shared (not private) wait, as a pshared mutex's waiter makes */
		syscall(SYS_futex, &m->lock, FUTEX_WAIT, 2, NULL, NULL, 0);
}

int main(int argc, char **argv)
{
	if (argc >= 4 && !strcmp(argv[1], "sleep")) {
		printf("ready %d\n", (int)getpid());
		fflush(stdout);
		for (long i = 0; i < atol(argv[3]); i++)
			hostile_sleep(atol(argv[2]));
		return 0;
	}
	if (argc >= 4 && !strcmp(argv[1], "anon"))
		return anon(atol(argv[2]), atol(argv[3]));
	if (argc >= 3 && !strcmp(argv[1], "fakemutex"))
		return fakemutex((int32_t)atol(argv[2]));
	fprintf(stderr, "usage: hostile_sym sleep MS N | anon MS N | fakemutex TID\n");
	return 2;
}
