// SPDX-License-Identifier: MIT
/* The open waits as a recording record: see stuck_rec.h; layout in docs/trace-format.md. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "stuck_rec.h"

#define TEXT_LEN 96

enum {
	F_IN_SYSCALL = 1 << 0,
	F_SYSCALL_DENIED = 1 << 1,
	F_STEADY = 1 << 2,
	F_IN_CYCLE = 1 << 3,
	F_PSHARED = 1 << 4,
	F_LOCK = 1 << 5, /* 1.3: its source said it waits for a lock (the owner fields are its) */
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

/*
 * Appended in 1.3: the lock and its holder as the source that read it named them (before,
 * @kind and @evidence were a fixed list), and whose syscall numbers @nr is.
 */
struct rec_thread_v3 {
	struct rec_thread v1;
	uint16_t arch; /* WS_ARCH_* */
	uint16_t reserved16;
	uint32_t reserved32;
	uint64_t lock;
	char lock_name[24], evidence[32], evidence_key[32];
};

/* Appended in 1.9: the thread's cgroup as sampled ("": not read; procsnap.h). */
struct rec_thread_v4 {
	struct rec_thread_v3 v3;
	char cgroup[WS_SNAP_CGROUP];
};

/* Kinds and owner evidence of entries written before 1.3 (docs/trace-format.md). */
enum {
	OLD_KIND_RUNNING = 0,
	OLD_KIND_LOCK = 1,
	OLD_KIND_DISK = 3,
	OLD_KIND_SYSCALL = 5,
	OLD_KIND_STOPPED = 6,
	OLD_KIND_UNKNOWN = 7,
	OLD_EVIDENCE_MAX = 2,
};

_Static_assert(sizeof(struct rec_head) == 40, "open-waits head layout");
_Static_assert(sizeof(struct rec_thread) == 120 + WS_SNAP_KSTACK * 48 + 2 * TEXT_LEN,
	       "open-waits thread layout");
_Static_assert(sizeof(struct rec_thread_v3) == sizeof(struct rec_thread) + 104,
	       "open-waits thread layout (1.3)");
_Static_assert(sizeof(struct rec_thread_v4) == sizeof(struct rec_thread_v3) + 256,
	       "open-waits thread layout (1.9)");

/* Storage for a decoded snapshot's strings (the live ones point at static text). */
struct texts {
	char since_why[TEXT_LEN];
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
		if (st->t[k].owner.tid && st->t[k].owner.tid == st->t[i].s.tid)
			return true;
	return false;
}

/*
 * The kind a reader older than 1.3 understands: what /proc says, without the sources' words
 * (it prints a futex wait as its syscall, "futex (args ...)").
 */
static uint8_t old_kind(const struct ws_stuck_thread *t)
{
	if (t->kind == WS_OPEN_NONE)
		return OLD_KIND_RUNNING;
	if (t->kind == WS_OPEN_STOPPED)
		return OLD_KIND_STOPPED;
	if (t->s.state == 'D')
		return OLD_KIND_DISK;
	return t->s.in_syscall ? OLD_KIND_SYSCALL : OLD_KIND_UNKNOWN;
}

