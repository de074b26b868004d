/* SPDX-License-Identifier: MIT */
/*
 * --metrics [ADDR:]PORT: a small HTTP server, on a thread of its own, answering GET /metrics with
 * the metrics (report/metrics.h) in Prometheus' text format. One request per connection, read
 * with a deadline and a size bound, so a slow or hostile client never holds up the tracer (which
 * only takes the metrics' lock for a few additions per wait).
 */
#ifndef WS_METRICS_HTTP_H
#define WS_METRICS_HTTP_H

#include <sys/socket.h>

#include "report/metrics.h"

/* "9464" (on 127.0.0.1), "0.0.0.0:9464", "localhost:9464", "[::1]:9464"; port 1 to 65535. */
struct ws_metrics_addr {
	struct sockaddr_storage sa;
	socklen_t len;
};

/* @spec into @out: 0, -EINVAL (not that form) or -EADDRNOTAVAIL (the host is not found). */
int ws_metrics_addr_parse(const char *spec, struct ws_metrics_addr *out);

struct ws_metrics_http;

/* Listen on @a and serve @m from a new thread. 0 or -errno (bind, listen, the thread). */
int ws_metrics_http_start(struct ws_metrics_http **out, const struct ws_metrics_addr *a,
			  struct ws_metrics *m);
/* Stop serving (a request being answered is cut) and free. NULL: nothing. */
void ws_metrics_http_stop(struct ws_metrics_http *h);

#endif
