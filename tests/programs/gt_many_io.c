/* Ground truth "many_io": the waker's many short waits on one disk outweigh its one long run.
 *
 *   holder B (gt-holder): joins the blkio group, locks M, announces it, waits until A is asleep
 *                         on M, runs on CPU for SPIN_MS (one stretch), then makes short
 *                         O_DIRECT reads (each shorter than the spin) until they took
 *                         READS_PER_SPIN spins in all, unlocks M.
 *   victim A (gt-victim): once B holds M, calls pthread_mutex_lock(M).
 *
 * Expected whyslow chain for A's wait (issue 10, items 2 and 3):
 *   futex    tid A addr &M woken_by B
 *   block_io tid B, many separate waits on loopN (not one wait of their sum), longest no
 *            longer than B's longest read; not "running", although the spin is longer than any
 *            one read.
 */
#include "gt_common.h"

#include <errno.h>
#include <inttypes.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define SPIN_MS 20
/* Reads go on until they took this many spins in all (or MAX_READS were made). */
#define READS_PER_SPIN 8
#define MAX_READS 4000

enum {
	HOLDER_HOLDS = 1,
	VICTIM_LOCKING = 2
};

static struct gt_opts opts;
static struct gt_steps steps;
static pthread_mutex_t M = PTHREAD_MUTEX_INITIALIZER;
static pid_t tid_victim, tid_holder;
static struct gt_read rd[MAX_READS];
static int nreads;
static uint64_t sum, longest;
static struct gt_wait wt;
static uint64_t spin_start, spin_end;
/* the holder's own CPU time in its spin and in its reads (syscall work, not waiting) */
static uint64_t cpu_spin, cpu_reads;

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts))
		gt_die("clock_gettime(CLOCK_THREAD_CPUTIME_ID): %s", strerror(errno));
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void *holder(void *arg)
{
	(void)arg;
	struct sched_param sp = { .sched_priority = 10 };

	gt_setname("gt-holder");
	tid_holder = gt_gettid();
	/*
	 * Real-time, so that on a busy machine the holder's time is its spin and its reads, not
	 * waiting for a CPU after each of them (which would rightly dominate the chain instead).
	 */
	if (sched_setscheduler(0, SCHED_FIFO, &sp))
		gt_die("sched_setscheduler(SCHED_FIFO): %s", strerror(errno));
	gt_join_cgroup(opts.cgroups[0]);
	gt_lock(&M);
	gt_steps_set(&steps, HOLDER_HOLDS);
	gt_steps_wait(&steps, VICTIM_LOCKING);
	gt_wait_blocked_in_futex(tid_victim);
	cpu_spin = thread_cpu_ns();
	spin_start = gt_now();
	while (gt_now() - spin_start < SPIN_MS * 1000000ull)
		; /* on CPU, one stretch (unless preempted) */
	spin_end = gt_now();
	cpu_reads = thread_cpu_ns();
	cpu_spin = cpu_reads - cpu_spin;
	/* unthrottled reads of the loop device: each a few ms at most, real disk I/O on vda */
	while (nreads < MAX_READS && sum < READS_PER_SPIN * (spin_end - spin_start)) {
		struct gt_read *r = &rd[nreads];

		gt_slow_read(&opts, gt_pick_offset(&opts, nreads), r);
		sum += r->end_ns - r->start_ns;
		if (r->end_ns - r->start_ns > longest)
			longest = r->end_ns - r->start_ns;
		nreads++;
	}
	cpu_reads = thread_cpu_ns() - cpu_reads;
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

	gt_set_prog("gt_many_io");
	gt_parse(argc, argv, &opts, 1);
	alarm(60); /* a hung run dies (SIGALRM) instead of blocking the test */
	gt_setname("gt-main");
	gt_steps_init(&steps);
	if (pthread_create(&ta, NULL, victim, NULL) || pthread_create(&tb, NULL, holder, NULL))
		gt_die("pthread_create failed");
	if (pthread_join(ta, NULL) || pthread_join(tb, NULL))
		gt_die("pthread_join failed");

	/* The case only tests something when no one read beats the spin but all of them do. */
	if (longest >= (spin_end - spin_start) * 9 / 10)
		gt_die("a read took %.1f ms, as long as the %d ms spin: the run proves nothing",
		       (double)longest / 1e6, SPIN_MS);
	if (sum < READS_PER_SPIN * (spin_end - spin_start))
		gt_die("%d reads took only %.1f ms in all, less than %d spins", nreads,
		       (double)sum / 1e6, READS_PER_SPIN);
	/*
	 * Each read also costs CPU (the syscall, the tracer's programs): on a busy or sanitized run
	 * that can add up to more than the time actually spent blocked, and then "running" rightly
	 * dominates the chain. Blocked time is at most the reads' time minus their CPU time.
	 */
	if (sum - cpu_reads < (cpu_spin + cpu_reads) * 3 / 2)
		gt_die("the reads blocked at most %.1f ms but the holder ran %.1f ms: the run proves nothing",
		       (double)(sum - cpu_reads) / 1e6, (double)(cpu_spin + cpu_reads) / 1e6);
	if (!(wt.start_ns <= spin_start && rd[nreads - 1].end_ns <= wt.end_ns))
		gt_die("ordering broken: the victim's wait does not contain the holder's work");

	f = gt_truth_open(&opts);
	fprintf(f, "{\n  \"case\": \"many_io\",\n  \"pid\": %d,\n  \"dev\": \"%s\",\n",
		(int)getpid(), opts.dev_name);
	fprintf(f, "  \"threads\": {\n");
	gt_json_thread(f, "victim", tid_victim, "gt-victim", 0);
	gt_json_thread(f, "holder", tid_holder, "gt-holder", 1);
	fprintf(f, "  },\n  \"mutexes\": {\"M\": \"0x%" PRIxPTR "\"},\n", (uintptr_t)&M);
	fprintf(f, "  \"spin\": {\"start_ns\": %" PRIu64 ", \"end_ns\": %" PRIu64 "},\n",
		spin_start, spin_end);
	fprintf(f,
		"  \"many_reads\": {\"holder\": {\"count\": %d, \"sum_ns\": %" PRIu64
		", \"longest_ns\": %" PRIu64 ", \"start_ns\": %" PRIu64 ", \"end_ns\": %" PRIu64
		"}},\n",
		nreads, sum, longest, rd[0].start_ns, rd[nreads - 1].end_ns);
	fprintf(f, "  \"waits\": {\n");
	gt_json_wait(f, "victim", &wt, 1);
	fprintf(f, "  }\n}\n");
	gt_truth_close(f, &opts);
	gt_log("ok: victim %d waited %.1f ms; holder %d spun %.1f ms, then %d reads of %s: %.1f ms "
	       "in all, longest %.1f ms",
	       (int)tid_victim, (double)(wt.end_ns - wt.start_ns) / 1e6, (int)tid_holder,
	       (double)(spin_end - spin_start) / 1e6, nreads, opts.dev_name, (double)sum / 1e6,
	       (double)longest / 1e6);
	return 0;
}
