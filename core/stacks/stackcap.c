// SPDX-License-Identifier: MIT
#include <bpf/bpf.h>
#include <errno.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

#include "stackcap.h"
#include "mapsnap.h"
#include "procmaps.h"
#include "pyproc.h"
#include "pystack.h"
#include "stackrec.h"
#include "symbols.h"
#include "symfile.h"
#include "unwind.h"
#include "base/clock.h"
#include "base/syscall_fmt.h"
#include "base/util.h"

/* processes kept open at once; the oldest goes first */
#define UNWINDERS 64
/* frames of the capture on top of current's kernel stack, at most */
#define TOOL_FRAMES 8

#define NOT_PY_SLOTS 64
#define NOT_PY_NS 1000000000ULL /* a process's maps are read again for a lock after this */

struct unwinder_slot {
	uint32_t pid;
	uint64_t used;
	struct ws_unwinder *u;
	uint64_t exe_dev, exe_ino; /* the program it was made for (an exec changes it) */
	bool from_snapshot;	   /* made from the maps last read, its process gone */
};

struct ws_stackcap {
	struct ws_symbols *syms;
	struct unwinder_slot slots[UNWINDERS];
	uint64_t clock;
	struct ws_mapsnap *maps; /* its maps: what its stacks unwind with once it is gone */
	struct ws_useropen *uo;
	struct ws_symfile_log refused;
	struct ws_pystack *py; /* which processes run CPython; their frames */
	ws_stackcap_py_cb py_cb;
	void *py_ctx;
	uint32_t py_now_pid; /* the process ws_stackcap_python_now() last checked */
	int py_codes_fd;     /* BPF's ws_py_codes, or -1 */
	/* processes whose maps named no python file when a lock was last asked about, and when:
	 * their next words are answered without reading their maps again for a while */
	struct {
		uint32_t pid;
		uint64_t at;
	} not_py[NOT_PY_SLOTS];
	unsigned int not_py_next;
};

int ws_stackcap_snapshot(struct ws_stackcap *sc, uint32_t pid, uint64_t now)
{
	return ws_mapsnap_take(sc->maps, pid, now);
}

uint64_t ws_stackcap_due_in(const struct ws_stackcap *sc, uint64_t now)
{
	return sc ? ws_mapsnap_due_in(sc->maps, now) : UINT64_MAX;
}

void ws_stackcap_snapshot_young(struct ws_stackcap *sc, uint64_t now)
{
	ws_mapsnap_take_young(sc->maps, now);
}

int ws_stackcap_watch(struct ws_stackcap *sc, int tgids_fd)
{
	return ws_mapsnap_watch(sc->maps, tgids_fd);
}

int ws_stackcap_new(struct ws_stackcap **out)
{
	struct ws_stackcap *sc = calloc(1, sizeof(*sc));
	int err;

	if (!sc)
		return -ENOMEM;
	sc->py_codes_fd = -1;
	if ((err = ws_symbols_new(&sc->syms))) {
		free(sc);
		return err;
	}
	if ((err = ws_useropen_new(&sc->uo)) || (err = ws_mapsnap_new(&sc->maps)) ||
	    (err = ws_pystack_new(&sc->py))) {
		ws_mapsnap_free(sc->maps);
		ws_useropen_free(sc->uo);
		ws_symbols_free(sc->syms);
		free(sc);
		return err;
	}
	*out = sc;
	return 0;
}

void ws_stackcap_free(struct ws_stackcap *sc)
{
	if (!sc)
		return;
	ws_mapsnap_free(sc->maps);
	ws_pystack_free(sc->py);
	for (int i = 0; i < UNWINDERS; i++)
		ws_unwinder_free(sc->slots[i].u);
	ws_symbols_free(sc->syms);
	ws_useropen_free(sc->uo);
	ws_symfile_log_free(&sc->refused);
	free(sc);
}

void ws_stackcap_set_lines(struct ws_stackcap *sc, bool lines)
{
	ws_symbols_set_lines(sc->syms, lines);
}

int ws_stackcap_preload(struct ws_stackcap *sc, const struct ws_reader_id *id)
{
	/* forks first, while this process is small */
	ws_useropen_prepare(sc->uo, id);
	ws_pystack_prepare(sc->py, id);
	return ws_symbols_preload_kernel(sc->syms);
}

