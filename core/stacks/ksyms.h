/* SPDX-License-Identifier: MIT */
/* Kernel addresses to names, from /proc/kallsyms (read once, on first use). */
#ifndef WS_KSYMS_H
#define WS_KSYMS_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "frame.h"
#include "base/strpool.h"

struct ksym;

struct ws_ksyms {
	struct ksym *syms; /* by address */
	size_t n;
	char *text; /* the file, its names NUL-terminated in place */
	bool tried;
	const char *path; /* NULL: /proc/kallsyms (a test names another) */
	pthread_t loader; /* ws_ksyms_preload()'s, while @loading */
	bool loading;
};

/*
 * Read the file now in a thread of its own, so the first stack does not wait for it: a short
 * program's Python frames are named from its memory only while it lives, and the first stack's
 * kernel frames took ~200 ms (1.5 s under ASan) to name. 0 or a negative errno (then it is read
 * on first use, as without).
 */
int ws_ksyms_preload(struct ws_ksyms *k);

/*
 * Fill @out (module, and sym/off when a text symbol covers @look) for kernel address @ip;
 * @look is the address to look up (ip - 1 for a return address). Names come from @strs.
 */
void ws_ksyms_resolve(struct ws_ksyms *k, struct ws_strpool *strs, uint64_t ip, uint64_t look,
		      struct ws_frame *out);

void ws_ksyms_free(struct ws_ksyms *k);

#endif
