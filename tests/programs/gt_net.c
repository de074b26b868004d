/* Ground truth "tcp" / "udp" / "net_trap": a reply over a loopback socket, late because the
 * server slept first.
 *
 *   gt_net --proto tcp|udp [--trap] [--sleep-ms N] [--truth FILE]
 *
 * Two processes. The server (a child) has one thread per connection, gt-srv-a (and gt-srv-b):
 * each receives a request, sleeps N ms (default 100) in one nanosleep, then sends the reply.
 * The client (the parent) has one thread per connection, gt-cli-a (and gt-cli-b): each sends
 * its request and blocks in recv until the reply comes.
 *
 * Expected whyslow chain for a client's wait:
 *   socket  tid gt-cli-X  woken_by gt-srv-X  (TCP|UDP 127.0.0.1:<server port> -> :<client port>)
 *   sleep   tid gt-srv-X
 * The reply wakes the client inside the NET_RX softirq, not in the server's task context.
 *
 * --trap: two connections at once, both servers sleeping the same time, so the two replies
 * arrive within a fraction of a millisecond of each other; each client's chain must name its
 * own server, never the other one. */
#include "gt_common.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <sched.h>
#include <unistd.h>

#define MAX_CONN 2

struct conn {
	int listen_fd; /* TCP: listening socket; UDP: the server's socket */
	uint16_t server_port, client_port;
	/* written by the server process into shared memory */
	pid_t srv_tid, srv_pid;
	uint64_t sleep_start, sleep_end;
	/* the client's own */
	pid_t cli_tid;
	uint64_t wait_start, wait_end;
};

static struct conn *conns; /* MAP_SHARED: both processes see it */
static int nconn = 1;
static int udp;
static long sleep_ms = 100;

static const char *srv_name[MAX_CONN] = { "gt-srv-a", "gt-srv-b" };
static const char *cli_name[MAX_CONN] = { "gt-cli-a", "gt-cli-b" };

static void loopback(struct sockaddr_in *a, uint16_t port)
{
	memset(a, 0, sizeof(*a));
	a->sin_family = AF_INET;
	a->sin_port = htons(port);
	a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
}

static uint16_t local_port(int fd)
{
	struct sockaddr_in a;
	socklen_t len = sizeof(a);

	if (getsockname(fd, (struct sockaddr *)&a, &len))
		gt_die("getsockname: %s", strerror(errno));
	return ntohs(a.sin_port);
}

static int bound_socket(void)
{
	struct sockaddr_in a;
	int fd = socket(AF_INET, udp ? SOCK_DGRAM : SOCK_STREAM, 0);

	if (fd < 0)
		gt_die("socket: %s", strerror(errno));
	loopback(&a, 0);
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)))
		gt_die("bind: %s", strerror(errno));
	return fd;
}

static void *server(void *arg)
{
	struct conn *c = arg;
	struct sockaddr_in peer;
	socklen_t plen = sizeof(peer);
	char buf[64];
	int fd = c->listen_fd;

	gt_setname(srv_name[c - conns]);
	c->srv_pid = getpid();
	__atomic_store_n(&c->srv_tid, gt_gettid(), __ATOMIC_RELEASE);
	if (!udp && (fd = accept(c->listen_fd, NULL, NULL)) < 0)
		gt_die("accept: %s", strerror(errno));
	if (recvfrom(fd, buf, sizeof(buf), 0, (struct sockaddr *)&peer, &plen) <= 0)
		gt_die("server recv: %s", strerror(errno));
	c->sleep_start = gt_now();
	gt_sleep_ms(sleep_ms);
	c->sleep_end = gt_now();
	if (sendto(fd, "reply", 5, 0, (struct sockaddr *)&peer, plen) != 5)
		gt_die("server send: %s", strerror(errno));
	if (!udp) {
		/* wait for the client to close, so the reply is surely read before we exit */
		while (recv(fd, buf, sizeof(buf), 0) > 0)
			;
		close(fd);
	}
	return NULL;
}

/*
 * Waits until the server thread of @c sits in recvfrom in state S, so the client's whole wait
 * is the server's work (its sleep), not its start-up: the thread may not exist yet when the
 * client connects, and a wait on a thread not yet observed has no explanation.
 */
