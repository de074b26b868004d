// SPDX-License-Identifier: MIT
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ksyms.h"
#include "base/util.h"

/* kallsyms has no sizes: a kernel symbol is trusted only this far past its start. */
#define KSYM_MAX_SPAN (1u << 20)

/* Names are offsets into the file's text, kept whole in ws_ksyms.text (no copy per symbol). */
struct ksym {
	uint64_t addr;
	uint32_t name;
	uint32_t module; /* 0: the kernel itself (offset 0 is never a module's name) */
	bool text;
};

static int ksym_cmp(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/*
 * One line "ADDR TYPE NAME[\t[MODULE]]" at @p: fill @k, NUL-terminate its strings in place.
 * Returns the next line, and whether this one parsed in *@ok.
 */
static char *parse_line(char *text, char *p, struct ksym *k, bool *ok)
{
	char *eol = strchr(p, '\n'), *name, *end;

	if (eol)
		*eol = 0;
	*ok = false;
	k->addr = strtoull(p, &end, 16);
	if (end == p || end[0] != ' ' || !end[1] || end[2] != ' ')
		goto next;
	/* weak symbols (W) are functions too unless tagged as objects (V) */
	k->text = end[1] == 't' || end[1] == 'T' || end[1] == 'w' || end[1] == 'W';
	name = end + 3;
	end = name + strcspn(name, " \t");
	k->module = 0;
	if (*end) {
		char *mod = strchr(end + 1, '[');
		char *close = mod ? strchr(mod, ']') : NULL;

		*end = 0;
		if (close) {
			*close = 0;
			k->module = mod + 1 - text;
		}
	}
	if (end == name)
		goto next;
	k->name = name - text;
	*ok = true;
next:
	return eol ? eol + 1 : p + strlen(p);
}

/*
 * Read /proc/kallsyms once (~120k lines). Parsed in place: formatting them is the kernel's
 * part (~30 ms here); scanf and a copy of every name cost 4x that, for the few names a
 * report ever shows. The kernel's own symbols come sorted; modules' follow in load order.
 */
static void ksyms_load(struct ws_ksyms *s)
{
	size_t len = 0, cap = 0, n = 0;
	bool nonzero = false, sorted = true;
	char *p;

	s->tried = true;
	/* ~5.4 MB on a 6.18 kernel: start big enough for most */
	if (ws_read_file(s->path ? s->path : "/proc/kallsyms", 1u << 22, &s->text, &len))
		return;
	if (len >= UINT32_MAX) {
		free(s->text);
		s->text = NULL;
		return;
	}
	for (p = s->text; *p;) {
		struct ksym k;
		bool ok;

		p = parse_line(s->text, p, &k, &ok);
		if (!ok)
			continue;
		if (ws_grow((void **)&s->syms, &cap, n + 1, sizeof(*s->syms)))
			break;
		sorted &= !n || s->syms[n - 1].addr <= k.addr;
		nonzero |= k.addr != 0;
		s->syms[n++] = k;
	}
	if (!nonzero) { /* kptr_restrict hides the addresses: nothing can be resolved */
		free(s->syms);
		free(s->text);
		s->syms = NULL;
		s->text = NULL;
		return;
	}
	if (!sorted)
		qsort(s->syms, n, sizeof(*s->syms), ksym_cmp);
	s->n = n;
}

static void *ksyms_loader(void *arg)
{
	ksyms_load(arg);
	return NULL;
}

int ws_ksyms_preload(struct ws_ksyms *k)
{
	int err;

	if (k->tried || k->loading)
		return 0;
	err = pthread_create(&k->loader, NULL, ksyms_loader, k);
	if (err)
		return -err;
	k->loading = true;
	return 0;
}

/* The loader's work is done and seen (it alone touches @k until then). */
static void ksyms_loaded(struct ws_ksyms *k)
{
	if (k->loading) {
		pthread_join(k->loader, NULL);
		k->loading = false;
	}
}

void ws_ksyms_resolve(struct ws_ksyms *s, struct ws_strpool *strs, uint64_t ip, uint64_t look,
		      struct ws_frame *out)
{
	size_t lo = 0, hi, best;
	char mod[160];

	ksyms_loaded(s);
	if (!s->tried)
		ksyms_load(s);
	out->module = ws_strpool_intern(strs, "[kernel]");
	out->off = ip;
	hi = s->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->syms[mid].addr <= look)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return;
	best = lo - 1;
	/* Among symbols at one address any name is right; the extent ends at the next symbol of
	 * any kind, and the last symbol has no known end. */
	while (best > 0 && s->syms[best - 1].addr == s->syms[best].addr && !s->syms[best].text)
		best--;
	if (!s->syms[best].text || lo >= s->n || look - s->syms[best].addr >= KSYM_MAX_SPAN)
		return;
	out->sym = ws_strpool_intern(strs, s->text + s->syms[best].name);
	out->off = ip - s->syms[best].addr;
	if (s->syms[best].module) {
		snprintf(mod, sizeof(mod), "[%s]", s->text + s->syms[best].module);
		out->module = ws_strpool_intern(strs, mod);
	}
}

void ws_ksyms_free(struct ws_ksyms *k)
{
	ksyms_loaded(k);
	free(k->syms);
	free(k->text);
	k->syms = NULL;
	k->text = NULL;
	k->n = 0;
}
