// SPDX-License-Identifier: MIT
/* Demangled names (core/stacks/demangle.c) and where stacks print them (core/stacks/stack_fmt.c):
 * C++ and legacy Rust, the hash left out, versions kept, long names bounded, the fallback without a
 * C++ runtime, and the JSON frame's "mangled" key. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stacks/demangle.h"
#include "stacks/stack_fmt.h"
#include "stacks/stackrec.h"

#define WORKER "_ZN2ns6WorkerIiE13wait_for_lockEv"
#define THREAD_RUN "_ZNSt6thread11_State_implINS_8_InvokerISt5tupleIJPFvvEEEEEE6_M_runEv"

static void fresh(void)
{
	ws_demangle_use("libstdc++.so.6");
}

static void expect(const char *sym, const char *want)
{
	char buf[WS_DEMANGLE_MAX];
	const char *got = ws_demangle(sym, buf, sizeof(buf));

	cr_expect_str_eq(got, want, "%s: got %s, want %s", sym, got, want);
}

Test(demangle, cxx, .init = fresh)
{
	expect(WORKER, "ns::Worker<int>::wait_for_lock()");
	expect(THREAD_RUN,
	       "std::thread::_State_impl<std::thread::_Invoker<std::tuple<void (*)()> > >::_M_run()");
	expect("_ZN5tpool19thread_pool_generic11worker_mainEPNS_11worker_dataE",
	       "tpool::thread_pool_generic::worker_main(tpool::worker_data*)");
	/* a clone GCC made keeps its suffix, as c++filt prints it */
	expect("_ZN2ns3fooEi.constprop.0", "ns::foo(int) [clone .constprop.0]");
}

Test(demangle, version_kept, .init = fresh)
{
	expect("_ZNSt6thread4joinEv@@GLIBCXX_3.4.11", "std::thread::join()@@GLIBCXX_3.4.11");
}

Test(demangle, not_mangled_is_the_same_pointer, .init = fresh)
{
	char buf[WS_DEMANGLE_MAX];
	const char *plain[] = { "main", "pthread_mutex_lock@GLIBC_2.2.5", "i", "_Zfoo",
				/* Rust v0: not read, left as it is */
				"_RNvCs1234_7mycrate4main", "" };

	for (size_t i = 0; i < sizeof(plain) / sizeof(plain[0]); i++)
		cr_expect_eq(ws_demangle(plain[i], buf, sizeof(buf)), plain[i], "%s changed",
			     plain[i]);
	cr_expect_null(ws_demangle(NULL, buf, sizeof(buf)));
}

Test(demangle, rust_legacy_hash_left_out, .init = fresh)
{
	expect("_ZN3std2rt10lang_start17h0123456789abcdefE", "std::rt::lang_start");
	/* LLVM's suffix goes too, as rustc-demangle drops it */
	expect("_ZN4core3fmt5write17h0123456789abcdefE.llvm.123", "core::fmt::write");
	/* escapes decoded, "_$" at an element's start is the '$' */
	expect("_ZN66_$LT$alloc..vec..Vec$LT$T$GT$$u20$as$u20$core..ops..drop..Drop$GT$4drop17h5e3ef6a1a0a1b2c3E",
	       "<alloc::vec::Vec<T> as core::ops::drop::Drop>::drop");
	expect("_ZN3foo10_$u3b1$bar17h0123456789abcdefE", "foo::\u03b1bar");
	/* an escape Rust does not write: the name is left as the C++ demangler reads it */
	expect("_ZN3foo8$BAD$bar17h0123456789abcdefE", "foo::$BAD$bar");
	/* not a hash (15 hex digits): not Rust, printed as the C++ demangler reads it */
	expect("_ZN3foo16h0123456789abcdeE", "foo::h0123456789abcde");
}

Test(demangle, long_names_bounded, .init = fresh)
{
	char mangled[700], buf[WS_DEMANGLE_MAX];
	const char *got;
	size_t n;

	n = (size_t)snprintf(mangled, sizeof(mangled), "_ZN2ns600");
	memset(mangled + n, 'a', 600);
	strcpy(mangled + n + 600, "Ev");
	got = ws_demangle(mangled, buf, sizeof(buf));
	cr_assert_eq(got, buf);
	cr_expect_eq(strlen(got), WS_DEMANGLE_MAX - 1);
	cr_expect_eq(strncmp(got, "ns::aaaa", 8), 0, "%s", got);
	cr_expect_str_eq(got + strlen(got) - 3, "...");
	/* a smaller buffer cuts the same name further, still terminated */
	got = ws_demangle(mangled, buf, 16);
	cr_expect_str_eq(got, "ns::aaaaaaaaaaa");
}

