/* Ground truth "flush": fdatasync's cache flush is a flush, not "sector 0, 0 bytes write".
 *
 *   gt_flush DIR OUT   writes 4 KiB into a new file in DIR (on a real disk, not tmpfs) and calls
 *                      fdatasync, ROUNDS times; writes one line per call to OUT:
 *                      "<tid> <start_ns> <end_ns>" (CLOCK_MONOTONIC), then removes its file.
 *
 * Each fdatasync waits for the data write and then for the device's cache flush (PLATFORM.md:
 * a request of 0 bytes at sector 0, rwbs FF). Expected: at least one of the thread's waits
 * inside an fdatasync is block_io with op "flush", and no block_io link of it is a 0-byte write.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define ROUNDS 20

static uint64_t now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int main(int argc, char **argv)
{
	char path[4096], buf[4096];
	FILE *out;
	int fd;

	if (argc != 3) {
		fprintf(stderr, "usage: gt_flush DIR OUT\n");
		return 2;
	}
	snprintf(path, sizeof(path), "%s/gt_flush.XXXXXX", argv[1]);
	fd = mkstemp(path); /* a new file of our own: nothing is replaced */
	if (fd < 0) {
		fprintf(stderr, "gt_flush: mkstemp in %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	out = fopen(argv[2], "wx");
	if (!out) {
		fprintf(stderr, "gt_flush: cannot create %s: %s\n", argv[2], strerror(errno));
		unlink(path);
		return 1;
	}
	memset(buf, 'x', sizeof(buf));
	for (int i = 0; i < ROUNDS; i++) {
		uint64_t a, b;

		if (pwrite(fd, buf, sizeof(buf), (off_t)i * (off_t)sizeof(buf)) != sizeof(buf)) {
			fprintf(stderr, "gt_flush: write: %s\n", strerror(errno));
			unlink(path);
			return 1;
		}
		a = now();
		if (fdatasync(fd)) {
			fprintf(stderr, "gt_flush: fdatasync: %s\n", strerror(errno));
			unlink(path);
			return 1;
		}
		b = now();
		fprintf(out, "%ld %" PRIu64 " %" PRIu64 "\n", (long)syscall(SYS_gettid), a, b);
	}
	close(fd);
	unlink(path);
	return fclose(out) ? 1 : 0;
}
