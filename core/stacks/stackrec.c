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
static uint32_t frames_fit(const struct ws_stack *st, size_t *size)
{
	size_t plen = slen(st->path);
	uint32_t n = 0;

	*size = sizeof(struct ws_rec_stack);
	*size += plen ? ((plen + 1 + 7) & ~(size_t)7) : 0;
	*size += st->gil != WS_GIL_NOT_READ ? sizeof(struct ws_stack_gil) : 0;
	while (n < st->n && *size + frame_bytes(&st->frames[n]) <= REC_MAX)
		*size += frame_bytes(&st->frames[n++]);
	return n;
}

int ws_stackrec_encode(const struct ws_rec_hdr *hdr, const struct ws_stack *st,
		       struct ws_rec_hdr **out)
{
	size_t size;
	uint32_t n = frames_fit(st, &size);
	size_t plen = slen(st->path);
	struct ws_rec_stack *r;
	char *p;

	r = calloc(1, size);
	if (!r)
		return -ENOMEM;
	r->hdr = *hdr;
	r->hdr.kind = WS_KIND_STACK;
	r->hdr.size = size;
	r->hdr.flags = 0;
	if (st->gil != WS_GIL_NOT_READ) {
		/* the last bytes of the record, wherever the frames and the path end */
		struct ws_stack_gil *g = (void *)((char *)r + size - sizeof(*g));

		r->hdr.flags |= WS_STACK_REC_GIL;
		g->state = st->gil;
		g->holder_tid = st->gil == WS_GIL_HELD ? st->gil_holder : 0;
	}
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
	for (uint32_t i = 0; i < n; i++) {
		const struct ws_sframe *f = &st->frames[i];
		struct ws_stack_frame *sf = (void *)p;
		char *q = p + sizeof(*sf);

		sf->ip = f->f.ip;
		sf->off = f->f.off;
		sf->line = f->f.line;
		sf->flags = (f->kernel ? WS_STACK_FRAME_KERNEL : 0) |
			    (f->python ? WS_STACK_FRAME_PYTHON : 0);
		sf->sym_len = slen(f->f.sym);
		sf->module_len = slen(f->f.module);
		sf->file_len = slen(f->f.file);
		q = put_str(q, f->f.sym, sf->sym_len);
		q = put_str(q, f->f.module, sf->module_len);
		put_str(q, f->f.file, sf->file_len);
		p += frame_bytes(f);
	}
	put_str(p, st->path, plen);
	*out = &r->hdr;
	return 0;
}

int ws_stack_dup(const struct ws_stack *st, struct ws_stack **out)
{
	size_t size, strs = 0, plen = slen(st->path);
	uint32_t n = frames_fit(st, &size);
	struct ws_stack *d;
	char *p;

	*out = NULL;
	/* one block for every string, as the decoder keeps them (ws_stack_free() frees two) */
	for (uint32_t i = 0; i < n; i++) {
		const struct ws_sframe *f = &st->frames[i];

		strs += slen(f->f.sym) + !!slen(f->f.sym);
		strs += slen(f->f.module) + !!slen(f->f.module);
		strs += slen(f->f.file) + !!slen(f->f.file);
	}
	strs += plen + !!plen;
	d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	d->frames = calloc(n ? n : 1, sizeof(*d->frames));
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
	for (uint32_t i = 0; i < n; i++) {
		const struct ws_sframe *f = &st->frames[i];
		struct ws_sframe *g = &d->frames[i];
		size_t len;

		g->f.ip = f->f.ip;
		g->f.off = f->f.off;
		g->f.line = f->f.line;
		g->kernel = f->kernel;
		g->python = f->python;
		/* an empty string is absent, as in a record */
		if ((len = slen(f->f.sym))) {
			g->f.sym = p;
			p = put_str(p, f->f.sym, len);
		}
		if ((len = slen(f->f.module))) {
			g->f.module = p;
			p = put_str(p, f->f.module, len);
		}
		if ((len = slen(f->f.file))) {
			g->f.file = p;
			p = put_str(p, f->f.file, len);
		}
	}
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

int ws_stackrec_decode(const struct ws_rec_hdr *rec, struct ws_stack **out)
{
	const struct ws_rec_stack *r = (const void *)rec;
	const char *p, *end;
	struct ws_stack *st;
	size_t strs = 0;
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
	/* the strings are copied in one block: the frames point into it */
	end = (const char *)rec + rec->size;
	if (rec->flags & WS_STACK_REC_GIL) {
		struct ws_stack_gil g;

		if (rec->size < sizeof(*r) + sizeof(g)) {
			ws_stack_free(st);
			return -EINVAL;
		}
		end -= sizeof(g);
		memcpy(&g, end, sizeof(g));
		/* a state this version does not know is no holder */
		st->gil = g.state <= WS_GIL_ELSEWHERE ? g.state : WS_GIL_UNREADABLE;
		st->gil_holder = st->gil == WS_GIL_HELD ? g.holder_tid : 0;
		if (st->gil == WS_GIL_NOT_READ)
			st->gil = WS_GIL_UNREADABLE; /* flagged, so something was read */
	}
	strs = end - (const char *)(r + 1);
	st->frames = calloc(r->nframes ? r->nframes : 1, sizeof(*st->frames));
	st->strs = malloc(strs ? strs : 1);
	if (!st->frames || !st->strs) {
		ws_stack_free(st);
		return -ENOMEM;
	}
	memcpy(st->strs, r + 1, strs);
	p = st->strs;
	end = st->strs + strs;
	for (uint32_t i = 0; i < r->nframes && !bad; i++) {
		struct ws_stack_frame sf;
		struct ws_sframe *f = &st->frames[i];
		const char *start = p;
		size_t used;

		if ((size_t)(end - p) < sizeof(sf)) {
			bad = true;
			break;
		}
		memcpy(&sf, p, sizeof(sf));
		p += sizeof(sf);
		f->f.ip = sf.ip;
		f->f.off = sf.off;
		f->f.line = sf.line;
		f->kernel = sf.flags & WS_STACK_FRAME_KERNEL;
		f->python = !f->kernel && (sf.flags & WS_STACK_FRAME_PYTHON);
		f->f.sym = get_str(&p, end, sf.sym_len, &bad);
		f->f.module = get_str(&p, end, sf.module_len, &bad);
		f->f.file = get_str(&p, end, sf.file_len, &bad);
		used = (size_t)(p - start);
		used = (used + 7) & ~(size_t)7;
		if (used > (size_t)(end - start))
			used = end - start;
		p = start + used;
		st->n = i + 1;
	}
	st->fd = -1;
	if (!bad && r->path_len) {
		st->path = get_str(&p, end, r->path_len > 255 ? 0 : r->path_len, &bad);
		bad = bad || !st->path;
		st->fd = r->fd;
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