int ws_stuck_encode(const struct ws_stuck *st, void **buf, size_t *len)
{
	size_t nidx = 0, nkept = 0, size;
	struct rec_head *h;
	struct rec_thread_v4 *r4;
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
	size = sizeof(*h) + nkept * sizeof(*r4) + ((size_t)st->ncycles + nidx) * sizeof(*u);
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
				.thread_size = sizeof(*r4),
				.total = st->n_total ? st->n_total : st->n };
	r4 = (void *)(p + sizeof(*h));
	for (size_t i = 0; i < st->n; i++) {
		const struct ws_stuck_thread *t = &st->t[i];
		struct rec_thread_v3 *rt = &r4->v3;

		if (newix[i] == UINT32_MAX)
			continue;

		rt->v1.tid = t->s.tid;
		rt->v1.pid = t->s.pid;
		memcpy(rt->v1.comm, t->s.comm, sizeof(rt->v1.comm));
		rt->v1.nr = t->s.nr;
		memcpy(rt->v1.args, t->s.args, sizeof(rt->v1.args));
		rt->v1.addr = t->owner.lock;
		rt->v1.owner_tid = t->owner.tid;
		rt->v1.at_least_ns = t->at_least_ns;
		rt->v1.read_mono_ns = t->s.read_mono_ns;
		rt->v1.state = (uint8_t)t->s.state;
		rt->v1.kind = old_kind(t);
		rt->v1.evidence = 0; /* the owner is in the 1.3 fields */
		rt->v1.nkstack = t->s.nkstack;
		rt->v1.flags = (t->s.in_syscall ? F_IN_SYSCALL : 0) |
			       (t->s.syscall_denied ? F_SYSCALL_DENIED : 0) |
			       (t->steady ? F_STEADY : 0) | (t->in_cycle ? F_IN_CYCLE : 0) |
			       (t->owner.pshared ? F_PSHARED : 0) | (t->lock ? F_LOCK : 0);
		memcpy(rt->v1.kstack, t->s.kstack, sizeof(rt->v1.kstack));
		put_str(rt->v1.owner_why, sizeof(rt->v1.owner_why), t->owner.why);
		put_str(rt->v1.since_why, sizeof(rt->v1.since_why), t->since_why);
		rt->arch = t->s.arch;
		rt->lock = t->owner.lock;
		put_str(rt->lock_name, sizeof(rt->lock_name), t->owner.lock_name);
		put_str(rt->evidence, sizeof(rt->evidence), t->owner.evidence);
		put_str(rt->evidence_key, sizeof(rt->evidence_key), t->owner.evidence_key);
		put_str(r4->cgroup, sizeof(r4->cgroup), t->s.cgroup);
		r4++;
	}
	u = (void *)r4;
	for (int c = 0; c < st->ncycles; c++)
		*u++ = st->cycle_len[c];
	/* a thread of a cycle waits (it is blocked), so it was kept */
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

/* The owner of an entry written before 1.3: a lock wait's kind and evidence were fixed. */
static void old_owner(struct ws_stuck_thread *t, const struct rec_thread *rt)
{
	static const struct {
		const char *lock_name, *evidence, *evidence_key;
	} named[] = {
		[1] = { "PI futex", "PI futex word", "pi_futex_word" },
		[2] = { "mutex", "mutex word", "mutex_word" },
	};

	t->lock = rt->kind == OLD_KIND_LOCK;
	if (!t->lock || !rt->evidence)
		return;
	t->owner.tid = rt->owner_tid;
	snprintf(t->owner.lock_name, sizeof(t->owner.lock_name), "%s",
		 named[rt->evidence].lock_name);
	snprintf(t->owner.evidence, sizeof(t->owner.evidence), "%s", named[rt->evidence].evidence);
	snprintf(t->owner.evidence_key, sizeof(t->owner.evidence_key), "%s",
		 named[rt->evidence].evidence_key);
}

/*
 * The head, checked against @len: every size that follows from it (threads, then the cycle
 * lengths, which end at *@at) lies within the record.
 */
static int decode_head(const char *b, size_t len, struct rec_head *h, size_t *at)
{
	if (len < sizeof(*h))
		return -EINVAL;
	memcpy(h, b, sizeof(*h));
	/* a thread entry holds at least what this reader knows; the rest is a newer minor's */
	if (h->nthreads > WS_STUCK_REC_MAX_THREADS || h->thread_size < sizeof(struct rec_thread) ||
	    h->thread_size > 4096 || h->ncycles > h->nthreads)
		return -EINVAL;
	*at = sizeof(*h) + (size_t)h->nthreads * h->thread_size;
	if (*at + (size_t)h->ncycles * sizeof(uint32_t) > len)
		return -EINVAL;
	return 0;
}

/* Thread entry @i (within the record: decode_head checked it) into @t, its text into @tx. */
static int decode_thread(const char *b, const struct rec_head *h, size_t i,
			 struct ws_stuck_thread *t, struct texts *tx)
{
	struct rec_thread_v4 r4 = { 0 };
	struct rec_thread_v3 r3 = { 0 };
	struct rec_thread rt;
	bool v3 = h->thread_size >= sizeof(r3), v4 = h->thread_size >= sizeof(r4);

