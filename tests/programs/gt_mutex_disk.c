/* Ground truth "mutex_disk": a victim waits on a mutex whose holder is in a slow disk read.
 *
 *   holder B (gt-holder): joins the blkio group, locks M, announces it, waits until A is asleep
 *                         on M, does a slow O_DIRECT 4 KiB pread, unlocks M.
 *   victim A (gt-victim): once B holds M, calls pthread_mutex_lock(M) and sleeps ~the read time.
 *
 * Expected whyslow chain for A's wait:
 *   futex  tid A addr &M woken_by B
 *   block_io tid B dev loopN sector S bytes 4096
 */
#include "gt_common.h"

#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { HOLDER_HOLDS = 1, VICTIM_LOCKING = 2 };

static struct gt_opts opts;
static struct gt_steps steps;
static pthread_mutex_t M = PTHREAD_MUTEX_INITIALIZER;
static pid_t tid_victim, tid_holder;
static struct gt_read rd;
static struct gt_wait wt;
static uint64_t hold_start, hold_end;

static void *holder(void *arg)
{
	(void)arg;
	gt_setname("gt-holder");
	tid_holder = gt_gettid();
	gt_join_cgroup(opts.cgroups[0]);
	gt_lock(&M);
	hold_start = gt_now();
	gt_steps_set(&steps, HOLDER_HOLDS);
	gt_steps_wait(&steps, VICTIM_LOCKING);
	gt_wait_blocked_in_futex(tid_victim);
	gt_slow_read(&opts, gt_pick_offset(&opts, 0), &rd);
	hold_end = gt_now();
	gt_unlock(&M);
	return NULL;
}

static void *victim(void *arg)
{
	(void)arg;
	gt_setname("gt-victim");
	tid_victim = gt_gettid();
	gt_steps_wait(&steps, HOLDER_HOLDS);
	gt_steps_set(&steps, VICTIM_LOCKING);
	wt.tid = tid_victim;
	wt.what = "futex";
	wt.addr = (uintptr_t)&M;
	wt.start_ns = gt_now();
	gt_lock(&M);
	wt.end_ns = gt_now();
	gt_unlock(&M);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t ta, tb;
	FILE *f;

	gt_set_prog("gt_mutex_disk");
	gt_parse(argc, argv, &opts, 1);
	alarm(60);	/* a hung run dies (SIGALRM) instead of blocking the test */
	gt_setname("gt-main");
	gt_steps_init(&steps);
	if (pthread_create(&ta, NULL, victim, NULL) || pthread_create(&tb, NULL, holder, NULL))
		gt_die("pthread_create failed");
	if (pthread_join(ta, NULL) || pthread_join(tb, NULL))
		gt_die("pthread_join failed");

	/* Sanity: A's wait contains B's read, and lasted about as long. */
	if (!(wt.start_ns <= rd.start_ns && rd.end_ns <= wt.end_ns))
		gt_die("ordering broken: wait [%" PRIu64 ", %" PRIu64 "] read [%" PRIu64 ", %" PRIu64
		       "]", wt.start_ns, wt.end_ns, rd.start_ns, rd.end_ns);
	if (wt.end_ns - wt.start_ns > gt_slack_limit(rd.end_ns - rd.start_ns))
		gt_die("victim waited %.1f ms, read took %.1f ms: too much slack",
		       (double)(wt.end_ns - wt.start_ns) / 1e6, (double)(rd.end_ns - rd.start_ns) / 1e6);

	f = gt_truth_open(&opts);
	fprintf(f, "{\n  \"case\": \"mutex_disk\",\n  \"pid\": %d,\n  \"dev\": \"%s\",\n",
		(int)getpid(), opts.dev_name);
	fprintf(f, "  \"threads\": {\n");
	gt_json_thread(f, "victim", tid_victim, "gt-victim", 0);
	gt_json_thread(f, "holder", tid_holder, "gt-holder", 1);
	fprintf(f, "  },\n  \"mutexes\": {\"M\": \"0x%" PRIxPTR "\"},\n", (uintptr_t)&M);
	fprintf(f, "  \"holds\": {\"holder\": {\"mutex\": \"M\", \"start_ns\": %" PRIu64
		", \"end_ns\": %" PRIu64 "}},\n", hold_start, hold_end);
	fprintf(f, "  \"reads\": {\n");
	gt_json_read(f, &opts, "holder", &rd, 1);
	fprintf(f, "  },\n  \"waits\": {\n");
	gt_json_wait(f, "victim", &wt, 1);
	fprintf(f, "  }\n}\n");
	gt_truth_close(f, &opts);
	gt_log("ok: victim %d waited %.1f ms on M=%p; holder %d read %s sector %" PRIu64
	       " in %.1f ms", (int)tid_victim, (double)(wt.end_ns - wt.start_ns) / 1e6, (void *)&M,
	       (int)tid_holder, opts.dev_name, rd.offset / 512,
	       (double)(rd.end_ns - rd.start_ns) / 1e6);
	return 0;
}
