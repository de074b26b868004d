/* SPDX-License-Identifier: MIT */
/*
 * Is a process CPython, and where does it keep its threads? Found from its files alone, once per
 * program: the executable or libpython it maps exports _PyRuntime, PyCode_Type and Py_Version
 * (dynamic symbols; the version chooses the struct offsets, from a table kept per minor version
 * and checked against the real interpreters by tests/e2e/gt_python.sh). The file is opened as
 * the process's user (symfile.h): call within its ws_symfile_use() context.
 */
#ifndef WS_PYPROC_H
#define WS_PYPROC_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>

#include "procmaps.h"
#include "pycapture.h"

/* Offsets of one CPython minor version (x86_64 and arm64 alike: LP64). */
struct ws_py_layout {
	uint8_t minor;		/* 3.minor */
	struct ws_py_proc walk; /* offsets BPF walks with (.runtime left 0) */
	uint16_t ob_type, ob_size;
	uint16_t co_firstlineno, co_filename, co_name, co_qualname, co_linetable, co_code;
	uint16_t str_state, str_length, str_ascii_data, str_compact_data;
	uint16_t bytes_data;
	uint8_t owner_max;    /* the largest valid frame owner */
	uint8_t owner_cstack; /* owner of a C shim frame, skipped (0xff: none) */
	/* the GIL's pthread objects (offsets in _gil_runtime_state; sizes of glibc's LP64 types):
	 * the futex words a thread waiting for the GIL sleeps on */
	uint16_t gil_cond, gil_switch_cond, gil_switch_mutex; /* the mutex: walk.gil_mutex */
	uint16_t cond_size, mutex_size;
};

/* The layout of 3.@minor, or NULL when this version is not known. */
const struct ws_py_layout *ws_py_layout_of(unsigned minor);

/* What is known of one CPython process. */
struct ws_py_info {
	struct ws_py_proc bpf; /* for ws_py_procs: the layout's offsets and _PyRuntime */
	const struct ws_py_layout *layout;
	uint64_t code_type;    /* &PyCode_Type: a code object's ob_type */
	uint64_t unicode_type; /* &PyUnicode_Type */
	uint64_t bytes_type;   /* &PyBytes_Type */
	uint32_t version;      /* Py_Version (PY_VERSION_HEX) */
	uint64_t module_start; /* start of the mapping of the file that exports them */
	char module[256];      /* that file's path, as the process maps it */
};

/* Results of ws_pyproc_detect() besides 0 and 1. */
#define WS_PYPROC_LATER (-EAGAIN)    /* a python file is mapped but could not be read yet */
#define WS_PYPROC_VERSION (-ENOTSUP) /* a CPython of a version without a layout here */

/*
 * Does the process @pid with maps @pm run CPython? 1 and *@out filled; 0: no mapping that can be
 * (none named python or libpython: the common case, no file is opened); or a negative
 * WS_PYPROC_* / errno. @live: @pid still runs those maps (its files are read through
 * /proc/PID/root).
 */
int ws_pyproc_detect(uint32_t pid, bool live, const struct ws_procmaps *pm, struct ws_py_info *out);

/* Could the maps text @text belong to a CPython process (a cheap test before parsing)? */
bool ws_pyproc_maybe(const char *text);

/*
 * Which files of @pm could hold the interpreter (ws_pyproc_detect() looks at them), as one hash:
 * a process whose answer was "not yet" is asked again only when it changed.
 */
uint64_t ws_pyproc_files_hash(const struct ws_procmaps *pm);

#endif
