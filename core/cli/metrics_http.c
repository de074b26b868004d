// SPDX-License-Identifier: MIT
/* The metrics' HTTP server: see metrics_http.h. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* accept4 */
#endif
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "metrics_http.h"
#include "base/clock.h"

/* A request is its head alone (GET has no body): more than this is no scrape. */
#define REQUEST_MAX 4096
/* A whole exchange, read and answer, takes at most this long; then the client is dropped. */
#define EXCHANGE_MS 2000
#define CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

struct ws_metrics_http {
	int listen_fd;
	int stop_fds[2]; /* a byte written to [1] ends the thread */
	pthread_t thread;
	struct ws_metrics *m;
};

int ws_metrics_addr_parse(const char *spec, struct ws_metrics_addr *out)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICSERV };
	struct addrinfo *res = NULL;
	char host[256];
	const char *port = spec, *colon = strrchr(spec, ':');
	char *end;
	unsigned long n;
	int err;

	snprintf(host, sizeof(host), "127.0.0.1");
	if (colon) {
		size_t hlen = (size_t)(colon - spec);

		/* [v6]:PORT: the brackets keep the address's own colons apart from the port's */
		if (hlen >= 2 && spec[0] == '[' && spec[hlen - 1] == ']') {
			spec++;
			hlen -= 2;
		} else if (memchr(spec, ':', hlen)) {
			return -EINVAL; /* a v6 address without brackets */
		}
		if (!hlen || hlen >= sizeof(host))
			return -EINVAL;
		memcpy(host, spec, hlen);
		host[hlen] = 0;
		port = colon + 1;
	}
	errno = 0;
	n = strtoul(port, &end, 10);
	if (!*port || *end || errno || n < 1 || n > 65535 || port[0] == '+' || port[0] == '-')
		return -EINVAL;
	err = getaddrinfo(host, port, &hints, &res);
	if (err || !res)
		return -EADDRNOTAVAIL;
	memcpy(&out->sa, res->ai_addr, res->ai_addrlen);
	out->len = res->ai_addrlen;
	freeaddrinfo(res);
	return 0;
}

/* Milliseconds left until @deadline (CLOCK_MONOTONIC ns), 0 when past. */
static int left_ms(uint64_t deadline)
{
	uint64_t now = ws_clock_mono_now();

	return now >= deadline ? 0 : (int)((deadline - now + 999999) / 1000000);
}

/* The request's head into @buf (NUL-terminated), by @deadline. 0, -E2BIG or -ETIMEDOUT/-EIO. */
static int read_head(int fd, char *buf, size_t cap, uint64_t deadline)
{
	size_t n = 0;

	buf[0] = 0;
	while (!strstr(buf, "\r\n\r\n") && !strstr(buf, "\n\n")) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		ssize_t got;
		int ms = left_ms(deadline);

		if (n + 1 >= cap)
			return -E2BIG;
		if (!ms || poll(&p, 1, ms) <= 0)
			return -ETIMEDOUT;
		got = recv(fd, buf + n, cap - 1 - n, 0);
		if (got < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (got <= 0)
			return -EIO; /* gone before a whole request */
		n += (size_t)got;
		buf[n] = 0;
	}
	return 0;
}

