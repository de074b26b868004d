// SPDX-License-Identifier: MIT
/*
 * Ground truth "idle" (issue 15.3): a small server that idles between requests, and the same
 * server under load.
 *
 *   gt_idle --mode idle|load [--requests N]
 *
 * Threads: gt-srv waits in epoll_wait on a listening AF_UNIX socket, accepts each connection,
 * reads its one byte and queues the job for gt-worker, a pool worker waiting on a condition
 * variable. gt-client connects and sends one byte per request, never waiting for a reply.
 *
 * idle: the client sleeps 150 ms before each request. gt-srv's epoll_wait is woken by a client
 *       that was asleep; gt-worker's condvar wait by gt-srv, which was in epoll_wait. Nobody was
 *       working to end those waits: they are idle and must not be ranked. Only the client's own
 *       sleeps (a delay it chose) are.
 * load: requests come every 5 ms (below --min-block); gt-hog holds the job lock 150 ms at a
 *       time, computing, and lets one queued job through between its periods. Every job makes
 *       gt-worker wait for that lock: futex <- gt-hog on CPU. That is the server's real cost
 *       (main's join of the worker carries it too) and must top the report; the idle waits of
 *       gt-srv and of the worker between jobs still must not be ranked.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define QUEUE 64

static int listen_fd, nrequests = 12;
static bool load;
static struct sockaddr_un addr;

static pthread_mutex_t qmu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t qcv = PTHREAD_COND_INITIALIZER;
static int queue[QUEUE], qhead, qtail;
static bool done;

/* the lock every job needs, which gt-hog holds while computing */
static pthread_mutex_t job_mu = PTHREAD_MUTEX_INITIALIZER;
static volatile bool hog_stop;
/* the lock passes hog -> worker -> hog: one job per hog period (see hog() and worker()) */
static volatile int jobs_done, hog_periods;
/* the worker has taken a job off the queue and wants job_mu for it */
static volatile int worker_wants_lock;
static volatile unsigned long sink;

static void die(const char *what)
{
	fprintf(stderr, "gt_idle: %s: %s\n", what, strerror(errno));
	exit(1);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static void spin_ms(long ms)
{
	uint64_t end = now_ns() + (uint64_t)ms * 1000000ULL;

	while (now_ns() < end)
		sink++;
}

static void *server(void *arg)
{
	struct epoll_event ev = { .events = EPOLLIN }, got;
	int ep = epoll_create1(EPOLL_CLOEXEC), served = 0;

	(void)arg;
	pthread_setname_np(pthread_self(), "gt-srv");
	if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, listen_fd, &ev))
		die("epoll");
	while (served < nrequests) {
		int n = epoll_wait(ep, &got, 1, 5000), fd;
		char c;

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			die("epoll_wait (no request in 5s)");
		fd = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0)
			die("accept4");
		if (read(fd, &c, 1) != 1)
			die("read");
		close(fd);
		pthread_mutex_lock(&qmu);
		queue[qtail++ % QUEUE] = served++;
		pthread_cond_signal(&qcv);
		pthread_mutex_unlock(&qmu);
	}
	pthread_mutex_lock(&qmu);
	done = true;
	pthread_cond_signal(&qcv);
	pthread_mutex_unlock(&qmu);
	close(ep);
	return NULL;
}

static void *worker(void *arg)
{
	int last_period = -1;

	(void)arg;
	pthread_setname_np(pthread_self(), "gt-worker");
	for (;;) {
		pthread_mutex_lock(&qmu);
		while (qhead == qtail && !done)
			pthread_cond_wait(&qcv, &qmu);
		if (qhead == qtail) {
			pthread_mutex_unlock(&qmu);
			return NULL;
		}
		qhead++;
		__atomic_store_n(&worker_wants_lock, 1, __ATOMIC_SEQ_CST);
		pthread_mutex_unlock(&qmu);
		/* each job needs the lock: first let gt-hog take it again, then block on it */
		while (load && __atomic_load_n(&hog_periods, __ATOMIC_SEQ_CST) == last_period)
			sched_yield();
		pthread_mutex_lock(&job_mu);
		last_period = __atomic_load_n(&hog_periods, __ATOMIC_SEQ_CST);
		spin_ms(1);
		__atomic_store_n(&worker_wants_lock, 0, __ATOMIC_SEQ_CST);
		__atomic_add_fetch(&jobs_done, 1, __ATOMIC_SEQ_CST);
		pthread_mutex_unlock(&job_mu);
	}
}

static bool jobs_pending(void)
{
	bool any;

	pthread_mutex_lock(&qmu);
	any = qhead != qtail;
	pthread_mutex_unlock(&qmu);
	return any;
}

static void *hog(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "gt-hog");
	while (!hog_stop) {
		int before;

		pthread_mutex_lock(&job_mu);
		before = __atomic_load_n(&jobs_done, __ATOMIC_SEQ_CST);
		__atomic_add_fetch(&hog_periods, 1, __ATOMIC_SEQ_CST);
		spin_ms(150);
		pthread_mutex_unlock(&job_mu);
		/*
		 * A queued job, or one the worker already took, goes first: the worker waits one
		 * hog period per job, not less, and never more (without the second test the hog,
		 * taking job_mu back at once, starved a worker that had dequeued its job: a
		 * livelock).
		 */
		while (!hog_stop && __atomic_load_n(&jobs_done, __ATOMIC_SEQ_CST) == before &&
		       (jobs_pending() || __atomic_load_n(&worker_wants_lock, __ATOMIC_SEQ_CST)))
			sched_yield();
	}
	return NULL;
}

static void *client(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "gt-client");
	for (int i = 0; i < nrequests; i++) {
		int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

		sleep_ms(load ? 5 : 150);
		if (fd < 0 || connect(fd, (struct sockaddr *)&addr, sizeof(addr)))
			die("connect");
		if (write(fd, "r", 1) != 1)
			die("write");
		close(fd);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t srv, wrk, cli, hg;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--mode") && i + 1 < argc) {
			load = !strcmp(argv[++i], "load");
		} else if (!strcmp(argv[i], "--requests") && i + 1 < argc) {
			nrequests = atoi(argv[++i]);
		} else {
			fprintf(stderr, "usage: gt_idle --mode idle|load [--requests N]\n");
			return 2;
		}
	}
	/* an abstract socket: nothing in the file system to clean up */
	addr.sun_family = AF_UNIX;
	snprintf(addr.sun_path + 1, sizeof(addr.sun_path) - 1, "gt_idle.%d", (int)getpid());
	listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (listen_fd < 0 || bind(listen_fd, (struct sockaddr *)&addr, sizeof(addr)) ||
	    listen(listen_fd, 128))
		die("listen");
	if (pthread_create(&srv, NULL, server, NULL) || pthread_create(&wrk, NULL, worker, NULL) ||
	    (load && pthread_create(&hg, NULL, hog, NULL)) ||
	    pthread_create(&cli, NULL, client, NULL))
		die("pthread_create");
	pthread_join(cli, NULL);
	pthread_join(srv, NULL);
	pthread_join(wrk, NULL);
	hog_stop = true;
	if (load)
		pthread_join(hg, NULL);
	close(listen_fd);
	return 0;
}
