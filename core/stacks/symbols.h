/* SPDX-License-Identifier: MIT */
/*
 * Address -> symbol: ELF .symtab, else .dynsym (a stripped binary still exports its dynamic
 * symbols), with file:line from DWARF where a debug file is found (.gnu_debuglink, or the
 * build-id under /usr/lib/debug/.build-id); the kernel's /proc/kallsyms for kernel addresses;
 * /tmp/perf-PID.map for JIT and interpreted code.  ELF files are cached per build-id, so every
 * process that maps the same libc shares one.  An address no symbol provably covers is reported
 * as module+offset, never under a neighbour's name.
 */
#ifndef WS_SYMBOLS_H
#define WS_SYMBOLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "frame.h"

struct ws_symbols;

int ws_symbols_new(struct ws_symbols **out);
void ws_symbols_free(struct ws_symbols *s);

/* Look up file:line (default on).  The first address of a library with a debug file installed
 * decompresses its DWARF: ~0.7 s for glibc's here; names alone cost ~2 ms per file. */
void ws_symbols_set_lines(struct ws_symbols *s, bool lines);
/* Read the kernel's symbols now, in the background (ksyms.h: ws_ksyms_preload). */
int ws_symbols_preload_kernel(struct ws_symbols *s);

/* Where perf-PID.map files are looked for (default /tmp; a container's would be under
 * /proc/PID/root/tmp).  0 or -ENOMEM. */
int ws_symbols_set_perf_map_dir(struct ws_symbols *s, const char *dir);

/* Use @maps_text (saved /proc/PID/maps text) for @pid instead of reading /proc: a process that
 * has exited, or a recording.  Replaces what was known of @pid.  0 or a negative errno. */
int ws_symbols_set_maps(struct ws_symbols *s, pid_t pid, const char *maps_text);

/* Forget @pid (it exited; its pid may be reused).  The per-build-id ELF cache stays. */
void ws_symbols_forget(struct ws_symbols *s, pid_t pid);

/*
 * Resolve @ip of process @pid (ignored for kernel addresses) into @out.  @return_address: @ip is
 * a return address (every unwound frame but the first), so the call before it is looked up.
 * Returns 0 with @out filled — an unresolved address is a result, not an error (@out->sym NULL)
 * — or -ENOMEM.
 */
int ws_symbols_resolve(struct ws_symbols *s, pid_t pid, uint64_t ip, bool return_address,
		       struct ws_frame *out);

/*
 * The data object of process @pid that holds @addr (a global, a static, a library's data:
 * .data or .bss of a mapped ELF file, by its symbol table; a sized STT_OBJECT only, never a
 * neighbour's name) into *@sym (living as long as @s) and *@off (from its start). 0; -ENOENT
 * when no such object holds it (the heap, a stack, an unnamed static); -ESRCH when @pid's maps
 * are not known (it is gone: ws_symbols_set_maps() can give them); -ENOMEM.
 */
int ws_symbols_data(struct ws_symbols *s, pid_t pid, uint64_t addr, const char **sym,
		    uint64_t *off);

/*
 * A data object's name as the report prints it: "sym+0xoff", or "sym" at its start; demangled,
 * without its version, in @len bytes at most (a name too long is cut, "...", before the offset).
 * Returns the length written, 0 when @len has no room for it.
 */
int ws_data_name_format(const char *sym, uint64_t off, char *buf, size_t len);

#endif
