// SPDX-License-Identifier: MIT
/*
 * gt_quota: a CPU-bound loop for the CPU quota ground truth (tests/e2e/gt_quota.sh). It only
 * computes, for the wall-clock time given (default 1.5 s): put in a cgroup with a 10% CPU quota,
 * it spends about 90% of that time throttled, kept off the CPU by the quota and nothing else.
 *   gt_quota [SECONDS]
 */
#include <stdlib.h>
#include <time.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 1.5, end = now() + secs;
	volatile unsigned long x = 0;

	while (now() < end)
		for (int i = 0; i < 100000; i++)
			x++;
	return 0;
}
