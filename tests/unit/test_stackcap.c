// SPDX-License-Identifier: MIT
/*
 * core/stacks/stackcap.c's maps snapshots, on real processes with a made-up clock: when a snapshot
 * is taken (often while a process is young, and young again once it runs a new program; rarely
 * after), that a child not yet exec()ed (a copy of this program, as whyslow's own child is) is
 * never taken, and that an exited process reads as gone without being opened at every call.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "stacks/pystack.h"
#include "stacks/stackcap.h"

#define MS 1000000ULL
#define T0 (1000000 * MS) /* any start: the snapshots only compare times they are given */

struct child {
	pid_t pid;
	int to; /* its stdin */
};

/* The program @pid runs now, as a path ("" when gone). */
static void exe_path(pid_t pid, char *buf, size_t len)
{
	char link[64];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/%d/exe", pid);
	n = readlink(link, buf, len - 1);
	buf[n > 0 ? n : 0] = 0;
}

/* Wait until @pid runs a program other than @not (an exec takes a moment to show). */
static void wait_exe_not(pid_t pid, const char *old)
{
	char now[PATH_MAX];

	for (int i = 0; i < 500; i++) {
		exe_path(pid, now, sizeof(now));
		if (*now && strcmp(now, old))
			return;
		usleep(10000);
	}
	cr_assert_fail("process %d still runs %s after 5 s", pid, old);
}

/*
 * Under qemu-user (the arm64 unit run: tools/arm64-test sets WHYSLOW_TEST_EMULATED) every
 * program of the test's processes is the emulator as the kernel sees it, so a child's new
 * program cannot be told from this one, which whyslow's "copy of itself" rule relies on. On a
 * real kernel these tests always run.
 */
static void skip_if_emulated(void)
{
	if (getenv("WHYSLOW_TEST_EMULATED"))
		cr_skip_test("every program is the emulator's file under user-mode emulation");
}

/*
 * A child: "sleep" runs sleep 30; another @what a shell script; NULL a copy of this test until
 * its stdin says go, then sleep 30. Returned once it runs its first program.
 */
static struct child spawn(const char *what)
{
	char self[PATH_MAX];
	struct child c;
	int p[2];

	skip_if_emulated();
	cr_assert_eq(pipe(p), 0);
	exe_path(getpid(), self, sizeof(self));
	c.pid = fork();
	cr_assert_geq(c.pid, 0);
	if (c.pid == 0) {
		char x;

		/* gone with the test, even one that fails before reap() */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		dup2(p[0], 0);
		close(p[1]);
		if (what && strcmp(what, "sleep"))
			execl("/bin/sh", "sh", "-c", what, (char *)NULL);
		else if (what || read(0, &x, 1) == 1)
			execl("/bin/sleep", "sleep", "30", (char *)NULL);
		_exit(127);
	}
	close(p[0]);
	c.to = p[1];
	if (what)
		wait_exe_not(c.pid, self);
	return c;
}

static void reap(struct child *c)
{
	close(c->to);
	kill(c->pid, SIGKILL);
	waitpid(c->pid, NULL, 0);
}

/* One call at T0 + @ms, and whether it must take a snapshot. */
struct step {
	uint64_t ms;
	int taken;
	const char *why;
};

static void steps(struct ws_stackcap *sc, pid_t pid, const struct step *st, size_t n)
{
	for (size_t i = 0; i < n; i++)
		cr_assert_eq(ws_stackcap_snapshot(sc, pid, T0 + st[i].ms * MS), st[i].taken,
			     "at %llu ms (%s): expected %d", (unsigned long long)st[i].ms,
			     st[i].why, st[i].taken);
}

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* @before's steps on a shell waiting for a line, then it becomes sleep: @after's steps. */
static void exec_between(const struct step *before, size_t nbefore, const struct step *after,
			 size_t nafter)
{
	struct child c = spawn("read x; exec sleep 30");
	struct ws_stackcap *sc;
	char sh[PATH_MAX];

	exe_path(c.pid, sh, sizeof(sh));
	cr_assert_eq(ws_stackcap_new(&sc), 0);
	steps(sc, c.pid, before, nbefore);
	cr_assert_eq(write(c.to, "\n", 1), 1);
	wait_exe_not(c.pid, sh);
	steps(sc, c.pid, after, nafter);
	ws_stackcap_free(sc);
	reap(&c);
}

Test(stackcap, young_often_then_once_a_second)
{
	static const struct step st[] = {
		{ 0, 1, "first sight" },
		/* its program's libraries may still be mapping: every call for 100 ms */
		{ 10, 1, "settling" },
		{ 99, 1, "settling" },
		/* then every 50 ms while young */
		{ 120, 0, "21 ms after the last" },
		{ 148, 0, "49 ms after the last" },
		{ 150, 1, "51 ms after the last" },
		/* from 2 s on, once a second */
		{ 2500, 1, "old, 2.35 s after the last" },
		{ 3000, 0, "0.5 s after the last" },
		{ 3499, 0, "0.999 s after the last" },
		{ 3500, 1, "1 s after the last" },
	};
	struct child c = spawn("sleep");
	struct ws_stackcap *sc;

	cr_assert_eq(ws_stackcap_new(&sc), 0);
	steps(sc, c.pid, st, N(st));
	ws_stackcap_free(sc);
	reap(&c);
}

