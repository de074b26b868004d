// SPDX-License-Identifier: MIT
/* Opening what a traced program names (core/access/useropen.c, core/stacks/symfile.c): the rules in
 * this process, and (as root) the helper with another user's credentials and its deadline. */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "access/useropen.h"
#include "stacks/symfile.h"

static char dir[] = "/tmp/ws-useropen.XXXXXX";

static void setup(void)
{
	cr_assert_not_null(mkdtemp(dir));
	chmod(dir, 0755);
}

static void teardown(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	cr_assert_eq(system(cmd), 0);
}

static const char *at(const char *name)
{
	static char buf[4][256];
	static int i;

	i = (i + 1) % 4;
	snprintf(buf[i], sizeof(buf[i]), "%s/%s", dir, name);
	return buf[i];
}

static void make_file(const char *name, mode_t mode)
{
	int fd = open(at(name), O_WRONLY | O_CREAT | O_EXCL, mode);

	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, "x\n", 2), 2);
	close(fd);
	chmod(at(name), mode);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Gone or a zombie within 2 s. */
static bool dead_soon(pid_t pid)
{
	for (int i = 0; i < 200; i++) {
		char path[64], st[256];
		FILE *f;

		snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
		f = fopen(path, "r");
		if (!f)
			return true;
		if (fgets(st, sizeof(st), f) && strstr(st, ") Z ")) {
			fclose(f);
			return true;
		}
		fclose(f);
		usleep(10000);
	}
	return false;
}

/*
 * The helper's seccomp filter names the target's system calls; under qemu-user (the arm64 unit
 * run: tools/arm64-test sets WHYSLOW_TEST_EMULATED) the kernel sees the host's, and qemu's own.
 */
static void need_helpers(void)
{
	if (geteuid() != 0)
		cr_skip_test("needs root");
	if (getenv("WHYSLOW_TEST_EMULATED"))
		cr_skip_test("helpers run under their seccomp filter, which qemu-user cannot");
}

TestSuite(useropen, .init = setup, .fini = teardown);

Test(useropen, status_gives_the_filesystem_ids_and_groups)
{
	struct ws_reader_id id;

	cr_assert_eq(ws_reader_id_parse("Name:\tx\nUid:\t1000\t1001\t1002\t1003\n"
					"Gid:\t50\t51\t52\t53\nGroups:\t4 24 27 \n",
					&id),
		     0);
	cr_assert_eq(id.uid, 1003, "the fs uid is what an open() is checked against");
	cr_assert_eq(id.gid, 53);
	cr_assert_eq(id.ngroups, 3);
	cr_assert_eq(id.groups[2], 27);
	cr_assert_eq(ws_reader_id_parse("Name:\tx\nGid:\t1 1 1 1\n", &id), -EINVAL, "no Uid line");
}

Test(useropen, a_fifo_is_refused_at_once_not_opened)
{
	double t = now_s();

	cr_assert_eq(mkfifo(at("fifo"), 0644), 0);
	cr_assert_eq(ws_useropen(NULL, NULL, at("fifo"), 0), WS_UOPEN_ENOTREG);
	cr_assert_lt(now_s() - t, 2.0, "an open() of a FIFO with no writer would still be waiting");
	cr_assert_str_eq(ws_useropen_strerror(WS_UOPEN_ENOTREG), "not a regular file");
}

Test(useropen, rules_in_this_process)
{
	int fd;

	make_file("plain", 0644);
	fd = ws_useropen(NULL, NULL, at("plain"), 0);
	cr_assert_geq(fd, 0, "a regular file: %s", strerror(-fd));
	close(fd);
	cr_assert_eq(symlink(at("plain"), at("link")), 0);
	cr_assert_eq(ws_useropen(NULL, NULL, at("link"), WS_UOPEN_NOFOLLOW), -ELOOP,
		     "a link is not followed where the rule says so");
	cr_assert_eq(ws_useropen(NULL, NULL, dir, 0), WS_UOPEN_ENOTREG, "a directory");
	cr_assert_eq(ws_useropen(NULL, NULL, "/dev/null", 0), WS_UOPEN_ENOTREG, "a device");
	cr_assert_eq(ws_useropen(NULL, NULL, at("none"), 0), -ENOENT);
}

Test(useropen, unknown_user_as_root_reads_only_roots_files)
{
	int fd;

	if (geteuid() != 0)
		cr_skip_test("needs root");
	make_file("theirs", 0644);
	cr_assert_eq(chown(at("theirs"), 65534, 65534), 0);
	cr_assert_eq(ws_useropen(NULL, NULL, at("theirs"), 0), WS_UOPEN_EOWNER);
	make_file("roots", 0600);
	fd = ws_useropen(NULL, NULL, at("roots"), 0);
	cr_assert_geq(fd, 0);
	close(fd);
}