bool ws_stackcap_forget(struct ws_stackcap *sc, uint32_t pid)
{
	for (int i = 0; i < UNWINDERS; i++) {
		if (sc->slots[i].u && sc->slots[i].pid == pid) {
			ws_unwinder_free(sc->slots[i].u);
			memset(&sc->slots[i], 0, sizeof(sc->slots[i]));
		}
	}
	ws_symbols_forget(sc->syms, pid);
	ws_mapsnap_forget(sc->maps, pid);
	return ws_pystack_forget(sc->py, pid);
}

static bool live_maps(uint32_t pid)
{
	char *text = NULL;
	bool some = !ws_procmaps_read_text(pid, &text) && text && *text;

	free(text);
	return some;
}

/* An unwinder for @pid from its last maps snapshot (its symbols given them too), or NULL. */
static struct ws_unwinder *snapshot_unwinder(struct ws_stackcap *sc, uint32_t pid)
{
	struct ws_unwinder *u = NULL;
	struct ws_mapsnap_copy sn;

	if (ws_mapsnap_get(sc->maps, pid, &sn) || !sn.text || ws_unwinder_new(pid, sn.text, &u)) {
		free(sn.text);
		return NULL;
	}
	if (!ws_symbols_set_maps(sc->syms, pid, sn.text))
		ws_mapsnap_syms_have(sc->maps, pid);
	free(sn.text);
	return u;
}

static struct ws_unwinder *unwinder_of(struct ws_stackcap *sc, uint32_t pid)
{
	struct unwinder_slot *victim = &sc->slots[0];
	uint64_t dev = 0, ino = 0;
	bool live = ws_mapsnap_exe(pid, &dev, &ino);

	for (int i = 0; i < UNWINDERS; i++) {
		struct unwinder_slot *s = &sc->slots[i];

		if (s->u && s->pid == pid) {
			/* the process exec()ed since (the first stack of a command whyslow runs
			 * is often its wait before exec): its modules and names are others now */
			if (live && (s->exe_dev != dev || s->exe_ino != ino)) {
				ws_unwinder_free(s->u);
				memset(s, 0, sizeof(*s));
				ws_symbols_forget(sc->syms, pid);
				victim = s;
				break;
			}
			s->used = ++sc->clock;
			return s->u;
		}
		if (!s->u || s->used < victim->used)
			victim = s;
	}
	ws_unwinder_free(victim->u);
	memset(victim, 0, sizeof(*victim));
	/* a process that has exited (a zombie too: its maps read empty) unwinds with its last
	 * snapshot, for the unwinder and for the names */
	if (!live_maps(pid) || ws_unwinder_new(pid, NULL, &victim->u)) {
		if (!(victim->u = snapshot_unwinder(sc, pid)))
			return NULL;
		victim->from_snapshot = true;
	}
	victim->pid = pid;
	victim->used = ++sc->clock;
	victim->exe_dev = dev;
	victim->exe_ino = ino;
	return victim->u;
}

/*
 * @pid's unwinder made again from its last maps snapshot, when the one made while it lived
 * could not unwind a stack and it has exited since; NULL when there is nothing better to try.
 * Under load every stack of a short program came out "could not be unwound" this way: its
 * unwinder was made while it ran, asked only after it exited, and failed to find a single
 * module's file then (libdwfl); one made from the snapshot, as for a process found gone
 * (unwinder_of), unwinds them.
 */
static struct ws_unwinder *unwinder_again(struct ws_stackcap *sc, uint32_t pid)
{
	struct unwinder_slot *s = NULL;
	struct ws_unwinder *u;

	for (int i = 0; i < UNWINDERS && !s; i++)
		if (sc->slots[i].u && sc->slots[i].pid == pid)
			s = &sc->slots[i];
	if (!s || s->from_snapshot || live_maps(pid) || !(u = snapshot_unwinder(sc, pid)))
		return NULL;
	ws_unwinder_free(s->u);
	s->u = u;
	s->from_snapshot = true;
	return u;
}

static void regs_of(const struct ws_rec_stack_raw *r, struct ws_uregs *u)
{
	memset(u, 0, sizeof(*u));
	u->arch = r->uregs.arch == WS_ARCH_ARM64 ? WS_UNWIND_ARCH_ARM64 : WS_UNWIND_ARCH_X86_64;
	u->pc = r->uregs.pc;
	u->sp = r->uregs.sp;
	u->fp = r->uregs.fp;
	u->lr = r->uregs.lr;
	memcpy(u->callee, r->uregs.callee, sizeof(u->callee));
	/* the record's valid bits are the unwinder's, role for role */
	u->valid = r->uregs.valid;
}

