// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

#include "procmaps.h"
#include "stackcap.h"
#include "syscall_fmt.h"
#include "stackrec.h"
#include "symbols.h"
#include "symfile.h"
#include "unwind.h"
#include "util.h"

/* processes kept open at once; the oldest goes first */
#define UNWINDERS 64
/* frames of the capture on top of current's kernel stack, at most */
#define TOOL_FRAMES 8

struct unwinder_slot {
	uint32_t pid;
	uint64_t used;
	struct ws_unwinder *u;
	uint64_t exe_dev, exe_ino; /* the program it was made for (an exec changes it) */
};

/* The program @pid runs now, as the inode of /proc/PID/exe; false when gone. */
static bool exe_of(uint32_t pid, uint64_t *dev, uint64_t *ino)
{
	char path[48];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%u/exe", pid);
	if (stat(path, &st))
		return false;
	*dev = st.st_dev;
	*ino = st.st_ino;
	return true;
}

/* The last maps text read of a traced process: what its stacks unwind with once it is gone. */
struct snapshot {
	uint32_t pid;
	uint64_t first_ns, taken_ns; /* first seen (or seen to exec), last read (or tried) */
	uint64_t exe_dev, exe_ino;   /* the program it runs */
	char *text;
	struct ws_reader_id id; /* its user's credentials, read with the maps: files it names are
				 * opened with these, also once it is gone */
	bool have_id;
};

struct ws_stackcap {
	struct ws_symbols *syms;
	struct unwinder_slot slots[UNWINDERS];
	uint64_t clock;
	struct snapshot *snaps;
	size_t nsnaps, snaps_cap;
	bool self_known; /* whyslow's own program, to tell a command not exec()ed yet */
	uint64_t self_dev, self_ino;
	struct ws_useropen *uo;
	struct ws_symfile_log refused;
};

static struct snapshot *snapshot_of(struct ws_stackcap *sc, uint32_t pid)
{
	for (size_t i = 0; i < sc->nsnaps; i++)
		if (sc->snaps[i].pid == pid)
			return &sc->snaps[i];
	return NULL;
}

int ws_stackcap_snapshot(struct ws_stackcap *sc, uint32_t pid, uint64_t now)
{
	struct snapshot *sn = snapshot_of(sc, pid);
	uint64_t dev = 0, ino = 0;
	struct ws_reader_id id, id2;
	char *text;
	bool live, exec, id_ok;
	int err;

	/* past start-up maps change rarely: once a second, not even a stat before */
	if (sn && now - sn->first_ns >= WS_STACKCAP_YOUNG_NS &&
	    now - sn->taken_ns < WS_STACKCAP_REFRESH_NS)
		return 0;
	/* a command `whyslow run` started that has not exec()ed yet is a copy of whyslow: its
	 * maps would name whyslow's code, never the program's */
	live = exe_of(pid, &dev, &ino);
	if (live && sc->self_known && dev == sc->self_dev && ino == sc->self_ino)
		return 0;
	/* a program that cannot be stat'ed (a zombie; a FUSE mount) is not a new one */
	exec = sn && live && (dev != sn->exe_dev || ino != sn->exe_ino);
	/*
	 * A young process (a short program may be gone before its first stack is read) at every
	 * poll while its program's libraries are being mapped (after its exec, or first sight),
	 * then every 50 ms. Not every poll throughout: a busy ring wakes the reader hundreds of
	 * times a second, and a database's new connections cost a read of each one's maps every
	 * time (~1,800 reads in a 20 s pgbench run, as much reader time as the unwinding).
	 */
	if (sn && !exec && now - sn->first_ns >= WS_STACKCAP_SETTLE_NS &&
	    now - sn->taken_ns < WS_STACKCAP_YOUNG_EVERY_NS)
		return 0;
	/* the user before and after the maps: an exec of a set-user-ID program between the two
	 * would pair root's permissions with the paths the user's program named */
	id_ok = ws_reader_id_of((pid_t)pid, &id) == 0;
	if ((err = ws_procmaps_read_text(pid, &text)))
		return err;
	id_ok = id_ok && ws_reader_id_of((pid_t)pid, &id2) == 0 && !memcmp(&id, &id2, sizeof(id));
	if (!*text) { /* exited, not yet reaped: keep what was read before, try again when due */
		free(text);
		if (sn)
			sn->taken_ns = now;
		return -ENOENT;
	}
	if (!sn) {
		if (ws_grow((void **)&sc->snaps, &sc->snaps_cap, sc->nsnaps + 1,
			    sizeof(*sc->snaps))) {
			free(text);
			return -ENOMEM;
		}
		sn = &sc->snaps[sc->nsnaps++];
		sn->pid = pid;
		sn->first_ns = now;
		sn->exe_dev = dev;
		sn->exe_ino = ino;
		sn->text = NULL;
	}
	if (exec) { /* young again: its new program's libraries are being mapped */
		sn->first_ns = now;
		sn->exe_dev = dev;
		sn->exe_ino = ino;
	}
	free(sn->text);
	sn->text = text;
	sn->taken_ns = now;
	/* unknown when it changed meanwhile: then files are opened as nobody */
	sn->have_id = id_ok;
	if (id_ok)
		sn->id = id;
	return 1;
}

