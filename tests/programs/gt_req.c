/* Ground truth "requests": a TCP server with a known mix of requests (tests/e2e/gt_requests.sh).
 *
 *   gt_req --dev /dev/loopN --cgroup DIR --port-file FILE [--connections C] [--requests N]
 *          [--hold-ms MS]
 *
 * Listens on TCP 127.0.0.1 at a free port below the ephemeral range (so below the client's
 * ports: the server side is the lower port) and writes it ("PORT\n") to FILE, which must not
 * exist yet (created O_EXCL).  Accepts C connections (default 4) from tests/programs/gt_req_client,
 * one thread each (gt-req-srv), and serves 8-byte requests (gt_req.h) until every connection is
 * closed; then checks that N (default 300) requests were served in all and exits.
 *
 * Threads and processes:
 *   gt-req-main     accepts the connections, then joins the others (idle waits only)
 *   gt-req-srv      one per connection: recv a request, serve it, send the reply echoing its seq
 *   gt-req-holder   in the blkio group: on demand, locks M and holds it across O_DIRECT reads of
 *                   the throttled loop device for at least --hold-ms (default 30) ms
 *   gt-req-backend  a second process (forked at start, so traced too), one thread per
 *                   connection, each on its own socketpair (no address, so never a "server"):
 *                   burns 20-40 ms of CPU per call and replies
 *
 * Request types (the client's mix, gt_req_type()):
 *   'c'  0.3-1.0 ms of the server thread's own CPU, then the reply: cause null
 *   'l'  asks the holder for a hold, waits until it holds M, then locks M: the wait is the
 *        holder's block I/O ("block I/O on loopN"), tens of ms
 *   'b'  sends a call to the backend over the connection's socketpair and waits for its reply:
 *        the wait is the backend's CPU ("CPU work in gt-req-backend"), 20-40 ms
 *
 * The client sends one request at a time over all its connections, so no two requests are
 * served at once and none waits for another's CPU. */
#include "gt_common.h"
#include "gt_req.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_CONN 16

static struct gt_opts opts;
static const char *port_file;
static int nconn = 4;
static long nreq = 300;
static long hold_ms = 30;

/* per connection: its socket, the server's end of the backend socketpair, counts */
static struct conn {
	int fd;
	int backend_fd;
	pthread_t thread;
	long served[3]; /* c, l, b */
} conns[MAX_CONN];
static int backend_fds[MAX_CONN]; /* the backend's ends */

/* the lock the 'l' requests wait for, and the holder's controls */
static pthread_mutex_t M = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t ctl = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t ctl_cond = PTHREAD_COND_INITIALIZER;
static long want, holding; /* tickets asked for; the ticket whose hold is on */
static int quit;
static _Atomic pid_t locker_tid; /* the requester about to lock M */
/* the holder's own record */
static long holds, hold_reads;
static uint64_t hold_min_ns = UINT64_MAX, hold_max_ns, hold_sum_ns, read_sum_ns;

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts))
		gt_die("clock_gettime(CLOCK_THREAD_CPUTIME_ID): %s", strerror(errno));
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Runs on the CPU until this thread has used ns more of CPU time. */
static void burn_cpu(uint64_t ns)
{
	uint64_t end = thread_cpu_ns() + ns;
	volatile uint64_t x = 1;

	while (thread_cpu_ns() < end)
		for (int i = 0; i < 1000; i++)
			x = x * 6364136223846793005ull + 1442695040888963407ull;
}

static void recv_exact(int fd, struct gt_req_msg *m, int *eof, const char *who)
{
	ssize_t n;

	do
		n = recv(fd, m, sizeof(*m), MSG_WAITALL);
	while (n < 0 && errno == EINTR);
	*eof = n == 0;
	if (n != 0 && n != (ssize_t)sizeof(*m))
		gt_die("%s: recv = %zd: %s", who, n, n < 0 ? strerror(errno) : "short message");
}

