/* SPDX-License-Identifier: MIT */
/*
 * A small hash table: nonzero 64-bit keys to fixed-size values, open
 * addressing with linear probing, at most half full, backward-shift deletion
 * (no tombstones, so lookups stay short however many entries come and go).
 * Header-only, for plugins (per-thread calls in flight) and the core alike.
 *
 * Values move when the table grows or an entry is deleted: a pointer from
 * ws_table_get/put is valid until the next put or del.
 */
#ifndef WHYSLOW_TABLE_H
#define WHYSLOW_TABLE_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define WS_TABLE_MIN_CAP 64

struct ws_table {
	unsigned char *slots; /* cap slots: a uint64_t key (0 = free), then the value */
	size_t cap, live;
	size_t val_size;
};

static inline void ws_table_init(struct ws_table *t, size_t val_size)
{
	memset(t, 0, sizeof(*t));
	t->val_size = val_size;
}

static inline void ws_table_free(struct ws_table *t)
{
	free(t->slots);
	ws_table_init(t, t->val_size);
}

static inline size_t ws_table_slot_size(const struct ws_table *t)
{
	return sizeof(uint64_t) + (t->val_size + 7) / 8 * 8;
}

static inline uint64_t *ws_table_key_at(const struct ws_table *t, size_t i)
{
	return (uint64_t *)(t->slots + i * ws_table_slot_size(t));
}

/* The value in slot @i, or NULL when the slot is free (iterate i < t->cap). */
static inline void *ws_table_at(const struct ws_table *t, size_t i)
{
	uint64_t *k = ws_table_key_at(t, i);

	return *k ? (void *)(k + 1) : NULL;
}

/* The key of a value the table holds. */
static inline uint64_t ws_table_key_of(const void *val)
{
	return ((const uint64_t *)val)[-1];
}

static inline size_t ws_table_home(uint64_t key, size_t cap)
{
	/* Fibonacci hashing: consecutive tids and aligned addresses spread out */
	return (size_t)((key * 0x9e3779b97f4a7c15ull) >> 32) & (cap - 1);
}

static inline void *ws_table_get(const struct ws_table *t, uint64_t key)
{
	if (!t->cap || !key)
		return NULL;
	for (size_t i = ws_table_home(key, t->cap);; i = (i + 1) & (t->cap - 1)) {
		uint64_t *k = ws_table_key_at(t, i);

		if (*k == key)
			return k + 1;
		if (!*k)
			return NULL;
	}
}

/* The free slot or the slot of @key in @slots of @cap. */
static inline uint64_t *ws_table_probe(const struct ws_table *t, unsigned char *slots, size_t cap,
				       uint64_t key)
{
	size_t sz = ws_table_slot_size(t);

	for (size_t i = ws_table_home(key, cap);; i = (i + 1) & (cap - 1)) {
		uint64_t *k = (uint64_t *)(slots + i * sz);

		if (!*k || *k == key)
			return k;
	}
}

static inline int ws_table_grow(struct ws_table *t)
{
	size_t ncap = t->cap ? t->cap * 2 : WS_TABLE_MIN_CAP, sz = ws_table_slot_size(t);
	unsigned char *ns = (unsigned char *)calloc(ncap, sz);

	if (!ns)
		return -ENOMEM;
	for (size_t i = 0; i < t->cap; i++) {
		uint64_t *k = ws_table_key_at(t, i);

		if (*k)
			memcpy(ws_table_probe(t, ns, ncap, *k), k, sz);
	}
	free(t->slots);
	t->slots = ns;
	t->cap = ncap;
	return 0;
}

/*
 * The value of @key (nonzero), added zero-filled if absent (*@added says
 * which, when @added is set). NULL when out of memory or @key is 0.
 */
static inline void *ws_table_put(struct ws_table *t, uint64_t key, bool *added)
{
	uint64_t *k;

	if (added)
		*added = false;
	if (!key)
		return NULL;
	k = t->cap ? ws_table_probe(t, t->slots, t->cap, key) : NULL;
	if (k && *k == key)
		return k + 1;
	if ((t->live + 1) * 2 > t->cap) {
		if (ws_table_grow(t))
			return NULL;
		k = ws_table_probe(t, t->slots, t->cap, key);
	}
	*k = key;
	memset(k + 1, 0, t->val_size);
	t->live++;
	if (added)
		*added = true;
	return k + 1;
}

/* Remove the entry whose value is @val (from get, put or at). */
static inline void ws_table_del(struct ws_table *t, void *val)
{
	size_t sz = ws_table_slot_size(t), mask = t->cap - 1;
	size_t i = (size_t)((unsigned char *)val - sizeof(uint64_t) - t->slots) / sz, j = i;

	*ws_table_key_at(t, i) = 0;
	t->live--;
	/* backward shift: move up every entry whose probe chain ran through the hole */
	for (;;) {
		uint64_t *kj;
		size_t home;

		j = (j + 1) & mask;
		kj = ws_table_key_at(t, j);
		if (!*kj)
			return;
		home = ws_table_home(*kj, t->cap);
		if ((j > i && (home <= i || home > j)) || (j < i && home <= i && home > j)) {
			memcpy(ws_table_key_at(t, i), kj, sz);
			*kj = 0;
			i = j;
		}
	}
}

static inline bool ws_table_del_key(struct ws_table *t, uint64_t key)
{
	void *v = ws_table_get(t, key);

	if (v)
		ws_table_del(t, v);
	return v != NULL;
}

#endif /* WHYSLOW_TABLE_H */