Test(demangle, fallback_without_runtime)
{
	char buf[WS_DEMANGLE_MAX];

	ws_demangle_use("libwhyslow-no-such-runtime.so.0");
	cr_expect_eq(ws_demangle(WORKER, buf, sizeof(buf)), WORKER);
	ws_demangle_use(NULL);
	cr_expect_eq(ws_demangle(WORKER, buf, sizeof(buf)), WORKER);
	/* and back: names met while it was missing are not kept unreadable */
	ws_demangle_use("libstdc++.so.6");
	cr_expect_str_eq(ws_demangle(WORKER, buf, sizeof(buf)), "ns::Worker<int>::wait_for_lock()");
}

Test(demangle, kept_once, .init = fresh)
{
	char a[WS_DEMANGLE_MAX], b[WS_DEMANGLE_MAX];

	/* the second call answers from what was kept: the same words, in the caller's buffer */
	cr_expect_str_eq(ws_demangle(WORKER, a, sizeof(a)), ws_demangle(WORKER, b, sizeof(b)));
	cr_expect_eq(ws_demangle(WORKER, b, sizeof(b)), b);
}

/* --- stacks as printed ------------------------------------------------------------------- */

static struct ws_sframe frames[] = {
	{ { 0x7f0000001234, "__lll_lock_wait", 0x2b, "/usr/lib/x86_64-linux-gnu/libc.so.6", NULL,
	    0 },
	  false },
	{ { 0x555500001000, WORKER, 0x10, "/opt/gt/gt_cxx", "gt_cxx.cc", 30 }, false },
	{ { 0x555500002000, THREAD_RUN, 0x20, "/opt/gt/gt_cxx", NULL, 0 }, false },
	{ { 0xffffffff81001000ULL, "futex_wait_queue", 0x50, "[kernel]", NULL, 0 }, true },
};

static char *printed(void (*fn)(FILE *, const struct ws_stack *const[], int))
{
	struct ws_stack st = { .n = 4, .frames = frames };
	const struct ws_stack *parts[1] = { &st };
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	cr_assert_not_null(f);
	fn(f, parts, 1);
	fclose(f);
	return text;
}

static void json(FILE *f, const struct ws_stack *const p[], int n)
{
	ws_stack_json(f, "stack", p, n);
}

static void text(FILE *f, const struct ws_stack *const p[], int n)
{
	ws_stack_text(f, p, n, 3);
}

static void folded(FILE *f, const struct ws_stack *const p[], int n)
{
	ws_stack_folded(f, p, n, 8);
}

static void lines(FILE *f, const struct ws_stack *const p[], int n)
{
	ws_stack_lines(f, p, n);
}

Test(demangle, stacks_print_demangled, .init = fresh)
{
	char *j = printed(json), *t = printed(text), *fo = printed(folded), *l = printed(lines);

	cr_expect(strstr(j,
			 "\"sym\":\"ns::Worker<int>::wait_for_lock()\",\"mangled\":\"" WORKER "\""),
		  "%s", j);
	/* a name that is not mangled has no "mangled" key */
	cr_expect(strstr(j, "\"sym\":\"__lll_lock_wait\",\"off\""), "%s", j);
	cr_expect(strstr(t, "in ns::Worker<int>::wait_for_lock() "), "%s", t);
	cr_expect(!strstr(t, "_ZN"), "%s", t);
	/* outermost first; the spaces of a C++ type stay (the weight is after the last one) */
	cr_expect(
		strstr(fo,
		       ";std::thread::_State_impl<std::thread::_Invoker<std::tuple<void (*)()> > >::_M_run();ns::Worker<int>::wait_for_lock();__lll_lock_wait"),
		"%s", fo);
	cr_expect(strstr(l, "ns::Worker<int>::wait_for_lock()+0x10 (gt_cxx) gt_cxx.cc:30"), "%s",
		  l);
	free(j);
	free(t);
	free(fo);
	free(l);
}

Test(demangle, stacks_without_runtime_stay_mangled)
{
	char *j;

	ws_demangle_use(NULL);
	j = printed(json);
	cr_expect(strstr(j, "\"sym\":\"" WORKER "\",\"off\""), "%s", j);
	cr_expect(!strstr(j, "\"mangled\""), "%s", j);
	free(j);
	ws_demangle_use("libstdc++.so.6");
}