static void send_exact(int fd, const struct gt_req_msg *m, const char *who)
{
	ssize_t n;

	do
		n = send(fd, m, sizeof(*m), MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	if (n != (ssize_t)sizeof(*m))
		gt_die("%s: send = %zd: %s", who, n, n < 0 ? strerror(errno) : "short write");
}

/* ---- the backend process ------------------------------------------------------------------ */

static void *backend_thread(void *arg)
{
	int fd = (int)(intptr_t)arg, eof;
	struct gt_req_msg m;

	gt_setname("gt-req-backend");
	for (;;) {
		recv_exact(fd, &m, &eof, "backend");
		if (eof)
			break;
		burn_cpu(gt_req_backend_ns(m.seq));
		send_exact(fd, &m, "backend");
	}
	close(fd);
	return NULL;
}

static void backend_main(void)
{
	pthread_t t[MAX_CONN];

	gt_set_prog("gt_req backend");
	if (prctl(PR_SET_PDEATHSIG, SIGKILL))
		gt_die("prctl(PR_SET_PDEATHSIG): %s", strerror(errno));
	if (getppid() == 1)
		gt_die("the server died before the backend started");
	if (prctl(PR_SET_NAME, "gt-req-backend"))
		gt_die("prctl(PR_SET_NAME): %s", strerror(errno));
	for (int i = 0; i < nconn; i++)
		close(conns[i].backend_fd);
	for (int i = 0; i < nconn; i++)
		if (pthread_create(&t[i], NULL, backend_thread, (void *)(intptr_t)backend_fds[i]))
			gt_die("pthread_create (backend) failed");
	for (int i = 0; i < nconn; i++)
		if (pthread_join(t[i], NULL))
			gt_die("pthread_join (backend) failed");
	_exit(0);
}

/* ---- the holder ----------------------------------------------------------------------------- */

static void *holder(void *arg)
{
	int idx = 0;

	(void)arg;
	gt_setname("gt-req-holder");
	gt_join_cgroup(opts.cgroups[0]);
	for (;;) {
		uint64_t start, reads_ns = 0, deadline;
		pid_t tid;
		long n;

		gt_lock(&ctl);
		while (holding == want && !quit)
			pthread_cond_wait(&ctl_cond, &ctl);
		if (holding == want) {
			gt_unlock(&ctl);
			break;
		}
		n = holding + 1;
		gt_unlock(&ctl);

		gt_lock(&M);
		gt_lock(&ctl);
		holding = n;
		pthread_cond_broadcast(&ctl_cond);
		gt_unlock(&ctl);
		/* the requester announces itself just before it locks M; then it is running until
		 * it blocks on M, so the first futex sleep seen is that one */
		deadline = gt_now() + (uint64_t)GT_WAIT_MS * 1000000u;
		while (!(tid = atomic_exchange(&locker_tid, 0))) {
			if (gt_now() > deadline)
				gt_die("no requester came for hold %ld", n);
			sched_yield();
		}
		gt_wait_blocked_in_futex(tid);
		start = gt_now();
		do {
			struct gt_read r;

			gt_slow_read(&opts, gt_pick_offset(&opts, idx++), &r);
			reads_ns += r.end_ns - r.start_ns;
			hold_reads++;
		} while (gt_now() - start < (uint64_t)hold_ms * 1000000u);
		uint64_t held = gt_now() - start;
		gt_unlock(&M);
		holds++;
		hold_sum_ns += held;
		read_sum_ns += reads_ns;
		if (held < hold_min_ns)
			hold_min_ns = held;
		if (held > hold_max_ns)
			hold_max_ns = held;
	}
	return NULL;
}

/* ---- the server threads --------------------------------------------------------------------- */

static void serve_lock(void)
{
	gt_lock(&ctl);
	long t = ++want;
	pthread_cond_broadcast(&ctl_cond);
	while (holding < t)
		pthread_cond_wait(&ctl_cond, &ctl);
	gt_unlock(&ctl);
	atomic_store(&locker_tid, gt_gettid());
	gt_lock(&M);
	gt_unlock(&M);
}

static void *server(void *arg)
{
	struct conn *c = arg;
	struct gt_req_msg m;
	int eof;

	gt_setname("gt-req-srv");
	for (;;) {
		recv_exact(c->fd, &m, &eof, "server");
		if (eof)
			break;
		switch (m.type) {
		case 'c':
			burn_cpu(gt_req_cpu_ns(m.seq));
			c->served[0]++;
			break;
		case 'l':
			serve_lock();
			c->served[1]++;
			break;
		case 'b': {
			struct gt_req_msg r;

			send_exact(c->backend_fd, &m, "server to backend");
			recv_exact(c->backend_fd, &r, &eof, "server from backend");
			if (eof || r.seq != m.seq)
				gt_die("the backend answered %s", eof ? "nothing" : "another call");
			c->served[2]++;
			break;
		}
		default:
			gt_die("unknown request type 0x%02x (seq %" PRIu32 ")", m.type, m.seq);
		}
		send_exact(c->fd, &m, "server");
	}
	close(c->fd);
	close(c->backend_fd); /* the backend's thread for it ends */
	return NULL;
}

/* ---- main ----------------------------------------------------------------------------------- */

/* Takes this program's own options out of argv; the rest go to gt_parse. */
static int own_options(int argc, char **argv)
{
	int out = 1;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "--port-file") || !strcmp(a, "--connections") ||
		    !strcmp(a, "--requests") || !strcmp(a, "--hold-ms")) {
			if (i + 1 == argc)
				gt_die("%s needs a value", a);
			const char *v = argv[++i];
			if (!strcmp(a, "--port-file"))
				port_file = v;
			else if (!strcmp(a, "--connections"))
				nconn = (int)gt_parse_long(a, v, 1, MAX_CONN);
			else if (!strcmp(a, "--requests"))
				nreq = gt_parse_long(a, v, 1, 100000);
			else
				hold_ms = gt_parse_long(a, v, 1, 1000);
			continue;
		}
		argv[out++] = argv[i];
	}
	argv[out] = NULL;
	if (!port_file)
		gt_die("--port-file FILE is required");
	return out;
}

