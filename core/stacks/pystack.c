// SPDX-License-Identifier: MIT
/* Python processes and their frames in stacks: see pystack.h. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "pystack.h"
#include "pyframes.h"
#include "pygil.h"
#include "pyproc.h"
#include "symfile.h"
#include "base/log.h"

/*
 * a process whose python-named files do not hold the interpreter yet (python3.12's executable
 * before ld.so maps its libpython, a file not readable yet) is asked again when they change, at
 * most this many times
 */
#define LATER_TRIES 20

enum slot_state {
	S_LATER,
	S_FOUND,
	S_UNSUPPORTED
};

struct slot {
	uint32_t pid;
	enum slot_state state;
	int tries;
	uint64_t files;	 /* ws_pyproc_files_hash() when last asked */
	bool no_runtime; /* ... and none of them held the interpreter (not: could not be read) */
	struct ws_py_info info;
};

/*
 * Checks run wherever a process's maps are read, the reader's thread or the maps watcher's
 * (mapsnap.h: the watcher reads them while the reader is busy naming a slow first stack, and a
 * Python process found only afterwards would have its first waits captured without frames):
 * @lock guards everything, and the runtime's file is opened through helpers of its own (the
 * reader's are not shared between threads).
 */
struct ws_pystack {
	pthread_mutex_t lock;
	struct slot *slots;
	size_t n, cap;
	struct ws_pyframes *frames;
	struct ws_useropen *uo;
	bool said_version; /* an unsupported version is said once */
};

int ws_pystack_new(struct ws_pystack **out)
{
	struct ws_pystack *p = calloc(1, sizeof(*p));

	if (!p || ws_pyframes_new(&p->frames) || ws_useropen_new(&p->uo)) {
		if (p)
			ws_pyframes_free(p->frames);
		free(p);
		return -ENOMEM;
	}
	pthread_mutex_init(&p->lock, NULL);
	*out = p;
	return 0;
}

void ws_pystack_free(struct ws_pystack *p)
{
	if (!p)
		return;
	ws_pyframes_free(p->frames);
	ws_useropen_free(p->uo);
	pthread_mutex_destroy(&p->lock);
	free(p->slots);
	free(p);
}

static struct slot *slot_of(struct ws_pystack *p, uint32_t pid)
{
	for (size_t i = 0; i < p->n; i++)
		if (p->slots[i].pid == pid)
			return &p->slots[i];
	return NULL;
}

static struct slot *slot_add(struct ws_pystack *p, uint32_t pid)
{
	struct slot *s;

	if (p->n == p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 16;

		s = realloc(p->slots, cap * sizeof(*s));
		if (!s)
			return NULL;
		p->slots = s;
		p->cap = cap;
	}
	s = &p->slots[p->n++];
	memset(s, 0, sizeof(*s));
	s->pid = pid;
	return s;
}

/* ws_pystack_forget() with the lock held. */
static bool forget(struct ws_pystack *p, uint32_t pid)
{
	struct slot *s = slot_of(p, pid);
	bool found = s && s->state == S_FOUND;

	if (!s)
		return false;
	ws_pyframes_forget(p->frames, pid);
	*s = p->slots[--p->n];
	return found;
}

bool ws_pystack_forget(struct ws_pystack *p, uint32_t pid)
{
	bool found;

	if (!p)
		return false;
	pthread_mutex_lock(&p->lock);
	found = forget(p, pid);
	pthread_mutex_unlock(&p->lock);
	return found;
}

/* Is the runtime @s found still mapped where it was (no exec since)? */
static bool still_there(const struct slot *s, const struct ws_procmaps *pm)
{
	const struct ws_map *m = ws_procmaps_find(pm, s->info.module_start);

	return m && m->start == s->info.module_start && m->path && !strcmp(m->path, s->info.module);
}

static int detect(struct ws_pystack *p, struct slot *s, uint32_t pid, bool live,
		  const struct ws_procmaps *pm, struct ws_py_proc *out)
{
	int ret = ws_pyproc_detect(pid, live, pm, &s->info);

	if (ret == 1) {
		s->state = S_FOUND;
		*out = s->info.bpf;
		return WS_PYSTACK_FOUND;
	}
	if (ret == WS_PYPROC_VERSION) {
		s->state = S_UNSUPPORTED;
		if (!p->said_version)
			ws_log(WS_LOG_WARN,
			       "process %u runs CPython %u.%u, whose frames whyslow cannot read (it knows 3.11 to 3.13); its stacks show the interpreter's C code only",
			       pid, s->info.version >> 24, (s->info.version >> 16) & 0xff);
		p->said_version = true;
		return WS_PYSTACK_SAME;
	}
	s->no_runtime = ret == 0;
	s->state = ++s->tries >= LATER_TRIES ? S_UNSUPPORTED : S_LATER;
	return WS_PYSTACK_SAME;
}

