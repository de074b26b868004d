// SPDX-License-Identifier: MIT
#include <inttypes.h>
#include <string.h>

#include "stack_fmt.h"
#include "syscall_fmt.h"
#include "util.h"

void ws_link_stacks(const struct ws_stacks *s, const struct ws_link *l, struct ws_link_stacks *out)
{
	memset(out, 0, sizeof(*out));
	/* one wait's stack cannot stand for several; core kinds (running, runqueue) have none */
	if (!s || !l->claim || l->waits > 1)
		return;
	out->nown =
		ws_stacks_find(s, WS_STACK_WAITER, l->tid, l->start, l->start + l->dur, out->own);
	if (l->has_woken_by) {
		out->nwaker = ws_stacks_find(s, WS_STACK_WAKER, l->tid, l->start, l->start + l->dur,
					     out->waker);
		/* whoever woke the thread in that window must be the waker the link names */
		if (out->nwaker && out->waker[0]->tid != l->woken_by)
			out->nwaker = 0;
	}
}

const char *ws_link_fd_path(const struct ws_link *l, const struct ws_link_stacks *st)
{
	/* the same fd as the call the claim records: the file it waited on then */
	for (int i = 0; l->claim && i < st->nown; i++)
		if (st->own[i]->path && st->own[i]->fd >= 0 &&
		    st->own[i]->fd == ws_syscall_fd(&l->claim->syscall))
			return st->own[i]->path;
	return NULL;
}

static int collect(const struct ws_stack *const parts[], int n, bool kernel,
		   const struct ws_sframe **out, int max)
{
	int k = 0;

	for (int p = 0; p < n; p++)
		for (uint32_t i = 0; parts[p] && i < parts[p]->n && k < max; i++)
			if (parts[p]->frames[i].kernel == kernel)
				out[k++] = &parts[p]->frames[i];
	return k;
}

static const char *base(const char *path)
{
	const char *b = path ? strrchr(path, '/') : NULL;

	return b ? b + 1 : path ? path : "?";
}

/* The C library and the dynamic loader: the program called into them, they are not "where". */
static bool system_lib(const char *module)
{
	const char *b = base(module);

	return !strncmp(b, "libc.so", 7) || !strncmp(b, "libc-", 5) ||
	       !strncmp(b, "libpthread", 10) || !strncmp(b, "ld-linux", 8);
}

/* Scheduler and tracing frames on top of every sleeping or waking kernel stack say nothing. */
static bool kernel_machinery(const char *sym)
{
	static const char *const pre[] = { "__schedule", "schedule",	   "io_schedule",
					   "bpf_",	 "__bpf_",	   "__traceiter_",
					   "trace_",	 "try_to_wake_up", "ttwu_",
					   "wake_up_q",	 "__wake_up",	   "wake_up_process",
					   "preempt_",	 "do_nanosleep",   "hrtimer_nanosleep" };

	if (!sym)
		return false;
	for (size_t i = 0; i < sizeof(pre) / sizeof(pre[0]); i++)
		if (!strncmp(sym, pre[i], strlen(pre[i])))
			return true;
	return false;
}

static void frame_name(FILE *f, const struct ws_frame *fr)
{
	char e[WS_ESC_LEN];

	if (fr->sym)
		fputs(ws_text_esc(fr->sym, e, sizeof(e)), f);
	else if (fr->module)
		fprintf(f, "%s+0x%" PRIx64, ws_text_esc(base(fr->module), e, sizeof(e)), fr->off);
	else
		fprintf(f, "0x%" PRIx64, fr->ip);
}

/* A name as a person reads it: without the symbol version ("@GLIBC_2.2.5"). */
static void text_name(FILE *f, const struct ws_frame *fr)
{
	char e[WS_ESC_LEN], name[WS_ESC_LEN];
	const char *at;

	if (!fr->sym) {
		frame_name(f, fr);
		return;
	}
	at = strchr(fr->sym, '@');
	snprintf(name, sizeof(name), "%.*s", at && at > fr->sym ? (int)(at - fr->sym) : 255,
		 fr->sym);
	fputs(ws_text_esc(name, e, sizeof(e)), f);
}

static bool same_module(const struct ws_frame *a, const struct ws_frame *b)
{
	return a->module && b->module && !strcmp(a->module, b->module);
}

