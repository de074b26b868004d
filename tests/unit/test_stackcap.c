// SPDX-License-Identifier: MIT
/*
 * core/stackcap.c's maps snapshots, on real processes with a made-up clock: when a snapshot is
 * taken (often while a process is young and just after it runs a new program, rarely after),
 * that a child not yet exec()ed (a copy of this program, as whyslow's own child is) is never
 * taken, and that an exited process reads as gone (what was taken before is kept for it).
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "stackcap.h"

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
 * A child: "sleep" runs sleep 30; another @what a shell script; NULL a copy of this test until
 * its stdin says go, then sleep 30. Returned once it runs its first program.
 */
static struct child spawn(const char *what)
{
	char self[PATH_MAX];
	struct child c;
	int p[2];

	cr_assert_eq(pipe(p), 0);
	exe_path(getpid(), self, sizeof(self));
	c.pid = fork();
	cr_assert_geq(c.pid, 0);
	if (c.pid == 0) {
		char x;

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

Test(stackcap, young_often_then_once_a_second)
{
	struct child c = spawn("sleep");
	struct ws_stackcap *sc;

	cr_assert_eq(ws_stackcap_new(&sc), 0);
	cr_assert_eq(ws_stackcap_snapshot(sc, c.pid, T0), 1, "first sight: taken");
	/* its program's libraries may still be mapping: every call for 100 ms */
	cr_assert_eq(ws_stackcap_snapshot(sc, c.pid, T0 + 10 * MS), 1);
	cr_assert_eq(ws_stackcap_snapshot(sc, c.pid, T0 + 99 * MS), 1);
	/* then every 50 ms while young */
	cr_assert_eq(ws_stackcap_snapshot(sc, c.pid, T0 + 120 * MS), 0, "21 ms after the last");
	cr_assert_eq(ws_stackcap_snapshot(sc, c.pid, T0 + 148 * MS), 0, "49 ms after the last");
	cr_assert_eq(ws_stackcap_snapshot(sc, c.pid, T0 + 150 * MS), 1, "51 ms after the last");
	/* from 2 s on, once a second */
	cr_assert_eq(ws_stackcap_snapshot(sc, c.pid, T0 + 2500 * MS), 1);
	cr_assert_eq(ws_stackcap_snapshot(sc, c.pid, T0 + 3000 * MS), 0, "0.5 s after the last");
	cr_assert_eq(ws_stackcap_snapshot(sc, c.pid, T0 + 3499 * MS), 0);
	cr_assert_eq(ws_stackcap_snapshot(sc, c.pid, T0 + 3500 * MS), 1, "1 s after the last");
	ws_stackcap_free(sc);
	reap(&c);
}

Test(stackcap, an_exec_is_taken_at_once)
{
	/* the shell waits for a line, then becomes sleep: another program, other maps */
	struct child c = spawn("read x; exec sleep 30");
	struct ws_stackcap *sc;
	char sh[PATH_MAX];

	exe_path(c.pid, sh, sizeof(sh));
	cr_assert_eq(ws_stackcap_new(&sc), 0);
	cr_assert_eq(ws_stackcap_snapshot(sc, c.pid, T0), 1);
	cr_assert_eq(ws_stackcap_snapshot(sc, c.pid, T0 + 110 * MS), 1);
	cr_assert_eq(ws_stackcap_snapshot(sc, c.pid, T0 + 120 * MS), 0, "settled, 10 ms after");
	cr_assert_eq(write(c.to, "\n", 1), 1);
	wait_exe_not(c.pid, sh);
	cr_assert_eq(ws_stackcap_snapshot(sc, c.pid, T0 + 125 * MS), 1, "it exec()ed: taken");
	cr_assert_eq(ws_stackcap_snapshot(sc, c.pid, T0 + 130 * MS), 1, "settling again");
	cr_assert_eq(ws_stackcap_snapshot(sc, c.pid, T0 + 215 * MS), 1, "90 ms after its exec");
	cr_assert_eq(ws_stackcap_snapshot(sc, c.pid, T0 + 220 * MS), 1,
		     "95 ms after, 5 after last");
	cr_assert_eq(ws_stackcap_snapshot(sc, c.pid, T0 + 240 * MS), 0, "settled, 20 after last");
	cr_assert_eq(ws_stackcap_snapshot(sc, c.pid, T0 + 271 * MS), 1, "51 ms after the last");
	ws_stackcap_free(sc);
	reap(&c);
}

Test(stackcap, a_copy_of_whyslow_is_not_taken)
{
	/* a command whyslow forked that has not exec()ed yet runs whyslow's code: its maps would
	 * name whyslow's functions; here the copy is of this test, which plays whyslow */
	struct child c = spawn(NULL);
	struct ws_stackcap *sc;
	char self[PATH_MAX];

	exe_path(getpid(), self, sizeof(self));
	cr_assert_eq(ws_stackcap_new(&sc), 0);
	cr_assert_eq(ws_stackcap_snapshot(sc, c.pid, T0), 0);
	cr_assert_eq(ws_stackcap_snapshot(sc, c.pid, T0 + 500 * MS), 0);
	cr_assert_eq(write(c.to, "g", 1), 1);
	wait_exe_not(c.pid, self);
	cr_assert_eq(ws_stackcap_snapshot(sc, c.pid, T0 + 501 * MS), 1, "exec()ed: now taken");
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
	ws_stackcap_free(sc);
	reap(&c);
}
