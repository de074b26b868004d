/* SPDX-License-Identifier: MIT */
/*
 * Interned strings: one copy of each, living until the pool is freed, so symbol and file
 * names can be handed out as plain pointers and compared by address.
 */
#ifndef WS_STRPOOL_H
#define WS_STRPOOL_H

#include <whyslow/table.h>

struct ws_strpool {
	struct ws_table idx; /* hash (probed on past a collision) -> char * */
};

void ws_strpool_init(struct ws_strpool *p);

/* The pool's copy of @s; NULL when out of memory. */
const char *ws_strpool_intern(struct ws_strpool *p, const char *s);

void ws_strpool_free(struct ws_strpool *p);

#endif
