// SPDX-License-Identifier: MIT
/* Losses by CPU and kind (core/base/losses.c): typed in the process, text only in a recording and
 * the JSON summary, and a recording's text read back strictly. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>

#include "base/losses.h"

static char *json_of(const struct ws_losses *l)
{
	char *t = ws_losses_text(l);

	cr_assert_not_null(t);
	return t;
}

Test(losses, settled_by_cpu_then_kind_with_repeats_merged)
{
	struct ws_losses l = { 0 };
	char *t;

	cr_assert_eq(ws_losses_add(&l, 1, 0x101, 2), 0);
	cr_assert_eq(ws_losses_add(&l, 0, 0x201, 5), 0);
	cr_assert_eq(ws_losses_add(&l, 1, 0x4, 1), 0);
	cr_assert_eq(ws_losses_add(&l, 1, 0x101, 3), 0);
	cr_assert_eq(ws_losses_add(&l, 0, 0x7, 0), 0, "a zero count is dropped");
	ws_losses_settle(&l);
	t = json_of(&l);
	cr_assert_str_eq(t, "{\"cpu0\":{\"0x201\":5},\"cpu1\":{\"0x4\":1,\"0x101\":5}}");
	cr_assert_eq(ws_losses_total(&l), 11);
	cr_assert_eq(ws_losses_of_kind(&l, 0x101), 5);
	cr_assert_eq(ws_losses_of_kind(&l, 0x999), 0);
	free(t);
	ws_losses_free(&l);
}

Test(losses, empty_and_null_print_an_empty_object)
{
	struct ws_losses l = { 0 };
	char *t = json_of(&l);

	cr_assert_str_eq(t, "{}");
	free(t);
	t = json_of(NULL);
	cr_assert_str_eq(t, "{}");
	free(t);
	cr_assert_eq(ws_losses_total(NULL), 0);
}

Test(losses, a_recordings_text_round_trips)
{
	const char *in =
		"{\"cpu0\":{\"0x101\":7,\"0x4\":2},\"cpu3\":{\"0xffffffff\":18446744073709551615}}";
	struct ws_losses l;
	char *t;

	cr_assert_eq(ws_losses_parse(in, &l), 0);
	cr_assert_eq(l.n, 3);
	cr_assert_eq(ws_losses_of_kind(&l, 0x4), 2);
	t = json_of(&l);
	/* settled: kinds in order within a CPU */
	cr_assert_str_eq(
		t,
		"{\"cpu0\":{\"0x4\":2,\"0x101\":7},\"cpu3\":{\"0xffffffff\":18446744073709551615}}");
	free(t);
	ws_losses_free(&l);
	cr_assert_eq(ws_losses_parse("{}", &l), 0);
	cr_assert_eq(l.n, 0);
}

Test(losses, anything_else_is_refused_and_leaves_nothing)
{
	const char *bad[] = {
		"",
		"{",
		"{}x",
		"{\"cpu0\":{}}",
		"{\"cpu0\":{\"0x1\":1}",
		"{\"cpu0\":{\"0x1\":1}}}",
		"{\"cpu\":{\"0x1\":1}}",
		"{\"cpu0\":{\"1\":1}}",
		"{\"cpu0\":{\"0x1\":-1}}",
		"{\"cpu0\":{\"0x1\":18446744073709551616}}", /* past 64 bits */
		"{\"cpu4294967296\":{\"0x1\":1}}",	     /* past 32 bits */
		"{\"cpu0\":{\"0x100000000\":1}}",
		"{\"cpu0\":{\"0x1\":1},}",
		"{\"cpu0\":{\"0x1\":1}} ",
		"{\"cpu0\":{\"0x1\":1,\"x\":\"</script>\"}}",
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct ws_losses l;

		cr_assert_eq(ws_losses_parse(bad[i], &l), -EINVAL, "accepted: %s", bad[i]);
		cr_assert_eq(l.n, 0);
		cr_assert_null(l.v);
	}
}
