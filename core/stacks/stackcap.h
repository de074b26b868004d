/* SPDX-License-Identifier: MIT */
/*
 * Raw stack captures (WS_KIND_STACK_RAW) -> resolved frames (struct ws_stack), as they arrive,
 * while the process lives: user stacks unwound with DWARF CFI (unwind.c), every address named
 * (symbols.c). One unwinder per process, kept until the process exits.
 */
#ifndef WS_STACKCAP_H
#define WS_STACKCAP_H

#include <stdbool.h>
#include <stdint.h>

#include "capture.h"
#include "stackrec.h"
#include "access/useropen.h"

struct ws_stackcap;

int ws_stackcap_new(struct ws_stackcap **out);
void ws_stackcap_free(struct ws_stackcap *sc);
/* Include file:line from debug info (slower the first time a library is met). Default on. */
void ws_stackcap_set_lines(struct ws_stackcap *sc, bool lines);
/*
 * Start reading what every stack needs (the kernel's symbols) before the first one comes, and
 * the file openers' helpers for processes of user @id (NULL: none).
 */
int ws_stackcap_preload(struct ws_stackcap *sc, const struct ws_reader_id *id);

/*
 * Resolve the raw record @rec into a malloc'd stack (ws_stack_free()), as a recording of it
 * would give it back (ws_stack_dup(): ws_stackrec_encode() with @rec's header makes its
 * WS_KIND_STACK record). 0, -EINVAL (malformed) or -ENOMEM.
 */
/*
 * What of raw capture @rec goes when its process exits, read now: its maps if none were taken,
 * and its Python code objects' names (cheap). The caller may resolve it later in its batch.
 */
void ws_stackcap_prefetch(struct ws_stackcap *sc, const struct ws_rec_hdr *rec);
int ws_stackcap_resolve(struct ws_stackcap *sc, const struct ws_rec_hdr *rec,
			struct ws_stack **out);
/*
 * Keep a copy of @pid's /proc maps (call now and then for every traced process, with the
 * monotonic time): a process that exits before its stacks are read still unwinds with it.
 * When a copy is due: ws_mapsnap_take() (mapsnap.h). 1 when taken, 0 when not due (or @pid
 * still runs whyslow's own program), or a negative errno (-ENOENT: gone; what was taken before
 * is kept).
 */
int ws_stackcap_snapshot(struct ws_stackcap *sc, uint32_t pid, uint64_t now);
/*
 * Nanoseconds until a young process's maps are due again (at least WS_MAPSNAP_POLL_NS), or
 * UINT64_MAX: the reader's poll must not sleep longer, or a short program that exits meanwhile
 * leaves stacks that cannot be unwound.
 */
uint64_t ws_stackcap_due_in(const struct ws_stackcap *sc, uint64_t now);
/* ws_stackcap_snapshot() of every young process known, also those not passed in yet. */
void ws_stackcap_snapshot_young(struct ws_stackcap *sc, uint64_t now);
/*
 * Have a thread take the maps of the thread groups in BPF map @tgids_fd while a stack is being
 * resolved (the first ones of a program can take a second): mapsnap.h. 0 or -errno.
 */
int ws_stackcap_watch(struct ws_stackcap *sc, int tgids_fd);
/* Files whose symbols were not read (symfile.h), for the summary. */
struct ws_symfile_log;
const struct ws_symfile_log *ws_stackcap_refused(const struct ws_stackcap *sc);
/*
 * Have @cb called whenever a process whose maps are read (ws_stackcap_snapshot(), the watcher)
 * is found to run CPython (pystack.h: @proc, to write into the BPF map ws_py_procs under @pid)
 * or no longer does (@proc NULL: delete it). From the reader's thread or the watcher's, with
 * the snapshots' lock held: @cb must be quick and call nothing of this module.
 */
struct ws_py_proc;
/*
 * For a stack read from /proc (stuck, open waits): if @r's process runs CPython, walk its
 * thread's Python frames now into @r->py (the thread is asleep: its chain does not move), for
 * ws_stackcap_resolve() to merge.
 */
void ws_stackcap_python_now(struct ws_stackcap *sc, struct ws_rec_stack_raw *r);
typedef void (*ws_stackcap_py_cb)(void *ctx, uint32_t pid, const struct ws_py_proc *proc);
/*
 * BPF's ws_py_codes map (pycapture.h): while the reader is busy, the maps watcher names the
 * code objects listed there, so captures still in the ring find them named.
 */
void ws_stackcap_watch_python_codes(struct ws_stackcap *sc, int codes_fd);
/* Name the code objects listed there now (the reader, before it reads the ring). */
void ws_stackcap_name_python_codes(struct ws_stackcap *sc);
void ws_stackcap_on_python(struct ws_stackcap *sc, ws_stackcap_py_cb cb, void *ctx);
/* Process @pid is gone: drop its unwinder and what its addresses were known as. True if it was
 * known to run CPython (ws_stackcap_on_python()). */
bool ws_stackcap_forget(struct ws_stackcap *sc, uint32_t pid);
/*
 * The data object of @pid that holds @addr, as "sym+0xoff" into @buf (symbols.h,
 * ws_symbols_data): read from its files as its user, from its last saved maps once it is gone.
 * Returns the length written, 0 when no object is known to hold it, or -ENOMEM.
 */
int ws_stackcap_data_name(struct ws_stackcap *sc, uint32_t pid, uint64_t addr, char *buf,
			  size_t len);
/*
 * The lock a language runtime of @pid keeps at futex word @addr: WS_PYSTACK_LOCK_GIL and its
 * name in @buf ("the GIL (python3.11 pid 4821)", pystack.h), or 0 when none is known there.
 */
int ws_stackcap_lock_name(struct ws_stackcap *sc, uint32_t pid, uint64_t addr, char *buf,
			  size_t len);

#endif
