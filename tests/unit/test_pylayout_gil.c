// SPDX-License-Identifier: MIT
/*
 * Where whyslow looks for CPython's GIL (core/stacks/pyproc.c, pygil.c) is where the
 * interpreter's own headers put it. Written for the headers of any of 3.11 to 3.13: the build
 * runs it against python3.11-dev's; pyenv's 3.12 and 3.13 headers were checked by hand with
 *   cc -I…/include/python3.N -I core -I sdk/include tests/unit/test_pylayout_gil.c …
 * and tests/e2e/gt_gil.sh checks every row against the running interpreters.
 */
#define Py_BUILD_CORE 1
#include <Python.h>
#include <internal/pycore_interp.h>
#include <internal/pycore_runtime.h>
#include <stddef.h>

#include <criterion/criterion.h>

#include "stacks/pygil.h"
#include "stacks/pyproc.h"

#define GIL_FIELD(f) offsetof(struct _gil_runtime_state, f)

Test(pylayout_gil, matches_the_interpreters_headers)
{
	const struct ws_py_layout *l = ws_py_layout_of(PY_MINOR_VERSION);

	cr_assert_not_null(l, "no layout for 3.%d", PY_MINOR_VERSION);
#if PY_MINOR_VERSION == 11
	cr_expect_eq(l->walk.gil, offsetof(_PyRuntimeState, ceval.gil));
	cr_expect_eq(l->walk.interp_gil, WS_PY_NO_OFF);
#else
	cr_expect_eq(l->walk.gil, offsetof(_PyRuntimeState, _main_interpreter) +
					  offsetof(PyInterpreterState, _gil));
	cr_expect_eq(l->walk.interp_gil, offsetof(PyInterpreterState, ceval.gil));
#endif
	cr_expect_eq(l->walk.interp_main, offsetof(_PyRuntimeState, interpreters.main));
	cr_expect_eq(l->walk.gil_locked, GIL_FIELD(locked));
	cr_expect_eq(l->walk.gil_last_holder, GIL_FIELD(last_holder));
	cr_expect_eq(l->walk.gil_switch_number, GIL_FIELD(switch_number));
	cr_expect_eq(l->gil_cond, GIL_FIELD(cond));
	cr_expect_eq(l->walk.gil_mutex, GIL_FIELD(mutex));
	cr_expect_eq(l->gil_switch_cond, GIL_FIELD(switch_cond));
	cr_expect_eq(l->gil_switch_mutex, GIL_FIELD(switch_mutex));
	cr_expect_eq(l->cond_size, sizeof(PyCOND_T));
	cr_expect_eq(l->mutex_size, sizeof(PyMUTEX_T));
}

/* The futex words of this very build's runtime state are the GIL's: its layout, its memory. */
Test(pylayout_gil, words_of_a_runtime_state_are_the_gils)
{
	static _PyRuntimeState rt;
	struct ws_py_info in = { 0 };
	const struct ws_py_layout *l = ws_py_layout_of(PY_MINOR_VERSION);
#if PY_MINOR_VERSION == 11
	struct _gil_runtime_state *gil = &rt.ceval.gil;
#else
	struct _gil_runtime_state *gil = &rt._main_interpreter._gil;
#endif

	cr_assert_not_null(l);
	in.layout = l;
	in.bpf = l->walk;
	in.bpf.runtime = (uint64_t)(uintptr_t)&rt;
	in.version = (uint32_t)PY_VERSION_HEX;
	cr_expect_eq(ws_py_gil_part(&in, (uintptr_t)&gil->cond), WS_PY_GIL_COND);
	/* glibc's condvar waits on its __g_signals words, inside the object */
	cr_expect_eq(ws_py_gil_part(&in, (uintptr_t)&gil->cond + 40), WS_PY_GIL_COND);
	cr_expect_eq(ws_py_gil_part(&in, (uintptr_t)&gil->mutex), WS_PY_GIL_MUTEX);
	cr_expect_eq(ws_py_gil_part(&in, (uintptr_t)&gil->switch_cond + 44), WS_PY_GIL_SWITCH_COND);
	cr_expect_eq(ws_py_gil_part(&in, (uintptr_t)&gil->switch_mutex), WS_PY_GIL_SWITCH_MUTEX);
	cr_expect_eq(ws_py_gil_part(&in, (uintptr_t)&gil->locked), WS_PY_GIL_NONE);
	cr_expect_eq(ws_py_gil_part(&in, (uintptr_t)(gil + 1)), WS_PY_GIL_NONE);
}
