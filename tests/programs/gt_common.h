/* Shared helpers for the ground-truth programs (tests/programs/gt_*.c).
 *
 * Every program takes  --dev /dev/loopN --cgroup DIR [--cgroup DIR2 ...] [--truth FILE]
 * [--sleep-ms N] [--min-read-ms N]  and writes one JSON object describing what really happened
 * to FILE.  All times are CLOCK_MONOTONIC nanoseconds (the clock bpf_ktime_get_ns() reads). */
#ifndef GT_COMMON_H
#define GT_COMMON_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#define GT_MAX_CGROUPS 4
#define GT_READ_BYTES 4096u
/* Bound on every wait for another thread (ms): a stuck program fails instead of hanging. */
#define GT_WAIT_MS 10000

struct gt_opts {
	const char *dev;	/* /dev/loopN */
	char dev_name[64];	/* "loopN" */
	const char *cgroups[GT_MAX_CGROUPS];
	int n_cgroups;
	const char *truth;
	long sleep_ms;		/* hold time for programs that sleep (default 300) */
	long min_read_ms;	/* a slow read faster than this makes the run invalid (default 150) */
	int fd;			/* the device, opened O_RDONLY|O_DIRECT */
	uint64_t dev_size;
};

struct gt_read {
	pid_t tid;
	uint64_t offset;	/* bytes, 4 KiB aligned */
	uint64_t start_ns, end_ns;
};

struct gt_wait {
	pid_t tid;
	const char *what;	/* "futex" */
	uintptr_t addr;		/* futex word */
	uint64_t start_ns, end_ns;
};

/* Prints "gt: <prog>: message" to stderr and exits 1. */
void gt_die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
void gt_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void gt_set_prog(const char *name);

/* Parses the command line, opens the device (O_DIRECT), checks that at least need_cgroups
 * cgroup dirs were given. */
void gt_parse(int argc, char **argv, struct gt_opts *o, int need_cgroups);

uint64_t gt_now(void);
/* Option @opt's value @s, a whole number in [@min, @max], or die saying so. */
long gt_parse_long(const char *opt, const char *s, long min, long max);
pid_t gt_gettid(void);
void gt_setname(const char *name);	/* pthread_setname_np(self) or die */

/* Writes the calling thread's tid into DIR/tasks (the move sleeps 10-20 ms: do it early). */
void gt_join_cgroup(const char *dir);

/* An O_DIRECT pread of 4 KiB at offset; fills r and checks the latency is >= min_read_ms. */
void gt_slow_read(const struct gt_opts *o, uint64_t offset, struct gt_read *r);

/* A 4 KiB-aligned offset inside the device, distinct per (pid, index). */
uint64_t gt_pick_offset(const struct gt_opts *o, int index);

/* Blocks until the thread tid sits in a futex syscall in state S (read from
 * /proc/self/task/TID/{stat,syscall}); busy-polls with sched_yield so the caller does not
 * sleep itself.  Dies after GT_WAIT_MS. */
void gt_wait_blocked_in_futex(pid_t tid);

/* Sleeps ms milliseconds with one nanosleep (restarted on EINTR). */
void gt_sleep_ms(long ms);

/* A tiny state machine shared by the threads of a program: each step is a number; threads wait
 * for the step to reach a value.  Waits are bounded. */
struct gt_steps {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int step;
};
void gt_steps_init(struct gt_steps *s);
void gt_steps_set(struct gt_steps *s, int step);
void gt_steps_wait(struct gt_steps *s, int step);	/* waits until step >= value */

/* Locks/unlocks with error checks. */
void gt_lock(pthread_mutex_t *m);
void gt_unlock(pthread_mutex_t *m);

/* JSON output: helpers write into an open FILE. */
FILE *gt_truth_open(const struct gt_opts *o);
void gt_truth_close(FILE *f, const struct gt_opts *o);
void gt_json_thread(FILE *f, const char *role, pid_t tid, const char *comm, int last);
void gt_json_read(FILE *f, const struct gt_opts *o, const char *role, const struct gt_read *r,
		  int last);
void gt_json_wait(FILE *f, const char *role, const struct gt_wait *w, int last);

/*
 * The longest a wait may be for a read of @read_ns to still be most of it, so the expected chain
 * (the reader's block I/O) is the right answer: 50 ms of scheduling slack, or 40% of the read
 * on a loaded machine.
 */
static inline uint64_t gt_slack_limit(uint64_t read_ns)
{
	uint64_t slack = read_ns * 2 / 5;

	return read_ns + (slack > 50000000u ? slack : 50000000u);
}

#endif
