// SPDX-License-Identifier: MIT
/* WS_KIND_STACK records <-> struct ws_stack. The decoder trusts nothing: recordings are input. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "stackrec.h"

#define REC_MAX 65535 /* ws_rec_hdr.size is 16 bits */

static size_t slen(const char *s)
{
	size_t n = s ? strlen(s) : 0;

	return n > 255 ? 255 : n;
}

static size_t frame_bytes(const struct ws_sframe *f)
{
	size_t n = sizeof(struct ws_stack_frame);

	n += slen(f->f.sym) + !!slen(f->f.sym);
	n += slen(f->f.module) + !!slen(f->f.module);
	n += slen(f->f.file) + !!slen(f->f.file);
	return (n + 7) & ~(size_t)7;
}

static char *put_str(char *p, const char *s, size_t n)
{
	if (!n)
		return p;
	memcpy(p, s, n);
	p[n] = 0;
	return p + n + 1;
}

/*
 * How many frames of @st fit in one record (64 KiB), and its size then (*@size): the encoder
 * and ws_stack_dup() keep the same ones.
 */
/* The GIL holder's frames a record keeps (all or none), and their bytes (*@bytes). */
static uint32_t holder_fit(const struct ws_stack *st, size_t *bytes)
{
	uint32_t n = st->gil == WS_GIL_HELD ? st->nholder : 0;

	*bytes = 0;
	if (n > WS_PY_MAX_FRAMES + 1)
		n = 0; /* never from the capture: no room is taken from the waiter's frames */
	for (uint32_t i = 0; i < n; i++)
		*bytes += frame_bytes(&st->holder[i]);
	return n;
}

static uint32_t frames_fit(const struct ws_stack *st, size_t *size)
{
	size_t plen = slen(st->path), hbytes;
	uint32_t n = 0;

	holder_fit(st, &hbytes);
	*size = sizeof(struct ws_rec_stack);
	*size += plen ? ((plen + 1 + 7) & ~(size_t)7) : 0;
	*size += st->gil != WS_GIL_NOT_READ ? sizeof(struct ws_stack_gil) + hbytes : 0;
	while (n < st->n && *size + frame_bytes(&st->frames[n]) <= REC_MAX)
		*size += frame_bytes(&st->frames[n++]);
	return n;
}

/* Frame @f as a record keeps it, at @p; returns where the next one goes. */
static char *put_frame(char *p, const struct ws_sframe *f)
{
	struct ws_stack_frame *sf = (void *)p;
	char *q = p + sizeof(*sf);

	sf->ip = f->f.ip;
	sf->off = f->f.off;
	sf->line = f->f.line;
	sf->flags =
		(f->kernel ? WS_STACK_FRAME_KERNEL : 0) | (f->python ? WS_STACK_FRAME_PYTHON : 0);
	sf->sym_len = slen(f->f.sym);
	sf->module_len = slen(f->f.module);
	sf->file_len = slen(f->f.file);
	q = put_str(q, f->f.sym, sf->sym_len);
	q = put_str(q, f->f.module, sf->module_len);
	put_str(q, f->f.file, sf->file_len);
	return p + frame_bytes(f);
}

int ws_stackrec_encode(const struct ws_rec_hdr *hdr, const struct ws_stack *st,
		       struct ws_rec_hdr **out)
{
	size_t size;
	uint32_t n = frames_fit(st, &size);
	size_t plen = slen(st->path);
	struct ws_stack_gil *g;
	struct ws_rec_stack *r;
	char *p;

	r = calloc(1, size);
	if (!r)
		return -ENOMEM;
	r->hdr = *hdr;
	r->hdr.kind = WS_KIND_STACK;
	r->hdr.size = size;
	r->hdr.flags = 0;
	r->tid = st->tid;
	r->pid = st->pid;
	r->wait_tid = st->wait_tid;
	r->role = st->role;
	r->ustop = st->ustop;
	r->nframes = n;
	r->wait_start = st->wait_start;
	r->wait_end = st->wait_end;
	r->fd = plen ? st->fd : -1;
	r->path_len = plen;
	r->nouser = st->nouser;
	p = (char *)(r + 1);
	for (uint32_t i = 0; i < n; i++)
		p = put_frame(p, &st->frames[i]);
	put_str(p, st->path, plen);
	if (st->gil != WS_GIL_NOT_READ) {
		size_t hbytes;
		uint32_t nh = holder_fit(st, &hbytes);

		/* the holder's frames, then the read itself: the last bytes of the record */
		p = (char *)r + size - sizeof(*g) - hbytes;
		for (uint32_t i = 0; i < nh; i++)
			p = put_frame(p, &st->holder[i]);
		g = (void *)p;
		r->hdr.flags |= WS_STACK_REC_GIL;
		g->state = st->gil;
		g->holder_tid = st->gil == WS_GIL_HELD ? st->gil_holder : 0;
		g->nholder = nh;
		g->holder_bytes = hbytes;
	}
	*out = &r->hdr;
	return 0;
}

