/* Ground truth "trap": a slow disk read happens during the victim's wait but is NOT its cause.
 *
 *   U (gt-unrelated): joins the blkio group early; when told, does a slow O_DIRECT 4 KiB pread
 *                     that overlaps A's wait (and, with the default timings, ends shortly before
 *                     A is woken -- the bait for a tool that blames whatever I/O was in flight).
 *   B (gt-holder):    locks M, waits until A is asleep on it, starts U's read, then holds M
 *                     while sleeping --sleep-ms (default 300) in nanosleep, then unlocks M.
 *   A (gt-victim):    pthread_mutex_lock(M) -> sleeps until B unlocks.
 *
 * Expected whyslow chain for A's wait:
 *   futex tid A addr &M woken_by B
 *   sleep tid B
 * and no link anywhere in A's chain has tid U or kind block_io.
 */
#include "gt_common.h"

#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { U_READY = 1, HOLDER_HOLDS = 2, VICTIM_LOCKING = 3, START_READ = 4 };

static struct gt_opts opts;
static struct gt_steps steps;
static pthread_mutex_t M = PTHREAD_MUTEX_INITIALIZER;
static pid_t tid_victim, tid_holder, tid_unrelated;
static struct gt_read rd;
static struct gt_wait wt;
static uint64_t sleep_start, sleep_end;

static void *unrelated(void *arg)
{
	(void)arg;
	gt_setname("gt-unrelated");
	tid_unrelated = gt_gettid();
	gt_join_cgroup(opts.cgroups[0]);
	gt_steps_set(&steps, U_READY);
	gt_steps_wait(&steps, START_READ);
	gt_slow_read(&opts, gt_pick_offset(&opts, 0), &rd);
	return NULL;
}

static void *holder(void *arg)
{
	(void)arg;
	gt_setname("gt-holder");
	tid_holder = gt_gettid();
	gt_steps_wait(&steps, U_READY);
	gt_lock(&M);
	gt_steps_set(&steps, HOLDER_HOLDS);
	gt_steps_wait(&steps, VICTIM_LOCKING);
	gt_wait_blocked_in_futex(tid_victim);
	gt_steps_set(&steps, START_READ);
	sleep_start = gt_now();
	gt_sleep_ms(opts.sleep_ms);
	sleep_end = gt_now();
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

static uint64_t overlap(uint64_t a0, uint64_t a1, uint64_t b0, uint64_t b1)
{
	uint64_t lo = a0 > b0 ? a0 : b0, hi = a1 < b1 ? a1 : b1;

	return hi > lo ? hi - lo : 0;
}

int main(int argc, char **argv)
{
	pthread_t ta, tb, tu;
	uint64_t ov;
	FILE *f;

	gt_set_prog("gt_trap");
	gt_parse(argc, argv, &opts, 1);
	alarm(60);
	gt_setname("gt-main");
	gt_steps_init(&steps);
	if (pthread_create(&tu, NULL, unrelated, NULL) || pthread_create(&ta, NULL, victim, NULL) ||
	    pthread_create(&tb, NULL, holder, NULL))
		gt_die("pthread_create failed");
	if (pthread_join(ta, NULL) || pthread_join(tb, NULL) || pthread_join(tu, NULL))
		gt_die("pthread_join failed");

	if (!(wt.start_ns <= sleep_start && sleep_end <= wt.end_ns))
		gt_die("ordering broken: wait [%" PRIu64 ", %" PRIu64 "] sleep [%" PRIu64 ", %" PRIu64
		       "]", wt.start_ns, wt.end_ns, sleep_start, sleep_end);
	ov = overlap(wt.start_ns, wt.end_ns, rd.start_ns, rd.end_ns);
	if (ov * 2 < wt.end_ns - wt.start_ns)
		gt_die("the unrelated read overlaps only %.1f ms of the victim's %.1f ms wait",
		       (double)ov / 1e6, (double)(wt.end_ns - wt.start_ns) / 1e6);

	f = gt_truth_open(&opts);
	fprintf(f, "{\n  \"case\": \"trap\",\n  \"pid\": %d,\n  \"dev\": \"%s\",\n", (int)getpid(),
		opts.dev_name);
	fprintf(f, "  \"threads\": {\n");
	gt_json_thread(f, "victim", tid_victim, "gt-victim", 0);
	gt_json_thread(f, "holder", tid_holder, "gt-holder", 0);
	gt_json_thread(f, "unrelated", tid_unrelated, "gt-unrelated", 1);
	fprintf(f, "  },\n  \"mutexes\": {\"M\": \"0x%" PRIxPTR "\"},\n", (uintptr_t)&M);
	fprintf(f, "  \"sleeps\": {\"holder\": {\"tid\": %d, \"start_ns\": %" PRIu64
		", \"end_ns\": %" PRIu64 ", \"duration_ns\": %" PRIu64 "}},\n",
		(int)tid_holder, sleep_start, sleep_end, sleep_end - sleep_start);
	fprintf(f, "  \"reads\": {\n");
	gt_json_read(f, &opts, "unrelated", &rd, 1);
	fprintf(f, "  },\n  \"waits\": {\n");
	gt_json_wait(f, "victim", &wt, 1);
	fprintf(f, "  },\n  \"overlap_ns\": %" PRIu64 "\n}\n", ov);
	gt_truth_close(f, &opts);
	gt_log("ok: victim %d waited %.1f ms on M=%p; holder %d slept %.1f ms; unrelated %d read %s "
	       "sector %" PRIu64 " in %.1f ms (overlap %.1f ms)", (int)tid_victim,
	       (double)(wt.end_ns - wt.start_ns) / 1e6, (void *)&M, (int)tid_holder,
	       (double)(sleep_end - sleep_start) / 1e6, (int)tid_unrelated, opts.dev_name,
	       rd.offset / 512, (double)(rd.end_ns - rd.start_ns) / 1e6, (double)ov / 1e6);
	return 0;
}
