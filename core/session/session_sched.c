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

	/* before the graph: a chain this switch ends may name either thread */
	session_cgroup_seen(s, sw->prev_tid, sw->prev_pid, sw->ts, false);
	session_cgroup_seen(s, sw->next_tid, sw->next_pid, sw->ts, false);
	ws_graph_switch(s->g, sw);
}

static void on_wake(void *ctx, const struct ws_wake *wk)
{
	struct ws_session *s = ctx;

	session_cgroup_seen(s, wk->waker_tid, wk->waker_pid, wk->ts, false);
	session_cgroup_seen(s, wk->wakee_tid, wk->wakee_pid, wk->ts, false);
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
		session_cgroup_seen(s, ev->tid, ev->pid, ev->ts, true);
	}
	/*
	 * a new name (exec, prctl): read again, a process may have moved itself before its exec;
	 * an untraced prev's name rides on its switches, unchanged, and is not a new one
	 */
	if (ev->type == WS_THREAD_COMM && ev->comm &&
	    strncmp(ws_graph_comm(s->g, ev->tid), ev->comm, WS_COMM - 1))
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