Test(useropen, unknown_user_through_helpers_is_nobody_reading_roots_files)
{
	struct ws_useropen *uo;
	int fd;

	need_helpers();
	cr_assert_eq(ws_useropen_new(&uo), 0);
	make_file("strangers", 0644);
	cr_assert_eq(chown(at("strangers"), 12345, 12345), 0);
	cr_assert_eq(ws_useropen(uo, NULL, at("strangers"), 0), WS_UOPEN_EOWNER);
	make_file("roots_secret", 0600);
	cr_assert_eq(ws_useropen(uo, NULL, at("roots_secret"), 0), -EACCES,
		     "opened as nobody: root's 0600 file is not read");
	make_file("roots", 0644);
	fd = ws_useropen(uo, NULL, at("roots"), 0);
	cr_assert_geq(fd, 0, "%s", strerror(-fd));
	close(fd);
	cr_assert_eq(ws_useropen(uo, NULL, "/proc/self/status", 0), WS_UOPEN_ENOTREG,
		     "the kernel's own files are not symbol files");
	ws_useropen_free(uo);
}

static struct ws_reader_id nobody = {
	.uid = 65534, .gid = 65534, .ngroups = 1, .groups = { 65534 }
};

Test(useropen, the_helper_opens_with_the_users_permissions)
{
	struct ws_useropen *uo;
	int fd;

	need_helpers();
	cr_assert_eq(ws_useropen_new(&uo), 0);
	make_file("secret", 0600);
	make_file("public", 0644);
	cr_assert_eq(ws_useropen(uo, &nobody, at("secret"), 0), -EACCES,
		     "root's 0600 file is not read for another user");
	fd = ws_useropen(uo, &nobody, at("public"), 0);
	cr_assert_geq(fd, 0, "%s", strerror(-fd));
	close(fd);
	cr_assert_eq(mkfifo(at("fifo"), 0666), 0);
	cr_assert_eq(ws_useropen(uo, &nobody, at("fifo"), 0), WS_UOPEN_ENOTREG);
	fd = ws_useropen(uo, &nobody, at("public"), WS_UOPEN_OWNED);
	cr_assert_geq(fd, 0, "root's own file passes perf's owner rule");
	close(fd);
	make_file("strangers", 0644);
	cr_assert_eq(chown(at("strangers"), 12345, 12345), 0);
	cr_assert_eq(ws_useropen(uo, &nobody, at("strangers"), WS_UOPEN_OWNED), WS_UOPEN_EOWNER,
		     "a third user's file does not");
	ws_useropen_free(uo);
}

Test(useropen, a_helper_that_does_not_answer_is_killed_at_its_deadline)
{
	struct ws_useropen *uo;
	pid_t pid;
	double t;
	int fd;

	need_helpers();
	cr_assert_eq(ws_useropen_new(&uo), 0);
	make_file("public", 0644);
	fd = ws_useropen(uo, &nobody, at("public"), 0);
	cr_assert_geq(fd, 0);
	close(fd);
	pid = ws_useropen_helper_pid(uo, &nobody);
	cr_assert_gt(pid, 0);
	/* a helper stuck in an open() (a FUSE daemon that never answers) looks like this */
	cr_assert_eq(kill(pid, SIGSTOP), 0);
	ws_useropen_set_timeout(uo, 200);
	t = now_s();
	cr_assert_eq(ws_useropen(uo, &nobody, at("public"), 0), WS_UOPEN_ETIME);
	cr_assert_lt(now_s() - t, 2.0);
	ws_useropen_set_timeout(uo, 10000); /* a loaded machine starts the next helper slowly */
	cr_assert(dead_soon(pid), "the stuck helper is killed (and never waited for)");
	/* the next request has a new helper */
	fd = ws_useropen(uo, &nobody, at("public"), 0);
	cr_assert_geq(fd, 0, "%s", strerror(-fd));
	close(fd);
	for (int i = 0; i < 2; i++) {
		pid = ws_useropen_helper_pid(uo, &nobody);
		cr_assert_gt(pid, 0, "a helper after %d deadlines", i + 1);
		cr_assert_eq(kill(pid, SIGSTOP), 0);
		ws_useropen_set_timeout(uo, 200);
		cr_assert_eq(ws_useropen(uo, &nobody, at("public"), 0), WS_UOPEN_ETIME);
		ws_useropen_set_timeout(uo, 10000);
		if (i == 0) { /* one more open in between starts the helper that is stopped next */
			fd = ws_useropen(uo, &nobody, at("public"), 0);
			cr_assert_geq(fd, 0);
			close(fd);
		}
	}
	/* three deadlines spent on this user: its files are not tried again this session */
	t = now_s();
	cr_assert_eq(ws_useropen(uo, &nobody, at("public"), 0), WS_UOPEN_ETIME);
	cr_assert_lt(now_s() - t, 0.1, "no fourth deadline waited for");
	cr_assert_eq(ws_useropen_helper_pid(uo, &nobody), 0);
	ws_useropen_free(uo);
}

Test(useropen, debuglink_names_are_names)
{
	cr_assert(ws_symfile_plain_name("libc.so.6.debug"));
	cr_assert_not(ws_symfile_plain_name("../../root/x.debug"));
	cr_assert_not(ws_symfile_plain_name("/root/x.debug"));
	cr_assert_not(ws_symfile_plain_name(".."));
	cr_assert_not(ws_symfile_plain_name("."));
	cr_assert_not(ws_symfile_plain_name(""));
	cr_assert_not(ws_symfile_plain_name(NULL));
}
