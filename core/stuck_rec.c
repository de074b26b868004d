// SPDX-License-Identifier: MIT
/* The open waits as a recording record: see stuck_rec.h; layout in docs/trace-format.md. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "stuck_rec.h"

#define TEXT_LEN 96

enum {
	F_IN_SYSCALL = 1 << 0,
	F_SYSCALL_DENIED = 1 << 1,
	F_STEADY = 1 << 2,
	F_IN_CYCLE = 1 << 3,
	F_PSHARED = 1 << 4,
};

enum {
	H_NO_SYSCALL_ACCESS = 1 << 0,
};

struct rec_head {
	uint64_t mono_ns, wall_ns; /* when the snapshot was taken */
	uint32_t nthreads, ncycles;
	uint32_t flags;	      /* H_* */
	uint32_t thread_size; /* bytes of each thread entry: a newer minor may append fields */
	uint32_t total;	      /* threads the snapshot looked at (running ones are not stored) */
	uint32_t reserved;
};

struct rec_thread {
	uint32_t tid, pid;
	char comm[WS_SNAP_COMM];
	int64_t nr;
	uint64_t args[6];
	uint64_t addr;
	uint32_t op, owner_tid;
	uint64_t at_least_ns, read_mono_ns;
	uint8_t state, kind, evidence, nkstack;
	uint8_t flags; /* F_* */
	uint8_t reserved[3];
	char kstack[WS_SNAP_KSTACK][48];
	char owner_why[TEXT_LEN], since_why[TEXT_LEN];
};

_Static_assert(sizeof(struct rec_head) == 40, "open-waits head layout");
_Static_assert(sizeof(struct rec_thread) == 120 + WS_SNAP_KSTACK * 48 + 2 * TEXT_LEN,
	       "open-waits thread layout");

/* Storage for a decoded snapshot's strings (the live ones point at static text). */
struct texts {
	char owner_why[TEXT_LEN], since_why[TEXT_LEN];
};

static void put_str(char *dst, size_t cap, const char *s)
{
	if (s)
		snprintf(dst, cap, "%s", s);
}

/* What a report can print of a thread: its own wait, or its part in another's chain. */
static bool worth_storing(const struct ws_stuck *st, size_t i)
{
	if (st->t[i].kind != WS_OPEN_NONE)
		return true;
	for (size_t k = 0; k < st->n; k++)
		if (st->t[k].owner.evidence != WS_OWNER_NONE &&
		    st->t[k].owner.tid == st->t[i].s.tid)
			return true;
	return false;
}

int ws_stuck_encode(const struct ws_stuck *st, void **buf, size_t *len)
{
	size_t nidx = 0, nkept = 0, size;
	struct rec_head *h;
	struct rec_thread *rt;
	uint32_t *u, *newix;
	char *p;

	/* running threads that own nothing are only counted: a busy process has thousands */
	newix = malloc((st->n ? st->n : 1) * sizeof(*newix));
	if (!newix)
		return -ENOMEM;
	for (size_t i = 0; i < st->n; i++)
		newix[i] = worth_storing(st, i) ? nkept++ : UINT32_MAX;
	if (nkept > WS_STUCK_REC_MAX_THREADS) {
		free(newix);
		return -E2BIG;
	}
	for (int c = 0; c < st->ncycles; c++)
		nidx += st->cycle_len[c];
	size = sizeof(*h) + nkept * sizeof(*rt) + ((size_t)st->ncycles + nidx) * sizeof(*u);
	p = calloc(1, size);
	if (!p) {
		free(newix);
		return -ENOMEM;
	}
	h = (void *)p;
	*h = (struct rec_head){ .mono_ns = st->mono_ns,
				.wall_ns = st->wall_ns,
				.nthreads = nkept,
				.ncycles = st->ncycles,
				.flags = st->no_syscall_access ? H_NO_SYSCALL_ACCESS : 0,
				.thread_size = sizeof(*rt),
				.total = st->n_total ? st->n_total : st->n };
	rt = (void *)(p + sizeof(*h));
	for (size_t i = 0; i < st->n; i++) {
		const struct ws_stuck_thread *t = &st->t[i];

		if (newix[i] == UINT32_MAX)
			continue;

		rt->tid = t->s.tid;
		rt->pid = t->s.pid;
		memcpy(rt->comm, t->s.comm, sizeof(rt->comm));
		rt->nr = t->s.nr;
		memcpy(rt->args, t->s.args, sizeof(rt->args));
		rt->addr = t->addr;
		rt->op = t->op;
		rt->owner_tid = t->owner.tid;
		rt->at_least_ns = t->at_least_ns;
		rt->read_mono_ns = t->s.read_mono_ns;
		rt->state = (uint8_t)t->s.state;
		rt->kind = t->kind;
		rt->evidence = t->owner.evidence;
		rt->nkstack = t->s.nkstack;
		rt->flags = (t->s.in_syscall ? F_IN_SYSCALL : 0) |
			    (t->s.syscall_denied ? F_SYSCALL_DENIED : 0) |
			    (t->steady ? F_STEADY : 0) | (t->in_cycle ? F_IN_CYCLE : 0) |
			    (t->owner.pshared ? F_PSHARED : 0);
		memcpy(rt->kstack, t->s.kstack, sizeof(rt->kstack));
		put_str(rt->owner_why, sizeof(rt->owner_why), t->owner.why);
		put_str(rt->since_why, sizeof(rt->since_why), t->since_why);
		rt++;
	}
	u = (void *)rt;
	for (int c = 0; c < st->ncycles; c++)
		*u++ = st->cycle_len[c];
	/* a thread of a cycle waits (kind FUTEX), so it was kept */
	for (size_t k = 0; k < nidx; k++)
		*u++ = newix[st->cycles[k]];
	free(newix);
	*buf = p;
	*len = size;
	return 0;
}

