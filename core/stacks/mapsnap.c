// SPDX-License-Identifier: MIT
#include <bpf/bpf.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "mapsnap.h"
#include "procmaps.h"
#include "base/clock.h"
#include "base/util.h"

/* The last maps text read of a traced process: what its stacks unwind with once it is gone. */
struct snapshot {
	uint32_t pid;
	uint64_t first_ns, taken_ns; /* first seen (or seen to exec), last read (or tried) */
	uint64_t exe_dev, exe_ino;   /* the program it runs */
	char *text; /* NULL: none yet (it still ran whyslow's own program: not exec()ed yet) */
	struct ws_reader_id id; /* its user's credentials, read with the maps: files it names are
				 * opened with these, also once it is gone */
	bool have_id;
	bool syms_have;
};

struct ws_mapsnap {
	pthread_mutex_t lock; /* the snapshots: the reader and the watcher both take them */
	struct snapshot *snaps;
	size_t nsnaps, snaps_cap;
	bool self_known; /* whyslow's own program, to tell a command not exec()ed yet */
	uint64_t self_dev, self_ino;
	/* the watcher */
	pthread_t thread;
	bool watching, stop, busy;
	uint64_t busy_since;
	int tgids_fd;
	pthread_cond_t wake;
	/* called with @lock held after each snapshot taken, in whichever thread took it */
	ws_mapsnap_hook hook;
	void *hook_ctx;
	ws_mapsnap_busy_hook busy_hook; /* the watcher's, while the reader is busy */
	void *busy_hook_ctx;
};

void ws_mapsnap_set_busy_hook(struct ws_mapsnap *ms, ws_mapsnap_busy_hook hook, void *ctx)
{
	pthread_mutex_lock(&ms->lock);
	ms->busy_hook = hook;
	ms->busy_hook_ctx = ctx;
	pthread_mutex_unlock(&ms->lock);
}

void ws_mapsnap_set_hook(struct ws_mapsnap *ms, ws_mapsnap_hook hook, void *ctx)
{
	pthread_mutex_lock(&ms->lock);
	ms->hook = hook;
	ms->hook_ctx = ctx;
	pthread_mutex_unlock(&ms->lock);
}

bool ws_mapsnap_exe(uint32_t pid, uint64_t *dev, uint64_t *ino)
{
	char path[48];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%u/exe", pid);
	if (stat(path, &st))
		return false;
	*dev = st.st_dev;
	*ino = st.st_ino;
	return true;
}

int ws_mapsnap_new(struct ws_mapsnap **out)
{
	struct ws_mapsnap *ms = calloc(1, sizeof(*ms));

	if (!ms)
		return -ENOMEM;
	pthread_mutex_init(&ms->lock, NULL);
	pthread_cond_init(&ms->wake, NULL);
	ms->tgids_fd = -1;
	ms->self_known = ws_mapsnap_exe(getpid(), &ms->self_dev, &ms->self_ino);
	*out = ms;
	return 0;
}

void ws_mapsnap_free(struct ws_mapsnap *ms)
{
	if (!ms)
		return;
	if (ms->watching) {
		pthread_mutex_lock(&ms->lock);
		ms->stop = true;
		pthread_cond_signal(&ms->wake);
		pthread_mutex_unlock(&ms->lock);
		pthread_join(ms->thread, NULL);
	}
	for (size_t i = 0; i < ms->nsnaps; i++)
		free(ms->snaps[i].text);
	free(ms->snaps);
	pthread_cond_destroy(&ms->wake);
	pthread_mutex_destroy(&ms->lock);
	free(ms);
}

static struct snapshot *snapshot_of(struct ws_mapsnap *ms, uint32_t pid)
{
	for (size_t i = 0; i < ms->nsnaps; i++)
		if (ms->snaps[i].pid == pid)
			return &ms->snaps[i];
	return NULL;
}

static struct snapshot *snapshot_add(struct ws_mapsnap *ms, uint32_t pid, uint64_t now)
{
	if (ws_grow((void **)&ms->snaps, &ms->snaps_cap, ms->nsnaps + 1, sizeof(*ms->snaps)))
		return NULL;
	ms->snaps[ms->nsnaps] = (struct snapshot){ .pid = pid, .first_ns = now };
	return &ms->snaps[ms->nsnaps++];
}

