/* Ground truths for waits that never end (issue 14), checked by tests/e2e/gt_stuck.sh.
 *
 *   gt_stuck deadlock   two threads take mutexes A and B in opposite orders and deadlock
 *   gt_stuck pshared    the same across two processes, on process-shared mutexes in a shared
 *                       mapping (parent: A then B; child: B then A)
 *   gt_stuck disk --dev /dev/loopN --cgroup D1 [--cgroup D2 ...]
 *                       a victim blocks on mutex M while its holder does one slow read per
 *                       cgroup (each ~1000/IOPS ms), so a tracer attaching meanwhile finds the
 *                       victim's wait already in progress and its holder in block I/O; with
 *                       GT_STUCK_UNTIL_USR1 set, the holder reads on until SIGUSR1
 *   gt_stuck waits      three threads blocked for good, each in a function of its own: on a mutex
 *                       the main thread holds (gt_stuck_in_mutex), on a condition variable no
 *                       one signals (gt_stuck_in_condvar) and in a read() of an empty pipe
 *                       (gt_stuck_in_read), for `whyslow stuck`'s user stacks; with
 *                       GT_STUCK_UNTIL_USR1 set, SIGUSR1 makes the main thread let the mutex go,
 *                       and the process exits once the mutex waiter has it
 *
 * Once the interesting state is reached (every waiter asleep in its futex call), one JSON line
 * with the truth goes to stdout: {"case":..,"threads":[{"pid","tid","waits":"0x..",
 * "holds":"0x.."},..]}. deadlock and pshared then stay deadlocked until killed (alarm: 60 s).
 */
#include "gt_common.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

struct pair {
	pthread_mutex_t a, b;
	pid_t tid_ab, tid_ba; /* first takes a then b; second b then a */
	pid_t pid_ab, pid_ba;
	int step; /* both hold their first mutex when 2 */
};

/* Waits until @tid (any process) sleeps in syscall @want (@name says which, if it never does). */
static void wait_in_syscall(pid_t tid, long want, const char *name)
{
	char path[64], buf[256];

	snprintf(path, sizeof(path), "/proc/%d/syscall", (int)tid);
	for (int i = 0; i < GT_WAIT_MS; i++) {
		FILE *f = fopen(path, "r");
		long nr = -1;

		if (f) {
			if (fgets(buf, sizeof(buf), f))
				nr = strtol(buf, NULL, 10);
			fclose(f);
		}
		if (nr == want)
			return;
		gt_sleep_ms(1);
	}
	gt_die("tid %d never blocked in %s", (int)tid, name);
}

static void wait_in_futex(pid_t tid)
{
	wait_in_syscall(tid, SYS_futex, "futex");
}

static void both_hold_first(struct pair *p)
{
	__atomic_add_fetch(&p->step, 1, __ATOMIC_SEQ_CST);
	for (int i = 0; i < GT_WAIT_MS && __atomic_load_n(&p->step, __ATOMIC_SEQ_CST) < 2; i++)
		gt_sleep_ms(1);
}

static void take_ab(struct pair *p)
{
	p->tid_ab = gt_gettid();
	p->pid_ab = getpid();
	gt_lock(&p->a);
	both_hold_first(p);
	gt_lock(&p->b); /* never returns */
}

static void take_ba(struct pair *p)
{
	p->tid_ba = gt_gettid();
	p->pid_ba = getpid();
	gt_lock(&p->b);
	both_hold_first(p);
	gt_lock(&p->a); /* never returns */
}

static void *thread_ab(void *arg)
{
	gt_setname("gt-ab");
	take_ab(arg);
	return NULL;
}

static void *thread_ba(void *arg)
{
	gt_setname("gt-ba");
	take_ba(arg);
	return NULL;
}

static void print_pair(const char *name, struct pair *p)
{
	wait_in_futex(p->tid_ab);
	wait_in_futex(p->tid_ba);
	printf("{\"case\":\"%s\",\"threads\":[{\"pid\":%d,\"tid\":%d,\"waits\":\"0x%" PRIxPTR
	       "\",\"holds\":\"0x%" PRIxPTR "\"},{\"pid\":%d,\"tid\":%d,\"waits\":\"0x%" PRIxPTR
	       "\",\"holds\":\"0x%" PRIxPTR "\"}]}\n",
	       name, (int)p->pid_ab, (int)p->tid_ab, (uintptr_t)&p->b, (uintptr_t)&p->a,
	       (int)p->pid_ba, (int)p->tid_ba, (uintptr_t)&p->a, (uintptr_t)&p->b);
	fflush(stdout);
}

