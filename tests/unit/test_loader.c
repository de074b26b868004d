// SPDX-License-Identifier: MIT
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "loader.h"

static int load(const char *name, struct ws_loaded *l, char *err, size_t len)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s.so", TEST_PLUGIN_DIR, name);
	return ws_plugin_load(path, l, err, len);
}

Test(loader, accepts_a_complete_plugin)
{
	struct ws_loaded l;
	char err[512] = "";

	cr_assert_eq(load("good", &l, err, sizeof(err)), 0, "%s", err);
	cr_assert_str_eq(l.p->name, "good");
	ws_plugin_unload(&l);
}

Test(loader, refuses_another_abi_major_naming_file_and_reason)
{
	struct ws_loaded l;
	char err[512] = "";

	cr_assert_lt(load("bad_major", &l, err, sizeof(err)), 0);
	cr_assert(strstr(err, "bad_major.so: refused: built for plugin ABI 2."), "got: %s", err);
	cr_assert_null(l.dl);
}

Test(loader, refuses_a_newer_minor)
{
	struct ws_loaded l;
	char err[512] = "";

	cr_assert_lt(load("newer_minor", &l, err, sizeof(err)), 0);
	cr_assert(strstr(err, "newer than this whyslow"), "got: %s", err);
}

Test(loader, refuses_an_incomplete_descriptor)
{
	struct ws_loaded l;
	char err[512] = "";

	cr_assert_lt(load("no_name", &l, err, sizeof(err)), 0);
	cr_assert(strstr(err, "no_name.so: refused: descriptor has no valid name"), "got: %s", err);
	cr_assert_lt(load("small_sz", &l, err, sizeof(err)), 0);
	cr_assert(strstr(err, "smaller than ABI 1.0"), "got: %s", err);
}

Test(loader, refuses_a_library_without_the_entry_symbol)
{
	struct ws_loaded l;
	char err[512] = "";

	cr_assert_lt(load("no_entry", &l, err, sizeof(err)), 0);
	cr_assert(strstr(err, "not a whyslow plugin"), "got: %s", err);
}

Test(loader, missing_plugin_is_named)
{
	struct ws_loaded l;
	char err[512] = "";

	cr_assert_lt(load("does_not_exist", &l, err, sizeof(err)), 0);
	cr_assert(strstr(err, "does_not_exist.so"), "got: %s", err);
}

Test(loader, refuses_a_plugin_others_can_write)
{
	char dir[] = "/tmp/ws-trust-XXXXXX", path[128], err[512] = "";

	cr_assert_not_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/p.so", dir);
	FILE *f = fopen(path, "w");

	cr_assert_not_null(f);
	fclose(f);
	chmod(dir, 0700);
	chmod(path, 0666);
	cr_assert_lt(ws_path_trusted(path, err, sizeof(err)), 0);
	cr_assert(strstr(err, "writable by group or others"), "got: %s", err);
	chmod(path, 0644);
	chmod(dir, 0777);
	cr_assert_lt(ws_path_trusted(path, err, sizeof(err)), 0, "a world-writable directory above it");
	chmod(dir, 0755);
	cr_assert_eq(ws_path_trusted(path, err, sizeof(err)), 0, "%s", err);
	unlink(path);
	rmdir(dir);
}

Test(loader, scan_lists_plugins_sorted)
{
	char **names = NULL;
	int n = ws_plugin_scan(PLUGIN_BUILD_DIR, &names);

	cr_assert_geq(n, 5);
	cr_assert_str_eq(names[0], "blkio");
	cr_assert_str_eq(names[1], "futex");
	/* kill attaches before sched: its sched_waking record must come first (kill.bpf.c) */
	cr_assert_str_eq(names[2], "kill");
	/* net too (net.bpf.c) */
	cr_assert_str_eq(names[3], "net");
	cr_assert_str_eq(names[4], "sched");
	for (int i = 0; i < n; i++)
		free(names[i]);
	free(names);
}
