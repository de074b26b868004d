// SPDX-License-Identifier: MIT
/* The set of traced thread groups, and their exits. */
#include "session_impl.h"

bool session_pid_traced(struct ws_session *s, uint32_t pid)
{
	struct pid_answer *a = &s->pids_asked[pid % PIDS_ASKED];

	if (!a->known || a->pid != pid)
		*a = (struct pid_answer){ .pid = pid,
					  .known = true,
					  .traced = ws_table_get(&s->pids, pid) != NULL };
	return a->traced;
}

/* The set of traced thread groups changed: no answer given so far still holds. */
static void pids_changed(struct ws_session *s)
{
	memset(s->pids_asked, 0, sizeof(s->pids_asked));
}

int session_pid_add(struct ws_session *s, uint32_t pid)
{
	pids_changed(s);
	return ws_table_put(&s->pids, pid, NULL) ? 0 : -ENOMEM;
}

/* A traced thread group lost its last thread at @ts (core record from the kernel filter). */
void session_pid_gone(struct ws_session *s, uint32_t pid, uint64_t ts)
{
	if (!session_pid_traced(s, pid) ||
	    ws_grow((void **)&s->gone, &s->gone_cap, s->ngone + 1, sizeof(*s->gone)))
		return;
	s->gone[s->ngone++] = (struct gone_pid){ pid, ts };
}

void session_pid_left(struct ws_session *s, uint32_t pid, uint64_t ts)
{
	if (!session_pid_traced(s, pid))
		return;
	ws_table_del_key(&s->pids, pid);
	pids_changed(s);
	ws_graph_retire_pid(s->g, pid, ts);
}

/* A new traced thread group took @pid: an earlier exit of that pid no longer applies. */
void session_pid_reborn(struct ws_session *s, uint32_t pid)
{
	size_t k = 0;

	for (size_t i = 0; i < s->ngone; i++)
		if (s->gone[i].pid != pid)
			s->gone[k++] = s->gone[i];
	s->ngone = k;
}

/*
 * Forget thread groups gone for a while: their last switch-outs have been
 * dispatched by then, and a later process reusing the pid is not one we trace.
 * Threads still open (their end was lost) are retired.
 */
void session_pids_expire(struct ws_session *s, uint64_t now)
{
	size_t n = 0, k = 0;

	while (n < s->ngone && s->gone[n].ts + GONE_GRACE_NS < now)
		n++;
	if (!n)
		return;
	for (size_t i = 0; i < n; i++) {
		ws_table_del_key(&s->pids, s->gone[i].pid);
		pids_changed(s);
		ws_graph_retire_pid(s->g, s->gone[i].pid, s->gone[i].ts);
	}
	for (size_t i = n; i < s->ngone; i++)
		s->gone[k++] = s->gone[i];
	s->ngone = k;
}
