// SPDX-License-Identifier: MIT
#include <inttypes.h>

#include "short_text.h"
#include "base/util.h"

void ws_short_text(FILE *b, const struct ws_short_summary *s, ws_short_comm_fn comm, void *ctx)
{
	char what[64], d[32], e[4 * 64], ce[4 * WS_COMM];

	for (uint32_t i = 0; i < s->nc; i++) {
		const struct ws_short_cause *c = &s->c[i];
		const char *name = c->waker && comm ? comm(ctx, c->waker) : NULL;

		ws_short_cause_label(c, what, sizeof(what));
		ws_format_duration(c->ns, d, sizeof(d));
		fprintf(b, "%s%u on %s", i ? ", " : "", c->n, ws_text_esc(what, e, sizeof(e)));
		if (c->waker && c->nr != WS_SHORT_RUNQUEUE)
			fprintf(b, " (woken by tid %u (%s))", c->waker,
				ws_text_esc(name ? name : "?", ce, sizeof(ce)));
		fprintf(b, " = %s", d);
	}
	if (s->other_n) {
		ws_format_duration(s->other_ns, d, sizeof(d));
		fprintf(b, "%s%" PRIu64 " on other things = %s", s->nc ? ", " : "", s->other_n, d);
	}
}

void ws_short_json(FILE *b, const struct ws_short_summary *s, bool first)
{
	char what[64];

	for (uint32_t i = 0; i < s->nc; i++) {
		const struct ws_short_cause *c = &s->c[i];

		ws_short_cause_label(c, what, sizeof(what));
		fprintf(b, "%s{\"resource\":", first && !i ? "" : ",");
		ws_json_str(b, what);
		fprintf(b,
			",\"waits\":%u,\"ns\":%" PRIu64 ",\"summarised\":true,\"woken_by\":", c->n,
			c->ns);
		if (c->waker && c->nr != WS_SHORT_RUNQUEUE)
			fprintf(b, "%u}", c->waker);
		else
			fprintf(b, "null}");
	}
	if (s->other_n)
		fprintf(b,
			"%s{\"resource\":null,\"waits\":%" PRIu64 ",\"ns\":%" PRIu64
			",\"summarised\":true,\"woken_by\":null}",
			first && !s->nc ? "" : ",", s->other_n, s->other_ns);
}