static int deadlock(void)
{
	static struct pair p = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER };
	pthread_t t1, t2;

	if (pthread_create(&t1, NULL, thread_ab, &p) || pthread_create(&t2, NULL, thread_ba, &p))
		gt_die("pthread_create failed");
	while (!__atomic_load_n(&p.tid_ab, __ATOMIC_SEQ_CST) ||
	       !__atomic_load_n(&p.tid_ba, __ATOMIC_SEQ_CST))
		gt_sleep_ms(1);
	print_pair("deadlock", &p);
	pthread_join(t1, NULL); /* never returns */
	return 1;
}

static int pshared(void)
{
	struct pair *p =
		mmap(NULL, sizeof(*p), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	pthread_mutexattr_t at;
	pid_t child;

	if (p == MAP_FAILED)
		gt_die("mmap: %s", strerror(errno));
	memset(p, 0, sizeof(*p));
	if (pthread_mutexattr_init(&at) ||
	    pthread_mutexattr_setpshared(&at, PTHREAD_PROCESS_SHARED) ||
	    pthread_mutex_init(&p->a, &at) || pthread_mutex_init(&p->b, &at))
		gt_die("pshared mutex init failed");
	child = fork();
	if (child < 0)
		gt_die("fork: %s", strerror(errno));
	if (child == 0) {
		gt_setname("gt-ba");
		take_ba(p);
		_exit(1);
	}
	gt_setname("gt-ab");
	/* the parent reports, so take a then b in a thread of its own */
	{
		pthread_t t;

		if (pthread_create(&t, NULL, thread_ab, p))
			gt_die("pthread_create failed");
		while (!__atomic_load_n(&p->tid_ab, __ATOMIC_SEQ_CST) ||
		       !__atomic_load_n(&p->tid_ba, __ATOMIC_SEQ_CST))
			gt_sleep_ms(1);
		print_pair("pshared", p);
		waitpid(child, NULL, 0); /* never returns until killed */
	}
	return 1;
}

static struct gt_opts opts;
static pthread_mutex_t M = PTHREAD_MUTEX_INITIALIZER;
static pid_t tid_victim;
static int victim_ready;

static void *victim(void *arg)
{
	(void)arg;
	gt_setname("gt-victim");
	__atomic_store_n(&tid_victim, gt_gettid(), __ATOMIC_SEQ_CST);
	while (!__atomic_load_n(&victim_ready, __ATOMIC_SEQ_CST))
		gt_sleep_ms(1);
	gt_lock(&M);
	gt_unlock(&M);
	return NULL;
}

static int disk(int argc, char **argv)
{
	sigset_t usr1;
	struct gt_read rd;
	pthread_t t;

	gt_parse(argc, argv, &opts, 1);
	/* blocked in every thread (the victim inherits the mask): only ever pending */
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	if (pthread_sigmask(SIG_BLOCK, &usr1, NULL))
		gt_die("pthread_sigmask failed");
	gt_setname("gt-holder");
	gt_join_cgroup(opts.cgroups[0]);
	gt_lock(&M);
	if (pthread_create(&t, NULL, victim, NULL))
		gt_die("pthread_create failed");
	while (!__atomic_load_n(&tid_victim, __ATOMIC_SEQ_CST))
		gt_sleep_ms(1);
	__atomic_store_n(&victim_ready, 1, __ATOMIC_SEQ_CST);
	wait_in_futex(tid_victim);
	printf("{\"case\":\"disk\",\"threads\":[{\"pid\":%d,\"tid\":%d,\"waits\":\"0x%" PRIxPTR
	       "\"},{\"pid\":%d,\"tid\":%d,\"holds\":\"0x%" PRIxPTR "\"}]}\n",
	       (int)getpid(), (int)tid_victim, (uintptr_t)&M, (int)getpid(), (int)gt_gettid(),
	       (uintptr_t)&M);
	fflush(stdout);
	if (getenv("GT_STUCK_UNTIL_USR1")) {
		/*
		 * Read until the test, its tracer ready, says stop: the holder is in
		 * block I/O when the tracer attaches, and reads remain most of the
		 * victim's wait however long attaching takes. One group throttles them
		 * all, letting some through at once (PLATFORM.md): no minimum here.
		 */
		sigset_t pending;

		opts.min_read_ms = 0;
		for (int i = 0;; i++) {
			gt_slow_read(&opts, gt_pick_offset(&opts, i % 64), &rd);
			if (sigpending(&pending) || sigismember(&pending, SIGUSR1))
				break;
		}
		gt_unlock(&M);
		pthread_join(t, NULL);
		return 0;
	}
	for (int i = 0; i < opts.n_cgroups; i++) {
		if (i)
			gt_join_cgroup(opts.cgroups[i]);
		gt_slow_read(&opts, gt_pick_offset(&opts, i), &rd);
		gt_log("read %d took %.0f ms", i, (double)(rd.end_ns - rd.start_ns) / 1e6);
	}
	gt_unlock(&M);
	pthread_join(t, NULL);
	return 0;
}

/* ---- waits: one thread in each kind of wait, in functions whose names the stacks must show */

static pthread_mutex_t W_LOCK = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t W_CMUTEX = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t W_COND = PTHREAD_COND_INITIALIZER;
static int w_pipe[2];
static pid_t w_tids[3];
static volatile int w_sink; /* after each wait: the call is no tail call, its frame stays */

__attribute__((noinline, noclone)) void gt_stuck_in_mutex(void)
{
	gt_lock(&W_LOCK); /* the main thread holds it for good */
	w_sink = 1;
}

__attribute__((noinline, noclone)) void gt_stuck_in_condvar(void)
{
	gt_lock(&W_CMUTEX);
	pthread_cond_wait(&W_COND, &W_CMUTEX); /* never signalled */
	w_sink = 2;
}

__attribute__((noinline, noclone)) void gt_stuck_in_read(void)
{
	char c;

	w_sink = (int)read(w_pipe[0], &c, 1); /* nobody writes */
}

static void *waits_thread(void *arg)
{
	int which = (int)(intptr_t)arg;
	static const char *const names[] = { "gt-mutex", "gt-condvar", "gt-read" };

	gt_setname(names[which]);
	__atomic_store_n(&w_tids[which], gt_gettid(), __ATOMIC_SEQ_CST);
	if (which == 0)
		gt_stuck_in_mutex();
	else if (which == 1)
		gt_stuck_in_condvar();
	else
		gt_stuck_in_read();
	return NULL;
}

static int waits(void)
{
	bool until_usr1 = getenv("GT_STUCK_UNTIL_USR1");
	sigset_t usr1;
	pthread_t t[3];
	int sig;

	/* blocked in every thread (they inherit the mask): only ever pending, for sigwait */
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	if (pthread_sigmask(SIG_BLOCK, &usr1, NULL))
		gt_die("pthread_sigmask failed");
	if (pipe(w_pipe))
		gt_die("pipe: %s", strerror(errno));
	gt_lock(&W_LOCK);
	for (int i = 0; i < 3; i++)
		if (pthread_create(&t[i], NULL, waits_thread, (void *)(intptr_t)i))
			gt_die("pthread_create failed");
	for (int i = 0; i < 3; i++)
		while (!__atomic_load_n(&w_tids[i], __ATOMIC_SEQ_CST))
			gt_sleep_ms(1);
	wait_in_futex(w_tids[0]);
	wait_in_futex(w_tids[1]);
	wait_in_syscall(w_tids[2], SYS_read, "read");
	printf("{\"case\":\"waits\",\"pid\":%d,", (int)getpid());
	printf("\"mutex\":{\"tid\":%d,\"fn\":\"gt_stuck_in_mutex\",\"addr\":\"0x%" PRIxPTR "\"},",
	       (int)w_tids[0], (uintptr_t)&W_LOCK);
	printf("\"condvar\":{\"tid\":%d,\"fn\":\"gt_stuck_in_condvar\",\"addr\":\"0x%" PRIxPTR
	       "\",\"mutex\":\"0x%" PRIxPTR "\"},",
	       (int)w_tids[1], (uintptr_t)&W_COND, (uintptr_t)&W_CMUTEX);
	printf("\"read\":{\"tid\":%d,\"fn\":\"gt_stuck_in_read\"}}\n", (int)w_tids[2]);
	fflush(stdout);
	if (until_usr1) {
		if (sigwait(&usr1, &sig))
			gt_die("sigwait failed");
		gt_unlock(&W_LOCK);
		pthread_join(t[0], NULL);
		return 0; /* the other two waits end with the process */
	}
	pthread_join(t[0], NULL); /* never returns */
	return 1;
}

int main(int argc, char **argv)
{
	gt_set_prog("gt_stuck");
	alarm(60); /* a deadlocked ground truth never outlives its test */
	if (argc >= 2 && !strcmp(argv[1], "deadlock"))
		return deadlock();
	if (argc >= 2 && !strcmp(argv[1], "pshared"))
		return pshared();
	if (argc >= 2 && !strcmp(argv[1], "disk"))
		return disk(argc - 1, argv + 1);
	if (argc >= 2 && !strcmp(argv[1], "waits"))
		return waits();
	fprintf(stderr, "usage: gt_stuck deadlock|pshared|waits|disk --dev DEV --cgroup DIR...\n");
	return 2;
}
