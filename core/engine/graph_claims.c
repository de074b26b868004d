// SPDX-License-Identifier: MIT
/*
 * Claims, interned: thousands of waits on one futex share one copy of its explanation, and
 * a claim goes when the last interval holding it leaves the history.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph_impl.h"
#include "base/util.h"

struct ws_field *ws_claim_field_add(struct ws_claim *c, const char *key, enum ws_field_type t)
{
	struct ws_field *f;

	if (c->nfields >= WS_CLAIM_FIELDS)
		return NULL;
	f = &c->fields[c->nfields++];
	memset(f, 0, sizeof(*f));
	ws_str_copy(f->key, sizeof(f->key), key);
	f->type = t;
	return f;
}

void ws_claim_put_u64(struct ws_claim *c, const char *key, uint64_t v)
{
	struct ws_field *f = ws_claim_field_add(c, key, WS_FIELD_U64);

	if (f)
		f->u = v;
}

void ws_claim_put_hex(struct ws_claim *c, const char *key, uint64_t v)
{
	struct ws_field *f = ws_claim_field_add(c, key, WS_FIELD_HEX);

	if (f)
		f->u = v;
}

void ws_claim_put_str(struct ws_claim *c, const char *key, const char *v)
{
	struct ws_field *f = ws_claim_field_add(c, key, WS_FIELD_STR);

	if (f)
		ws_str_copy(f->s, sizeof(f->s), v ? v : "");
}

/* The bytes of a claim that can differ: unused fields are zero (see infer in graph.c). */
static size_t claim_used(const struct ws_claim *c)
{
	unsigned int n = c->nfields < WS_CLAIM_FIELDS ? c->nfields : WS_CLAIM_FIELDS;

	return offsetof(struct ws_claim, fields) + n * sizeof(c->fields[0]);
}

_Static_assert(offsetof(struct ws_claim, syscall) + sizeof(struct ws_syscall) <=
		       offsetof(struct ws_claim, fields),
	       "claim_used() must cover the syscall: claim_equal and claim_hash read it there");

/* @a may be an interned copy, its used bytes only: the same nfields first, then the bytes */
static bool claim_equal(const struct ws_claim *a, const struct ws_claim *b)
{
	/* (the syscall lies inside the used bytes) */
	return a->owner == b->owner && a->ended_owner == b->ended_owner &&
	       a->nfields == b->nfields && memcmp(a, b, claim_used(b)) == 0;
}

void graph_claim_unpack(const struct ws_claim *in, struct ws_claim *out)
{
	ws_zero(out, sizeof(*out));
	memcpy(out, in, claim_used(in));
}

/* The table's key for @c: its hash, never 0 (the table's "free"). */
static uint64_t claim_hash(const struct ws_claim *c)
{
	/* (the syscall lies inside the used bytes) */
	uint64_t h = ws_hash_bytes(c, claim_used(c)) ^ c->owner ^ ((uint64_t)c->ended_owner << 16);

	return h ? h : 1;
}

int ws_graph_resource(struct ws_graph *g, const struct ws_claim *c, char *buf, size_t len)
{
	int n = 0;

	if (len)
		buf[0] = 0;
	if (c && len && g->ops.resource)
		n = g->ops.resource(g->ops.ctx, c, buf, len);
	if (n <= 0 || (size_t)n >= len) {
		if (len)
			buf[0] = 0;
		return 0;
	}
	return n;
}

int ws_graph_root_label(struct ws_graph *g, const struct ws_claim *c, const char *comm, char *buf,
			size_t len)
{
	int n = 0;

	if (!len)
		return 0;
	buf[0] = 0;
	if (c && g->ops.root_label)
		n = g->ops.root_label(g->ops.ctx, c, comm, buf, len);
	if (n <= 0) {
		buf[0] = 0;
		return 0;
	}
	return strlen(buf); /* a long label is cut, as the summary prints it */
}

/*
 * Odd keys name a resource (its source, kind and name hashed); even keys are a claim's own id,
 * for claims that name none. Computed once, when the claim is first interned.
 */
static uint64_t claim_group_of(struct ws_graph *g, const struct ws_claim *c, uint32_t id)
{
	char res[128];
	int n = ws_graph_resource(g, c, res, sizeof(res));

	if (n <= 0)
		return (uint64_t)id << 1;
	return (ws_hash_bytes(res, n) ^ ws_hash_bytes(c->kind, strnlen(c->kind, sizeof(c->kind))) ^
		((uint64_t)c->owner << 48)) |
	       1;
}

uint64_t ws_graph_claim_group(struct ws_graph *g, uint32_t id)
{
	return id && id < g->nclaims && g->claims[id].refs ? g->claims[id].group : 0;
}

const struct ws_claim *ws_graph_claim(struct ws_graph *g, uint32_t id)
{
	return id && id < g->nclaims && g->claims[id].refs ? g->claims[id].c : NULL;
}

