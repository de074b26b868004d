// SPDX-License-Identifier: MIT
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "losses.h"

int ws_losses_add(struct ws_losses *l, uint32_t cpu, uint32_t kind, uint64_t n)
{
	if (!n)
		return 0;
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 16;
		struct ws_loss *v = realloc(l->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		l->v = v;
		l->cap = cap;
	}
	l->v[l->n++] = (struct ws_loss){ .cpu = cpu, .kind = kind, .n = n };
	return 0;
}

static int by_cpu_kind(const void *a, const void *b)
{
	const struct ws_loss *x = a, *y = b;

	if (x->cpu != y->cpu)
		return x->cpu < y->cpu ? -1 : 1;
	return x->kind < y->kind ? -1 : x->kind > y->kind;
}

void ws_losses_settle(struct ws_losses *l)
{
	size_t w = 0;

	if (!l->n)
		return;
	qsort(l->v, l->n, sizeof(*l->v), by_cpu_kind);
	for (size_t i = 1; i < l->n; i++) {
		if (l->v[i].cpu == l->v[w].cpu && l->v[i].kind == l->v[w].kind)
			l->v[w].n = l->v[w].n > UINT64_MAX - l->v[i].n ? UINT64_MAX
								       : l->v[w].n + l->v[i].n;
		else
			l->v[++w] = l->v[i];
	}
	l->n = w + 1;
}

uint64_t ws_losses_total(const struct ws_losses *l)
{
	uint64_t t = 0;

	for (size_t i = 0; l && i < l->n; i++)
		t += l->v[i].n;
	return t;
}

uint64_t ws_losses_of_kind(const struct ws_losses *l, uint32_t kind)
{
	uint64_t t = 0;

	for (size_t i = 0; l && i < l->n; i++)
		if (l->v[i].kind == kind)
			t += l->v[i].n;
	return t;
}

void ws_losses_json(const struct ws_losses *l, FILE *f)
{
	fputc('{', f);
	for (size_t i = 0; l && i < l->n; i++) {
		bool first_of_cpu = !i || l->v[i].cpu != l->v[i - 1].cpu;

		if (first_of_cpu)
			fprintf(f, "%s\"cpu%" PRIu32 "\":{", i ? "}," : "", l->v[i].cpu);
		fprintf(f, "%s\"0x%" PRIx32 "\":%" PRIu64, first_of_cpu ? "" : ",", l->v[i].kind,
			l->v[i].n);
	}
	fputs(l && l->n ? "}}" : "}", f);
}

char *ws_losses_text(const struct ws_losses *l)
{
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);

	if (!f)
		return NULL;
	ws_losses_json(l, f);
	if (fclose(f)) {
		free(out);
		return NULL;
	}
	return out;
}

/* Reads the digits at *@p as a number of at most @max (base 10, or 16 after 0x). */
static bool number(const char **p, bool hex, uint64_t max, uint64_t *out)
{
	const char *s = *p;
	uint64_t v = 0;
	int d, digits = 0;

	for (;; s++, digits++) {
		if (*s >= '0' && *s <= '9')
			d = *s - '0';
		else if (hex && *s >= 'a' && *s <= 'f')
			d = *s - 'a' + 10;
		else
			break;
		if (v > (max - (uint64_t)d) / (hex ? 16 : 10))
			return false;
		v = v * (hex ? 16 : 10) + (uint64_t)d;
	}
	*p = s;
	*out = v;
	return digits > 0;
}

static bool take(const char **p, const char *lit)
{
	size_t n = strlen(lit);

	if (strncmp(*p, lit, n))
		return false;
	*p += n;
	return true;
}

int ws_losses_parse(const char *text, struct ws_losses *l)
{
	const char *p = text;
	uint64_t cpu, kind, n;
	int err = 0;

	memset(l, 0, sizeof(*l));
	if (!take(&p, "{"))
		goto bad;
	if (take(&p, "}"))
		return *p ? (err = -EINVAL) : 0;
	do {
		if (!take(&p, "\"cpu") || !number(&p, false, UINT32_MAX, &cpu) || !take(&p, "\":{"))
			goto bad;
		do {
			if (!take(&p, "\"0x") || !number(&p, true, UINT32_MAX, &kind) ||
			    !take(&p, "\":") || !number(&p, false, UINT64_MAX, &n))
				goto bad;
			err = ws_losses_add(l, (uint32_t)cpu, (uint32_t)kind, n);
			if (err)
				goto fail;
		} while (take(&p, ","));
		if (!take(&p, "}"))
			goto bad;
	} while (take(&p, ","));
	if (!take(&p, "}") || *p)
		goto bad;
	ws_losses_settle(l);
	return 0;
bad:
	err = -EINVAL;
fail:
	ws_losses_free(l);
	return err;
}

int ws_losses_copy(struct ws_losses *dst, const struct ws_losses *src)
{
	memset(dst, 0, sizeof(*dst));
	if (!src || !src->n)
		return 0;
	dst->v = malloc(src->n * sizeof(*dst->v));
	if (!dst->v)
		return -ENOMEM;
	memcpy(dst->v, src->v, src->n * sizeof(*dst->v));
	dst->n = dst->cap = src->n;
	return 0;
}

void ws_losses_free(struct ws_losses *l)
{
	free(l->v);
	memset(l, 0, sizeof(*l));
}