/* ws_pystack_check() with the lock held. */
static int check(struct ws_pystack *p, uint32_t pid, const char *text, bool live,
		 struct ws_py_proc *out)
{
	struct slot *s = slot_of(p, pid);
	struct ws_procmaps pm;
	bool had;
	int ret;

	if (!ws_pyproc_maybe(text))
		return forget(p, pid) ? WS_PYSTACK_GONE : WS_PYSTACK_SAME;
	if (ws_procmaps_parse(text, &pm))
		return WS_PYSTACK_SAME;
	if (s && s->state != S_LATER && (s->state != S_FOUND || still_there(s, &pm))) {
		ws_procmaps_free(&pm);
		return WS_PYSTACK_SAME;
	}
	/*
	 * Not yet, and the same files: the same answer. Asked at every snapshot instead, a
	 * process young for 100 ms (read at each of the reader's and the watcher's polls) used
	 * all its tries before a slow ld.so mapped libpython, and its frames were never read.
	 */
	if (s && s->state == S_LATER && s->no_runtime && s->files == ws_pyproc_files_hash(&pm)) {
		ws_procmaps_free(&pm);
		return WS_PYSTACK_SAME;
	}
	had = s && s->state == S_FOUND;
	if (had)
		ws_pyframes_forget(p->frames, pid); /* another program: other code objects */
	if (!s && !(s = slot_add(p, pid))) {
		ws_procmaps_free(&pm);
		return WS_PYSTACK_SAME;
	}
	s->files = ws_pyproc_files_hash(&pm);
	ret = detect(p, s, pid, live, &pm, out);
	ws_procmaps_free(&pm);
	return ret == WS_PYSTACK_SAME && had ? WS_PYSTACK_GONE : ret;
}

int ws_pystack_check(struct ws_pystack *p, uint32_t pid, const char *text, bool live,
		     const struct ws_reader_id *id, struct ws_py_proc *out)
{
	/* as the process's user, through this module's own helpers; refusals are the
	 * symbolizer's to count */
	struct ws_symfile_ctx ctx = { .uo = p->uo, .id = id };
	const struct ws_symfile_ctx *prev;
	int ret;

	pthread_mutex_lock(&p->lock);
	prev = ws_symfile_use(&ctx);
	ret = check(p, pid, text, live, out);
	ws_symfile_use(prev);
	pthread_mutex_unlock(&p->lock);
	return ret;
}

bool ws_pystack_decided(struct ws_pystack *p, uint32_t pid)
{
	struct slot *s;
	bool ret;

	if (!p)
		return false;
	pthread_mutex_lock(&p->lock);
	s = slot_of(p, pid);
	ret = s && s->state != S_LATER;
	pthread_mutex_unlock(&p->lock);
	return ret;
}

int ws_pystack_lock(struct ws_pystack *p, uint32_t pid, uint64_t addr, char *buf, size_t len)
{
	struct slot *s;
	int ret = 0;

	if (!p)
		return 0;
	pthread_mutex_lock(&p->lock);
	s = slot_of(p, pid);
	if (s && s->state == S_FOUND && ws_py_gil_part(&s->info, addr) != WS_PY_GIL_NONE) {
		ws_py_gil_name(&s->info, pid, buf, len);
		ret = WS_PYSTACK_LOCK_GIL;
	}
	pthread_mutex_unlock(&p->lock);
	return ret;
}

int ws_pystack_gil_wait(struct ws_pystack *p, uint32_t pid, uint64_t addr, char *buf, size_t len,
			struct ws_py_gil_state *st, int *st_err)
{
	struct ws_py_info info;
	struct slot *s;

	if (!p)
		return 0;
	pthread_mutex_lock(&p->lock);
	s = slot_of(p, pid);
	if (s && s->state == S_FOUND)
		info = s->info;
	pthread_mutex_unlock(&p->lock);
	if (!s || s->state != S_FOUND || ws_py_gil_part(&info, addr) != WS_PY_GIL_COND)
		return 0;
	ws_py_gil_name(&info, pid, buf, len);
	*st_err = ws_py_gil_read(pid, &info, st);
	return WS_PYSTACK_LOCK_GIL;
}

