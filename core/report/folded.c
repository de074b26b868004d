// SPDX-License-Identifier: MIT
/*
 * Folded stacks ("frame;frame;frame weight"), the input of flamegraph.pl, inferno and
 * speedscope, for a causal flame graph: one line per piece of a reported wait, so a tower
 * stands for who waited, on what, who woke them, what that thread was doing — hop after hop —
 * and the root cause. The weights of one chain's lines add up to its blocked time. Frames name
 * resources (a futex address, a device), not single requests, so equal causes stack together.
 */
#include <inttypes.h>
#include <string.h>

#include "folded.h"
#include "requests.h"
#include "link_stacks.h"
#include "stacks/stack_fmt.h"

/* A frame never holds the separators of the format: ';' splits frames, the last ' ' the weight. */
static void frame(FILE *out, const char *prefix, const char *s, const char *suffix)
{
	fputs(prefix, out);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		fputc(*p == ';' ? ':' : *p < ' ' || *p == 0x7f ? '?' : *p, out);
	fputs(suffix, out);
}

/* "[futex 0x7f..]", "[block_io loop0]": a link's kind and the resource its claim names first. */
static void link_frame(FILE *out, const char *kind, const struct ws_claim *cl)
{
	char res[48] = "";

	if (cl && cl->nfields) {
		const struct ws_field *f = &cl->fields[0];

		if (f->type == WS_FIELD_HEX)
			snprintf(res, sizeof(res), " 0x%" PRIx64, f->u);
		else if (f->type == WS_FIELD_STR)
			snprintf(res, sizeof(res), " %.*s", (int)sizeof(f->s), f->s);
	}
	frame(out, ";[", kind, "");
	frame(out, "", res, "]");
}

/* The code @l's thread waited in, outermost first, just before the link's own frame. */
static void stack_frames(FILE *out, const struct ws_stacks *stacks, const struct ws_link *l)
{
	struct ws_link_stacks st;

	if (!stacks || !l)
		return;
	ws_link_stacks(stacks, l, &st);
	ws_stack_folded(out, st.own, st.nown, WS_STACK_MAX_FRAMES);
}

void ws_folded_chain(FILE *out, struct ws_graph *g, const struct ws_chain *c,
		     const struct ws_stacks *stacks)
{
	const char *comm = c->victim->comm[0] ? c->victim->comm : "?";
	const struct ws_link *first = c->nlinks ? &c->links[0] : NULL;
	struct ws_chain hops;

	for (size_t i = 0; i < c->nsegs; i++) {
		const struct ws_segment *s = &c->segs[i];
		struct ws_seg_root scratch;

		if (!s->dur)
			continue;
		frame(out, "", comm, "");
		if (s->thread == c->victim) {
			/* the victim's own part: its wait as claimed, or its queueing for a CPU */
			if (!strcmp(s->kind, WS_KIND_RUNQUEUE)) {
				link_frame(out, WS_KIND_RUNQUEUE, NULL);
			} else {
				/* the code it waited in, for its wait (not its wakeup latency) */
				if (first && s->claim == first->claim)
					stack_frames(out, stacks, first);
				link_frame(out, s->kind, s->claim);
			}
		} else {
			stack_frames(out, stacks, first);
			link_frame(out, first ? first->kind : WS_KIND_UNKNOWN,
				   first ? first->claim : NULL);
			ws_chain_walk_segment(g, s, &hops);
			for (int k = 0; k < hops.nlinks; k++) {
				frame(out, ";[woken by ",
				      hops.links[k].comm ? hops.links[k].comm : "?", "]");
				stack_frames(out, stacks, &hops.links[k]);
				link_frame(out, hops.links[k].kind, hops.links[k].claim);
			}
			if (!hops.nlinks) {
				frame(out, ";[woken by ",
				      s->thread && s->thread->comm[0] ? s->thread->comm : "?", "]");
				link_frame(out, s->kind, s->claim);
			}
			frame(out, ";[root: ", ws_chain_seg_root(g, c, i, &scratch)->key, "]");
		}
		fprintf(out, " %" PRIu64 "\n", s->dur);
	}
}

void ws_folded_request(FILE *out, const struct ws_request *q)
{
	for (int i = 0; i < q->nparts; i++) {
		frame(out, "", q->comm, ";");
		frame(out, "[request on ", q->local, "];");
		frame(out, "[", q->parts[i].what, "]");
		fprintf(out, " %" PRIu64 "\n", q->parts[i].ns);
	}
}