/* Writes "PORT\n" to a new file (never over an existing path), in one write. */
static void write_port(uint16_t port)
{
	char buf[16];
	int fd, n;

	fd = open(port_file, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0)
		gt_die("cannot create %s: %s", port_file, strerror(errno));
	n = snprintf(buf, sizeof(buf), "%u\n", port);
	if (write(fd, buf, (size_t)n) != n || close(fd))
		gt_die("cannot write %s: %s", port_file, strerror(errno));
}

/*
 * A listening socket on 127.0.0.1 at a port below the ephemeral range (ip_local_port_range), so
 * below every client's port: the server side of a TCP connection is told by the lower port.
 * bind(port 0) would pick from the ephemeral range itself, above the client's half the time.
 * Tries ports in [low/2, low) from a pid-dependent start.
 */
static int listen_low(void)
{
	FILE *f = fopen("/proc/sys/net/ipv4/ip_local_port_range", "re");
	struct sockaddr_in a = { .sin_family = AF_INET };
	int low = 0, high = 0, fd, one = 1;

	if (!f || fscanf(f, "%d %d", &low, &high) != 2)
		gt_die("cannot read /proc/sys/net/ipv4/ip_local_port_range");
	fclose(f);
	if (low < 2048 || low > 65535)
		gt_die("the ephemeral ports start at %d: no room below them for the server", low);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	for (int i = 0; i < 500; i++) {
		int span = low / 2;
		int port = low - 1 -
			   (int)(((unsigned)getpid() * 37u + (unsigned)i * 7919u) % (unsigned)span);

		fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd < 0)
			gt_die("socket: %s", strerror(errno));
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		a.sin_port = htons((uint16_t)port);
		if (!bind(fd, (struct sockaddr *)&a, sizeof(a))) {
			if (listen(fd, MAX_CONN))
				gt_die("listen on 127.0.0.1:%d: %s", port, strerror(errno));
			return fd;
		}
		if (errno != EADDRINUSE && errno != EACCES)
			gt_die("bind 127.0.0.1:%d: %s", port, strerror(errno));
		close(fd);
	}
	gt_die("no free port below %d on 127.0.0.1 after 500 tries", low);
}