static size_t frame_strs(const struct ws_sframe *f)
{
	return slen(f->f.sym) + !!slen(f->f.sym) + slen(f->f.module) + !!slen(f->f.module) +
	       slen(f->f.file) + !!slen(f->f.file);
}

/* Frame @f into @g, its strings at *@p (an empty string is absent, as in a record). */
static void copy_frame(struct ws_sframe *g, const struct ws_sframe *f, char **p)
{
	size_t len;

	g->f.ip = f->f.ip;
	g->f.off = f->f.off;
	g->f.line = f->f.line;
	g->kernel = f->kernel;
	g->python = f->python;
	if ((len = slen(f->f.sym))) {
		g->f.sym = *p;
		*p = put_str(*p, f->f.sym, len);
	}
	if ((len = slen(f->f.module))) {
		g->f.module = *p;
		*p = put_str(*p, f->f.module, len);
	}
	if ((len = slen(f->f.file))) {
		g->f.file = *p;
		*p = put_str(*p, f->f.file, len);
	}
}

int ws_stack_dup(const struct ws_stack *st, struct ws_stack **out)
{
	size_t size, strs = 0, plen = slen(st->path), hbytes;
	uint32_t n = frames_fit(st, &size), nh = holder_fit(st, &hbytes);
	struct ws_stack *d;
	char *p;

	*out = NULL;
	/* one block for every string, as the decoder keeps them (ws_stack_free() frees two) */
	for (uint32_t i = 0; i < n; i++)
		strs += frame_strs(&st->frames[i]);
	for (uint32_t i = 0; i < nh; i++)
		strs += frame_strs(&st->holder[i]);
	strs += plen + !!plen;
	d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	/* the holder's frames after the stack's own, in one array */
	d->frames = calloc(n + nh ? n + nh : 1, sizeof(*d->frames));
	d->strs = malloc(strs ? strs : 1);
	if (!d->frames || !d->strs) {
		ws_stack_free(d);
		return -ENOMEM;
	}
	d->tid = st->tid;
	d->pid = st->pid;
	d->wait_tid = st->wait_tid;
	d->role = st->role;
	d->ustop = st->ustop;
	d->nouser = st->nouser;
	d->wait_start = st->wait_start;
	d->wait_end = st->wait_end;
	d->gil = st->gil;
	d->gil_holder = st->gil == WS_GIL_HELD ? st->gil_holder : 0;
	d->n = n;
	p = d->strs;
	for (uint32_t i = 0; i < n; i++)
		copy_frame(&d->frames[i], &st->frames[i], &p);
	d->nholder = nh;
	d->holder = nh ? d->frames + n : NULL;
	for (uint32_t i = 0; i < nh; i++)
		copy_frame(&d->holder[i], &st->holder[i], &p);
	d->fd = -1;
	if (plen) {
		d->path = p;
		put_str(p, st->path, plen);
		d->fd = st->fd;
	}
	*out = d;
	return 0;
}

/* A string of @n bytes and its NUL inside [p, end), or NULL (0: absent). */
static const char *get_str(const char **p, const char *end, uint8_t n, bool *bad)
{
	const char *s = *p;

	if (!n)
		return NULL;
	if ((size_t)(end - s) < (size_t)n + 1 || s[n] || memchr(s, 0, n)) {
		*bad = true;
		return NULL;
	}
	*p = s + n + 1;
	return s;
}

/* The frame at *@p (inside [*@p, @end)) into @f; *@p moves past it and its padding. */
static void get_frame(const char **p, const char *end, struct ws_sframe *f, bool *bad)
{
	struct ws_stack_frame sf;
	const char *start = *p;
	size_t used;

	if ((size_t)(end - *p) < sizeof(sf)) {
		*bad = true;
		return;
	}
	memcpy(&sf, *p, sizeof(sf));
	*p += sizeof(sf);
	f->f.ip = sf.ip;
	f->f.off = sf.off;
	f->f.line = sf.line;
	f->kernel = sf.flags & WS_STACK_FRAME_KERNEL;
	f->python = !f->kernel && (sf.flags & WS_STACK_FRAME_PYTHON);
	f->f.sym = get_str(p, end, sf.sym_len, bad);
	f->f.module = get_str(p, end, sf.module_len, bad);
	f->f.file = get_str(p, end, sf.file_len, bad);
	used = (size_t)(*p - start);
	used = (used + 7) & ~(size_t)7;
	if (used > (size_t)(end - start))
		used = end - start;
	*p = start + used;
}

