// SPDX-License-Identifier: MIT
/*
 * Two threads contending on a kernel lock: the process's mmap_lock (an rwsem).
 *
 * The holder changes the protection of a large region of populated 4 KiB pages
 * back and forth; each mprotect(2) holds mmap_lock for write while it rewrites
 * every page-table entry (milliseconds). The waiter meanwhile maps and unmaps
 * one page (mmap_lock for write) or asks mincore(2) about the region (for
 * read), so it blocks inside the rwsem's slow path and is woken by the
 * holder's up_write().
 *
 * Usage: klock_contend [MiB] [rounds]   (default 512 MiB, 20 rounds)
 * Prints one line per thread with its tid, and the number of waiter calls.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

static char *region;
static size_t region_len;
static int rounds = 20;
static atomic_int done;

static void *holder(void *arg)
{
	(void)arg;
	printf("holder tid %ld\n", (long)syscall(SYS_gettid));
	fflush(stdout);
	for (int i = 0; i < rounds; i++) {
		if (mprotect(region, region_len, PROT_READ) ||
		    mprotect(region, region_len, PROT_READ | PROT_WRITE)) {
			perror("mprotect");
			exit(1);
		}
	}
	atomic_store(&done, 1);
	return NULL;
}

static void *waiter(void *arg)
{
	unsigned char vec[64];
	unsigned long calls = 0;

	(void)arg;
	printf("waiter tid %ld\n", (long)syscall(SYS_gettid));
	fflush(stdout);
	while (!atomic_load(&done)) {
		/* mmap_lock for write ... */
		void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (p == MAP_FAILED) {
			perror("mmap");
			exit(1);
		}
		munmap(p, 4096);
		/* ... and for read */
		mincore(region, sizeof(vec) * 4096, vec);
		calls++;
	}
	printf("waiter calls %lu\n", calls);
	return NULL;
}

int main(int argc, char **argv)
{
	size_t mib = argc > 1 ? strtoul(argv[1], NULL, 0) : 512;
	pthread_t h, w;

	if (argc > 2)
		rounds = atoi(argv[2]);
	region_len = mib << 20;
	region = mmap(NULL, region_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (region == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	/* 4 KiB pages, so every mprotect rewrites region_len / 4096 entries */
	madvise(region, region_len, MADV_NOHUGEPAGE);
	memset(region, 1, region_len);
	if (pthread_create(&w, NULL, waiter, NULL) || pthread_create(&h, NULL, holder, NULL)) {
		fprintf(stderr, "pthread_create failed\n");
		return 1;
	}
	pthread_join(h, NULL);
	pthread_join(w, NULL);
	return 0;
}
