/* TCP loopback ping-pong for bench/net.sh: two threads exchange 1-byte messages over one
 * 127.0.0.1 connection N times (every round trip: two packets, two softirq wakeups).
 * Prints "usecs/op: X".   tcp_pingpong [N] */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static long n = 100000;
static int srv_fd;

static void die(const char *what)
{
	perror(what);
	exit(1);
}

static void *echo(void *arg)
{
	char c;
	int fd = accept(srv_fd, NULL, NULL);

	(void)arg;
	if (fd < 0)
		die("accept");
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &(int){ 1 }, sizeof(int));
	for (long i = 0; i < n; i++)
		if (read(fd, &c, 1) != 1 || write(fd, &c, 1) != 1)
			die("echo");
	close(fd);
	return NULL;
}

int main(int argc, char **argv)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	struct timespec t0, t1;
	pthread_t t;
	char c = 'x';
	int fd;

	if (argc > 1)
		n = atol(argv[1]);
	srv_fd = socket(AF_INET, SOCK_STREAM, 0);
	if (srv_fd < 0 || bind(srv_fd, (struct sockaddr *)&a, sizeof(a)) || listen(srv_fd, 1) ||
	    getsockname(srv_fd, (struct sockaddr *)&a, &len))
		die("listen");
	if (pthread_create(&t, NULL, echo, NULL))
		die("pthread_create");
	fd = socket(AF_INET, SOCK_STREAM, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a)))
		die("connect");
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &(int){ 1 }, sizeof(int));
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (long i = 0; i < n; i++)
		if (write(fd, &c, 1) != 1 || read(fd, &c, 1) != 1)
			die("ping");
	clock_gettime(CLOCK_MONOTONIC, &t1);
	pthread_join(t, NULL);
	printf("usecs/op: %.3f\n",
	       ((t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec)) / 1e3 / (double)n);
	return 0;
}
