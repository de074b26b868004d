// SPDX-License-Identifier: MIT
/* /proc stat lines: the fields after a comm that may hold ')' (proc_stat.h). */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "proc_stat.h"

const char *ws_proc_stat_fields(const char *line)
{
	const char *close = strrchr(line, ')');

	/* ") S": a space, then at least the state */
	if (!close || close[1] != ' ' || !close[2] || !strchr(line, '(') ||
	    strchr(line, '(') > close)
		return NULL;
	return close + 2;
}

int ws_proc_stat_comm(const char *line, char *comm, size_t len)
{
	const char *open = strchr(line, '('), *close = strrchr(line, ')');
	size_t n;

	if (!len || !ws_proc_stat_fields(line))
		return -EINVAL;
	n = (size_t)(close - open - 1);
	if (n >= len)
		n = len - 1;
	memcpy(comm, open + 1, n);
	comm[n] = 0;
	return 0;
}

const char *ws_proc_stat_read(const char *path, char *buf, size_t len)
{
	ssize_t n;
	int fd;

	if (len < 2)
		return NULL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n <= 0)
		return NULL;
	buf[n] = 0;
	return ws_proc_stat_fields(buf);
}
