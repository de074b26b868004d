// SPDX-License-Identifier: MIT
/* watch -a: the processes to attach to, from /proc (see cmd_watch.h). */
#include <stdbool.h>
#include <unistd.h>

#include "cmd_watch.h"
#include "base/proc_stat.h"

/*
 * Kernel threads are followed as helpers where they work for a traced thread; whyslow and the
 * helpers it forked would trace their own tracing.
 */
static bool attachable(uint32_t pid, void *ctx)
{
	uint32_t ppid, me = *(const uint32_t *)ctx;
	bool kthread;

	return !ws_proc_stat_of(pid, &ppid, &kthread) && !kthread && ppid != me;
}

int ws_watch_all_pids(uint32_t **pids, int *n)
{
	uint32_t me = (uint32_t)getpid();
	size_t got = 0;
	int err = ws_proc_pids(attachable, &me, pids, &got);

	*n = (int)got;
	return err;
}