/* All of @len bytes of @p to @fd, by @deadline. 0 or a negative errno. */
static int send_all(int fd, const char *p, size_t len, uint64_t deadline)
{
	while (len) {
		struct pollfd pf = { .fd = fd, .events = POLLOUT };
		ssize_t n;
		int ms = left_ms(deadline);

		if (!ms || poll(&pf, 1, ms) <= 0)
			return -ETIMEDOUT;
		n = send(fd, p, len, MSG_NOSIGNAL);
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (n < 0)
			return -errno;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* What whyslow itself costs now: its CPU time (every thread) and resident memory. */
static void self_cost(struct ws_metrics_self *self)
{
	struct rusage ru;
	unsigned long size, resident;
	FILE *f;

	memset(self, 0, sizeof(*self));
	if (!getrusage(RUSAGE_SELF, &ru)) {
		self->user_ns = (uint64_t)ru.ru_utime.tv_sec * 1000000000ULL +
				(uint64_t)ru.ru_utime.tv_usec * 1000ULL;
		self->system_ns = (uint64_t)ru.ru_stime.tv_sec * 1000000000ULL +
				  (uint64_t)ru.ru_stime.tv_usec * 1000ULL;
	}
	/* now, not ru_maxrss's high-water mark */
	f = fopen("/proc/self/statm", "re");
	if (f) {
		if (fscanf(f, "%lu %lu", &size, &resident) == 2)
			self->rss_bytes = (uint64_t)resident * (uint64_t)sysconf(_SC_PAGESIZE);
		fclose(f);
	}
}

/*
 * One response: @status line, @type, @body of @len bytes (not sent when @head_only, a HEAD
 * request's), then the connection closes.
 */
static void respond(int fd, const char *status, const char *type, const char *body, size_t len,
		    bool head_only, uint64_t deadline)
{
	char head[256];
	int n = snprintf(
		head, sizeof(head),
		"HTTP/1.1 %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\nConnection: close\r\n\r\n",
		status, type, len);

	if (send_all(fd, head, (size_t)n, deadline) == 0 && len && !head_only)
		send_all(fd, body, len, deadline);
}

static void respond_text(int fd, const char *status, const char *text, uint64_t deadline)
{
	respond(fd, status, "text/plain; charset=utf-8", text, strlen(text), false, deadline);
}

/* Is the request target @path, with or without a query? */
static bool target_is(const char *target, size_t len, const char *path)
{
	size_t plen = strlen(path);

	return len >= plen && !memcmp(target, path, plen) && (len == plen || target[plen] == '?');
}

/* One connection: a request read, one answer, closed by the caller. */
static void serve(struct ws_metrics_http *h, int fd)
{
	uint64_t deadline = ws_clock_mono_now() + EXCHANGE_MS * 1000000ULL;
	char req[REQUEST_MAX], *sp, *target;
	struct ws_metrics_self self;
	char *body = NULL;
	size_t blen = 0, tlen;
	bool head_only;
	FILE *mem;
	int err = read_head(fd, req, sizeof(req), deadline);

	if (err == -E2BIG) {
		respond_text(fd, "431 Request Header Fields Too Large", "request too large\n",
			     deadline);
		return;
	}
	if (err)
		return; /* timed out or gone: nobody to answer */
	sp = strchr(req, ' ');
	target = sp ? sp + 1 : NULL;
	tlen = target ? strcspn(target, " \r\n") : 0;
	if (!sp || !tlen || strncmp(target + tlen, " HTTP/1.", 8)) {
		respond_text(fd, "400 Bad Request", "bad request\n", deadline);
		return;
	}
	head_only = sp - req == 4 && !strncmp(req, "HEAD", 4);
	if (!head_only && !(sp - req == 3 && !strncmp(req, "GET", 3))) {
		respond_text(fd, "405 Method Not Allowed", "only GET /metrics\n", deadline);
		return;
	}
	if (!target_is(target, tlen, "/metrics")) {
		respond_text(fd, "404 Not Found", "not found: whyslow serves /metrics\n", deadline);
		return;
	}
	self_cost(&self);
	mem = open_memstream(&body, &blen);
	err = mem ? ws_metrics_write(h->m, &self, mem) : -ENOMEM;
	/* closed, the buffer is ours to free whatever the close says */
	if ((mem && fclose(mem)) || err) {
		free(body);
		respond_text(fd, "500 Internal Server Error", "cannot write the metrics\n",
			     deadline);
		return;
	}
	respond(fd, "200 OK", CONTENT_TYPE, body, blen, head_only, deadline);
	free(body);
}

static void *serve_thread(void *arg)
{
	struct ws_metrics_http *h = arg;

	for (;;) {
		struct pollfd p[2] = { { .fd = h->listen_fd, .events = POLLIN },
				       { .fd = h->stop_fds[0], .events = POLLIN } };
		int fd;

		if (poll(p, 2, -1) < 0 && errno != EINTR)
			break;
		if (p[1].revents)
			break;
		if (!(p[0].revents & POLLIN))
			continue;
		fd = accept4(h->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0 && (errno == EMFILE || errno == ENFILE || errno == ENOMEM)) {
			/* the connection stays queued: a pause, not a loop on the same failure */
			poll(&p[1], 1, 100);
			continue;
		}
		if (fd < 0)
			continue; /* the client gave up: the next one */
		serve(h, fd);
		close(fd);
	}
	return NULL;
}

int ws_metrics_http_start(struct ws_metrics_http **out, const struct ws_metrics_addr *a,
			  struct ws_metrics *m)
{
	struct ws_metrics_http *h = calloc(1, sizeof(*h));
	sigset_t all, old;
	int one = 1, err;

	if (!h)
		return -ENOMEM;
	h->m = m;
	h->stop_fds[0] = h->stop_fds[1] = -1;
	/* close-on-exec: run's command must not hold the port */
	h->listen_fd = socket(a->sa.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (h->listen_fd < 0 ||
	    setsockopt(h->listen_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(h->listen_fd, (const struct sockaddr *)&a->sa, a->len) ||
	    listen(h->listen_fd, 16) || pipe2(h->stop_fds, O_CLOEXEC)) {
		err = -errno;
		goto fail;
	}
	/* the tracer's thread takes the signals (Ctrl-C ends its loop), never this one */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = -pthread_create(&h->thread, NULL, serve_thread, h);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err)
		goto fail;
	*out = h;
	return 0;
fail:
	if (h->listen_fd >= 0)
		close(h->listen_fd);
	if (h->stop_fds[0] >= 0) {
		close(h->stop_fds[0]);
		close(h->stop_fds[1]);
	}
	free(h);
	return err;
}

void ws_metrics_http_stop(struct ws_metrics_http *h)
{
	if (!h)
		return;
	while (write(h->stop_fds[1], "x", 1) < 0 && errno == EINTR)
		;
	pthread_join(h->thread, NULL);
	close(h->listen_fd);
	close(h->stop_fds[0]);
	close(h->stop_fds[1]);
	free(h);
}