/* ws_mapsnap_take() with the lock held. */
static int take(struct ws_mapsnap *ms, uint32_t pid, uint64_t now)
{
	struct snapshot *sn = snapshot_of(ms, pid);
	uint64_t dev = 0, ino = 0;
	struct ws_reader_id id, id2;
	char *text;
	bool live, exec, id_ok;
	int err;

	/* past start-up maps change rarely: once a second, not even a stat before */
	if (sn && now - sn->first_ns >= WS_MAPSNAP_YOUNG_NS &&
	    now - sn->taken_ns < WS_MAPSNAP_REFRESH_NS)
		return 0;
	/* a command `whyslow run` started that has not exec()ed yet is a copy of whyslow: its
	 * maps would name whyslow's code, never the program's */
	live = ws_mapsnap_exe(pid, &dev, &ino);
	if (live && ms->self_known && dev == ms->self_dev && ino == ms->self_ino) {
		/* known, so that its maps are looked for at every poll until it exec()s */
		if (!sn)
			snapshot_add(ms, pid, now);
		return 0;
	}
	/* a program that cannot be stat'ed (a zombie; a FUSE mount) is not a new one; the first
	 * program seen after a copy of whyslow is a new one */
	exec = sn && live && (dev != sn->exe_dev || ino != sn->exe_ino || !sn->text);
	/*
	 * A young process (a short program may be gone before its first stack is read) at every
	 * poll while its program's libraries are being mapped (after its exec, or first sight),
	 * then every 50 ms. Not every poll throughout: a busy ring wakes the reader hundreds of
	 * times a second, and a database's new connections cost a read of each one's maps every
	 * time (~1,800 reads in a 20 s pgbench run, as much reader time as the unwinding).
	 */
	if (sn && !exec && now - sn->first_ns >= WS_MAPSNAP_SETTLE_NS &&
	    now - sn->taken_ns < WS_MAPSNAP_YOUNG_EVERY_NS)
		return 0;
	/* the user before and after the maps: an exec of a set-user-ID program between the two
	 * would pair root's permissions with the paths the user's program named */
	id_ok = ws_reader_id_of((pid_t)pid, &id) == 0;
	if ((err = ws_procmaps_read_text(pid, &text)))
		return err;
	id_ok = id_ok && ws_reader_id_of((pid_t)pid, &id2) == 0 && !memcmp(&id, &id2, sizeof(id));
	if (!*text) { /* exited, not yet reaped: keep what was read before, try again when due */
		free(text);
		if (sn)
			sn->taken_ns = now;
		return -ENOENT;
	}
	if (!sn && !(sn = snapshot_add(ms, pid, now))) {
		free(text);
		return -ENOMEM;
	}
	if (!sn->text || exec) { /* young (again): its program's libraries are being mapped */
		sn->first_ns = now;
		sn->exe_dev = dev;
		sn->exe_ino = ino;
	}
	free(sn->text);
	sn->text = text;
	sn->taken_ns = now;
	sn->syms_have = false;
	/* unknown when it changed meanwhile: then files are opened as nobody */
	sn->have_id = id_ok;
	if (id_ok)
		sn->id = id;
	if (ms->hook)
		ms->hook(ms->hook_ctx, pid, text, live, id_ok ? &sn->id : NULL);
	return 1;
}

int ws_mapsnap_take(struct ws_mapsnap *ms, uint32_t pid, uint64_t now)
{
	int err;

	pthread_mutex_lock(&ms->lock);
	err = take(ms, pid, now);
	pthread_mutex_unlock(&ms->lock);
	return err;
}

void ws_mapsnap_take_young(struct ws_mapsnap *ms, uint64_t now)
{
	pthread_mutex_lock(&ms->lock);
	/* take() adds no entry for a pid it knows: the array does not move under the walk */
	for (size_t i = 0; i < ms->nsnaps; i++)
		if (now - ms->snaps[i].first_ns < WS_MAPSNAP_YOUNG_NS &&
		    ms->snaps[i].taken_ns != now)
			take(ms, ms->snaps[i].pid, now);
	pthread_mutex_unlock(&ms->lock);
}

uint64_t ws_mapsnap_due_in(struct ws_mapsnap *ms, uint64_t now)
{
	uint64_t due = UINT64_MAX;

	pthread_mutex_lock(&ms->lock);
	for (size_t i = 0; i < ms->nsnaps; i++) {
		const struct snapshot *sn = &ms->snaps[i];
		uint64_t d = 0;

		if (now - sn->first_ns >= WS_MAPSNAP_YOUNG_NS)
			continue;
		if (sn->text && now - sn->first_ns >= WS_MAPSNAP_SETTLE_NS &&
		    now - sn->taken_ns < WS_MAPSNAP_YOUNG_EVERY_NS)
			d = sn->taken_ns + WS_MAPSNAP_YOUNG_EVERY_NS - now;
		if (d < WS_MAPSNAP_POLL_NS)
			d = WS_MAPSNAP_POLL_NS;
		if (d < due)
			due = d;
	}
	pthread_mutex_unlock(&ms->lock);
	return due;
}

