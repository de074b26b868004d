// SPDX-License-Identifier: MIT
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "session/config.h"
#include "session/session.h"

static const struct ws_config_key plugin_keys[] = {
	{ "threshold", WS_CFG_DURATION, "5ms", 1000, 1000000000, "a duration" },
	{ "depth", WS_CFG_U64, "4", 1, 64, "a number" },
	{ "deep", WS_CFG_BOOL, "no", 0, 0, "a flag" },
	{ NULL },
};

static char path[64];

static void write_ini(const char *text)
{
	int fd;

	strcpy(path, "/tmp/ws-config-test-XXXXXX");
	fd = mkstemp(path);
	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
}

static void cleanup(void)
{
	unlink(path);
}

TestSuite(config, .fini = cleanup);

Test(config, reads_sections_and_values)
{
	struct ws_config c = { 0 };
	char err[256];
	uint64_t v;
	bool b;

	write_ini("[core]\nmin_block = 20ms\n\n; comment\n[demo]\nthreshold = 2ms\ndeep = yes\n");
	cr_assert_eq(ws_config_load(&c, path, err, sizeof(err)), 0, "%s", err);
	cr_assert_str_eq(ws_config_get(&c, "core", "min_block"), "20ms");
	cr_assert_eq(ws_config_check_section(&c, "demo", plugin_keys, err, sizeof(err)), 0, "%s",
		     err);
	cr_assert_eq(ws_config_u64(&c, "demo", plugin_keys, "threshold", &v), 0);
	cr_assert_eq(v, 2000000);
	cr_assert_eq(ws_config_u64(&c, "demo", plugin_keys, "depth", &v), 0, "defaults apply");
	cr_assert_eq(v, 4);
	cr_assert_eq(ws_config_bool(&c, "demo", plugin_keys, "deep", &b), 0);
	cr_assert(b);
	ws_config_free(&c);
}

Test(config, syntax_error_names_file_and_line)
{
	struct ws_config c = { 0 };
	char err[256], want[128];

	write_ini("[core]\nmin_block = 20ms\nthis line is wrong\n");
	cr_assert_lt(ws_config_load(&c, path, err, sizeof(err)), 0);
	snprintf(want, sizeof(want), "%s:3:", path);
	cr_assert(strstr(err, want), "got: %s", err);
	ws_config_free(&c);
}

Test(config, unknown_key_is_refused_with_the_known_ones)
{
	struct ws_config c = { 0 };
	char err[256], want[128];

	write_ini("[demo]\nthreshold = 2ms\nthreshhold = 3ms\n");
	cr_assert_eq(ws_config_load(&c, path, err, sizeof(err)), 0);
	cr_assert_lt(ws_config_check_section(&c, "demo", plugin_keys, err, sizeof(err)), 0);
	snprintf(want, sizeof(want), "%s:3: unknown key 'threshhold'", path);
	cr_assert(strstr(err, want), "got: %s", err);
	cr_assert(strstr(err, "threshold, depth, deep"), "got: %s", err);
	ws_config_free(&c);
}

Test(config, out_of_range_value_shows_the_range)
{
	struct ws_config c = { 0 };
	char err[256];

	write_ini("[demo]\ndepth = 65\n");
	cr_assert_eq(ws_config_load(&c, path, err, sizeof(err)), 0);
	cr_assert_lt(ws_config_check_section(&c, "demo", plugin_keys, err, sizeof(err)), 0);
	cr_assert(strstr(err, ":2:") && strstr(err, "1 to 64"), "got: %s", err);
	ws_config_free(&c);
}

Test(config, bad_duration_says_what_a_duration_is)
{
	struct ws_config c = { 0 };
	char err[256];

	write_ini("[demo]\nthreshold = soon\n");
	cr_assert_eq(ws_config_load(&c, path, err, sizeof(err)), 0);
	cr_assert_lt(ws_config_check_section(&c, "demo", plugin_keys, err, sizeof(err)), 0);
	cr_assert(strstr(err, "duration like 10ms"), "got: %s", err);
	ws_config_free(&c);
}