/* Copy the strings of @f into @pool (the symbol table's strings may move or go). */
static int keep_frame(struct ws_sframe *dst, const struct ws_frame *f, bool kernel)
{
	dst->f = *f;
	dst->kernel = kernel;
	dst->python = false;
	dst->f.sym = f->sym ? strdup(f->sym) : NULL;
	dst->f.module = f->module ? strdup(f->module) : NULL;
	dst->f.file = f->file ? strdup(f->file) : NULL;
	if ((f->sym && !dst->f.sym) || (f->module && !dst->f.module) || (f->file && !dst->f.file))
		return -ENOMEM;
	return 0;
}

static void drop_frames(struct ws_sframe *fr, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		free((char *)fr[i].f.sym);
		free((char *)fr[i].f.module);
		free((char *)fr[i].f.file);
	}
}

/* The file the waiter's fd named, read now while the process lives: the fd, or -1. */
static int fd_path(const struct ws_rec_stack_raw *r, char *buf, size_t len)
{
	char link[64];
	int fd = r->role == WS_STACK_WAITER ? ws_syscall_fd(&r->sys) : -1;
	ssize_t n;

	if (fd < 0)
		return -1;
	snprintf(link, sizeof(link), "/proc/%u/fd/%d", r->pid, fd);
	n = readlink(link, buf, len - 1);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	return fd;
}

const struct ws_symfile_log *ws_stackcap_refused(const struct ws_stackcap *sc)
{
	return &sc->refused;
}

static int resolve(struct ws_stackcap *sc, const struct ws_rec_hdr *rec, struct ws_stack **out);

/*
 * Whose credentials @pid's files are opened with: its snapshot's, kept fresh with its maps (an
 * exec makes it young again), not a read of /proc at every stack; read now without one. NULL:
 * not known.
 */
static const struct ws_reader_id *user_of(struct ws_stackcap *sc, uint32_t pid,
					  struct ws_reader_id *id)
{
	struct ws_mapsnap_copy c;
	bool have = !ws_mapsnap_get(sc->maps, pid, &c) && c.text;

	free(c.text);
	if (have && c.have_id)
		*id = c.id;
	else if (have || ws_reader_id_of((pid_t)pid, id))
		return NULL;
	return id;
}

void ws_stackcap_prefetch(struct ws_stackcap *sc, const struct ws_rec_hdr *rec)
{
	const struct ws_rec_stack_raw *r = (const void *)rec;

	if (rec->size < sizeof(*r))
		return;
	if (!ws_mapsnap_has(sc->maps, r->pid))
		ws_mapsnap_take(sc->maps, r->pid, ws_clock_mono_now());
	if (r->py.state != WS_PY_NONE && r->py.n <= WS_PY_MAX_FRAMES)
		ws_pystack_prefetch(sc->py, r->pid, &r->py);
}

/*
 * The files @rec's process names are opened with its user's credentials: read now while it
 * lives, or as they were when its maps were last read.
 */
int ws_stackcap_resolve(struct ws_stackcap *sc, const struct ws_rec_hdr *rec, struct ws_stack **out)
{
	const struct ws_rec_stack_raw *r = (const void *)rec;
	struct ws_symfile_ctx ctx = { .uo = sc->uo, .log = &sc->refused };
	const struct ws_symfile_ctx *prev;
	struct ws_reader_id id;
	int err;

	if (rec->size >= sizeof(*r)) {
		/* its maps from its first stack on, while it lives: a later stack of it (the user
		 * half of this one) may come after it exited */
		if (!ws_mapsnap_has(sc->maps, r->pid))
			ws_mapsnap_take(sc->maps, r->pid, ws_clock_mono_now());
		ctx.id = user_of(sc, r->pid, &id);
	}
	prev = ws_symfile_use(&ctx);
	/* the first stacks of a program may take long (kernel symbols, debug info): the watcher
	 * reads the maps of new processes meanwhile */
	ws_mapsnap_busy(sc->maps, true);
	err = resolve(sc, rec, out);
	ws_mapsnap_busy(sc->maps, false);
	ws_symfile_use(prev);
	return err;
}