static void wait_server_in_recv(const struct conn *c)
{
	uint64_t deadline = gt_now() + (uint64_t)GT_WAIT_MS * 1000000u;
	char path[96], buf[256];
	const char *st;
	FILE *f;

	for (;; sched_yield()) {
		if (gt_now() > deadline)
			gt_die("the server thread never blocked in recvfrom");
		if (!__atomic_load_n(&c->srv_tid, __ATOMIC_ACQUIRE))
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%d/syscall", (int)c->srv_pid,
			 (int)c->srv_tid);
		f = fopen(path, "re");
		if (!f)
			continue;
		buf[0] = 0;
		if (!fgets(buf, sizeof(buf), f))
			buf[0] = 0;
		fclose(f);
		if (atol(buf) != SYS_recvfrom || !isdigit((unsigned char)buf[0]))
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", (int)c->srv_pid,
			 (int)c->srv_tid);
		f = fopen(path, "re");
		if (!f)
			continue;
		buf[0] = 0;
		if (!fgets(buf, sizeof(buf), f))
			buf[0] = 0;
		fclose(f);
		st = strrchr(buf, ')');
		if (st && st[1] == ' ' && st[2] == 'S')
			return;
	}
}

static void *client(void *arg)
{
	struct conn *c = arg;
	struct sockaddr_in a;
	char buf[64];
	int fd = bound_socket();

	gt_setname(cli_name[c - conns]);
	c->cli_tid = gt_gettid();
	c->client_port = local_port(fd);
	loopback(&a, c->server_port);
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)))
		gt_die("connect: %s", strerror(errno));
	wait_server_in_recv(c);
	/* before the send: the server may start its sleep before send() returns */
	c->wait_start = gt_now();
	if (send(fd, "request", 7, 0) != 7)
		gt_die("client send: %s", strerror(errno));
	if (recv(fd, buf, sizeof(buf), 0) <= 0)
		gt_die("client recv: %s", strerror(errno));
	c->wait_end = gt_now();
	close(fd);
	return NULL;
}

static void run_server(void)
{
	pthread_t t[MAX_CONN];
	int i;

	gt_setname("gt-server");
	for (i = 0; i < nconn; i++)
		if (pthread_create(&t[i], NULL, server, &conns[i]))
			gt_die("pthread_create failed");
	for (i = 0; i < nconn; i++)
		pthread_join(t[i], NULL);
	_exit(0);
}

static void json_thread(FILE *f, const char *role, pid_t tid, pid_t pid, const char *comm, int last)
{
	fprintf(f, "    \"%s\": {\"tid\": %d, \"pid\": %d, \"comm\": \"%s\"}%s\n", role, (int)tid,
		(int)pid, comm, last ? "" : ",");
}

