/* Ground truth "sig_holder": Ctrl-C on a program stuck behind a lock held across slow reads
 * (issue 34: the root is the disk, "interrupted by SIGINT" said).
 *
 *   holder (gt-holder, the main thread): joins the blkio group, locks M, starts the victim, waits
 *                     until it is asleep on M, writes the truth, then reads the slow device with
 *                     O_DIRECT 4 KiB preads (each ~1000/IOPS ms) without ever letting M go.
 *   victim (gt-victim): pthread_mutex_lock(M), asleep in futex(FUTEX_WAIT_PRIVATE) on M.
 *
 * The test (tests/e2e/gt_sig_holder.sh) then sends SIGINT to the process group, as a terminal's
 * Ctrl-C does: the default action kills the process, ending the victim's futex wait. Its chain
 * must be the futex wait, "interrupted by signal SIGINT", then "held by" the holder (the mutex
 * word's owner), whose block I/O is the root. The program never ends by itself but by alarm
 * (60 s), so a test that never sends the signal fails instead of hanging.
 *
 * The truth is written once the victim sleeps on M (the process dies without a chance to write
 * anything after): {"case":"sig_holder","pid","dev","mutex","victim":{"tid","comm"},
 * "holder":{"tid","comm"},"wait_start_ns"}.
 */
#include "gt_common.h"

#include <inttypes.h>
#include <unistd.h>

static struct gt_opts opts;
static pthread_mutex_t M = PTHREAD_MUTEX_INITIALIZER;
static pid_t tid_victim;
static uint64_t wait_start;

static void *victim(void *arg)
{
	(void)arg;
	gt_setname("gt-victim");
	__atomic_store_n(&wait_start, gt_now(), __ATOMIC_SEQ_CST);
	__atomic_store_n(&tid_victim, gt_gettid(), __ATOMIC_SEQ_CST);
	gt_lock(&M); /* until the process is killed: the holder never lets go */
	gt_unlock(&M);
	return NULL;
}

int main(int argc, char **argv)
{
	struct gt_read rd;
	pthread_t t;
	FILE *f;

	gt_set_prog("gt_sig_holder");
	gt_parse(argc, argv, &opts, 1);
	alarm(60);
	gt_setname("gt-holder");
	gt_join_cgroup(opts.cgroups[0]);
	gt_lock(&M);
	if (pthread_create(&t, NULL, victim, NULL))
		gt_die("pthread_create failed");
	while (!__atomic_load_n(&tid_victim, __ATOMIC_SEQ_CST))
		gt_sleep_ms(1);
	gt_wait_blocked_in_futex(tid_victim);

	f = gt_truth_open(&opts);
	fprintf(f,
		"{\"case\": \"sig_holder\", \"pid\": %d, \"dev\": \"%s\", \"mutex\": \"0x%" PRIxPTR
		"\", \"victim\": {\"tid\": %d, \"comm\": \"gt-victim\"}, \"holder\": {\"tid\": %d, \"comm\": \"gt-holder\"}, \"wait_start_ns\": %" PRIu64
		"}\n",
		(int)getpid(), opts.dev_name, (uintptr_t)&M, (int)tid_victim, (int)gt_gettid(),
		wait_start);
	gt_truth_close(f, &opts);

	/* one throttled group lets a read through at once now and then: no minimum here */
	opts.min_read_ms = 0;
	for (int i = 0;; i++)
		gt_slow_read(&opts, gt_pick_offset(&opts, i % 64), &rd);
}