/* Python frame @f as a stack frame (strings copied). */
static int py_sframe(struct ws_sframe *dst, const struct ws_pyframe *f, const char *module)
{
	memset(dst, 0, sizeof(*dst));
	dst->python = true;
	if (!f)
		return 0; /* the frames could not be named: one frame says so */
	dst->f.ip = f->code;
	dst->f.off = f->off;
	dst->f.line = f->line;
	dst->f.sym = strdup(f->name);
	dst->f.file = strdup(f->file);
	dst->f.module = strdup(module);
	return dst->f.sym && dst->f.file && dst->f.module ? 0 : -ENOMEM;
}

static bool eval_frame(const struct ws_sframe *f)
{
	return !f->kernel && !f->python && f->f.sym &&
	       !strncmp(f->f.sym, "_PyEval_EvalFrameDefault", 24);
}

static void free_sframe(struct ws_sframe *f)
{
	free((char *)f->f.sym);
	free((char *)f->f.module);
	free((char *)f->f.file);
}

/* Python frames @py[*@pi..] up to the next entry frame into @out (*@k of @max). */
static int put_run(const struct ws_pyframe *py, int np, int *pi, const char *module,
		   struct ws_sframe *out, uint32_t *k, uint32_t max, bool all)
{
	int err = 0;

	if (np < 0 && *pi == 0 && *k < max) {
		*pi = 1;
		return py_sframe(&out[(*k)++], NULL, module);
	}
	while (*pi < np && *k < max && !err) {
		const struct ws_pyframe *f = &py[(*pi)++];

		err = py_sframe(&out[(*k)++], f, module);
		if (f->entry && !all)
			break;
	}
	return err;
}

void ws_pystack_prefetch(struct ws_pystack *p, uint32_t pid, const struct ws_py_raw *raw)
{
	struct ws_pyframe py[WS_PY_MAX_FRAMES];
	struct slot *s;
	int np = 0;

	if (!p || !raw->n)
		return;
	pthread_mutex_lock(&p->lock);
	s = slot_of(p, pid);
	if (s && s->state == S_FOUND)
		np = ws_pyframes_resolve(p->frames, pid, &s->info, raw, py, WS_PY_MAX_FRAMES);
	pthread_mutex_unlock(&p->lock);
	if (np > 0)
		ws_pyframes_clear(py, np);
}

int ws_pystack_prepare(struct ws_pystack *p, const struct ws_reader_id *id)
{
	int err;

	pthread_mutex_lock(&p->lock);
	err = ws_useropen_prepare(p->uo, id);
	pthread_mutex_unlock(&p->lock);
	return err;
}

void ws_pystack_warm(struct ws_pystack *p, uint32_t pid, uint64_t code)
{
	struct slot *s;

	if (!p)
		return;
	pthread_mutex_lock(&p->lock);
	s = slot_of(p, pid);
	if (s && s->state == S_FOUND)
		ws_pyframes_warm(p->frames, pid, &s->info, code);
	pthread_mutex_unlock(&p->lock);
}

/* ws_pystack_merge() with the lock held. */
static int merge(struct ws_pystack *p, uint32_t pid, const struct ws_py_raw *raw,
		 struct ws_sframe *fr, uint32_t *n, uint32_t max)
{
	struct slot *s = slot_of(p, pid);
	struct ws_pyframe py[WS_PY_MAX_FRAMES];
	struct ws_sframe *out;
	uint32_t k = 0;
	int np, pi = 0, err = 0;

	if (!s || s->state != S_FOUND || raw->state == WS_PY_NONE || raw->state == WS_PY_NO_THREAD)
		return 0;
	np = raw->state == WS_PY_UNREADABLE && !raw->n
		     ? -EFAULT
		     : ws_pyframes_resolve(p->frames, pid, &s->info, raw, py, WS_PY_MAX_FRAMES);
	if (np == -ENOMEM)
		return np;
	out = calloc(max, sizeof(*out));
	if (!out) {
		if (np > 0)
			ws_pyframes_clear(py, np);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < *n; i++) {
		if (eval_frame(&fr[i]) && ((np < 0 && !pi) || pi < np)) {
			err = err ? err : put_run(py, np, &pi, s->info.module, out, &k, max, false);
			free_sframe(&fr[i]);
		} else if (k < max) {
			out[k++] = fr[i];
		} else {
			free_sframe(&fr[i]);
		}
	}
	/* the rest (or all, when the native walk stopped short of the interpreter) outermost */
	if (!err)
		err = put_run(py, np, &pi, s->info.module, out, &k, max, true);
	memcpy(fr, out, k * sizeof(*out));
	*n = k;
	free(out);
	if (np > 0)
		ws_pyframes_clear(py, np);
	return err;
}

