// SPDX-License-Identifier: MIT
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "access/trust.h"
#include "session/loader.h"

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

	char want[128];

	snprintf(want, sizeof(want), "bad_major.so: refused: built for plugin ABI %d.",
		 WS_ABI_MAJOR + 1);
	cr_assert_lt(load("bad_major", &l, err, sizeof(err)), 0);
	cr_assert(strstr(err, want), "got: %s", err);
	cr_assert_null(l.dl);
}

/* A 1.x plugin's callbacks take no context: refused with the way to port it, never called. */
Test(loader, refuses_abi_1_with_the_migration)
{
	struct ws_loaded l;
	char err[512] = "";

	cr_assert_lt(load("abi1", &l, err, sizeof(err)), 0);
	cr_assert(
		strstr(err, "abi1.so: refused: built for plugin ABI 1.1, this whyslow has ABI 3."),
		"got: %s", err);
	cr_assert(strstr(err, "Migrating from ABI 1.x"), "got: %s", err);
	cr_assert_null(l.dl);
}

/* A 2.x plugin's host table had the scheduler's members: refused with how to rebuild it. */
Test(loader, refuses_abi_2_with_how_to_rebuild)
{
	struct ws_loaded l;
	char err[512] = "";

	cr_assert_lt(load("abi2", &l, err, sizeof(err)), 0);
	cr_assert(
		strstr(err, "abi2.so: refused: built for plugin ABI 2.5, this whyslow has ABI 3."),
		"got: %s", err);
	cr_assert(strstr(err, "rebuild it against this SDK"), "got: %s", err);
	cr_assert(strstr(err, "Moving from ABI 2.x"), "got: %s", err);
	cr_assert_null(l.dl);
	cr_assert_null(strchr(err, '\n'), "one line: %s", err);
}

