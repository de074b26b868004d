// SPDX-License-Identifier: MIT
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "ksyms.h"
#include "util.h"

/* kallsyms has no sizes: a kernel symbol is trusted only this far past its start. */
#define KSYM_MAX_SPAN (1u << 20)

struct ksym {
	uint64_t addr;
	const char *name;
	const char *module;
	bool text;
};

static int ksym_cmp(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static void ksyms_load(struct ws_ksyms *s, struct ws_strpool *strs)
{
	FILE *f = fopen("/proc/kallsyms", "re");
	char line[512];
	size_t cap = 0, n = 0;
	bool nonzero = false;

	s->tried = true;
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char type, name[256], mod[128] = "";
		uint64_t addr;
		int k = sscanf(line, "%" SCNx64 " %c %255s [%127[^]]]", &addr, &type, name, mod);

		if (k < 3)
			continue;
		if (ws_grow((void **)&s->syms, &cap, n + 1, sizeof(*s->syms)))
			break;
		s->syms[n].addr = addr;
		s->syms[n].name = ws_strpool_intern(strs, name);
		s->syms[n].module = k == 4 ? ws_strpool_intern(strs, mod) : NULL;
		s->syms[n].text = type == 't' || type == 'T';
		nonzero |= addr != 0;
		if (s->syms[n].name)
			n++;
	}
	fclose(f);
	if (!nonzero) { /* kptr_restrict hides the addresses: nothing can be resolved */
		free(s->syms);
		s->syms = NULL;
		n = 0;
	}
	qsort(s->syms, n, sizeof(*s->syms), ksym_cmp);
	s->n = n;
}

void ws_ksyms_resolve(struct ws_ksyms *s, struct ws_strpool *strs, uint64_t ip, uint64_t look,
		      struct ws_frame *out)
{
	size_t lo = 0, hi, best;
	char mod[160];

	if (!s->tried)
		ksyms_load(s, strs);
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
	out->sym = s->syms[best].name;
	out->off = ip - s->syms[best].addr;
	if (s->syms[best].module) {
		snprintf(mod, sizeof(mod), "[%s]", s->syms[best].module);
		out->module = ws_strpool_intern(strs, mod);
	}
}

void ws_ksyms_free(struct ws_ksyms *k)
{
	free(k->syms);
	k->syms = NULL;
	k->n = 0;
}
