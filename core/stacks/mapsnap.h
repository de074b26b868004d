/* SPDX-License-Identifier: MIT */
/*
 * Copies of the traced processes' /proc maps, so that a stack still unwinds and gets names after
 * its process exited: /proc/PID/maps of an exited process (a zombie too) reads empty, and a
 * stack is often resolved only after its short program is gone.
 *
 * The reader takes them as it polls (ws_mapsnap_take(), often while a process is young). It
 * cannot while it is busy resolving a stack (the first stack of a program can take a second:
 * kernel symbols, a library's debug info), so a watcher thread takes them meanwhile, from the
 * kernel's own set of traced processes (ws_mapsnap_watch()). Every call is thread-safe.
 */
#ifndef WS_MAPSNAP_H
#define WS_MAPSNAP_H

#include <stdbool.h>
#include <stdint.h>

#include "access/useropen.h"

struct ws_mapsnap;

/*
 * A process is young for WS_MAPSNAP_YOUNG_NS after it is first seen or seen to run a new program
 * (exec): its maps are read at every call for its first WS_MAPSNAP_SETTLE_NS (a program still
 * loading its libraries), then every WS_MAPSNAP_YOUNG_EVERY_NS; after that every
 * WS_MAPSNAP_REFRESH_NS. The reader polls at least every WS_MAPSNAP_POLL_NS while one is young.
 */
#define WS_MAPSNAP_YOUNG_NS 2000000000ULL
#define WS_MAPSNAP_SETTLE_NS 100000000ULL
#define WS_MAPSNAP_YOUNG_EVERY_NS 50000000ULL
#define WS_MAPSNAP_REFRESH_NS 1000000000ULL
#define WS_MAPSNAP_POLL_NS 5000000ULL

int ws_mapsnap_new(struct ws_mapsnap **out);
/*
 * Called after each snapshot is taken (@text: the maps just read; @live: @pid runs them; @id:
 * its user, NULL when unknown), by the reader or by the watcher, with the snapshots' lock held:
 * it must not call ws_mapsnap_*() itself.
 */
typedef void (*ws_mapsnap_hook)(void *ctx, uint32_t pid, const char *text, bool live,
				const struct ws_reader_id *id);
void ws_mapsnap_set_hook(struct ws_mapsnap *ms, ws_mapsnap_hook hook, void *ctx);
/*
 * Called by the watcher after each round it takes while the reader is busy (no lock held):
 * other work that must not wait for the reader.
 */
typedef void (*ws_mapsnap_busy_hook)(void *ctx);
void ws_mapsnap_set_busy_hook(struct ws_mapsnap *ms, ws_mapsnap_busy_hook hook, void *ctx);
/* Stops the watcher, if any. */
void ws_mapsnap_free(struct ws_mapsnap *ms);

/*
 * Read @pid's maps if due at monotonic time @now (young or not: above). 1 when taken, 0 when
 * not due (or @pid still runs whyslow's own program), or a negative errno (-ENOENT: gone; what
 * was taken before is kept).
 */
int ws_mapsnap_take(struct ws_mapsnap *ms, uint32_t pid, uint64_t now);
/* ws_mapsnap_take() of every young process known. */
void ws_mapsnap_take_young(struct ws_mapsnap *ms, uint64_t now);
/* Nanoseconds until a young process is due (at least WS_MAPSNAP_POLL_NS), or UINT64_MAX. */
uint64_t ws_mapsnap_due_in(struct ws_mapsnap *ms, uint64_t now);
void ws_mapsnap_forget(struct ws_mapsnap *ms, uint32_t pid);

/* What was last read of a process. */
struct ws_mapsnap_copy {
	char *text; /* malloc'd; NULL: nothing read yet */
	struct ws_reader_id id;
	bool have_id;	/* its user, read with the maps (unknown when it changed meanwhile) */
	bool syms_have; /* ws_mapsnap_syms_have() was called since @text was read */
};
/* A copy of @pid's last snapshot (*@out zeroed when there is none). 0 or -ENOMEM. */
int ws_mapsnap_get(struct ws_mapsnap *ms, uint32_t pid, struct ws_mapsnap_copy *out);
/* Whether there is one, without copying it. */
bool ws_mapsnap_has(struct ws_mapsnap *ms, uint32_t pid);
/* The symbols were given @pid's snapshot as it is now. */
void ws_mapsnap_syms_have(struct ws_mapsnap *ms, uint32_t pid);

/*
 * Start the watcher: while the reader is busy (ws_mapsnap_busy()) for longer than
 * WS_MAPSNAP_POLL_NS, it walks the BPF map of traced thread groups @tgids_fd every
 * WS_MAPSNAP_POLL_NS and takes what is due. 0 or -errno.
 */
int ws_mapsnap_watch(struct ws_mapsnap *ms, int tgids_fd);
void ws_mapsnap_busy(struct ws_mapsnap *ms, bool busy);

/* The program @pid runs now, as the inode of /proc/PID/exe; false when gone. */
bool ws_mapsnap_exe(uint32_t pid, uint64_t *dev, uint64_t *ino);

#endif
