// SPDX-License-Identifier: MIT
/*
 * A wait inside an io_uring worker: the main thread asks io_uring to open a FIFO for reading
 * with IOSQE_ASYNC, which an io-wq worker (iou-wrk-TID, a thread of this process made without
 * fork's tracepoint) does, blocking in the open until a writer thread opens the FIFO for
 * writing 200 ms later. An open cannot be polled, so the worker itself waits and the writer
 * wakes it. whyslow must follow the worker: a thread of a traced process, whatever made it.
 *   iou_worker FIFO      (FIFO: a path that does not exist yet; made and removed here)
 * Truth on stdout: "main TID writer TID".
 */
#include <fcntl.h>
#include <linux/io_uring.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

static const char *fifo;
static volatile pid_t writer_tid;

static void *writer(void *arg)
{
	int fd;

	(void)arg;
	writer_tid = gettid();
	usleep(200 * 1000);
	fd = open(fifo, O_WRONLY);
	if (fd < 0)
		perror("open for writing");
	else
		close(fd);
	return NULL;
}

int main(int argc, char **argv)
{
	struct io_uring_params p;
	struct io_uring_sqe *sqes;
	unsigned *sq_tail, *sq_array, *sq_mask;
	pthread_t t;
	char *sq;
	int fd, rc = 1;

	if (argc != 2) {
		fprintf(stderr, "usage: iou_worker FIFO\n");
		return 2;
	}
	fifo = argv[1];
	if (mkfifo(fifo, 0600)) {
		perror("mkfifo");
		return 1;
	}
	memset(&p, 0, sizeof(p));
	fd = syscall(__NR_io_uring_setup, 4, &p);
	if (fd < 0) {
		perror("io_uring_setup");
		goto out;
	}
	sq = mmap(NULL, p.sq_off.array + p.sq_entries * sizeof(unsigned), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_POPULATE, fd, IORING_OFF_SQ_RING);
	sqes = mmap(NULL, p.sq_entries * sizeof(*sqes), PROT_READ | PROT_WRITE,
		    MAP_SHARED | MAP_POPULATE, fd, IORING_OFF_SQES);
	if (sq == MAP_FAILED || sqes == MAP_FAILED) {
		perror("mmap");
		goto out;
	}
	sq_tail = (unsigned *)(sq + p.sq_off.tail);
	sq_mask = (unsigned *)(sq + p.sq_off.ring_mask);
	sq_array = (unsigned *)(sq + p.sq_off.array);
	memset(&sqes[0], 0, sizeof(sqes[0]));
	sqes[0].opcode = IORING_OP_OPENAT;
	sqes[0].fd = AT_FDCWD;
	sqes[0].addr = (unsigned long)fifo;
	sqes[0].open_flags = O_RDONLY;
	sqes[0].flags = IOSQE_ASYNC;
	sq_array[*sq_tail & *sq_mask] = 0;
	__atomic_store_n(sq_tail, *sq_tail + 1, __ATOMIC_RELEASE);
	if (pthread_create(&t, NULL, writer, NULL))
		goto out;
	if (syscall(__NR_io_uring_enter, fd, 1, 1, IORING_ENTER_GETEVENTS, NULL, 0) < 0) {
		perror("io_uring_enter");
		goto out;
	}
	pthread_join(t, NULL);
	printf("main %d writer %d\n", gettid(), writer_tid);
	rc = 0;
out:
	unlink(fifo);
	return rc;
}
