/* SPDX-License-Identifier: MIT */
/*
 * Raw stack captures (WS_KIND_STACK_RAW) -> resolved frames (WS_KIND_STACK), as they arrive,
 * while the process lives: user stacks unwound with DWARF CFI (unwind.c), every address named
 * (symbols.c). One unwinder per process, kept until the process exits.
 */
#ifndef WS_STACKCAP_H
#define WS_STACKCAP_H

#include <stdbool.h>
#include <stdint.h>

#include <whyslow/stack.h>

struct ws_stackcap;

int ws_stackcap_new(struct ws_stackcap **out);
void ws_stackcap_free(struct ws_stackcap *sc);
/* Include file:line from debug info (slower the first time a library is met). Default on. */
void ws_stackcap_set_lines(struct ws_stackcap *sc, bool lines);

/*
 * Resolve the raw record @rec into a malloc'd WS_KIND_STACK record (same header, so the same
 * timestamp). 0, -EINVAL (malformed) or -ENOMEM.
 */
int ws_stackcap_resolve(struct ws_stackcap *sc, const struct ws_rec_hdr *rec,
			struct ws_rec_hdr **out);
/*
 * Keep a copy of @pid's /proc maps (call now and then for every traced process, with the
 * monotonic time): a process that exits before its stacks are read still unwinds with it.
 * A process is young for WS_STACKCAP_YOUNG_NS after it is first seen or seen to run a new
 * program (exec): read at every call for its first WS_STACKCAP_SETTLE_NS, then every
 * WS_STACKCAP_YOUNG_EVERY_NS; after that every WS_STACKCAP_REFRESH_NS. 1 when taken, 0 when not
 * due (or @pid still runs whyslow's own program), or a negative errno (-ENOENT: gone; what
 * was taken before is kept).
 */
#define WS_STACKCAP_YOUNG_NS 2000000000ULL
#define WS_STACKCAP_SETTLE_NS 100000000ULL
#define WS_STACKCAP_YOUNG_EVERY_NS 50000000ULL
#define WS_STACKCAP_REFRESH_NS 1000000000ULL
int ws_stackcap_snapshot(struct ws_stackcap *sc, uint32_t pid, uint64_t now);
/* Files whose symbols were not read (symfile.h), for the summary. */
struct ws_symfile_log;
const struct ws_symfile_log *ws_stackcap_refused(const struct ws_stackcap *sc);
/* Process @pid is gone: drop its unwinder and what its addresses were known as. */
void ws_stackcap_forget(struct ws_stackcap *sc, uint32_t pid);

#endif
