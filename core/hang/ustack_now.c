// SPDX-License-Identifier: MIT
/* A blocked thread's user stack from /proc and its memory: see ustack_now.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "ustack_now.h"
#include "stacks/procmaps.h"
#include "stacks/stackcap.h"

#define PAGEMAP_PRESENT (1ULL << 63)

struct ws_ustack_now {
	struct ws_stackcap *sc;
	uint32_t maps_pid; /* whose maps @maps are (0: none) */
	struct ws_procmaps maps;
};

int ws_ustack_now_new(struct ws_ustack_now **out)
{
	struct ws_ustack_now *u = calloc(1, sizeof(*u));
	int err;

	if (!u)
		return -ENOMEM;
	if ((err = ws_stackcap_new(&u->sc))) {
		free(u);
		return err;
	}
	*out = u;
	return 0;
}

void ws_ustack_now_free(struct ws_ustack_now *u)
{
	if (!u)
		return;
	if (u->maps_pid)
		ws_procmaps_free(&u->maps);
	ws_stackcap_free(u->sc);
	free(u);
}

/*
 * The mapping of @pid that holds @sp, read again when the last maps read do not hold it (a
 * thread made since). The threads of one process come one after another: one read each.
 */
static const struct ws_map *mapping_of(struct ws_ustack_now *u, uint32_t pid, uint64_t sp)
{
	const struct ws_map *m = u->maps_pid == pid ? ws_procmaps_find(&u->maps, sp) : NULL;

	if (m)
		return m;
	if (u->maps_pid)
		ws_procmaps_free(&u->maps);
	u->maps_pid = 0;
	if (ws_procmaps_read((pid_t)pid, &u->maps))
		return NULL;
	u->maps_pid = pid;
	return ws_procmaps_find(&u->maps, sp);
}

/*
 * Anonymous memory only: a main thread's [stack], a thread's mmap()ed stack, a named anonymous
 * mapping ("[anon:...]"), the heap (coroutine stacks). A file mapping may be served by a FUSE
 * daemon that never answers, and a device's mapping by its driver.
 */
static bool anonymous(const struct ws_map *m)
{
	if (m->inode || !m->readable)
		return false;
	return !m->path || !strncmp(m->path, "[stack", 6) || !strncmp(m->path, "[anon:", 6) ||
	       !strcmp(m->path, "[heap]");
}

/*
 * How many bytes from @sp (at most @len) lie in pages resident now: a page that is not would be
 * faulted in by the read (from swap, or by a userfaultfd handler the process runs, which need
 * never answer). /proc/PID/pagemap says, with the same access check as the maps.
 */
