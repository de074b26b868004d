// SPDX-License-Identifier: MIT
/* The GIL's waiters and holder for `stuck`: see gil_wait.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "gil_wait.h"
#include "access/useropen.h"
#include "stacks/procmaps.h"
#include "stacks/pystack.h"

#define MAX_PIDS 64

struct ws_gil_waits {
	struct ws_pystack *py;
	uint32_t checked[MAX_PIDS]; /* processes whose maps were read (once each) */
	int nchecked;
};

int ws_gil_waits_new(struct ws_gil_waits **out)
{
	struct ws_gil_waits *g = calloc(1, sizeof(*g));
	int err;

	*out = NULL;
	if (!g)
		return -ENOMEM;
	if ((err = ws_pystack_new(&g->py))) {
		free(g);
		return err;
	}
	*out = g;
	return 0;
}

void ws_gil_waits_free(struct ws_gil_waits *g)
{
	if (!g)
		return;
	ws_pystack_free(g->py);
	free(g);
}

/* Is @pid known to run CPython? Its maps are read the first time only (its files are opened as
 * its user, pystack.h). */
static void check_pid(struct ws_gil_waits *g, uint32_t pid)
{
	struct ws_reader_id id;
	struct ws_py_proc proc;
	char *text = NULL;

	for (int i = 0; i < g->nchecked; i++)
		if (g->checked[i] == pid)
			return;
	if (g->nchecked == MAX_PIDS)
		return;
	g->checked[g->nchecked++] = pid;
	if (ws_procmaps_read_text((pid_t)pid, &text) || !text)
		return;
	ws_pystack_check(g->py, pid, text, true, ws_reader_id_of((pid_t)pid, &id) ? NULL : &id,
			 &proc);
	free(text);
}

void ws_gil_wait_read(struct ws_gil_waits *g, uint32_t pid, uint64_t addr, struct ws_gil_wait *out)
{
	int err = -ENOENT;

	memset(out, 0, sizeof(*out));
	if (!g || !addr)
		return;
	check_pid(g, pid);
	if (ws_pystack_gil_wait(g->py, pid, addr, out->name, sizeof(out->name), &out->st, &err) !=
	    WS_PYSTACK_LOCK_GIL)
		return;
	out->waits = true;
	out->addr = addr;
	out->read = err == 0;
}

bool ws_gil_wait_same(const struct ws_gil_wait *before, const struct ws_gil_wait *now)
{
	return before && before->waits && now->waits && before->read && now->read &&
	       before->addr == now->addr && before->st.locked && now->st.locked &&
	       before->st.holder_ts == now->st.holder_ts && before->st.switches == now->st.switches;
}