static bool named(const struct ws_sframe *fr, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		if (!fr[i].f.module)
			return false;
	return true;
}

/*
 * Name the unwound pcs @uf into @fr (*@n of them). The symbols read the process's maps
 * themselves the first time they meet it: if it was gone by then (it exited while its first
 * stack was unwound) they have none, and its snapshot names the frames instead.
 */
static int user_frames(struct ws_stackcap *sc, uint32_t pid, const struct ws_uframe *uf,
		       uint32_t nuf, struct ws_sframe *fr, uint32_t *n)
{
	struct ws_mapsnap_copy sn;
	struct ws_frame f;
	uint32_t first = *n;
	int err = 0;

	for (int pass = 0; pass < 2; pass++) {
		for (uint32_t i = 0; i < nuf && *n < WS_STACK_MAX_FRAMES && !err; i++) {
			bool ret = i > 0 && !(uf[i].flags & WS_UFRAME_ACTIVATION);

			err = ws_symbols_resolve(sc->syms, pid, uf[i].pc, ret, &f);
			if (!err)
				err = keep_frame(&fr[(*n)++], &f, false);
		}
		if (err || named(&fr[first], *n - first) || pass || live_maps(pid))
			return err;
		if (ws_mapsnap_get(sc->maps, pid, &sn) || !sn.text || sn.syms_have) {
			free(sn.text);
			return 0;
		}
		if (!ws_symbols_set_maps(sc->syms, pid, sn.text))
			ws_mapsnap_syms_have(sc->maps, pid);
		free(sn.text);
		drop_frames(&fr[first], *n - first);
		*n = first;
	}
	return err;
}

