// SPDX-License-Identifier: MIT
#include <inttypes.h>
#include <string.h>

#include "stack_fmt.h"
#include "demangle.h"
#include "base/util.h"

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

/*
 * A frame named by a perf map (/tmp/perf-PID.map): JIT-compiled code, a Node.js or JVM function.
 * Like a Python frame, it is the program's own code, which the runtime's C++ frames are not.
 */
static bool jit_frame(const struct ws_sframe *f)
{
	const char *b = base(f->f.module);
	size_t n = strlen(b);

	return f->f.sym && !strncmp(b, "perf-", 5) && n > 4 && !strcmp(b + n - 4, ".map");
}

/* Is @f the program's own code in its own language (Python, JIT-compiled)? */
static bool lang_frame(const struct ws_sframe *f)
{
	return f->python || jit_frame(f);
}

/* Scheduler and tracing frames on top of every sleeping or waking kernel stack say nothing. */
static bool kernel_machinery(const char *sym)
{
	static const char *const pre[] = { "__schedule", "schedule",	   "io_schedule",
					   "bpf_",	 "__bpf_",	   "__traceiter_",
					   "trace_",	 "try_to_wake_up", "ttwu_",
					   "wake_up_q",	 "__wake_up",	   "wake_up_process",
					   "preempt_",	 "do_nanosleep",   "hrtimer_nanosleep" };

	/* no name: a BPF program's JIT code (ours, on the tracepoint) or an address kallsyms lacks;
	 * it tells a person nothing, and the named frame under it does */
	if (!sym)
		return true;
	for (size_t i = 0; i < sizeof(pre) / sizeof(pre[0]); i++)
		if (!strncmp(sym, pre[i], strlen(pre[i])))
			return true;
	return false;
}

static void frame_name(FILE *f, const struct ws_frame *fr)
{
	char e[WS_ESC_LEN], d[WS_DEMANGLE_MAX];

	if (fr->sym)
		fputs(ws_text_esc(ws_demangle(fr->sym, d, sizeof(d)), e, sizeof(e)), f);
	else if (fr->module)
		fprintf(f, "%s+0x%" PRIx64, ws_text_esc(base(fr->module), e, sizeof(e)), fr->off);
	else
		fprintf(f, "0x%" PRIx64, fr->ip);
}

/* A name as a person reads it: demangled, without the symbol version ("@GLIBC_2.2.5"). */
static void text_name(FILE *f, const struct ws_frame *fr)
{
	char e[WS_ESC_LEN], name[WS_ESC_LEN], d[WS_DEMANGLE_MAX];
	const char *at;

	if (!fr->sym) {
		frame_name(f, fr);
		return;
	}
	at = strchr(fr->sym, '@');
	snprintf(name, sizeof(name), "%.*s", at && at > fr->sym ? (int)(at - fr->sym) : 255,
		 fr->sym);
	fputs(ws_text_esc(ws_demangle(name, d, sizeof(d)), e, sizeof(e)), f);
}

static bool same_module(const struct ws_frame *a, const struct ws_frame *b)
{
	return a->module && b->module && !strcmp(a->module, b->module);
}

/* "handle (app.py:41)"; a frame that could not be read says so. */
static void py_text(FILE *f, const struct ws_frame *fr)
{
	char e[WS_ESC_LEN], e2[WS_ESC_LEN];

	if (!fr->sym) {
		fputs("python frames unreadable", f);
		return;
	}
	fprintf(f, "%s (%s", ws_text_esc(fr->sym, e, sizeof(e)),
		ws_text_esc(base(fr->file), e2, sizeof(e2)));
	if (fr->line)
		fprintf(f, ":%u", fr->line);
	fputc(')', f);
}

/*
 * A stack with Python (or JIT-compiled) frames reads in that language: those frames, innermost
 * first, then the runtime's code it was in ("via take_gil (python3.11)"): its innermost frame
 * outside the C library.
 */
static int py_user_text(FILE *f, const struct ws_sframe *const u[], int nu, int user_depth)
{
	int shown = 0, via = -1;
	char e[WS_ESC_LEN];

	for (int i = 0; i < nu && shown < user_depth; i++) {
		if (!lang_frame(u[i]))
			continue;
		fputs(shown++ ? " " : "in ", f);
		if (shown > 1)
			fprintf(f, "%s ", ws_arrow());
		if (u[i]->python)
			py_text(f, &u[i]->f);
		else
			text_name(f, &u[i]->f);
	}
	for (int i = 0; i < nu && !lang_frame(u[i]); i++)
		if (via < 0 || system_lib(u[via]->f.module))
			via = i;
	if (via >= 0) {
		fputs(", via ", f);
		text_name(f, &u[via]->f);
		fprintf(f, " (%s)", ws_text_esc(base(u[via]->f.module), e, sizeof(e)));
	}
	return shown;
}