Test(stackcap, an_exec_is_taken_at_once)
{
	static const struct step before[] = {
		{ 0, 1, "first sight" },
		{ 110, 1, "settled, 110 ms after the last" },
		{ 120, 0, "settled, 10 ms after the last" },
	};
	static const struct step after[] = {
		{ 125, 1, "it exec()ed" },
		{ 130, 1, "settling again, 5 ms after the last" },
		{ 215, 1, "90 ms after its exec" },
		{ 220, 1, "95 ms after its exec, 5 ms after the last" },
		{ 240, 0, "settled, 20 ms after the last" },
		{ 271, 1, "51 ms after the last" },
	};
	/* another program, other maps */
	exec_between(before, N(before), after, N(after));
}

Test(stackcap, an_old_process_that_execs_is_young_again)
{
	static const struct step before[] = {
		{ 0, 1, "first sight" },
		{ 2500, 1, "old, 2.5 s after the last" },
		{ 3000, 0, "old, 0.5 s after the last" },
	};
	static const struct step after[] = {
		{ 3600, 1, "due, and it exec()ed" },
		{ 3610, 1, "young again: settling, 10 ms after the last" },
		{ 3720, 1, "settled, 110 ms after the last" },
		{ 3730, 0, "settled, 10 ms after the last" },
	};
	exec_between(before, N(before), after, N(after));
}

Test(stackcap, a_copy_of_whyslow_is_not_taken)
{
	/* a command whyslow forked that has not exec()ed yet runs whyslow's code: its maps would
	 * name whyslow's functions; here the copy is of this test, which plays whyslow */
	static const struct step copy[] = { { 0, 0, "a copy" }, { 500, 0, "a copy still" } };
	static const struct step exec[] = { { 501, 1, "exec()ed: now taken" } };
	struct child c = spawn(NULL);
	struct ws_stackcap *sc;
	char self[PATH_MAX];

	exe_path(getpid(), self, sizeof(self));
	cr_assert_eq(ws_stackcap_new(&sc), 0);
	steps(sc, c.pid, copy, N(copy));
	cr_assert_eq(write(c.to, "g", 1), 1);
	wait_exe_not(c.pid, self);
	steps(sc, c.pid, exec, N(exec));
	ws_stackcap_free(sc);
	reap(&c);
}

Test(stackcap, an_exited_process_reads_as_gone)
{
	struct child c = spawn("sleep");
	struct ws_stackcap *sc;
	siginfo_t si;

	cr_assert_eq(ws_stackcap_new(&sc), 0);
	cr_assert_eq(ws_stackcap_snapshot(sc, c.pid, T0), 1);
	kill(c.pid, SIGKILL);
	/* a zombie, not reaped: its maps read empty */
	cr_assert_eq(waitid(P_PID, c.pid, &si, WEXITED | WNOWAIT), 0);
	cr_assert_eq(ws_stackcap_snapshot(sc, c.pid, T0 + 500 * MS), -ENOENT);
	/* not opened again at every poll: tried 10 ms ago */
	cr_assert_eq(ws_stackcap_snapshot(sc, c.pid, T0 + 510 * MS), 0);
	cr_assert_eq(ws_stackcap_snapshot(sc, c.pid, T0 + 551 * MS), -ENOENT);
	ws_stackcap_free(sc);
	reap(&c);
}

/* _PyRuntime's address in Debian's python3.11 (not PIE: the address it runs at), 0: none. */
static uint64_t py311_runtime(void)
{
	FILE *f = popen("nm -D --defined-only /usr/bin/python3.11 2>/dev/null", "r");
	char line[256];
	uint64_t at = 0;

	while (f && fgets(line, sizeof(line), f)) {
		unsigned long long a;
		char name[128];

		if (sscanf(line, "%llx %*s %127s", &a, name) == 2 && !strcmp(name, "_PyRuntime"))
			at = a;
	}
	if (f)
		pclose(f);
	return at;
}

/*
 * ws_stackcap_lock_name() on a real Debian python3.11 (stacks/pygil.c's table, found from its
 * files and maps now, as the futex source asks): the GIL's condition variable word is the
 * GIL's; a word beside it is nothing, and so is any word of a program that is not Python.
 */
Test(stackcap, the_gils_words_of_a_running_python)
{
	uint64_t rt = py311_runtime();
	struct child py, sl;
	struct ws_stackcap *sc;
	char buf[64], want[64], exe[PATH_MAX] = "";

	if (!rt)
		cr_skip_test("no /usr/bin/python3.11 (Debian 12's) or no nm");
	py = spawn("exec /usr/bin/python3.11 -c 'import time; time.sleep(30)'");
	for (int i = 0; i < 500 && !strstr(exe, "python3.11"); i++) {
		exe_path(py.pid, exe, sizeof(exe));
		usleep(10000);
	}
	sl = spawn("sleep");
	cr_assert_eq(ws_stackcap_new(&sc), 0);
	snprintf(want, sizeof(want), "the GIL (python3.11 pid %d)", py.pid);
	/* _PyRuntime.ceval.gil.cond: glibc waits on its signal words at +40 and +44 */
	cr_expect_eq(ws_stackcap_lock_name(sc, py.pid, rt + 0x1b0, buf, sizeof(buf)),
		     WS_PYSTACK_LOCK_GIL);
	cr_expect_str_eq(buf, want);
	cr_expect_eq(ws_stackcap_lock_name(sc, py.pid, rt + 0x1b4, buf, sizeof(buf)),
		     WS_PYSTACK_LOCK_GIL);
	cr_expect_eq(ws_stackcap_lock_name(sc, py.pid, rt + 0x10, buf, sizeof(buf)), 0);
	cr_expect_eq(ws_stackcap_lock_name(sc, sl.pid, rt + 0x1b0, buf, sizeof(buf)), 0);
	cr_expect_eq(ws_stackcap_lock_name(sc, sl.pid, rt + 0x1b0, buf, sizeof(buf)), 0);
	ws_stackcap_free(sc);
	reap(&sl);
	reap(&py);
}