static size_t resident(uint32_t pid, uint64_t sp, size_t len)
{
	long psz = sysconf(_SC_PAGESIZE);
	uint64_t ent[WS_USTACK_NOW_BYTES / 4096 + 2], first, last;
	char path[48];
	size_t n, ok = 0;
	ssize_t got;
	int fd;

	if (psz <= 0 || !len)
		return 0;
	first = sp / (uint64_t)psz;
	last = (sp + len - 1) / (uint64_t)psz;
	n = (size_t)(last - first + 1);
	if (n > sizeof(ent) / sizeof(ent[0]))
		n = sizeof(ent) / sizeof(ent[0]);
	snprintf(path, sizeof(path), "/proc/%u/pagemap", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	got = pread(fd, ent, n * sizeof(ent[0]), (off_t)(first * sizeof(ent[0])));
	close(fd);
	if (got <= 0)
		return 0;
	n = (size_t)got / sizeof(ent[0]);
	while (ok < n && (ent[ok] & PAGEMAP_PRESENT))
		ok++;
	if (!ok)
		return 0;
	/* the resident pages end at the end of page first + ok - 1 */
	return (first + ok) * (uint64_t)psz - sp < len ? (first + ok) * (uint64_t)psz - sp : len;
}

/* Is @b, a later snapshot of @a's thread, blocked in the same call as @a? */
static bool same_wait(const struct ws_task_snap *a, const struct ws_task_snap *b)
{
	return ws_task_blocked(b) && b->have_user_regs && a->in_syscall == b->in_syscall &&
	       a->nr == b->nr;
}

/* The thread is where the snapshot saw it: the same call, the same registers, no timeslice. */
static bool unmoved(const struct ws_task_snap *a, const struct ws_task_snap *b)
{
	return same_wait(a, b) && !memcmp(a->args, b->args, sizeof(a->args)) &&
	       a->user_sp == b->user_sp && a->user_pc == b->user_pc &&
	       (!a->have_timeslices || !b->have_timeslices || a->timeslices == b->timeslices);
}

/* Copy the top of @t's stack into a raw stack record (malloc'd). 0 or -errno with *@why. */
static int capture(struct ws_ustack_now *u, const struct ws_task_snap *t,
		   struct ws_rec_stack_raw **out, const char **why)
{
	const struct ws_map *m = mapping_of(u, t->pid, t->user_sp);
	struct ws_rec_stack_raw *r;
	struct ws_task_snap again;
	struct iovec local, remote;
	size_t len;
	ssize_t n;

	*out = NULL;
	if (!m) {
		*why = "its stack pointer is in no mapping";
		return -ENODATA;
	}
	if (!anonymous(m)) {
		*why = "its stack pointer is not in anonymous memory (not read)";
		return -ENODATA;
	}
	len = m->end - t->user_sp < WS_USTACK_NOW_BYTES ? m->end - t->user_sp : WS_USTACK_NOW_BYTES;
	len = resident(t->pid, t->user_sp, len);
	if (len < sizeof(uint64_t)) {
		*why = "its stack is not resident or not readable";
		return -ENODATA;
	}
	r = calloc(1, sizeof(*r) + len);
	if (!r)
		return -ENOMEM;
	local = (struct iovec){ r->ustack, len };
	remote = (struct iovec){ (void *)(uintptr_t)t->user_sp, len };
	n = process_vm_readv((pid_t)t->pid, &local, 1, &remote, 1, 0);
	if (n < (ssize_t)sizeof(uint64_t)) {
		int err = n < 0 ? -errno : -ENODATA;

		free(r);
		*why = err == -EPERM || err == -EACCES
			       ? "its memory is not readable (needs ptrace access)"
			       : "its stack is not readable";
		return err == -EACCES ? -EPERM : err == -EPERM ? err : -ENODATA;
	}
	/* a thread that ran meanwhile has another stack than the registers say */
	if (ws_procsnap_task(t->pid, t->tid, 0, &again) || !unmoved(t, &again)) {
		free(r);
		*why = "it ran while its stack was read";
		return -EAGAIN;
	}
	r->hdr.size = (uint16_t)(sizeof(*r) + (size_t)n);
	r->hdr.kind = WS_KIND_STACK_RAW;
	r->hdr.tid = t->tid;
	r->hdr.pid = t->pid;
	r->hdr.ts = t->read_mono_ns;
	r->tid = t->tid;
	r->pid = t->pid;
	r->wait_tid = t->tid;
	r->role = WS_STACK_WAITER;
	r->ulen = (uint16_t)n;
	r->wait_start = r->wait_end = t->read_mono_ns;
	r->sys.nr = t->in_syscall ? (int32_t)t->nr : WS_SYSCALL_NONE;
	r->sys.arch = t->arch;
	memcpy(r->sys.args, t->args, sizeof(r->sys.args));
	r->uregs.pc = t->user_pc;
	r->uregs.sp = t->user_sp;
	r->uregs.valid = WS_SREG_PC | WS_SREG_SP; /* all /proc shows: no frame pointer */
	r->uregs.arch = t->arch;
	*out = r;
	return 0;
}

int ws_ustack_now_read(struct ws_ustack_now *u, const struct ws_task_snap *t, struct ws_stack **out,
		       const char **why)
{
	struct ws_task_snap fresh[2];
	struct ws_rec_stack_raw *raw;
	int err;

	*out = NULL;
	*why = NULL;
	if (!t->have_user_regs) {
		*why = t->syscall_denied ? "its registers are not readable (needs ptrace access)"
					 : "its registers are not known";
		return t->syscall_denied ? -EPERM : -ENODATA;
	}
	/*
	 * A thread that ran while its stack was read (a poll loop's short sleeps: SQLite's busy
	 * handler) is read again where it waits now, if that is the same call: twice at most
	 */
	for (int tries = 0; (err = capture(u, t, &raw, why)) == -EAGAIN && tries < 2; tries++) {
		struct ws_task_snap *next = &fresh[tries];

		if (ws_procsnap_task(t->pid, t->tid, 0, next) || !same_wait(t, next))
			break;
		t = next;
	}
	if (err)
		return err;
	/* a CPython thread: its Python frames, merged with the native ones */
	ws_stackcap_python_now(u->sc, raw);
	err = ws_stackcap_resolve(u->sc, &raw->hdr, out);
	free(raw);
	if (err) {
		*why = err == -ENOMEM ? "out of memory" : "its stack could not be unwound";
		return err == -ENOMEM ? err : -ENODATA;
	}
	if (!(*out)->n) {
		ws_stack_free(*out);
		*out = NULL;
		*why = "no frame could be unwound (its program's files are not readable?)";
		return -ENODATA;
	}
	return 0;
}