static bool has_lang(const struct ws_sframe *const u[], int nu)
{
	for (int i = 0; i < nu; i++)
		if (lang_frame(u[i]))
			return true;
	return false;
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
	if (has_lang(u, nu)) {
		shown = py_user_text(f, u, nu, user_depth);
		goto kernel;
	}
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
kernel:
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
	char d[WS_DEMANGLE_MAX];

	for (int i = 0; i < n; i++) {
		const struct ws_frame *x = &fr[i]->f;
		const char *sym = ws_demangle(x->sym, d, sizeof(d));

		fprintf(f, "%s{", *first ? "" : ",");
		*first = false;
		/* a Python frame: its language and function first; sym, file and line as any */
		if (fr[i]->python) {
			fputs("\"lang\":\"python\",\"function\":", f);
			if (x->sym)
				ws_json_str(f, x->sym);
			else
				fputs("null,\"unreadable\":true", f);
			fputc(',', f);
		}
		fprintf(f, "\"ip\":\"0x%" PRIx64 "\",\"sym\":", x->ip);
		if (sym)
			ws_json_str(f, sym);
		else
			fputs("null", f);
		/* demangled, as perf prints it; the symbol table's own name too */
		if (sym != x->sym) {
			fputs(",\"mangled\":", f);
			ws_json_str(f, x->sym);
		}
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

/*
 * A stack with Python (or JIT-compiled) frames folds in that language: those frames and, inner
 * to them, the runtime's C function it waited in (the text's "via"); the runtime's own frames
 * between them (_PyEval_EvalFrameDefault's callers, vectorcall trampolines, V8's builtins) would
 * split equal paths into different towers. Returns the frames kept in @u.
 */
static int py_fold(const struct ws_sframe *u[], int nu)
{
	int k = 0, via = -1;

	for (int i = 0; i < nu && !lang_frame(u[i]); i++)
		if (via < 0 || system_lib(u[via]->f.module))
			via = i;
	if (via >= 0)
		u[k++] = u[via];
	for (int i = 0; i < nu; i++)
		if (lang_frame(u[i]))
			u[k++] = u[i];
	return k;
}

void ws_stack_folded(FILE *f, const struct ws_stack *const parts[], int n, int max)
{
	const struct ws_sframe *u[WS_STACK_MAX_FRAMES];
	int nu = collect(parts, n, false, u, WS_STACK_MAX_FRAMES);
	char d[WS_DEMANGLE_MAX];

	if (has_lang(u, nu))
		nu = py_fold(u, nu);
	if (nu > max)
		nu = max;
	for (int i = nu - 1; i >= 0; i--) {
		const struct ws_frame *x = &u[i]->f;
		const char *name = x->sym ? ws_demangle(x->sym, d, sizeof(d)) : base(x->module);
		char py[WS_ESC_LEN];

		/* a Python function with its file, as py-spy names it (no line: one box per
		 * function) */
		if (u[i]->python) {
			snprintf(py, sizeof(py), "%s (%s)", x->sym ? x->sym : "[python unreadable]",
				 x->sym ? base(x->file) : "?");
			name = py;
		}
		fputc(';', f);
		/* names only (no offsets), so equal code paths stack together; a space may stay
		 * ("void (*)()"): the weight is after the line's last one */
		for (const unsigned char *p = (const unsigned char *)name; *p; p++)
			fputc(*p == ';' ? ':' : *p < ' ' || *p == 0x7f ? '?' : *p, f);
	}
}

void ws_stack_lines(FILE *f, const struct ws_stack *const parts[], int n)
{
	const struct ws_sframe *u[WS_STACK_MAX_FRAMES], *k[WS_STACK_MAX_FRAMES];
	int nu = collect(parts, n, false, u, WS_STACK_MAX_FRAMES);
	int nk = collect(parts, n, true, k, WS_STACK_MAX_FRAMES);
	char buf[1024], d[WS_DEMANGLE_MAX];

	for (int i = 0; i < nu + nk; i++) {
		struct ws_frame x = i < nu ? u[i]->f : k[i - nu]->f;

		if (i < nu && u[i]->python) {
			ws_sframe_format(u[i], buf, sizeof(buf));
			fprintf(f, "%s%s", i ? "\n" : "", buf);
			continue;
		}
		x.sym = ws_demangle(x.sym, d, sizeof(d));
		ws_frame_format(&x, buf, sizeof(buf));
		fprintf(f, "%s%s", i ? "\n" : "", buf);
	}
}

int ws_frame_format(const struct ws_frame *f, char *buf, size_t len)
{
	const char *mod = f->module ? strrchr(f->module, '/') : NULL;

	mod = mod ? mod + 1 : f->module;
	if (f->sym && f->file)
		return snprintf(buf, len, "%s+0x%" PRIx64 " (%s) %s:%u", f->sym, f->off, mod,
				f->file, f->line);
	if (f->sym)
		return snprintf(buf, len, "%s+0x%" PRIx64 " (%s)", f->sym, f->off, mod);
	if (mod)
		return snprintf(buf, len, "%s+0x%" PRIx64, mod, f->off);
	return snprintf(buf, len, "0x%" PRIx64, f->ip);
}

int ws_sframe_format(const struct ws_sframe *f, char *buf, size_t len)
{
	if (!f->python)
		return ws_frame_format(&f->f, buf, len);
	if (!f->f.sym)
		return snprintf(buf, len, "python frames unreadable");
	return snprintf(buf, len, "%s %s:%u (python)", f->f.sym, f->f.file ? f->f.file : "?",
			f->f.line);
}

const char *ws_unwind_stop_str(enum ws_unwind_stop stop)
{
	switch (stop) {
	case WS_UNWIND_END:
		return "end of stack";
	case WS_UNWIND_MAX_FRAMES:
		return "frame limit";
	case WS_UNWIND_DEADLINE:
		return "time limit";
	case WS_UNWIND_NO_MEMORY:
		return "stack copy too short";
	case WS_UNWIND_NO_CFI:
		return "no unwind information";
	case WS_UNWIND_STUCK:
		return "stack does not climb";
	case WS_UNWIND_BAD_FP:
		return "no frame record at the frame pointer";
	}
	return "?";
}

const char *ws_stack_cut(const struct ws_stack *const parts[], int n)
{
	for (int i = 0; i < n; i++)
		if (parts[i]->ustop && parts[i]->ustop - 1 != WS_UNWIND_END)
			return ws_unwind_stop_str((enum ws_unwind_stop)(parts[i]->ustop - 1));
	return NULL;
}