/* A string from the file: ends within its field, and no control byte reaches a terminal. */
static void take_str(char *dst, const char *src, size_t cap)
{
	memcpy(dst, src, cap);
	dst[cap - 1] = 0;
	for (size_t i = 0; dst[i]; i++)
		if ((unsigned char)dst[i] < 0x20 || dst[i] == 0x7f)
			dst[i] = '?';
}

static bool state_ok(uint8_t c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z');
}

int ws_stuck_decode(const void *p, size_t len, struct ws_stuck *st)
{
	const char *b = p;
	struct rec_head h;
	struct texts *tx;
	size_t nidx = 0, at;

	memset(st, 0, sizeof(*st));
	if (len < sizeof(h))
		return -EINVAL;
	memcpy(&h, b, sizeof(h));
	/* a thread entry holds at least what this reader knows; the rest is a newer minor's */
	if (h.nthreads > WS_STUCK_REC_MAX_THREADS || h.thread_size < sizeof(struct rec_thread) ||
	    h.thread_size > 4096 || h.ncycles > h.nthreads)
		return -EINVAL;
	at = sizeof(h) + (size_t)h.nthreads * h.thread_size;
	if (at + (size_t)h.ncycles * sizeof(uint32_t) > len)
		return -EINVAL;
	st->n = h.nthreads;
	st->ncycles = h.ncycles;
	st->mono_ns = h.mono_ns;
	st->wall_ns = h.wall_ns;
	st->n_total = h.total > h.nthreads ? h.total : h.nthreads;
	st->no_syscall_access = h.flags & H_NO_SYSCALL_ACCESS;
	st->t = calloc(st->n ? st->n : 1, sizeof(*st->t));
	tx = calloc(st->n ? st->n : 1, sizeof(*tx));
	st->texts = tx;
	st->cycle_len = calloc(h.ncycles ? h.ncycles : 1, sizeof(*st->cycle_len));
	if (!st->t || !tx || !st->cycle_len)
		goto nomem;
	for (size_t i = 0; i < st->n; i++) {
		struct ws_stuck_thread *t = &st->t[i];
		struct rec_thread rt;

		memcpy(&rt, b + sizeof(h) + i * h.thread_size, sizeof(rt));
		if (!state_ok(rt.state) || rt.kind > WS_OPEN_OTHER ||
		    rt.evidence > WS_OWNER_MUTEX_WORD || rt.nkstack > WS_SNAP_KSTACK)
			goto bad;
		t->s.tid = rt.tid;
		t->s.pid = rt.pid;
		take_str(t->s.comm, rt.comm, sizeof(t->s.comm));
		t->s.state = (char)rt.state;
		t->s.in_syscall = rt.flags & F_IN_SYSCALL;
		t->s.syscall_denied = rt.flags & F_SYSCALL_DENIED;
		t->s.nr = rt.nr;
		memcpy(t->s.args, rt.args, sizeof(t->s.args));
		t->s.nkstack = rt.nkstack;
		for (int k = 0; k < WS_SNAP_KSTACK; k++)
			take_str(t->s.kstack[k], rt.kstack[k], sizeof(t->s.kstack[k]));
		t->s.read_mono_ns = rt.read_mono_ns;
		t->kind = rt.kind;
		t->addr = rt.addr;
		t->op = rt.op;
		t->owner.evidence = rt.evidence;
		t->owner.tid = rt.evidence == WS_OWNER_NONE ? 0 : rt.owner_tid;
		t->owner.pshared = rt.flags & F_PSHARED;
		take_str(tx[i].owner_why, rt.owner_why, sizeof(tx[i].owner_why));
		take_str(tx[i].since_why, rt.since_why, sizeof(tx[i].since_why));
		t->owner.why = tx[i].owner_why[0] ? tx[i].owner_why : NULL;
		t->since_why = tx[i].since_why[0] ? tx[i].since_why : NULL;
		t->at_least_ns = rt.at_least_ns;
		t->steady = rt.flags & F_STEADY;
	}
	for (size_t c = 0; c < h.ncycles; c++) {
		uint32_t l;

		memcpy(&l, b + at + c * sizeof(l), sizeof(l));
		if (!l || l > h.nthreads || nidx + l > h.nthreads)
			goto bad; /* each thread is in one cycle at most */
		st->cycle_len[c] = l;
		nidx += l;
	}
	at += (size_t)h.ncycles * sizeof(uint32_t);
	if (at + nidx * sizeof(uint32_t) > len)
		goto bad;
	st->cycles = calloc(nidx ? nidx : 1, sizeof(*st->cycles));
	if (!st->cycles)
		goto nomem;
	for (size_t k = 0; k < nidx; k++) {
		uint32_t ix;

		memcpy(&ix, b + at + k * sizeof(ix), sizeof(ix));
		if (ix >= h.nthreads)
			goto bad;
		st->cycles[k] = ix;
	}
	/* who is in a cycle follows from the cycles themselves, not from a flag */
	for (size_t k = 0; k < nidx; k++)
		st->t[st->cycles[k]].in_cycle = true;
	return 0;
bad:
	ws_stuck_free(st);
	return -EINVAL;
nomem:
	ws_stuck_free(st);
	return -ENOMEM;
}