/* "min_block = 10": 10ms or 10s? refused, as --min-block 10 is, naming the key and the fix */
Test(config, duration_without_unit_is_refused)
{
	struct ws_config c = { 0 };
	char err[256];

	write_ini("[demo]\nthreshold = 10\n");
	cr_assert_eq(ws_config_load(&c, path, err, sizeof(err)), 0);
	cr_assert_lt(ws_config_check_section(&c, "demo", plugin_keys, err, sizeof(err)), 0);
	cr_assert(strstr(err, ":2: [demo] threshold: '10' has no unit; add one"), "got: %s", err);
	cr_assert(strstr(err, "e.g. 10ms"), "got: %s", err);
	ws_config_free(&c);
}

Test(config, command_line_overrides_the_file)
{
	struct ws_config c = { 0 };
	char err[256];

	write_ini("[core]\nmin_block = 20ms\n");
	cr_assert_eq(ws_config_load(&c, path, err, sizeof(err)), 0);
	cr_assert_eq(ws_config_set(&c, "core", "min_block", "50ms"), 0);
	cr_assert_str_eq(ws_config_get(&c, "core", "min_block"), "50ms");
	ws_config_free(&c);
}

Test(config, shipped_example_is_valid_for_the_core)
{
	struct ws_config c = { 0 };
	char err[256];

	cr_assert_eq(ws_config_load(&c, TEST_SRC_DIR "/../conf/whyslow.ini", err, sizeof(err)), 0,
		     "%s", err);
	cr_assert_eq(ws_config_check_section(&c, "core", ws_core_keys, err, sizeof(err)), 0, "%s",
		     err);
	ws_config_free(&c);
}

Test(config, missing_file_is_a_clear_error)
{
	struct ws_config c = { 0 };
	char err[256];

	cr_assert_lt(ws_config_load(&c, "/nonexistent/whyslow.ini", err, sizeof(err)), 0);
	cr_assert(strstr(err, "/nonexistent/whyslow.ini: cannot open"), "got: %s", err);
	ws_config_free(&c);
}

/* Issue 11 #8: a line longer than inih takes is refused whole, with its own line number */
Test(config, over_long_line_is_refused_with_its_line_number)
{
	struct ws_config c = { 0 };
	char text[1024], err[256];

	/* a comment whose tail, split off, would read as a setting */
	snprintf(text, sizeof(text), "[core]\n# %.*s min_block = 1ns\ntop = 3\n", 300,
		 "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
		 "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
		 "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
		 "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx");
	write_ini(text);
	cr_assert_lt(ws_config_load(&c, path, err, sizeof(err)), 0);
	cr_assert(strstr(err, ":2: line longer than"), "got: %s", err);
	cr_assert_null(ws_config_get(&c, "core", "min_block"));
	ws_config_free(&c);
}

/* A source's section: "enabled" is checked by the session, every other key against the source's. */
Test(config, a_key_checked_elsewhere_is_left_out)
{
	struct ws_config c = { 0 };
	char err[256] = "";

	write_ini("[demo]\nenabled = no\ndepth = 3\n");
	cr_assert_eq(ws_config_load(&c, path, err, sizeof(err)), 0, "%s", err);
	cr_assert_lt(ws_config_check_section(&c, "demo", plugin_keys, err, sizeof(err)), 0);
	cr_assert_eq(
		ws_config_check_section_but(&c, "demo", plugin_keys, "enabled", err, sizeof(err)),
		0, "%s", err);
	ws_config_free(&c);
	unlink(path);

	write_ini("[demo]\nenabled = no\ndepht = 3\n");
	cr_assert_eq(ws_config_load(&c, path, err, sizeof(err)), 0, "%s", err);
	cr_assert_lt(
		ws_config_check_section_but(&c, "demo", plugin_keys, "enabled", err, sizeof(err)),
		0);
	cr_assert(strstr(err, "unknown key 'depht' in [demo]"), "%s", err);
	ws_config_free(&c);
}
