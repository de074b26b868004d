// SPDX-License-Identifier: MIT
/*
 * The scheduler model's records into the analysis: sched/ decodes them, and here each event
 * goes to the graph, with what the session keeps beside it (the traced set follows forks, a
 * thread's exit releases the chain held back for its last wait, killed waits are noted).
 */
#include "session_impl.h"

static void on_switch(void *ctx, const struct ws_switch *sw)
{
	struct ws_session *s = ctx;

	/* both threads' cgroups were read as the record arrived (session_ring.c) */
	ws_graph_switch(s->g, sw);
}

static void on_wake(void *ctx, const struct ws_wake *wk)
{
	struct ws_session *s = ctx;

	ws_graph_wake(s->g, wk);
}

static void on_thread(void *ctx, const struct ws_thread_event *ev)
{
	struct ws_session *s = ctx;

	if (ev->type == WS_THREAD_EXIT)
		session_held_exit(s, ev);
	/* the model reports only forks of traced threads */
	if (ev->type == WS_THREAD_NEW) {
		session_pid_reborn(s, ev->pid);
		session_pid_add(s, ev->pid);
		/* read as it arrived (session_ring.c); again: it may have moved since */
		session_cgroup_born(s, ev);
	}
	/*
	 * its own rename (exec, prctl): read again, a process may have moved itself before its
	 * exec (a name an untraced prev's switches carry is none)
	 */
	if (ev->type == WS_THREAD_COMM && ev->renamed)
		session_cgroup_seen(s, ev->tid, ev->pid, ev->ts, true);
	ws_killed_note(&s->killed, s->g, ev);
	ws_graph_thread_event(s->g, ev);
}

void session_sched_record(struct ws_session *s, const struct ws_rec_hdr *rec)
{
	const struct ws_sched_feed feed = {
		.ctx = s,
		.on_switch = on_switch,
		.on_wake = on_wake,
		.on_thread = on_thread,
	};

	if (ws_sched_decode(rec, &feed) < 0)
		s->bad_records++;
}