/* A newer minor that sets nothing this core lacks loads: the minor moves only with members. */
Test(loader, loads_a_newer_minor_that_uses_nothing_newer)
{
	struct ws_loaded l;
	char err[512] = "";

	cr_assert_eq(load("newer_minor", &l, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(l.p, &l.desc, "the core reads its own copy of the descriptor");
	cr_assert_eq(l.p->abi_minor, WS_ABI_MINOR + 1);
	ws_plugin_unload(&l);
}

/* One that sets a member this core does not know (non-zero reserved space) is refused. */
Test(loader, refuses_a_newer_minor_using_an_unknown_member)
{
	struct ws_loaded l;
	char err[512] = "";

	cr_assert_lt(load("newer_member", &l, err, sizeof(err)), 0);
	cr_assert(strstr(err, "newer_member.so: refused: built for plugin ABI 3."), "got: %s", err);
	cr_assert(strstr(err, "does not know; upgrade whyslow"), "got: %s", err);
	cr_assert_null(l.dl);
}

Test(loader, refuses_an_incomplete_descriptor)
{
	struct ws_loaded l;
	char err[512] = "";

	cr_assert_lt(load("no_name", &l, err, sizeof(err)), 0);
	cr_assert(strstr(err, "no_name.so: refused: descriptor has no valid name"), "got: %s", err);
	cr_assert_lt(load("small_sz", &l, err, sizeof(err)), 0);
	cr_assert(strstr(err, "smaller than ABI 3.0"), "got: %s", err);
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
	cr_assert_lt(ws_path_trusted(path, err, sizeof(err)), 0,
		     "a world-writable directory above it");
	chmod(dir, 0755);
	cr_assert_eq(ws_path_trusted(path, err, sizeof(err)), 0, "%s", err);
	unlink(path);
	rmdir(dir);
}

Test(loader, scan_lists_plugins_sorted)
{
	char **names = NULL;
	int n = ws_plugin_scan(PLUGIN_BUILD_DIR, &names);

	cr_assert_geq(n, 4);
	cr_assert_str_eq(names[0], "blkio");
	cr_assert_str_eq(names[1], "futex");
	cr_assert_str_eq(names[2], "kill");
	cr_assert_str_eq(names[3], "net");
	for (int i = 0; i < n; i++)
		cr_assert_str_neq(names[i], "sched",
				  "the scheduler model is the core's, not a file");
	for (int i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

/* The sources in load order: the core's scheduler model among the plugins, by name. */
Test(loader, sources_list_the_core_model_in_order)
{
	char **names = NULL, err[512] = "";
	int n = ws_source_names(PLUGIN_BUILD_DIR, &names);
	struct ws_loaded l;

	cr_assert_geq(n, 5);
	/* kill attaches before sched: its sched_waking record must come first (kill.bpf.c) */
	cr_assert_str_eq(names[2], "kill");
	/* net too (net.bpf.c) */
	cr_assert_str_eq(names[3], "net");
	cr_assert_str_eq(names[4], "sched");
	cr_assert_eq(ws_source_load(PLUGIN_BUILD_DIR, "sched", &l, err, sizeof(err)), 0, "%s", err);
	cr_assert(l.core);
	cr_assert_null(l.dl);
	cr_assert_str_eq(l.p->name, "sched");
	ws_plugin_unload(&l);
	for (int i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

/* A sched.so left by an older whyslow is not the scheduler model: never listed, never loaded. */
Test(loader, a_file_named_like_the_core_model_is_not_loaded)
{
	char dir[] = "/tmp/ws-loader-XXXXXX", src[512], dst[600], **names = NULL;
	int n;

	cr_assert_not_null(mkdtemp(dir));
	snprintf(src, sizeof(src), "%s/good.so", TEST_PLUGIN_DIR);
	snprintf(dst, sizeof(dst), "%s/sched.so", dir);
	cr_assert_eq(symlink(src, dst), 0);
	n = ws_source_names(dir, &names);
	cr_assert_eq(n, 1);
	cr_assert_str_eq(names[0], "sched");
	free(names[0]);
	free(names);
	unlink(dst);
	rmdir(dir);
}

/* Issue 11 #1/#2: a symbolic link is trusted only when nobody else could have placed it. */
Test(loader, symlink_trusted_only_when_nobody_else_can_replace_it)
{
	char dir[] = "/tmp/ws-link-XXXXXX", link[128], sub[128], target[128], err[512] = "";
	int fd;

	cr_assert_not_null(mkdtemp(dir));
	chmod(dir, 0755);
	snprintf(sub, sizeof(sub), "%s/sub", dir);
	cr_assert_eq(mkdir(sub, 0755), 0);
	snprintf(target, sizeof(target), "%s/sub/p.so", dir);
	fclose(fopen(target, "w"));
	chmod(target, 0644);
	snprintf(link, sizeof(link), "%s/l.so", dir);
	cr_assert_eq(symlink("sub/p.so", link), 0);

	fd = ws_trusted_open(link, WS_TRUST_FILE, err, sizeof(err));
	cr_assert_geq(fd, 0, "a root-owned link in a root-owned 0755 directory: %s", err);
	close(fd);

	/* owned by someone else: refused, even though its target is root's */
	cr_assert_eq(lchown(link, 65534, 65534), 0);
	cr_assert_lt(ws_trusted_open(link, WS_TRUST_FILE, err, sizeof(err)), 0);
	cr_assert(strstr(err, "is a symbolic link that uid 65534 owns"), "got: %s", err);
	cr_assert_lt(ws_path_trusted(link, err, sizeof(err)), 0);

	/* root's link in a directory others can write (sticky or not): refused */
	cr_assert_eq(lchown(link, 0, 0), 0);
	chmod(dir, 01777);
	cr_assert_lt(ws_trusted_open(link, WS_TRUST_FILE, err, sizeof(err)), 0);
	cr_assert(strstr(err, "can replace"), "got: %s", err);
	/* ...while a regular file there stays trusted (the /tmp rule) */
	char plain[160];

	snprintf(plain, sizeof(plain), "%s/plain", dir);
	fclose(fopen(plain, "w"));
	chmod(plain, 0644);
	fd = ws_trusted_open(plain, WS_TRUST_FILE, err, sizeof(err));
	cr_assert_geq(fd, 0, "%s", err);
	close(fd);
	chmod(dir, 0755);

	/* a directory reached through a foreign link: refused too */
	char dlink[160], via[200];

	snprintf(dlink, sizeof(dlink), "%s/dl", dir);
	cr_assert_eq(symlink(sub, dlink), 0);
	cr_assert_eq(lchown(dlink, 65534, 65534), 0);
	snprintf(via, sizeof(via), "%s/p.so", dlink);
	cr_assert_lt(ws_trusted_open(via, WS_TRUST_FILE, err, sizeof(err)), 0);
	cr_assert_lt(ws_trusted_open(dlink, WS_TRUST_DIR, err, sizeof(err)), 0);
	/* and a target owned by someone else behind a good link: refused */
	cr_assert_eq(lchown(dlink, 0, 0), 0);
	fd = ws_trusted_open(dlink, WS_TRUST_DIR, err, sizeof(err));
	cr_assert_geq(fd, 0, "%s", err);
	close(fd);
	cr_assert_eq(chown(target, 65534, 65534), 0);
	cr_assert_lt(ws_trusted_open(via, WS_TRUST_FILE, err, sizeof(err)), 0);
	cr_assert(strstr(err, "owned by uid 65534"), "got: %s", err);

	unlink(plain);
	unlink(via);
	unlink(dlink);
	unlink(link);
	rmdir(sub);
	rmdir(dir);
}

Test(loader, link_loops_end)
{
	char dir[] = "/tmp/ws-loop-XXXXXX", a[128], b[128], err[512] = "";

	cr_assert_not_null(mkdtemp(dir));
	chmod(dir, 0755);
	snprintf(a, sizeof(a), "%s/a", dir);
	snprintf(b, sizeof(b), "%s/b", dir);
	cr_assert_eq(symlink(b, a), 0);
	cr_assert_eq(symlink(a, b), 0);
	cr_assert_eq(ws_trusted_open(a, WS_TRUST_FILE, err, sizeof(err)), -ELOOP, "%s", err);
	unlink(a);
	unlink(b);
	rmdir(dir);
}

/* Issue 11 #8: a truncated copy of a plugin is refused, not a SIGBUS. */
Test(loader, truncated_plugin_is_refused_without_a_crash)
{
	char dir[] = "/tmp/ws-trunc-XXXXXX", src[512], dst[160], err[512] = "";
	struct ws_loaded l;
	char buf[65536];
	struct stat st;
	FILE *in, *out;
	size_t n, total = 0;

	snprintf(src, sizeof(src), "%s/good.so", TEST_PLUGIN_DIR);
	cr_assert_eq(stat(src, &st), 0);
	cr_assert_not_null(mkdtemp(dir));
	chmod(dir, 0755);
	snprintf(dst, sizeof(dst), "%s/good.so", dir);
	in = fopen(src, "r");
	out = fopen(dst, "w");
	cr_assert(in && out);
	/* the first half: headers intact, the segments they describe cut off */
	while (total < (size_t)st.st_size / 2 && (n = fread(buf, 1, sizeof(buf), in)) > 0) {
		if (total + n > (size_t)st.st_size / 2)
			n = st.st_size / 2 - total;
		fwrite(buf, 1, n, out);
		total += n;
	}
	fclose(in);
	fclose(out);
	chmod(dst, 0644);
	cr_assert_lt(ws_plugin_load(dst, &l, err, sizeof(err)), 0);
	cr_assert(strstr(err, "truncated"), "got: %s", err);
	cr_assert_null(l.dl);
	unlink(dst);
	rmdir(dir);
}

/* glibc remembers each /proc/self/fd/N name a load used: a later load must still get its own file
 */
Test(loader, each_load_gets_its_own_file_while_others_stay_loaded)
{
	static const char *names[] = { "blkio", "futex", "kill" };
	struct ws_loaded held, l;
	char path[512], err[512] = "";

	snprintf(path, sizeof(path), "%s/blkio.so", PLUGIN_BUILD_DIR);
	cr_assert_eq(ws_plugin_load(path, &held, err, sizeof(err)), 0, "%s", err);
	for (int round = 0; round < 2; round++) {
		for (size_t i = 0; i < 3; i++) {
			snprintf(path, sizeof(path), "%s/%s.so", PLUGIN_BUILD_DIR, names[i]);
			cr_assert_eq(ws_plugin_load(path, &l, err, sizeof(err)), 0, "%s", err);
			cr_assert_str_eq(l.p->name, names[i], "loading %s gave %s", path,
					 l.p->name);
			ws_plugin_unload(&l);
		}
	}
	ws_plugin_unload(&held);
}