static int resolve(struct ws_stackcap *sc, const struct ws_rec_hdr *rec, struct ws_stack **out)
{
	const struct ws_rec_stack_raw *r = (const void *)rec;
	struct ws_sframe fr[WS_STACK_MAX_FRAMES], hfr[WS_PY_MAX_FRAMES + 1];
	struct ws_uframe uf[WS_UNWIND_DEFAULT_FRAMES];
	struct ws_stack st = { 0 };
	char path[256];
	struct ws_frame f;
	uint32_t n = 0, kfirst, skip = 0;
	int err = 0;

	*out = NULL;
	if (rec->size < sizeof(*r) || rec->size < sizeof(*r) + r->ulen ||
	    r->nkframes > WS_STACK_KFRAMES ||
	    (r->role != WS_STACK_WAITER && r->role != WS_STACK_WAKER))
		return -EINVAL;
	st.tid = r->tid;
	st.pid = r->pid;
	st.wait_tid = r->wait_tid;
	st.role = r->role;
	st.wait_start = r->wait_start;
	st.wait_end = r->wait_end;
	st.fd = fd_path(r, path, sizeof(path));
	st.path = st.fd >= 0 ? path : NULL;
	/* the GIL as a waiter read it when its wait ended: who held what it may have waited for */
	if (r->role == WS_STACK_WAITER && r->py.gil <= WS_GIL_ELSEWHERE) {
		st.gil = r->py.gil;
		st.gil_holder = r->py.gil == WS_GIL_HELD ? r->py.gil_holder : 0;
	}
	/* and the holder's Python frames: named first too, while its code objects are there */
	if (st.gil == WS_GIL_HELD && r->holder_py.state != WS_PY_NONE)
		ws_pystack_prefetch(sc->py, r->pid, &r->holder_py);
	/* its Python code objects first: named from its memory, which goes when it exits */
	if (r->py.state != WS_PY_NONE)
		ws_pystack_prefetch(sc->py, r->pid, &r->py);
	if ((r->uregs.valid & (WS_SREG_PC | WS_SREG_SP)) == (WS_SREG_PC | WS_SREG_SP)) {
		struct ws_unwinder *u = unwinder_of(sc, r->pid);
		struct ws_unwind_opts o = { .max_frames = WS_UNWIND_DEFAULT_FRAMES };
		struct ws_unwind_result res = { .frames = uf };
		struct ws_ustack us = { .addr = r->uregs.sp, .data = r->ustack, .len = r->ulen };
		struct ws_uregs regs;
		bool unwound;

		regs_of(r, &regs);
		unwound = u && !ws_unwind(u, r->tid, &regs, &us, &o, &res);
		if (!unwound && u && (u = unwinder_again(sc, r->pid)) != NULL) {
			res = (struct ws_unwind_result){ .frames = uf };
			unwound = !ws_unwind(u, r->tid, &regs, &us, &o, &res);
		}
		if (unwound) {
			st.ustop = res.stop + 1;
			err = user_frames(sc, r->pid, uf, res.n, fr, &n);
		} else {
			st.nouser = !u && !ws_mapsnap_has(sc->maps, r->pid) && !live_maps(r->pid)
					    ? WS_NOUSER_EXITED
					    : WS_NOUSER_UNWIND;
		}
	} else {
		/* a kernel half (0: its user half follows), or a note saying why none comes */
		st.nouser = r->uregs.nouser;
	}
	/* its Python frames in place of the interpreter's, kernel frames keeping their room */
	if (!err && r->py.state != WS_PY_NONE)
		err = ws_pystack_merge(sc->py, r->pid, &r->py, fr, &n,
				       WS_STACK_MAX_FRAMES - WS_STACK_KFRAMES);
	kfirst = n;
	for (uint32_t i = 0; i < r->nkframes && n < WS_STACK_MAX_FRAMES && !err; i++) {
		/* every kernel address of a task's stack is a return address */
		err = ws_symbols_resolve(sc->syms, r->pid, r->kframes[i], true, &f);
		if (!err)
			err = keep_frame(&fr[n++], &f, true);
	}
	/* current's own kernel stack begins with the capture itself (helper, BPF program,
	 * tracepoint): those frames are whyslow's, not the waker's */
	for (uint32_t i = kfirst; !err && i < n && i < kfirst + TOOL_FRAMES; i++)
		if (fr[i].f.sym && !strncmp(fr[i].f.sym, "__traceiter_", 12))
			skip = i + 1 - kfirst;
	if (skip) {
		drop_frames(&fr[kfirst], skip);
		memmove(&fr[kfirst], &fr[kfirst + skip], (n - kfirst - skip) * sizeof(fr[0]));
		n -= skip;
	}
	st.n = n;
	st.frames = fr;
	/* the holder's frames are Python only: merged into no native frame, all of them */
	if (!err && st.gil == WS_GIL_HELD && r->holder_py.state != WS_PY_NONE) {
		err = ws_pystack_merge(sc->py, r->pid, &r->holder_py, hfr, &st.nholder,
				       WS_PY_MAX_FRAMES + 1);
		st.holder = hfr;
	}
	/* the frames' strings are the symbol tables' copies: one block of its own to keep */
	if (!err)
		err = ws_stack_dup(&st, out);
	drop_frames(fr, n);
	drop_frames(hfr, st.nholder);
	return err;
}

int ws_stackcap_data_name(struct ws_stackcap *sc, uint32_t pid, uint64_t addr, char *buf,
			  size_t len)
{
	struct ws_symfile_ctx ctx = { .uo = sc->uo, .log = &sc->refused };
	const struct ws_symfile_ctx *prev;
	struct ws_mapsnap_copy sn;
	struct ws_reader_id id;
	const char *sym;
	uint64_t off;
	int err;

	/* its files are opened with its user's credentials, as for its stacks */
	ctx.id = user_of(sc, pid, &id);
	prev = ws_symfile_use(&ctx);
	err = ws_symbols_data(sc->syms, pid, addr, &sym, &off);
	/* gone before its maps were read: the last ones saved */
	if (err == -ESRCH && !ws_mapsnap_get(sc->maps, pid, &sn)) {
		if (sn.text && ws_symbols_set_maps(sc->syms, pid, sn.text) == 0)
			err = ws_symbols_data(sc->syms, pid, addr, &sym, &off);
		free(sn.text);
	}
	ws_symfile_use(prev);
	if (err)
		return err == -ENOMEM ? err : 0;
	return ws_data_name_format(sym, off, buf, len);
}

/* A process's maps were just read (mapsnap.h hook, any thread): does it run CPython? */
static void maps_taken(void *ctx, uint32_t pid, const char *text, bool live,
		       const struct ws_reader_id *id)
{
	struct ws_stackcap *sc = ctx;
	struct ws_py_proc pp;
	int how = ws_pystack_check(sc->py, pid, text, live, id, &pp);

	if (!sc->py_cb)
		return;
	if (how == WS_PYSTACK_FOUND)
		sc->py_cb(sc->py_ctx, pid, &pp);
	else if (how == WS_PYSTACK_GONE)
		sc->py_cb(sc->py_ctx, pid, NULL);
}