int ws_stack_text(FILE *f, const struct ws_stack *const parts[], int n, int user_depth)
{
	const struct ws_sframe *u[WS_STACK_MAX_FRAMES], *k[WS_STACK_MAX_FRAMES];
	int nu = collect(parts, n, false, u, WS_STACK_MAX_FRAMES);
	int nk = collect(parts, n, true, k, WS_STACK_MAX_FRAMES);
	int first = 0, shown = 0, ki = 0;
	char e[WS_ESC_LEN];

	if (user_depth <= 0 || (!nu && !nk))
		return 0;
	/* the program's own code is where it waited; the library call it made is named after */
	while (first < nu && system_lib(u[first]->f.module))
		first++;
	if (first == nu)
		first = 0;
	fputs("in ", f);
	for (int i = first; i < nu && shown < user_depth; i++, shown++) {
		if (shown)
			fprintf(f, " %s ", ws_arrow());
		text_name(f, &u[i]->f);
		if (u[i]->f.sym && (i + 1 == nu || shown + 1 == user_depth ||
				    !same_module(&u[i + 1]->f, &u[i]->f)))
			fprintf(f, " (%s)", ws_text_esc(base(u[i]->f.module), e, sizeof(e)));
	}
	if (first > 0) {
		fputs(", via ", f);
		text_name(f, &u[first - 1]->f);
		fprintf(f, " (%s)", ws_text_esc(base(u[first - 1]->f.module), e, sizeof(e)));
	}
	while (ki < nk && kernel_machinery(k[ki]->f.sym))
		ki++;
	if (ki == nk)
		ki = 0;
	if (nk) {
		fputs(shown ? " [kernel: " : "[kernel: ", f);
		frame_name(f, &k[ki]->f);
		fputs("]", f);
	}
	return 1;
}

static void json_frames(FILE *f, const struct ws_sframe *const fr[], int n, bool *first)
{
	for (int i = 0; i < n; i++) {
		const struct ws_frame *x = &fr[i]->f;

		fprintf(f, "%s{\"ip\":\"0x%" PRIx64 "\",\"sym\":", *first ? "" : ",", x->ip);
		*first = false;
		if (x->sym)
			ws_json_str(f, x->sym);
		else
			fputs("null", f);
		fprintf(f, ",\"off\":%" PRIu64 ",\"module\":", x->off);
		if (x->module)
			ws_json_str(f, x->module);
		else
			fputs("null", f);
		fputs(",\"file\":", f);
		if (x->file)
			ws_json_str(f, x->file);
		else
			fputs("null", f);
		fprintf(f, ",\"line\":%u,\"kernel\":%s}", x->line,
			fr[i]->kernel ? "true" : "false");
	}
}

void ws_stack_json(FILE *f, const char *key, const struct ws_stack *const parts[], int n)
{
	const struct ws_sframe *u[WS_STACK_MAX_FRAMES], *k[WS_STACK_MAX_FRAMES];
	int nu = collect(parts, n, false, u, WS_STACK_MAX_FRAMES);
	int nk = collect(parts, n, true, k, WS_STACK_MAX_FRAMES);
	bool first = true;

	if (!nu && !nk)
		return;
	fprintf(f, ",\"%s\":[", key);
	json_frames(f, u, nu, &first);
	json_frames(f, k, nk, &first);
	fputs("]", f);
}

void ws_stack_folded(FILE *f, const struct ws_stack *const parts[], int n, int max)
{
	const struct ws_sframe *u[WS_STACK_MAX_FRAMES];
	int nu = collect(parts, n, false, u, WS_STACK_MAX_FRAMES);

	if (nu > max)
		nu = max;
	for (int i = nu - 1; i >= 0; i--) {
		const struct ws_frame *x = &u[i]->f;

		fputc(';', f);
		/* names only (no offsets), so equal code paths stack together */
		for (const unsigned char *p =
			     (const unsigned char *)(x->sym ? x->sym : base(x->module));
		     *p; p++)
			fputc(*p == ';' ? ':' : *p <= ' ' || *p == 0x7f ? '?' : *p, f);
	}
}

void ws_stack_lines(FILE *f, const struct ws_stack *const parts[], int n)
{
	const struct ws_sframe *u[WS_STACK_MAX_FRAMES], *k[WS_STACK_MAX_FRAMES];
	int nu = collect(parts, n, false, u, WS_STACK_MAX_FRAMES);
	int nk = collect(parts, n, true, k, WS_STACK_MAX_FRAMES);
	char buf[512];

	for (int i = 0; i < nu + nk; i++) {
		ws_frame_format(i < nu ? &u[i]->f : &k[i - nu]->f, buf, sizeof(buf));
		fprintf(f, "%s%s", i ? "\n" : "", buf);
	}
}
