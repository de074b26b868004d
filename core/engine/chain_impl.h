/* SPDX-License-Identifier: MIT */
/*
 * The chain's insides, shared by its files and by nothing else: chain.c (building a chain:
 * its links and segments), chain_roots.c (naming their roots).
 */
#ifndef WS_CHAIN_IMPL_H
#define WS_CHAIN_IMPL_H

#include <stddef.h>

/* declared, not included: chain.h is the interface, and including it here would make a cycle */
struct ws_chain;
struct ws_graph;
struct ws_link;

/* The root link @l names, as the report groups roots ("runqueue on CPU 2"), into @buf. */
void chain_root_of_link(struct ws_graph *g, const struct ws_link *l, char *buf, size_t len);
/* Every segment's root unknown yet; without room for them, none is kept. */
void chain_roots_reset(struct ws_chain *c);

#endif