/* At most this many per round of the watcher (each is a few syscalls). */
#define PY_CODES_PER_ROUND 256

/* The watcher's busy hook: name the code objects BPF listed, and take them off the list. */
static void python_codes_named(void *ctx)
{
	struct ws_stackcap *sc = ctx;
	struct ws_py_code_key key;

	for (int i = 0; i < PY_CODES_PER_ROUND; i++) {
		if (bpf_map_get_next_key(sc->py_codes_fd, NULL, &key))
			break;
		ws_pystack_warm(sc->py, key.pid, key.code);
		bpf_map_delete_elem(sc->py_codes_fd, &key);
	}
}

void ws_stackcap_name_python_codes(struct ws_stackcap *sc)
{
	if (sc && sc->py_codes_fd >= 0)
		python_codes_named(sc);
}

void ws_stackcap_watch_python_codes(struct ws_stackcap *sc, int codes_fd)
{
	sc->py_codes_fd = codes_fd;
	ws_mapsnap_set_busy_hook(sc->maps, codes_fd >= 0 ? python_codes_named : NULL, sc);
}

int ws_stackcap_lock_name(struct ws_stackcap *sc, uint32_t pid, uint64_t addr, char *buf,
			  size_t len)
{
	struct ws_mapsnap_copy sn = { 0 };
	struct ws_reader_id id;
	int ret = ws_pystack_lock(sc->py, pid, addr, buf, len);
	uint64_t now = ws_clock_mono_now();
	char *text = NULL;

	/* a process already known to run CPython: its answer stands (reading its maps again could
	 * only lose it, e.g. an exited one's read empty) */
	if (ret || ws_pystack_decided(sc->py, pid))
		return ret;
	for (unsigned int i = 0; i < NOT_PY_SLOTS; i++)
		if (sc->not_py[i].pid == pid && now - sc->not_py[i].at < NOT_PY_NS)
			return 0;
	/*
	 * Not known to run CPython (yet): a snapshot of its maps may predate its libpython, or
	 * none was taken (stacks off). Its maps now, else the last ones saved (it exited).
	 */
	if (!ws_procmaps_read_text(pid, &text) && text && *text) {
		maps_taken(sc, pid, text, true, ws_reader_id_of((pid_t)pid, &id) ? NULL : &id);
	} else if (!ws_mapsnap_get(sc->maps, pid, &sn) && sn.text) {
		free(text); /* an exited process's maps read empty */
		text = sn.text;
		maps_taken(sc, pid, text, false, sn.have_id ? &sn.id : NULL);
	}
	/* maps that name no python file: not asked again for a while (a process with many
	 * futex words would read its maps for each) */
	if (text && !ws_pyproc_maybe(text)) {
		sc->not_py[sc->not_py_next].pid = pid;
		sc->not_py[sc->not_py_next].at = now;
		sc->not_py_next = (sc->not_py_next + 1) % NOT_PY_SLOTS;
	}
	free(text);
	return ws_pystack_lock(sc->py, pid, addr, buf, len);
}

void ws_stackcap_on_python(struct ws_stackcap *sc, ws_stackcap_py_cb cb, void *ctx)
{
	sc->py_cb = cb;
	sc->py_ctx = ctx;
	ws_mapsnap_set_hook(sc->maps, cb ? maps_taken : NULL, sc);
}

void ws_stackcap_python_now(struct ws_stackcap *sc, struct ws_rec_stack_raw *r)
{
	struct ws_reader_id id;
	struct ws_py_proc pp;
	char *text = NULL;

	/* its maps once for all its threads (stuck reads them one after the other) */
	if (r->pid != sc->py_now_pid && !ws_procmaps_read_text(r->pid, &text) && text)
		ws_pystack_check(sc->py, r->pid, text, true,
				 ws_reader_id_of((pid_t)r->pid, &id) ? NULL : &id, &pp);
	free(text);
	sc->py_now_pid = r->pid;
	ws_pystack_walk_now(sc->py, r->pid, r->tid, &r->py);
}
