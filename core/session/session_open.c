// SPDX-License-Identifier: MIT
/*
 * The waits still open when tracing ended (stuck.h, from /proc) into the analysis: each
 * blocked thread's timeline ends in its wait, and the critical path names it. The records
 * alone cannot say so: a wait that never ended has no wakeup, and a source that summarises
 * short periods writes a switch-out only with the record that ends the wait.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "session_impl.h"
#include "report/critpath.h"
#include "stacks/stack_fmt.h"

void ws_session_set_open_waits(struct ws_session *s, const struct ws_stuck *open)
{
	s->open_end = open;
}

/* TASK_INTERRUPTIBLE, TASK_UNINTERRUPTIBLE, __TASK_STOPPED, __TASK_TRACED, by /proc's letter */
static uint32_t off_state_of(char state)
{
	switch (state) {
	case 'D':
		return 2;
	case 'T':
		return 4;
	case 't':
		return 8;
	default:
		return 1;
	}
}

/* A claim of the core's own (no source's): what /proc shows, or that nothing is known. */
static void core_claim(struct ws_claim *c, const char *kind, const char *evidence)
{
	strncpy(c->kind, kind, sizeof(c->kind) - 1);
	strncpy(c->evidence, evidence, sizeof(c->evidence) - 1);
	c->strength = WS_CLAIM_FALLBACK;
	c->root = true;
	c->owner = UINT16_MAX;
}

/*
 * What @t waits for as a claim (@c) and in words (@what, after "blocked on"; empty when
 * nothing says), as the open waits' own report words it.
 */
static void explain(const struct ws_stuck_thread *t, struct ws_claim *c, char *what, size_t len)
{
	/* claims are compared as bytes: padding too */
	memset(c, 0, sizeof(*c));
	c->sz = sizeof(*c);
	what[0] = 0;
	if (t->kind == WS_OPEN_STOPPED) {
		core_claim(c, "stopped", "stopped by a signal or a debugger when tracing ended");
		snprintf(what, len, "a stop (state %c: a signal or a debugger)", t->s.state);
		return;
	}
	if (t->source < 0) {
		core_claim(c, "unknown",
			   "still blocked when tracing ended; no source said on what");
		return;
	}
	memcpy(c, &t->claim, sizeof(*c));
	if (t->s.in_syscall) {
		c->syscall.nr = (int32_t)t->s.nr;
		c->syscall.arch = t->s.arch;
		memcpy(c->syscall.args, t->s.args, sizeof(c->syscall.args));
	}
	snprintf(what, len, "%s", t->what);
}

/*
 * @what, then where @t's user stack shows it waited (", in pthread_join (libc.so.6) ← main
 * (gt_join)") when it was read: a futex address alone does not tell a person which call it is.
 */
static void where(const struct ws_stuck_thread *t, const char *what, char *out, size_t len)
{
	const struct ws_stack *parts[1] = { t->ustack };
	char *text = NULL;
	size_t tlen = 0;
	int shown;
	FILE *f;

	snprintf(out, len, "%s", what);
	if (!t->ustack || !(f = open_memstream(&text, &tlen)))
		return;
	shown = ws_stack_text(f, parts, 1, 3);
	/* cut at @len: the words before the stack are whole */
	if (fclose(f) == 0 && shown)
		snprintf(out, len, "%s, %s", what, text);
	free(text);
}

void session_open_at_end(struct ws_session *s)
{
	const struct ws_stuck *open = s->open_end;

	s->open_end = NULL;
	if (!s->g || !s->rep)
		return;
	for (size_t i = 0; open && i < open->n; i++) {
		const struct ws_stuck_thread *t = &open->t[i];
		struct ws_claim c;
		char what[sizeof(t->what)], full[WS_CRITPATH_WHAT];

		if (t->kind == WS_OPEN_NONE)
			continue;
		explain(t, &c, what, sizeof(what));
		if (ws_graph_open_at_end(s->g, t->s.tid, ws_stuck_since(t), t->s.read_mono_ns,
					 off_state_of(t->s.state), &c)) {
			where(t, what, full, sizeof(full));
			ws_report_open_wait(s->rep, t->s.tid, full);
		}
	}
}
