/* The client of the "requests" ground truth (tests/programs/gt_req.c), run untraced by
 * tests/e2e/gt_requests.sh.
 *
 *   gt_req_client --port-file FILE --log FILE [--connections C] [--requests N] [--wait-s S]
 *
 * Waits (up to S s, default 30) for the server to write its port to the port file, opens C
 * connections (default 4) to 127.0.0.1:PORT, then sends N requests (default 300) one at a time:
 * request i goes on connection i % C with seq i and type gt_req_type(i), and the next is sent
 * only after its reply came.  Then closes every connection.
 *
 * The log (a new file, never over an existing path) has one line per request:
 *   local_port seq type latency_ns client_wait_ns
 * latency_ns from just before the send() to just after the recv() of the reply returned,
 * CLOCK_MONOTONIC; client_wait_ns how long the client itself waited for a CPU meanwhile (its
 * schedstat run_delay, grown between the two): on a loaded machine, time in its latency that no
 * server's request holds.  Exit 0 when every reply echoed its request. */
#include "gt_common.h"
#include "gt_req.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_CONN 16

/* The port the server wrote ("PORT\n"), waiting for it. */
static uint16_t read_port(const char *path, long wait_s)
{
	uint64_t deadline = gt_now() + (uint64_t)wait_s * 1000000000ull;
	struct timespec ms10 = { 0, 10000000 };
	char buf[16];

	for (;;) {
		int fd = open(path, O_RDONLY | O_CLOEXEC);

		if (fd >= 0) {
			ssize_t n = read(fd, buf, sizeof(buf) - 1);

			close(fd);
			if (n > 0 && buf[n - 1] == '\n') {
				buf[n - 1] = '\0';
				return (uint16_t)gt_parse_long("port file", buf, 1, 65535);
			}
		}
		if (gt_now() > deadline)
			gt_die("no port in %s after %ld s (did the server start?)", path, wait_s);
		nanosleep(&ms10, NULL);
	}
}

/* This thread's time waiting for a CPU so far (ns): /proc/thread-self/schedstat's second field
 * (0 when it cannot be read: the check then allows nothing for it). */
static uint64_t run_delay(void)
{
	unsigned long long on_cpu, waited = 0;
	FILE *f = fopen("/proc/thread-self/schedstat", "re");

	if (f) {
		if (fscanf(f, "%llu %llu", &on_cpu, &waited) != 2)
			waited = 0;
		fclose(f);
	}
	return waited;
}

int main(int argc, char **argv)
{
	const char *port_file = NULL, *log_path = NULL;
	long nconn = 4, nreq = 300, wait_s = 30;
	struct sockaddr_in a = { .sin_family = AF_INET };
	int fds[MAX_CONN], one = 1, lfd;
	uint16_t lport[MAX_CONN];
	FILE *log;

	gt_set_prog("gt_req_client");
	for (int i = 1; i < argc; i++) {
		const char *o = argv[i];

		if (i + 1 == argc)
			gt_die("usage: gt_req_client --port-file FILE --log FILE [--connections C] "
			       "[--requests N] [--wait-s S]");
		if (!strcmp(o, "--port-file"))
			port_file = argv[++i];
		else if (!strcmp(o, "--log"))
			log_path = argv[++i];
		else if (!strcmp(o, "--connections"))
			nconn = gt_parse_long(o, argv[++i], 1, MAX_CONN);
		else if (!strcmp(o, "--requests"))
			nreq = gt_parse_long(o, argv[++i], 1, 100000);
		else if (!strcmp(o, "--wait-s"))
			wait_s = gt_parse_long(o, argv[++i], 1, 600);
		else
			gt_die("unknown option %s", o);
	}
	if (!port_file || !log_path)
		gt_die("--port-file and --log are required");
	prctl(PR_SET_NAME, "gt-req-client");
	lfd = open(log_path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (lfd < 0 || !(log = fdopen(lfd, "w")))
		gt_die("cannot create %s: %s", log_path, strerror(errno));

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	a.sin_port = htons(read_port(port_file, wait_s));
	for (int i = 0; i < nconn; i++) {
		struct sockaddr_in l;
		socklen_t len = sizeof(l);

		fds[i] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fds[i] < 0 || connect(fds[i], (struct sockaddr *)&a, sizeof(a)))
			gt_die("connect to 127.0.0.1:%u: %s", ntohs(a.sin_port), strerror(errno));
		if (setsockopt(fds[i], IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) ||
		    getsockname(fds[i], (struct sockaddr *)&l, &len))
			gt_die("connection %d: %s", i, strerror(errno));
		lport[i] = ntohs(l.sin_port);
		/* the premise: the server side of a connection is the one with the lower port */
		if (lport[i] <= ntohs(a.sin_port))
			gt_die("connection %d: local port %u is not above the server's %u", i,
			       lport[i], ntohs(a.sin_port));
	}
	for (long i = 0; i < nreq; i++) {
		uint64_t w0, w1;
		int c = (int)(i % nconn);
		struct gt_req_msg m = { .type = (uint8_t)gt_req_type((uint32_t)i),
					.seq = (uint32_t)i },
				  r;
		uint64_t t0, t1;
		ssize_t n;

		w0 = run_delay();
		t0 = gt_now();
		if (send(fds[c], &m, sizeof(m), MSG_NOSIGNAL) != (ssize_t)sizeof(m))
			gt_die("send request %ld: %s", i, strerror(errno));
		do
			n = recv(fds[c], &r, sizeof(r), MSG_WAITALL);
		while (n < 0 && errno == EINTR);
		t1 = gt_now();
		w1 = run_delay();
		if (n != (ssize_t)sizeof(r))
			gt_die("request %ld: recv = %zd: %s", i, n,
			       n < 0 ? strerror(errno) : "the server closed the connection");
		if (r.seq != m.seq || r.type != m.type)
			gt_die("request %ld: the reply echoed seq %" PRIu32 " type %c", i, r.seq,
			       r.type);
		fprintf(log, "%u %ld %c %" PRIu64 " %" PRIu64 "\n", lport[c], i, m.type, t1 - t0,
			w1 >= w0 ? w1 - w0 : 0);
	}
	for (int i = 0; i < nconn; i++)
		close(fds[i]);
	if (fflush(log) || ferror(log) || fclose(log))
		gt_die("error writing %s", log_path);
	return 0;
}