/*
 * The GIL read at the end of a flagged record (format 1.8) into @st: 0 and how many bytes
 * before it are the holder's frames (*@hbytes, *@nh frames), or -EINVAL.
 */
static int get_gil(const struct ws_rec_hdr *rec, struct ws_stack *st, size_t *hbytes, uint32_t *nh)
{
	const struct ws_rec_stack *r = (const void *)rec;
	struct ws_stack_gil g;

	*hbytes = 0;
	*nh = 0;
	if (!(rec->flags & WS_STACK_REC_GIL))
		return 0;
	if (rec->size < sizeof(*r) + sizeof(g))
		return -EINVAL;
	memcpy(&g, (const char *)rec + rec->size - sizeof(g), sizeof(g));
	if (g.holder_bytes > rec->size - sizeof(*r) - sizeof(g) || g.holder_bytes % 8 ||
	    g.nholder > WS_PY_MAX_FRAMES + 1)
		return -EINVAL;
	/* a state this version does not know is no holder; flagged, something was read */
	st->gil = g.state <= WS_GIL_ELSEWHERE ? g.state : WS_GIL_UNREADABLE;
	if (st->gil == WS_GIL_NOT_READ)
		st->gil = WS_GIL_UNREADABLE;
	st->gil_holder = st->gil == WS_GIL_HELD ? g.holder_tid : 0;
	if (st->gil == WS_GIL_HELD) {
		*hbytes = g.holder_bytes;
		*nh = g.nholder;
	}
	return 0;
}

int ws_stackrec_decode(const struct ws_rec_hdr *rec, struct ws_stack **out)
{
	const struct ws_rec_stack *r = (const void *)rec;
	const char *p, *end;
	struct ws_stack *st;
	size_t strs = 0, hbytes;
	uint32_t nh;
	bool bad = false;

	*out = NULL;
	if (rec->size < sizeof(*r) || r->nframes > WS_STACK_MAX_FRAMES ||
	    (r->role != WS_STACK_WAITER && r->role != WS_STACK_WAKER))
		return -EINVAL;
	st = calloc(1, sizeof(*st));
	if (!st)
		return -ENOMEM;
	st->tid = r->tid;
	st->pid = r->pid;
	st->wait_tid = r->wait_tid;
	st->role = r->role;
	st->ustop = r->ustop;
	st->nouser = r->nouser;
	st->wait_start = r->wait_start;
	st->wait_end = r->wait_end;
	if (get_gil(rec, st, &hbytes, &nh)) {
		ws_stack_free(st);
		return -EINVAL;
	}
	/* the strings are copied in one block: the frames point into it */
	strs = rec->size - sizeof(*r) -
	       (rec->flags & WS_STACK_REC_GIL ? sizeof(struct ws_stack_gil) : 0);
	st->frames = calloc(r->nframes + nh ? r->nframes + nh : 1, sizeof(*st->frames));
	st->strs = malloc(strs ? strs : 1);
	if (!st->frames || !st->strs) {
		ws_stack_free(st);
		return -ENOMEM;
	}
	memcpy(st->strs, r + 1, strs);
	p = st->strs;
	/* the stack's own frames and path end where the holder's frames begin */
	end = st->strs + strs - hbytes;
	for (uint32_t i = 0; i < r->nframes && !bad; i++) {
		get_frame(&p, end, &st->frames[i], &bad);
		st->n = i + 1;
	}
	st->fd = -1;
	if (!bad && r->path_len) {
		st->path = get_str(&p, end, r->path_len > 255 ? 0 : r->path_len, &bad);
		bad = bad || !st->path;
		st->fd = r->fd;
	}
	p = end;
	end = st->strs + strs;
	st->holder = nh ? st->frames + r->nframes : NULL;
	for (uint32_t i = 0; i < nh && !bad; i++) {
		get_frame(&p, end, &st->holder[i], &bad);
		st->nholder = i + 1;
	}
	if (bad) {
		ws_stack_free(st);
		return -EINVAL;
	}
	*out = st;
	return 0;
}

void ws_stack_free(struct ws_stack *st)
{
	if (!st)
		return;
	free(st->frames);
	free(st->strs);
	free(st);
}
