/* SPDX-License-Identifier: MIT */
/*
 * Symbol names as a person reads them, the way perf prints them: C++ names (Itanium ABI,
 * "_Z...") and legacy Rust names ("_ZN...17h<16 hex>E", their hash left out as Rust's own
 * demangler does) demangled by the C++ runtime's __cxa_demangle, found at run time in
 * libstdc++.so.6 (installed wherever a C++ program is: apt itself needs it). Without it, or for
 * a name it cannot read, the name stays as it was.
 *
 * Each name is demangled once and kept (a stack's frames repeat across thousands of waits).
 * Not thread-safe: the report's output and the analysis call it from one thread.
 */
#ifndef WS_DEMANGLE_H
#define WS_DEMANGLE_H

#include <stddef.h>

/* The longest name given back, its NUL included: a longer one is cut and ends with "...". */
#define WS_DEMANGLE_MAX 512

/*
 * @sym demangled into @buf (@len bytes, at most WS_DEMANGLE_MAX used), and @buf returned; or
 * @sym itself when it is not a mangled name (or cannot be demangled). A symbol version
 * ("@@GLIBCXX_3.4") is kept after the demangled name. @sym NULL gives NULL.
 */
const char *ws_demangle(const char *sym, char *buf, size_t len);

/*
 * Tests: demangle with __cxa_demangle from @soname (NULL: from nowhere, every name stays as it
 * was); forgets every name kept. The default is "libstdc++.so.6", opened at the first mangled
 * name.
 */
void ws_demangle_use(const char *soname);

#endif