int ws_stackcap_new(struct ws_stackcap **out)
{
	struct ws_stackcap *sc = calloc(1, sizeof(*sc));
	int err;

	if (!sc)
		return -ENOMEM;
	if ((err = ws_symbols_new(&sc->syms))) {
		free(sc);
		return err;
	}
	if ((err = ws_useropen_new(&sc->uo))) {
		ws_symbols_free(sc->syms);
		free(sc);
		return err;
	}
	sc->self_known = exe_of(getpid(), &sc->self_dev, &sc->self_ino);
	*out = sc;
	return 0;
}

void ws_stackcap_free(struct ws_stackcap *sc)
{
	if (!sc)
		return;
	for (int i = 0; i < UNWINDERS; i++)
		ws_unwinder_free(sc->slots[i].u);
	for (size_t i = 0; i < sc->nsnaps; i++)
		free(sc->snaps[i].text);
	free(sc->snaps);
	ws_symbols_free(sc->syms);
	ws_useropen_free(sc->uo);
	ws_symfile_log_free(&sc->refused);
	free(sc);
}

void ws_stackcap_set_lines(struct ws_stackcap *sc, bool lines)
{
	ws_symbols_set_lines(sc->syms, lines);
}

void ws_stackcap_forget(struct ws_stackcap *sc, uint32_t pid)
{
	for (int i = 0; i < UNWINDERS; i++) {
		if (sc->slots[i].u && sc->slots[i].pid == pid) {
			ws_unwinder_free(sc->slots[i].u);
			memset(&sc->slots[i], 0, sizeof(sc->slots[i]));
		}
	}
	ws_symbols_forget(sc->syms, pid);
	for (size_t i = 0; i < sc->nsnaps; i++) {
		if (sc->snaps[i].pid == pid) {
			free(sc->snaps[i].text);
			sc->snaps[i] = sc->snaps[--sc->nsnaps];
			break;
		}
	}
}

static bool live_maps(uint32_t pid)
{
	char *text = NULL;
	bool some = !ws_procmaps_read_text(pid, &text) && text && *text;

	free(text);
	return some;
}

static struct ws_unwinder *unwinder_of(struct ws_stackcap *sc, uint32_t pid)
{
	struct unwinder_slot *victim = &sc->slots[0];
	uint64_t dev = 0, ino = 0;
	bool live = exe_of(pid, &dev, &ino);

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
		struct snapshot *sn = snapshot_of(sc, pid);

		if (!sn || ws_unwinder_new(pid, sn->text, &victim->u))
			return NULL;
		ws_symbols_set_maps(sc->syms, pid, sn->text);
	}
	victim->pid = pid;
	victim->used = ++sc->clock;
	victim->exe_dev = dev;
	victim->exe_ino = ino;
	return victim->u;
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

static int resolve(struct ws_stackcap *sc, const struct ws_rec_hdr *rec, struct ws_rec_hdr **out);

/*
 * The files @rec's process names are opened with its user's credentials: read now while it
 * lives, or as they were when its maps were last read.
 */
int ws_stackcap_resolve(struct ws_stackcap *sc, const struct ws_rec_hdr *rec,
			struct ws_rec_hdr **out)
{
	const struct ws_rec_stack_raw *r = (const void *)rec;
	struct ws_symfile_ctx ctx = { .uo = sc->uo, .log = &sc->refused };
	const struct ws_symfile_ctx *prev;
	struct ws_reader_id live;
	struct snapshot *sn;
	int err;

	if (rec->size >= sizeof(*r)) {
		/* the snapshot's, kept fresh with its maps (an exec makes it young again): not a
		 * read of /proc at every stack */
		sn = snapshot_of(sc, r->pid);
		if (sn && sn->have_id)
			ctx.id = &sn->id;
		else if (!sn && ws_reader_id_of((pid_t)r->pid, &live) == 0)
			ctx.id = &live;
	}
	prev = ws_symfile_use(&ctx);
	err = resolve(sc, rec, out);
	ws_symfile_use(prev);
	return err;
}

static int resolve(struct ws_stackcap *sc, const struct ws_rec_hdr *rec, struct ws_rec_hdr **out)
{
	const struct ws_rec_stack_raw *r = (const void *)rec;
	struct ws_sframe fr[WS_STACK_MAX_FRAMES];
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
	if ((r->uregs.valid & (WS_SREG_PC | WS_SREG_SP)) == (WS_SREG_PC | WS_SREG_SP)) {
		struct ws_unwinder *u = unwinder_of(sc, r->pid);
		struct ws_unwind_opts o = { .max_frames = WS_UNWIND_DEFAULT_FRAMES };
		struct ws_unwind_result res = { .frames = uf };
		struct ws_ustack us = { .addr = r->uregs.sp, .data = r->ustack, .len = r->ulen };
		struct ws_uregs regs;

		regs_of(r, &regs);
		if (u && !ws_unwind(u, r->tid, &regs, &us, &o, &res)) {
			st.ustop = res.stop + 1;
			for (uint32_t i = 0; i < res.n && n < WS_STACK_MAX_FRAMES && !err; i++) {
				bool ret = i > 0 && !(uf[i].flags & WS_UFRAME_ACTIVATION);

				err = ws_symbols_resolve(sc->syms, r->pid, uf[i].pc, ret, &f);
				if (!err)
					err = keep_frame(&fr[n++], &f, false);
			}
		}
	}
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
	if (!err)
		err = ws_stackrec_encode(rec, &st, out);
	drop_frames(fr, n);
	return err;
}