int main(int argc, char **argv)
{
	struct gt_opts o = { 0 };
	pthread_t t[MAX_CONN];
	const char *proto = NULL, *sfx[MAX_CONN] = { "", "_b" };
	int i, trap = 0, st;
	pid_t srv;
	FILE *f;

	gt_set_prog("gt_net");
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--proto") && i + 1 < argc)
			proto = argv[++i];
		else if (!strcmp(argv[i], "--trap"))
			trap = 1;
		else if (!strcmp(argv[i], "--sleep-ms") && i + 1 < argc)
			sleep_ms = strtol(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--truth") && i + 1 < argc)
			o.truth = argv[++i];
		else
			gt_die("usage: gt_net --proto tcp|udp [--trap] [--sleep-ms N] [--truth FILE]");
	}
	if (!proto || (strcmp(proto, "tcp") && strcmp(proto, "udp")))
		gt_die("--proto must be tcp or udp");
	if (sleep_ms < 10 || sleep_ms > 5000)
		gt_die("--sleep-ms must be 10..5000");
	udp = !strcmp(proto, "udp");
	nconn = trap ? 2 : 1;
	alarm(60);
	gt_setname("gt-net");

	conns = mmap(NULL, sizeof(*conns) * MAX_CONN, PROT_READ | PROT_WRITE,
		     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (conns == MAP_FAILED)
		gt_die("mmap: %s", strerror(errno));
	memset(conns, 0, sizeof(*conns) * MAX_CONN);

	for (i = 0; i < nconn; i++) {
		conns[i].listen_fd = bound_socket();
		conns[i].server_port = local_port(conns[i].listen_fd);
		if (!udp && listen(conns[i].listen_fd, 4))
			gt_die("listen: %s", strerror(errno));
	}
	srv = fork();
	if (srv < 0)
		gt_die("fork: %s", strerror(errno));
	if (srv == 0)
		run_server();
	/* no handshake needed: the sockets listen (TCP) or queue (UDP) before the fork */
	for (i = 0; i < nconn; i++)
		if (pthread_create(&t[i], NULL, client, &conns[i]))
			gt_die("pthread_create failed");
	for (i = 0; i < nconn; i++)
		pthread_join(t[i], NULL);
	if (waitpid(srv, &st, 0) != srv || !WIFEXITED(st) || WEXITSTATUS(st))
		gt_die("the server process failed");

	for (i = 0; i < nconn; i++) {
		struct conn *c = &conns[i];

		if (!(c->wait_start <= c->sleep_start && c->sleep_end <= c->wait_end))
			gt_die("ordering broken: client %d waited [%" PRIu64 ", %" PRIu64
			       "], server slept [%" PRIu64 ", %" PRIu64 "]",
			       i, c->wait_start, c->wait_end, c->sleep_start, c->sleep_end);
		if (c->wait_end - c->wait_start > (uint64_t)(sleep_ms + 50) * 1000000u)
			gt_die("client %d waited %.1f ms for a %ld ms sleep: too much slack", i,
			       (double)(c->wait_end - c->wait_start) / 1e6, sleep_ms);
	}

	f = gt_truth_open(&o);
	fprintf(f, "{\n  \"case\": \"%s\",\n  \"pid\": %d,\n  \"proto\": \"%s\",\n",
		trap ? "net_trap" : proto, (int)getpid(), udp ? "UDP" : "TCP");
	fprintf(f, "  \"threads\": {\n");
	for (i = 0; i < nconn; i++) {
		char role[16];

		snprintf(role, sizeof(role), "victim%s", sfx[i]);
		json_thread(f, role, conns[i].cli_tid, getpid(), cli_name[i], 0);
		snprintf(role, sizeof(role), "server%s", sfx[i]);
		json_thread(f, role, conns[i].srv_tid, conns[i].srv_pid, srv_name[i],
			    i + 1 == nconn);
	}
	fprintf(f, "  },\n  \"ports\": {\n");
	for (i = 0; i < nconn; i++)
		fprintf(f, "    \"victim%s\": {\"server\": %u, \"client\": %u}%s\n", sfx[i],
			conns[i].server_port, conns[i].client_port, i + 1 == nconn ? "" : ",");
	fprintf(f, "  },\n  \"waits\": {\n");
	for (i = 0; i < nconn; i++)
		fprintf(f,
			"    \"victim%s\": {\"tid\": %d, \"start_ns\": %" PRIu64
			", \"end_ns\": %" PRIu64 "}%s\n",
			sfx[i], (int)conns[i].cli_tid, conns[i].wait_start, conns[i].wait_end,
			i + 1 == nconn ? "" : ",");
	fprintf(f, "  },\n  \"sleeps\": {\n");
	for (i = 0; i < nconn; i++)
		fprintf(f,
			"    \"server%s\": {\"tid\": %d, \"start_ns\": %" PRIu64
			", \"end_ns\": %" PRIu64 "}%s\n",
			sfx[i], (int)conns[i].srv_tid, conns[i].sleep_start, conns[i].sleep_end,
			i + 1 == nconn ? "" : ",");
	fprintf(f, "  }\n}\n");
	gt_truth_close(f, &o);
	for (i = 0; i < nconn; i++)
		gt_log("ok: %s client %d (port %u) waited %.1f ms for server %d (port %u), which slept %.1f ms",
		       udp ? "UDP" : "TCP", (int)conns[i].cli_tid, conns[i].client_port,
		       (double)(conns[i].wait_end - conns[i].wait_start) / 1e6,
		       (int)conns[i].srv_tid, conns[i].server_port,
		       (double)(conns[i].sleep_end - conns[i].sleep_start) / 1e6);
	return 0;
}