	if (v4) {
		memcpy(&r4, b + sizeof(*h) + i * h->thread_size, sizeof(r4));
		r3 = r4.v3;
	} else {
		memcpy(v3 ? (void *)&r3 : (void *)&rt, b + sizeof(*h) + i * h->thread_size,
		       v3 ? sizeof(r3) : sizeof(rt));
	}
	if (v3)
		rt = r3.v1;
	/* a path that does not end within its field is none */
	if (v4 && memchr(r4.cgroup, 0, sizeof(r4.cgroup)))
		memcpy(t->s.cgroup, r4.cgroup, sizeof(t->s.cgroup));
	if (!state_ok(rt.state) || rt.kind > OLD_KIND_UNKNOWN || rt.evidence > OLD_EVIDENCE_MAX ||
	    rt.nkstack > WS_SNAP_KSTACK)
		return -EINVAL;
	t->s.tid = rt.tid;
	t->s.pid = rt.pid;
	take_str(t->s.comm, rt.comm, sizeof(t->s.comm));
	t->s.state = (char)rt.state;
	t->s.in_syscall = rt.flags & F_IN_SYSCALL;
	t->s.syscall_denied = rt.flags & F_SYSCALL_DENIED;
	t->s.nr = rt.nr;
	/* before 1.3, the numbers of the machine that reads it (as the reader then did) */
	t->s.arch = v3 ? r3.arch : WS_ARCH_NATIVE;
	memcpy(t->s.args, rt.args, sizeof(t->s.args));
	t->s.nkstack = rt.nkstack;
	for (int k = 0; k < WS_SNAP_KSTACK; k++)
		take_str(t->s.kstack[k], rt.kstack[k], sizeof(t->s.kstack[k]));
	t->s.read_mono_ns = rt.read_mono_ns;
	t->kind = rt.kind == OLD_KIND_RUNNING	? WS_OPEN_NONE
		  : rt.kind == OLD_KIND_STOPPED ? WS_OPEN_STOPPED
						: WS_OPEN_BLOCKED;
	t->source = -1; /* the report's sources describe it (ws_stuck_describe) */
	t->owner.sz = sizeof(t->owner);
	t->owner.pshared = rt.flags & F_PSHARED;
	t->owner.lock = rt.addr;
	take_str(t->owner.why, rt.owner_why, sizeof(t->owner.why));
	if (v3) {
		t->lock = rt.flags & F_LOCK;
		t->owner.tid = t->lock ? rt.owner_tid : 0;
		take_str(t->owner.lock_name, r3.lock_name, sizeof(t->owner.lock_name));
		take_str(t->owner.evidence, r3.evidence, sizeof(t->owner.evidence));
		take_str(t->owner.evidence_key, r3.evidence_key, sizeof(t->owner.evidence_key));
	} else {
		old_owner(t, &rt);
	}
	take_str(tx->since_why, rt.since_why, sizeof(tx->since_why));
	t->since_why = tx->since_why[0] ? tx->since_why : NULL;
	t->at_least_ns = rt.at_least_ns;
	t->steady = rt.flags & F_STEADY;
	return 0;
}

/*
 * The cycles: their lengths at @at (within the record: decode_head checked it), then their
 * members' indices, each checked against the record's end and its threads.
 */
static int decode_cycles(const char *b, size_t len, const struct rec_head *h, size_t at,
			 struct ws_stuck *st)
{
	size_t nidx = 0;

	for (size_t c = 0; c < h->ncycles; c++) {
		uint32_t l;

		memcpy(&l, b + at + c * sizeof(l), sizeof(l));
		if (!l || l > h->nthreads || nidx + l > h->nthreads)
			return -EINVAL; /* each thread is in one cycle at most */
		st->cycle_len[c] = l;
		nidx += l;
	}
	at += (size_t)h->ncycles * sizeof(uint32_t);
	if (at + nidx * sizeof(uint32_t) > len)
		return -EINVAL;
	st->cycles = calloc(nidx ? nidx : 1, sizeof(*st->cycles));
	if (!st->cycles)
		return -ENOMEM;
	for (size_t k = 0; k < nidx; k++) {
		uint32_t ix;

		memcpy(&ix, b + at + k * sizeof(ix), sizeof(ix));
		if (ix >= h->nthreads)
			return -EINVAL;
		st->cycles[k] = ix;
	}
	/* who is in a cycle follows from the cycles themselves, not from a flag */
	for (size_t k = 0; k < nidx; k++)
		st->t[st->cycles[k]].in_cycle = true;
	return 0;
}

int ws_stuck_decode(const void *p, size_t len, struct ws_stuck *st)
{
	const char *b = p;
	struct rec_head h;
	struct texts *tx;
	size_t at;
	int rc;

	memset(st, 0, sizeof(*st));
	if ((rc = decode_head(b, len, &h, &at)))
		return rc;
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
	if (!st->t || !tx || !st->cycle_len) {
		rc = -ENOMEM;
		goto fail;
	}
	for (size_t i = 0; i < st->n; i++)
		if ((rc = decode_thread(b, &h, i, &st->t[i], &tx[i])))
			goto fail;
	if ((rc = decode_cycles(b, len, &h, at, st)))
		goto fail;
	return 0;
fail:
	ws_stuck_free(st);
	return rc;
}