/* Slot @id is free again (a lost id is only a slot not reused). */
static void claim_free_id(struct ws_graph *g, uint32_t id)
{
	if (!ws_grow((void **)&g->claim_free, &g->free_cap, g->nfree + 1, sizeof(uint32_t)))
		g->claim_free[g->nfree++] = id;
}

static uint32_t claim_new_id(struct ws_graph *g)
{
	if (g->nfree)
		return g->claim_free[--g->nfree];
	if (ws_grow((void **)&g->claims, &g->claims_cap, g->nclaims + 1, sizeof(*g->claims)))
		return CLAIM_NONE;
	if (!g->nclaims)
		g->nclaims = 1; /* id 0 means "no claim" */
	return g->nclaims++;
}

/* Intern @c (whose padding and unused bytes must be zero); returns an id, 0 on ENOMEM. */
uint32_t graph_claim_intern(struct ws_graph *g, const struct ws_claim *c)
{
	uint64_t h = claim_hash(c);
	uint32_t *head = ws_table_get(&g->claim_index, h), id;
	size_t used = claim_used(c);
	struct ws_claim *copy;
	bool added;

	for (id = head ? *head : CLAIM_NONE; id; id = g->claims[id].next_same) {
		if (claim_equal(g->claims[id].c, c)) {
			g->claims[id].refs++;
			return id;
		}
	}
	head = ws_table_put(&g->claim_index, h, &added);
	id = head ? claim_new_id(g) : CLAIM_NONE;
	copy = id ? malloc(used) : NULL;
	if (!copy) {
		if (id) {
			g->claims[id] = (struct claim_slot){ 0 };
			claim_free_id(g, id);
		}
		if (head && added)
			ws_table_del(&g->claim_index, head);
		graph_oom(g, g->last_ts);
		return CLAIM_NONE;
	}
	memcpy(copy, c, used);
	g->claims[id] = (struct claim_slot){ .c = copy, .hash = h, .refs = 1, .next_same = *head };
	g->claims[id].group = claim_group_of(g, c, id);
	*head = id;
	g->claims_live++;
	return id;
}

/*
 * graph_claim_intern(), trying *@hint first, and setting it to the answer: a thread woken
 * again and again by the same partner for the same reason has the same claim each time, and
 * comparing against it is cheaper than hashing the claim (4% of `report`). A live claim is
 * the only live one with its bytes, so a match is the id interning would find; a freed
 * one is never taken.
 */
uint32_t graph_claim_intern_near(struct ws_graph *g, const struct ws_claim *c, uint32_t *hint)
{
	uint32_t id = *hint;

	if (id && id < g->nclaims && g->claims[id].refs && claim_equal(g->claims[id].c, c)) {
		g->claims[id].refs++;
		return id;
	}
	return *hint = graph_claim_intern(g, c);
}

/* A claim made by the core itself when no source has one. */
uint32_t graph_core_claim(struct ws_graph *g, const char *kind, const char *evidence)
{
	const size_t nmemo = sizeof(g->core_recent) / sizeof(g->core_recent[0]);
	struct core_claim_memo *m;

	for (size_t i = 0; i < nmemo; i++) {
		m = &g->core_recent[i];
		if (m->kind == kind && m->evidence == evidence)
			return graph_claim_intern_near(g, &m->c, &m->id);
	}
	m = &g->core_recent[g->core_recent_next];
	g->core_recent_next = (g->core_recent_next + 1) % nmemo;
	memset(&m->c, 0, sizeof(m->c));
	m->c.sz = sizeof(m->c);
	m->c.strength = WS_CLAIM_FALLBACK;
	m->c.root = true;
	m->c.owner = UINT16_MAX;
	strncpy(m->c.kind, kind, sizeof(m->c.kind) - 1);
	strncpy(m->c.evidence, evidence, sizeof(m->c.evidence) - 1);
	m->kind = kind;
	m->evidence = evidence;
	m->id = CLAIM_NONE;
	return graph_claim_intern_near(g, &m->c, &m->id);
}

uint32_t graph_claim_ref(struct ws_graph *g, uint32_t id)
{
	if (id != CLAIM_NONE)
		g->claims[id].refs++;
	return id;
}

void graph_claim_put(struct ws_graph *g, uint32_t id)
{
	struct claim_slot *s;
	uint32_t *link;

	if (id == CLAIM_NONE)
		return;
	s = &g->claims[id];
	if (--s->refs)
		return;
	g->claims_live--;
	/* unlink it from the claims of its hash; the table entry goes with the last of them */
	link = ws_table_get(&g->claim_index, s->hash);
	while (link && *link != id)
		link = &g->claims[*link].next_same;
	if (link) {
		*link = s->next_same;
		if (link == ws_table_get(&g->claim_index, s->hash) && !*link)
			ws_table_del(&g->claim_index, link);
	}
	free(s->c);
	s->c = NULL;
	claim_free_id(g, id);
}

void graph_claims_free(struct ws_graph *g)
{
	for (size_t i = 1; i < g->nclaims; i++)
		free(g->claims[i].c); /* NULL when free */
	free(g->claims);
	free(g->claim_free);
	ws_table_free(&g->claim_index);
}
