// SPDX-License-Identifier: MIT
/*
 * A wait that an io_uring worker ends: the main thread waits in io_uring_enter for one read
 * of an empty pipe, which IOSQE_ASYNC sends to an io-wq worker (iou-wrk-TID, a thread of this
 * process made without fork's tracepoint); a writer thread writes the byte after 200 ms.
 * whyslow must follow the worker: a thread of a traced process, whatever made it. Truth on
 * stdout: "main TID writer TID".
 */
#include <linux/io_uring.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

static int pipefd[2];
static volatile pid_t writer_tid;

static void *writer(void *arg)
{
	(void)arg;
	writer_tid = gettid();
	usleep(200 * 1000);
	if (write(pipefd[1], "x", 1) != 1)
		perror("write");
	return NULL;
}

int main(void)
{
	struct io_uring_params p;
	struct io_uring_sqe *sqes;
	unsigned *sq_tail, *sq_array, *sq_mask;
	char *sq, buf[1];
	pthread_t t;
	int fd;

	memset(&p, 0, sizeof(p));
	if (pipe(pipefd) || (fd = syscall(__NR_io_uring_setup, 4, &p)) < 0) {
		perror("io_uring_setup");
		return 1;
	}
	sq = mmap(NULL, p.sq_off.array + p.sq_entries * sizeof(unsigned), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_POPULATE, fd, IORING_OFF_SQ_RING);
	sqes = mmap(NULL, p.sq_entries * sizeof(*sqes), PROT_READ | PROT_WRITE,
		    MAP_SHARED | MAP_POPULATE, fd, IORING_OFF_SQES);
	if (sq == MAP_FAILED || sqes == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	sq_tail = (unsigned *)(sq + p.sq_off.tail);
	sq_mask = (unsigned *)(sq + p.sq_off.ring_mask);
	sq_array = (unsigned *)(sq + p.sq_off.array);
	memset(&sqes[0], 0, sizeof(sqes[0]));
	sqes[0].opcode = IORING_OP_READ;
	sqes[0].fd = pipefd[0];
	sqes[0].addr = (unsigned long)buf;
	sqes[0].len = 1;
	sqes[0].flags = IOSQE_ASYNC;
	sq_array[*sq_tail & *sq_mask] = 0;
	__atomic_store_n(sq_tail, *sq_tail + 1, __ATOMIC_RELEASE);
	if (pthread_create(&t, NULL, writer, NULL))
		return 1;
	if (syscall(__NR_io_uring_enter, fd, 1, 1, IORING_ENTER_GETEVENTS, NULL, 0) < 0) {
		perror("io_uring_enter");
		return 1;
	}
	pthread_join(t, NULL);
	printf("main %d writer %d\n", gettid(), writer_tid);
	return 0;
}