int main(int argc, char **argv)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t alen = sizeof(a);
	long total[3] = { 0 };
	pid_t backend;
	pthread_t th;
	int lfd, one = 1, status;

	gt_set_prog("gt_req");
	argc = own_options(argc, argv);
	gt_parse(argc, argv, &opts, 1);
	opts.min_read_ms = 0; /* a hold is timed as a whole: the throttle may pass a first read */
	alarm(60);	      /* a hung run dies (SIGALRM) instead of blocking the test */
	gt_setname("gt-req-main");

	for (int i = 0; i < nconn; i++) {
		int sv[2];

		if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
			gt_die("socketpair: %s", strerror(errno));
		conns[i].backend_fd = sv[0];
		backend_fds[i] = sv[1];
	}
	backend = fork();
	if (backend < 0)
		gt_die("fork: %s", strerror(errno));
	if (backend == 0)
		backend_main();
	for (int i = 0; i < nconn; i++)
		close(backend_fds[i]);

	if (pthread_create(&th, NULL, holder, NULL))
		gt_die("pthread_create (holder) failed");

	lfd = listen_low();
	if (getsockname(lfd, (struct sockaddr *)&a, &alen))
		gt_die("getsockname: %s", strerror(errno));
	write_port(ntohs(a.sin_port));
	gt_log("listening on 127.0.0.1:%u for %d connections, %ld requests; backend pid %d",
	       ntohs(a.sin_port), nconn, nreq, (int)backend);

	for (int i = 0; i < nconn; i++) {
		conns[i].fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
		if (conns[i].fd < 0)
			gt_die("accept: %s", strerror(errno));
		if (setsockopt(conns[i].fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)))
			gt_die("TCP_NODELAY: %s", strerror(errno));
		if (pthread_create(&conns[i].thread, NULL, server, &conns[i]))
			gt_die("pthread_create (server) failed");
	}
	close(lfd);
	for (int i = 0; i < nconn; i++) {
		if (pthread_join(conns[i].thread, NULL))
			gt_die("pthread_join (server) failed");
		for (int k = 0; k < 3; k++)
			total[k] += conns[i].served[k];
	}
	gt_lock(&ctl);
	quit = 1;
	pthread_cond_broadcast(&ctl_cond);
	gt_unlock(&ctl);
	if (pthread_join(th, NULL))
		gt_die("pthread_join (holder) failed");
	if (waitpid(backend, &status, 0) != backend || !WIFEXITED(status) || WEXITSTATUS(status))
		gt_die("the backend process failed (status 0x%x)", status);

	if (total[0] + total[1] + total[2] != nreq)
		gt_die("served %ld requests (%ld c, %ld l, %ld b), the client was to send %ld",
		       total[0] + total[1] + total[2], total[0], total[1], total[2], nreq);
	if (holds != total[1])
		gt_die("%ld holds for %ld 'l' requests", holds, total[1]);
	/* the premise of 'l': each hold is mostly the holder's block I/O */
	if (holds && read_sum_ns < hold_sum_ns * 9 / 10)
		gt_die("the holds were only %.0f%% block I/O: the run proves nothing",
		       100.0 * (double)read_sum_ns / (double)hold_sum_ns);
	gt_log("ok: served %ld requests (%ld c, %ld l, %ld b) on %d connections; %ld holds of "
	       "%.1f-%.1f ms (mean %.1f, %ld reads of %s)",
	       nreq, total[0], total[1], total[2], nconn, holds, holds ? hold_min_ns / 1e6 : 0.0,
	       hold_max_ns / 1e6, holds ? hold_sum_ns / 1e6 / (double)holds : 0.0, hold_reads,
	       opts.dev_name);
	return 0;
}
