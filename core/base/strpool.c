// SPDX-License-Identifier: MIT
#include <stdlib.h>
#include <string.h>

#include "strpool.h"
#include "util.h"

void ws_strpool_init(struct ws_strpool *p)
{
	ws_table_init(&p->idx, sizeof(char *));
}

/*
 * Keys are the string's hash; two strings with one hash take consecutive keys. Nothing is
 * ever removed, so a lookup that meets a free key has seen every string of that hash.
 */
const char *ws_strpool_intern(struct ws_strpool *p, const char *s)
{
	uint64_t key = ws_hash_bytes(s, strlen(s));

	for (;; key++) {
		char **slot = ws_table_get(&p->idx, key ? key : 1);
		char *copy;

		if (slot && !strcmp(*slot, s))
			return *slot;
		if (slot)
			continue;
		copy = strdup(s);
		slot = copy ? ws_table_put(&p->idx, key ? key : 1, NULL) : NULL;
		if (!slot) {
			free(copy);
			return NULL;
		}
		*slot = copy;
		return copy;
	}
}

void ws_strpool_free(struct ws_strpool *p)
{
	for (size_t i = 0; i < p->idx.cap; i++) {
		char **s = ws_table_at(&p->idx, i);

		if (s)
			free(*s);
	}
	ws_table_free(&p->idx);
}