int ws_pystack_merge(struct ws_pystack *p, uint32_t pid, const struct ws_py_raw *raw,
		     struct ws_sframe *fr, uint32_t *n, uint32_t max)
{
	int err;

	if (!p)
		return 0;
	pthread_mutex_lock(&p->lock);
	err = merge(p, pid, raw, fr, n, max);
	pthread_mutex_unlock(&p->lock);
	return err;
}

static bool rd(uint32_t pid, uint64_t addr, uint64_t *v)
{
	*v = 0;
	return ws_py_mem_read(pid, addr, v, sizeof(*v)) == 0;
}

/* The thread state of @tid, as ws_py_tstate() in BPF; 0 with *@bad false: none. */
static uint64_t tstate_now(const struct ws_py_proc *pp, uint32_t pid, uint32_t tid, bool *bad)
{
	uint64_t interp, ts, v;

	*bad = true;
	if (!rd(pid, pp->runtime + pp->interp_head, &interp))
		return 0;
	*bad = false;
	if (!interp)
		return 0;
	*bad = true;
	if (!rd(pid, interp + pp->threads_head, &ts))
		return 0;
	for (int i = 0; i < WS_PY_MAX_THREADS && ts; i++) {
		if (!rd(pid, ts + pp->ts_native_tid, &v))
			return 0;
		if (v == tid) {
			*bad = false;
			return ts;
		}
		if (!rd(pid, ts + pp->ts_next, &ts))
			return 0;
	}
	*bad = false;
	return 0;
}

/* Frames from @frame on into @out (state set); false when one could not be read. */
static void frames_now(const struct ws_py_proc *pp, uint32_t pid, uint64_t frame,
		       struct ws_py_raw *out)
{
	for (int i = 0; i < WS_PY_MAX_FRAMES; i++) {
		struct ws_py_raw_frame *f = &out->f[i];
		uint64_t code, instr;

		if (!frame) {
			out->state = WS_PY_OK;
			return;
		}
		memset(f, 0, sizeof(*f));
		if (!rd(pid, frame + pp->fr_code, &code) ||
		    !rd(pid, frame + pp->fr_instr, &instr) ||
		    ws_py_mem_read(pid, frame + pp->fr_owner, &f->owner, 1) ||
		    (pp->fr_entry != WS_PY_NO_OFF &&
		     ws_py_mem_read(pid, frame + pp->fr_entry, &f->entry, 1)))
			return;
		f->code = code;
		f->instr = instr;
		out->n = (uint8_t)(i + 1);
		if (!rd(pid, frame + pp->fr_previous, &frame))
			return;
	}
	out->state = frame ? WS_PY_TRUNCATED : WS_PY_OK;
}

void ws_pystack_walk_now(struct ws_pystack *p, uint32_t pid, uint32_t tid, struct ws_py_raw *out)
{
	struct ws_py_proc pp = { 0 };
	uint64_t ts, base, frame;
	struct slot *s;
	bool bad, found;

	memset(out, 0, sizeof(*out));
	if (!p)
		return;
	pthread_mutex_lock(&p->lock);
	s = slot_of(p, pid);
	found = s && s->state == S_FOUND;
	if (found)
		pp = s->info.bpf;
	pthread_mutex_unlock(&p->lock);
	if (!found)
		return;
	ts = tstate_now(&pp, pid, tid, &bad);
	out->state = bad ? WS_PY_UNREADABLE : WS_PY_NO_THREAD;
	if (!ts)
		return;
	out->state = WS_PY_UNREADABLE;
	base = ts;
	if (pp.ts_cframe != WS_PY_NO_OFF && !rd(pid, ts + pp.ts_cframe, &base))
		return;
	if (!base) {
		out->state = WS_PY_OK; /* no frame: it runs no Python code */
		return;
	}
	if (!rd(pid, base + pp.cur_frame, &frame))
		return;
	frames_now(&pp, pid, frame, out);
}