void ws_mapsnap_forget(struct ws_mapsnap *ms, uint32_t pid)
{
	pthread_mutex_lock(&ms->lock);
	for (size_t i = 0; i < ms->nsnaps; i++) {
		if (ms->snaps[i].pid == pid) {
			free(ms->snaps[i].text);
			ms->snaps[i] = ms->snaps[--ms->nsnaps];
			break;
		}
	}
	pthread_mutex_unlock(&ms->lock);
}

int ws_mapsnap_get(struct ws_mapsnap *ms, uint32_t pid, struct ws_mapsnap_copy *out)
{
	struct snapshot *sn;
	int err = 0;

	memset(out, 0, sizeof(*out));
	pthread_mutex_lock(&ms->lock);
	sn = snapshot_of(ms, pid);
	if (sn && sn->text) {
		out->text = strdup(sn->text);
		err = out->text ? 0 : -ENOMEM;
		out->id = sn->id;
		out->have_id = sn->have_id;
		out->syms_have = sn->syms_have;
	}
	pthread_mutex_unlock(&ms->lock);
	return err;
}

bool ws_mapsnap_has(struct ws_mapsnap *ms, uint32_t pid)
{
	struct snapshot *sn;
	bool has;

	pthread_mutex_lock(&ms->lock);
	sn = snapshot_of(ms, pid);
	has = sn && sn->text;
	pthread_mutex_unlock(&ms->lock);
	return has;
}

void ws_mapsnap_syms_have(struct ws_mapsnap *ms, uint32_t pid)
{
	struct snapshot *sn;

	pthread_mutex_lock(&ms->lock);
	sn = snapshot_of(ms, pid);
	if (sn)
		sn->syms_have = true;
	pthread_mutex_unlock(&ms->lock);
}

/* Every traced thread group the kernel knows, each taken if due (the lock not held). */
static void take_traced(struct ws_mapsnap *ms, uint64_t now)
{
	__u32 key, *prev = NULL;

	while (bpf_map_get_next_key(ms->tgids_fd, prev, &key) == 0) {
		ws_mapsnap_take(ms, key, now);
		prev = &key;
	}
	ws_mapsnap_take_young(ms, now);
}

static void *watch(void *arg)
{
	struct ws_mapsnap *ms = arg;
	const struct timespec tick = { 0, WS_MAPSNAP_POLL_NS };

	pthread_mutex_lock(&ms->lock);
	while (!ms->stop) {
		uint64_t now;

		if (!ms->busy) {
			pthread_cond_wait(&ms->wake, &ms->lock);
			continue;
		}
		pthread_mutex_unlock(&ms->lock);
		nanosleep(&tick, NULL);
		now = ws_clock_mono_now();
		pthread_mutex_lock(&ms->lock);
		/* busy for a while: the reader cannot take what is due */
		if (ms->busy && now - ms->busy_since >= WS_MAPSNAP_POLL_NS && !ms->stop) {
			ws_mapsnap_busy_hook hook = ms->busy_hook;
			void *ctx = ms->busy_hook_ctx;

			pthread_mutex_unlock(&ms->lock);
			take_traced(ms, now);
			if (hook)
				hook(ctx);
			pthread_mutex_lock(&ms->lock);
		}
	}
	pthread_mutex_unlock(&ms->lock);
	return NULL;
}

int ws_mapsnap_watch(struct ws_mapsnap *ms, int tgids_fd)
{
	int err;

	if (ms->watching || tgids_fd < 0)
		return 0;
	ms->tgids_fd = tgids_fd;
	err = pthread_create(&ms->thread, NULL, watch, ms);
	if (err)
		return -err;
	ms->watching = true;
	return 0;
}

void ws_mapsnap_busy(struct ws_mapsnap *ms, bool busy)
{
	if (!ms->watching)
		return;
	pthread_mutex_lock(&ms->lock);
	if (busy && !ms->busy) {
		ms->busy_since = ws_clock_mono_now();
		pthread_cond_signal(&ms->wake);
	}
	ms->busy = busy;
	pthread_mutex_unlock(&ms->lock);
}
