/*
 * Start-up probe for bench/startup.sh.
 *   startup_probe --child        print CLOCK_MONOTONIC ns and exit (the traced command)
 *   startup_probe CMD [ARGS...]  take t0, run CMD with stdout on a pipe, read the first
 *                                number CMD's descendant prints (its start time), print
 *                                "start_ms total_ms": from t0 to the command starting,
 *                                and to CMD exiting
 * Build: cc -O2 -o startup_probe startup_probe.c
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static unsigned long long now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	int fd[2], st;
	unsigned long long t0, t1 = 0, t2;
	char buf[64];
	ssize_t n, len = 0;
	pid_t pid;

	if (argc > 1 && !strcmp(argv[1], "--child")) {
		printf("%llu\n", now());
		return 0;
	}
	if (argc < 2 || pipe(fd))
		return 2;
	t0 = now();
	pid = fork();
	if (pid == 0) {
		dup2(fd[1], 1);
		close(fd[0]);
		close(fd[1]);
		execvp(argv[1], argv + 1);
		_exit(127);
	}
	close(fd[1]);
	while (len < (ssize_t)sizeof(buf) - 1 && (n = read(fd[0], buf + len, sizeof(buf) - 1 - len)) > 0)
		len += n;
	buf[len] = 0;
	t1 = strtoull(buf, NULL, 10);
	waitpid(pid, &st, 0);
	t2 = now();
	if (!t1 || !WIFEXITED(st) || WEXITSTATUS(st))
		return 1;
	printf("%.2f %.2f\n", (t1 - t0) / 1e6, (t2 - t0) / 1e6);
	return 0;
}
