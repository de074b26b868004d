// SPDX-License-Identifier: MIT
/*
 * rel_daemon PIDFILE [MS]: daemonizes the classic way (fork, setsid, fork; the parent and the
 * middle process exit at once); the grandchild writes its pid to PIDFILE, then sleeps MS
 * (default 1000) in 10 naps of MS/10 and exits (tests/e2e/reliability/rel_hostile.sh).
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	long ms = argc > 2 ? atol(argv[2]) : 1000;
	struct timespec ts = { (ms / 10) / 1000, ((ms / 10) % 1000) * 1000000L };
	FILE *f;

	if (argc < 2)
		return 2;
	if (fork())
		return 0; /* the parent: exits at once */
	setsid();
	if (fork())
		_exit(0); /* the middle one too */
	f = fopen(argv[1], "w");
	if (!f)
		_exit(1);
	fprintf(f, "%d\n", getpid());
	fclose(f);
	for (int i = 0; i < 10; i++)
		nanosleep(&ts, NULL);
	_exit(0);
}
