/* SPDX-License-Identifier: MIT */
#ifndef WS_FRAME_H
#define WS_FRAME_H

#include <stdint.h>

/* A resolved frame.  Strings belong to the ws_symbols that filled it and live as long as it. */
struct ws_frame {
	uint64_t ip;
	const char *sym;    /* NULL when no symbol covers ip */
	uint64_t off;	    /* from sym; without sym, ip in the module's own addresses
			     * (what objdump and addr2line take), or from the mapping's start */
	const char *module; /* file path, "[kernel]", "[MODNAME]" (a kernel module), the perf map
			     * ("/tmp/perf-PID.map"), "[anon]", "[vdso]"...; NULL: ip not mapped */
	const char *file;   /* source file, NULL without line info */
	uint32_t line;	    /* 0 without line info */
};

#endif
