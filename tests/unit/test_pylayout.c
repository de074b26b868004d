// SPDX-License-Identifier: MIT
/*
 * The struct offsets whyslow keeps for CPython 3.11 (core/stacks/pyproc.c) are the ones the
 * installed interpreter's own headers give (python3.11-dev's internal headers, built as the
 * core is). Built only where those headers are.
 */
#define Py_BUILD_CORE 1
#include <Python.h>
#include <internal/pycore_frame.h>
#include <internal/pycore_interp.h>
#include <internal/pycore_runtime.h>
#include <stddef.h>

#include <criterion/criterion.h>

#include "stacks/pyproc.h"

Test(pylayout, matches_the_interpreters_headers)
{
	const struct ws_py_layout *l = ws_py_layout_of(PY_MINOR_VERSION);

	cr_assert_not_null(l, "no layout for 3.%d", PY_MINOR_VERSION);
	cr_expect_eq(l->walk.interp_head, offsetof(_PyRuntimeState, interpreters.head));
	cr_expect_eq(l->walk.threads_head, offsetof(PyInterpreterState, threads.head));
	cr_expect_eq(l->walk.ts_next, offsetof(PyThreadState, next));
	cr_expect_eq(l->walk.ts_native_tid, offsetof(PyThreadState, native_thread_id));
	cr_expect_eq(l->walk.ts_cframe, offsetof(PyThreadState, cframe));
	cr_expect_eq(l->walk.cur_frame, offsetof(_PyCFrame, current_frame));
	cr_expect_eq(l->walk.fr_code, offsetof(_PyInterpreterFrame, f_code));
	cr_expect_eq(l->walk.fr_previous, offsetof(_PyInterpreterFrame, previous));
	cr_expect_eq(l->walk.fr_instr, offsetof(_PyInterpreterFrame, prev_instr));
	cr_expect_eq(l->walk.fr_owner, offsetof(_PyInterpreterFrame, owner));
	cr_expect_eq(l->walk.fr_entry, offsetof(_PyInterpreterFrame, is_entry));
	cr_expect_eq(l->ob_type, offsetof(PyObject, ob_type));
	cr_expect_eq(l->ob_size, offsetof(PyVarObject, ob_size));
	cr_expect_eq(l->co_firstlineno, offsetof(PyCodeObject, co_firstlineno));
	cr_expect_eq(l->co_filename, offsetof(PyCodeObject, co_filename));
	cr_expect_eq(l->co_name, offsetof(PyCodeObject, co_name));
	cr_expect_eq(l->co_qualname, offsetof(PyCodeObject, co_qualname));
	cr_expect_eq(l->co_linetable, offsetof(PyCodeObject, co_linetable));
	cr_expect_eq(l->co_code, offsetof(PyCodeObject, co_code_adaptive));
	cr_expect_eq(l->str_length, offsetof(PyASCIIObject, length));
	cr_expect_eq(l->str_state, offsetof(PyASCIIObject, hash) + sizeof(Py_hash_t));
	cr_expect_eq(l->str_ascii_data, sizeof(PyASCIIObject));
	cr_expect_eq(l->str_compact_data, sizeof(PyCompactUnicodeObject));
	cr_expect_eq(l->bytes_data, offsetof(PyBytesObject, ob_sval));
	cr_expect_eq(l->owner_max, FRAME_OWNED_BY_FRAME_OBJECT);
}
