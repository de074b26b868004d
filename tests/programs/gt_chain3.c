/* Ground truth "chain3": a three-thread chain ending in a slow disk read.
 *
 *   C (gt-c): joins the blkio group, locks M2, announces it; once A and B are both asleep, does a
 *             slow O_DIRECT 4 KiB pread, then unlocks M2.
 *   B (gt-b): once C holds M2, locks M1, announces it, then pthread_mutex_lock(M2) -> sleeps;
 *             when it gets M2 it unlocks M1 (waking A) and M2.
 *   A (gt-a): once B holds M1 and is asleep on M2, pthread_mutex_lock(M1) -> sleeps.
 *
 * Expected whyslow chain for A's wait:
 *   futex    tid A addr &M1 woken_by B
 *   futex    tid B addr &M2 woken_by C
 *   block_io tid C dev loopN sector S bytes 4096
 */
#include "gt_common.h"

#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { C_HOLDS_M2 = 1, B_HOLDS_M1 = 2, A_LOCKING = 3 };

static struct gt_opts opts;
static struct gt_steps steps;
static pthread_mutex_t M1 = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t M2 = PTHREAD_MUTEX_INITIALIZER;
static pid_t tid_a, tid_b, tid_c;
static struct gt_read rd;
static struct gt_wait wait_a, wait_b;

static void *thread_c(void *arg)
{
	(void)arg;
	gt_setname("gt-c");
	tid_c = gt_gettid();
	gt_join_cgroup(opts.cgroups[0]);
	gt_lock(&M2);
	gt_steps_set(&steps, C_HOLDS_M2);
	gt_steps_wait(&steps, A_LOCKING);
	gt_wait_blocked_in_futex(tid_a);
	gt_wait_blocked_in_futex(tid_b);
	gt_slow_read(&opts, gt_pick_offset(&opts, 0), &rd);
	gt_unlock(&M2);
	return NULL;
}

static void *thread_b(void *arg)
{
	(void)arg;
	gt_setname("gt-b");
	tid_b = gt_gettid();
	gt_steps_wait(&steps, C_HOLDS_M2);
	gt_lock(&M1);
	gt_steps_set(&steps, B_HOLDS_M1);
	wait_b.tid = tid_b;
	wait_b.what = "futex";
	wait_b.addr = (uintptr_t)&M2;
	wait_b.start_ns = gt_now();
	gt_lock(&M2);
	wait_b.end_ns = gt_now();
	gt_unlock(&M1);
	gt_unlock(&M2);
	return NULL;
}

static void *thread_a(void *arg)
{
	(void)arg;
	gt_setname("gt-a");
	tid_a = gt_gettid();
	gt_steps_wait(&steps, B_HOLDS_M1);
	gt_wait_blocked_in_futex(tid_b);	/* B is asleep on M2 before A sleeps on M1 */
	gt_steps_set(&steps, A_LOCKING);
	wait_a.tid = tid_a;
	wait_a.what = "futex";
	wait_a.addr = (uintptr_t)&M1;
	wait_a.start_ns = gt_now();
	gt_lock(&M1);
	wait_a.end_ns = gt_now();
	gt_unlock(&M1);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t ta, tb, tc;
	FILE *f;

	gt_set_prog("gt_chain3");
	gt_parse(argc, argv, &opts, 1);
	alarm(60);
	gt_setname("gt-main");
	gt_steps_init(&steps);
	if (pthread_create(&ta, NULL, thread_a, NULL) || pthread_create(&tb, NULL, thread_b, NULL) ||
	    pthread_create(&tc, NULL, thread_c, NULL))
		gt_die("pthread_create failed");
	if (pthread_join(ta, NULL) || pthread_join(tb, NULL) || pthread_join(tc, NULL))
		gt_die("pthread_join failed");

	if (!(wait_b.start_ns <= wait_a.start_ns && wait_a.start_ns <= rd.start_ns &&
	      rd.end_ns <= wait_b.end_ns && wait_b.end_ns <= wait_a.end_ns))
		gt_die("ordering broken: A [%" PRIu64 ", %" PRIu64 "] B [%" PRIu64 ", %" PRIu64
		       "] read [%" PRIu64 ", %" PRIu64 "]", wait_a.start_ns, wait_a.end_ns,
		       wait_b.start_ns, wait_b.end_ns, rd.start_ns, rd.end_ns);
	if (wait_a.end_ns - wait_a.start_ns > gt_slack_limit(rd.end_ns - rd.start_ns))
		gt_die("A waited %.1f ms, read took %.1f ms: too much slack",
		       (double)(wait_a.end_ns - wait_a.start_ns) / 1e6,
		       (double)(rd.end_ns - rd.start_ns) / 1e6);

	f = gt_truth_open(&opts);
	fprintf(f, "{\n  \"case\": \"chain3\",\n  \"pid\": %d,\n  \"dev\": \"%s\",\n",
		(int)getpid(), opts.dev_name);
	fprintf(f, "  \"threads\": {\n");
	gt_json_thread(f, "a", tid_a, "gt-a", 0);
	gt_json_thread(f, "b", tid_b, "gt-b", 0);
	gt_json_thread(f, "c", tid_c, "gt-c", 1);
	fprintf(f, "  },\n  \"mutexes\": {\"M1\": \"0x%" PRIxPTR "\", \"M2\": \"0x%" PRIxPTR "\"},\n",
		(uintptr_t)&M1, (uintptr_t)&M2);
	fprintf(f, "  \"reads\": {\n");
	gt_json_read(f, &opts, "c", &rd, 1);
	fprintf(f, "  },\n  \"waits\": {\n");
	gt_json_wait(f, "a", &wait_a, 0);
	gt_json_wait(f, "b", &wait_b, 1);
	fprintf(f, "  }\n}\n");
	gt_truth_close(f, &opts);
	gt_log("ok: A %d waited %.1f ms on M1=%p; B %d waited %.1f ms on M2=%p; C %d read %s sector "
	       "%" PRIu64 " in %.1f ms", (int)tid_a,
	       (double)(wait_a.end_ns - wait_a.start_ns) / 1e6, (void *)&M1, (int)tid_b,
	       (double)(wait_b.end_ns - wait_b.start_ns) / 1e6, (void *)&M2, (int)tid_c,
	       opts.dev_name, rd.offset / 512, (double)(rd.end_ns - rd.start_ns) / 1e6);
	return 0;
}
