/* SPDX-License-Identifier: MIT */
/*
 * CPython frames as BPF recorded them (code object, instruction pointer) -> function, file and
 * line, read from the process's memory while it lives. That memory is the traced program's:
 * every object is read only from pages resident now (/proc/PID/pagemap, then one
 * process_vm_readv: no page fault, so a userfaultfd or FUSE page can never block the reader),
 * bounded in size, and taken only if its type is the interpreter's own (a code object's ob_type
 * is that process's &PyCode_Type, its strings' &PyUnicode_Type...). Anything else names the
 * frame "python frames unreadable", never another name. Code objects are cached per process
 * (they are immutable); a process's entries go when it exits or runs another program.
 */
#ifndef WS_PYFRAMES_H
#define WS_PYFRAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pyproc.h"

/* One named Python frame (its strings malloc'd: ws_pyframes_clear()). */
struct ws_pyframe {
	char *name;    /* co_qualname */
	char *file;    /* co_filename */
	uint32_t line; /* 0: not known */
	uint64_t code; /* the code object's address */
	uint64_t off;  /* the instruction's byte offset in the code */
	bool entry;    /* the outermost frame of its _PyEval_EvalFrameDefault call */
};

struct ws_pyframes;

int ws_pyframes_new(struct ws_pyframes **out);
void ws_pyframes_free(struct ws_pyframes *c);
/* Drop what is known of @pid's code objects. */
void ws_pyframes_forget(struct ws_pyframes *c, uint32_t pid);

/*
 * Name the frames of @raw (captured in process @pid, described by @info) into @out, at most
 * @max, innermost first, C shim frames left out. Returns how many, or a negative errno when
 * one of them cannot be named (-EFAULT: unreadable or not of its type; -ENOMEM): then none is.
 */
int ws_pyframes_resolve(struct ws_pyframes *c, uint32_t pid, const struct ws_py_info *info,
			const struct ws_py_raw *raw, struct ws_pyframe *out, int max);
/* Read code object @code of @pid into the cache now (validated as for a frame). 0 or -EFAULT. */
int ws_pyframes_warm(struct ws_pyframes *c, uint32_t pid, const struct ws_py_info *info,
		     uint64_t code);
/* Free the strings of @n frames of @f. */
void ws_pyframes_clear(struct ws_pyframe *f, int n);

/* Read @len bytes (at most 64 KiB) at @addr of @pid from resident pages only. 0 or -EFAULT. */
int ws_py_mem_read(uint32_t pid, uint64_t addr, void *buf, size_t len);

/*
 * The source line of the instruction at byte offset @addrq of a code object whose first line is
 * @firstlineno and whose co_linetable (PEP 626/657 location table, 3.11+) is @lt (@len bytes).
 * -1: no line (an instruction without one, or @addrq past the table). Negative @addrq (a frame
 * not started yet): @firstlineno.
 */
int ws_py_line(const uint8_t *lt, size_t len, int firstlineno, int addrq);

#endif
