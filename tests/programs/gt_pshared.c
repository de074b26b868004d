/* Ground truth "pshared": the mutex_disk story across two processes.
 *
 *   holder (gt-holder), a child process: joins the blkio group, locks M — a process-shared mutex in
 *           memory both processes map (MAP_SHARED before fork, so at the same address) — waits
 *           until the victim is asleep on M, does a slow O_DIRECT 4 KiB pread, unlocks M.
 *   victim (gt-victim), the parent: once the holder holds M, pthread_mutex_lock(M) and sleeps.
 *
 * Expected whyslow chain for the victim's wait:
 *   futex    tid victim (parent pid) addr &M woken_by holder
 *   block_io tid holder (child pid) dev loopN sector S bytes 4096
 */
#include "gt_common.h"

#include <inttypes.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

enum {
	HOLDER_HOLDS = 1,
	VICTIM_LOCKING = 2
};

/* Everything the two processes share. */
struct shared {
	pthread_mutex_t M;
	atomic_int step, victim_tid, holder_tid;
	struct gt_read rd;
	uint64_t hold_start, hold_end;
};

static struct gt_opts opts;

static void wait_step(struct shared *sh, int step)
{
	for (int i = 0; atomic_load(&sh->step) < step; i++) {
		if (i > GT_WAIT_MS)
			gt_die("timed out waiting for step %d", step);
		gt_sleep_ms(1);
	}
}

static void holder(struct shared *sh)
{
	gt_setname("gt-holder");
	atomic_store(&sh->holder_tid, gt_gettid());
	gt_join_cgroup(opts.cgroups[0]);
	gt_lock(&sh->M);
	sh->hold_start = gt_now();
	atomic_store(&sh->step, HOLDER_HOLDS);
	wait_step(sh, VICTIM_LOCKING);
	gt_wait_blocked_in_futex(atomic_load(&sh->victim_tid));
	gt_slow_read(&opts, gt_pick_offset(&opts, 0), &sh->rd);
	sh->hold_end = gt_now();
	gt_unlock(&sh->M);
}

int main(int argc, char **argv)
{
	struct shared *sh;
	pthread_mutexattr_t ma;
	struct gt_wait wt = { 0 };
	pid_t child;
	int status;
	FILE *f;

	gt_set_prog("gt_pshared");
	gt_parse(argc, argv, &opts, 1);
	alarm(60); /* a hung run dies (SIGALRM) instead of blocking the test */
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		gt_die("mmap failed");
	if (pthread_mutexattr_init(&ma) ||
	    pthread_mutexattr_setpshared(&ma, PTHREAD_PROCESS_SHARED) ||
	    pthread_mutex_init(&sh->M, &ma))
		gt_die("cannot make a process-shared mutex");
	gt_setname("gt-victim");
	atomic_store(&sh->victim_tid, gt_gettid());
	child = fork();
	if (child < 0)
		gt_die("fork failed");
	if (child == 0) {
		holder(sh);
		_exit(0);
	}
	wait_step(sh, HOLDER_HOLDS);
	atomic_store(&sh->step, VICTIM_LOCKING);
	wt.tid = gt_gettid();
	wt.what = "futex";
	wt.addr = (uintptr_t)&sh->M;
	wt.start_ns = gt_now();
	gt_lock(&sh->M);
	wt.end_ns = gt_now();
	gt_unlock(&sh->M);
	if (waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status))
		gt_die("the holder process failed");

	if (!(wt.start_ns <= sh->rd.start_ns && sh->rd.end_ns <= wt.end_ns))
		gt_die("ordering broken: wait [%" PRIu64 ", %" PRIu64 "] read [%" PRIu64
		       ", %" PRIu64 "]",
		       wt.start_ns, wt.end_ns, sh->rd.start_ns, sh->rd.end_ns);
	if (wt.end_ns - wt.start_ns > gt_slack_limit(sh->rd.end_ns - sh->rd.start_ns))
		gt_die("victim waited %.1f ms, read took %.1f ms: too much slack",
		       (double)(wt.end_ns - wt.start_ns) / 1e6,
		       (double)(sh->rd.end_ns - sh->rd.start_ns) / 1e6);

	f = gt_truth_open(&opts);
	fprintf(f, "{\n  \"case\": \"pshared\",\n  \"pid\": %d,\n  \"dev\": \"%s\",\n",
		(int)getpid(), opts.dev_name);
	fprintf(f, "  \"threads\": {\n");
	fprintf(f, "    \"victim\": {\"tid\": %d, \"pid\": %d, \"comm\": \"gt-victim\"},\n",
		atomic_load(&sh->victim_tid), (int)getpid());
	fprintf(f, "    \"holder\": {\"tid\": %d, \"pid\": %d, \"comm\": \"gt-holder\"}\n",
		atomic_load(&sh->holder_tid), (int)child);
	fprintf(f, "  },\n  \"mutexes\": {\"M\": \"0x%" PRIxPTR "\"},\n", (uintptr_t)&sh->M);
	fprintf(f, "  \"reads\": {\n");
	gt_json_read(f, &opts, "holder", &sh->rd, 1);
	fprintf(f, "  },\n  \"waits\": {\n");
	gt_json_wait(f, "victim", &wt, 1);
	fprintf(f, "  }\n}\n");
	gt_truth_close(f, &opts);
	gt_log("ok: victim %d waited %.1f ms on shared M=%p; holder %d (pid %d) read %s sector "
	       "%" PRIu64 " in %.1f ms",
	       (int)wt.tid, (double)(wt.end_ns - wt.start_ns) / 1e6, (void *)&sh->M,
	       atomic_load(&sh->holder_tid), (int)child, opts.dev_name, sh->rd.offset / 512,
	       (double)(sh->rd.end_ns - sh->rd.start_ns) / 1e6);
	return 0;
}
