// SPDX-License-Identifier: MIT
/*
 * futex source, user side: explains a wakeup as "woken through futex X" when
 * the wakee sleeps in a futex call on X and the waker, in task context, is
 * inside a call that wakes or hands over X; and a wakeup from a timer callback
 * of a timed futex wait as that wait's timeout. Both facts come from records;
 * time overlap alone is never enough.
 *
 * The calls are read from the wakeup itself: the sched source copies the
 * wakee's and the waker's saved syscall registers into it, so this source
 * hooks no syscall (a syscall hook runs on every syscall of the machine).
 * Recordings made before that carry this source's own enter/exit records
 * instead; those are still decoded into the in-flight table below.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <whyslow/plugin.h>
#include <whyslow/syscall_names.h>
#include <whyslow/table.h>

#include "futex_open.h"
#include "futex_owner.h"
#include "futex_rec.h"

/* A call's own addresses (up to WS_FUTEX_MAX_ADDRS) plus requeue targets. */
#define CALL_ADDRS 12

/* Live in-flight calls at most; a full table drops its oldest call. */
#define TABLE_MAX_LIVE 65536

struct call {
	uint32_t tid; /* 0: free slot */
	uint32_t pid;
	uint32_t syscall; /* WS_FUTEX_SYS_* */
	uint32_t cmd;
	bool shared;	   /* a process-shared futex (no PRIVATE flag): keyed by memory, not mm */
	uint64_t ts;	   /* enter */
	uint64_t src, dst; /* requeue: from, to */
	uint32_t nown;	   /* addrs[0..nown) are the call's own */
	uint32_t naddrs;   /* addrs[nown..naddrs) are requeue aliases */
	uint64_t addrs[CALL_ADDRS];
	bool timed; /* a wait with a timeout (register path only) */
};

/*
 * Requeues and wakes seen in wakers' registers, most recent last: a requeue
 * moves waiters from src to dst (a later wake on dst ends their wait); a wake
 * on an address during a timed wait that then timed out names who was
 * handing that futex around meanwhile.
 */
#define RECENT 64

struct recent {
	uint32_t tid, pid;
	bool shared;
	uint64_t ts;
	uint64_t src, dst; /* dst: 0 for a plain wake */
};

/* Futex words looked up by the data object holding them, at most (each lookup may read files). */
#define WORDS_MAX 16384

/* What a futex word of one process is called: "_PyRuntime+0x1b0", "M". */
struct word_name {
	bool named;
	bool lock_asked; /* claim_word_lock() asked which lock it is */
	char name[sizeof(((struct ws_field *)0)->s)];
	char lock[sizeof(((struct ws_field *)0)->s)]; /* the lock's name ("": none) */
};

/* The plugin's state for one session (ws_plugin_ctx.priv). */
struct futex {
	struct ws_table calls; /* tid -> struct call in flight (enter/exit records) */
	struct ws_table words; /* word_key(pid, address) -> struct word_name, asked once each */
	bool warned;	       /* the table was full once (said once) */
	struct {
		struct recent r[RECENT];
		unsigned int next;
	} seen;
};

enum role {
	ROLE_NONE,
	ROLE_BLOCK,
	ROLE_WAKE
};

static const char *op_name(uint32_t syscall, uint32_t cmd)
{
	switch (syscall) {
	case WS_FUTEX_SYS_FUTEX:
		return futex_cmd_name(cmd) ? futex_cmd_name(cmd) : "FUTEX_?";
	case WS_FUTEX_SYS_WAITV:
		return "futex_waitv";
	case WS_FUTEX_SYS_WAKE:
		return "futex_wake";
	case WS_FUTEX_SYS_WAIT:
		return "futex_wait";
	case WS_FUTEX_SYS_REQUEUE:
		return "futex_requeue";
	}
	return "futex_?";
}

static enum role role_of(uint32_t syscall, uint32_t cmd)
{
	switch (syscall) {
	case WS_FUTEX_SYS_WAITV:
	case WS_FUTEX_SYS_WAIT:
		return ROLE_BLOCK;
	case WS_FUTEX_SYS_WAKE:
	case WS_FUTEX_SYS_REQUEUE:
		return ROLE_WAKE;
	case WS_FUTEX_SYS_FUTEX:
		break;
	default:
		return ROLE_NONE;
	}
	switch (cmd) {
	case WS_FUTEX_WAIT:
	case WS_FUTEX_WAIT_BITSET:
	case WS_FUTEX_LOCK_PI:
	case WS_FUTEX_LOCK_PI2:
	case WS_FUTEX_WAIT_REQUEUE_PI:
		return ROLE_BLOCK;
	case WS_FUTEX_WAKE:
	case WS_FUTEX_WAKE_BITSET:
	case WS_FUTEX_WAKE_OP:
	case WS_FUTEX_UNLOCK_PI:
	case WS_FUTEX_REQUEUE:
	case WS_FUTEX_CMP_REQUEUE:
	case WS_FUTEX_CMP_REQUEUE_PI:
		return ROLE_WAKE;
	}
	return ROLE_NONE;
}

static bool is_requeue(uint32_t syscall, uint32_t cmd)
{
	if (syscall == WS_FUTEX_SYS_REQUEUE)
		return true;
	return syscall == WS_FUTEX_SYS_FUTEX &&
	       (cmd == WS_FUTEX_REQUEUE || cmd == WS_FUTEX_CMP_REQUEUE ||
		cmd == WS_FUTEX_CMP_REQUEUE_PI);
}

/* --- in-flight calls ---------------------------------------------------------------------- */

/*
 * A thread that dies inside a futex call (exit_group while it waits) never
 * writes its exit record, so entries can outlive their threads. Bound them:
 * at the limit the oldest call goes.
 */
static void evict_oldest(struct ws_plugin_ctx *ctx, struct futex *f)
{
	struct call *old = NULL;

	for (size_t i = 0; i < f->calls.cap; i++) {
		struct call *c = ws_table_at(&f->calls, i);

		if (c && (!old || c->ts < old->ts))
			old = c;
	}
	if (!old)
		return;
	if (!f->warned) {
		ctx->host->log(ctx, WS_LOG_DEBUG, "%d calls in flight; forgetting the oldest",
			       TABLE_MAX_LIVE);
		f->warned = true;
	}
	ws_table_del(&f->calls, old);
}

static struct call *get_slot(struct ws_plugin_ctx *ctx, struct futex *f, uint32_t tid)
{
	struct call *c = ws_table_get(&f->calls, tid);

	if (c)
		return c;
	if (f->calls.live >= TABLE_MAX_LIVE)
		evict_oldest(ctx, f);
	return ws_table_put(&f->calls, tid, NULL);
}

static bool has_addr(const struct call *c, uint64_t a, bool *alias)
{
	uint32_t i;

	for (i = 0; i < c->naddrs; i++) {
		if (c->addrs[i] == a) {
			*alias = i >= c->nown;
			return true;
		}
	}
	return false;
}

static void add_addr(struct call *c, uint64_t a)
{
	bool alias;

	if (!a || has_addr(c, a, &alias) || c->naddrs >= CALL_ADDRS)
		return;
	c->addrs[c->naddrs++] = a;
}

/*
 * A requeue by @req moves waiters of its source futex to its target, where a
 * later wake on the target ends their wait; add the target to each waiter's
 * addresses. Called at the requeue's enter (waiters already waiting) and
 * again at its exit (waiters that arrived while it ran, which the kernel may
 * have moved too). An alias on a waiter that was in fact not moved is
 * harmless: a claim still needs the waker that really woke the waiter to be
 * inside a wake on that address.
 */
static void alias_requeued(struct futex *f, const struct call *req)
{
	if (!req->src || !req->dst)
		return;
	for (size_t i = 0; i < f->calls.cap; i++) {
		struct call *c = ws_table_at(&f->calls, i);
		bool alias;

		if (!c || c == req || c->pid != req->pid)
			continue;
		if (role_of(c->syscall, c->cmd) != ROLE_BLOCK)
			continue;
		if (has_addr(c, req->src, &alias))
			add_addr(c, req->dst);
	}
}

static int decode_enter(struct ws_plugin_ctx *ctx, const struct ws_futex_enter *e)
{
	struct call *c;
	uint32_t i;

	if (e->hdr.size < sizeof(*e) || e->naddrs > WS_FUTEX_MAX_ADDRS)
		return -EINVAL;
	if (role_of(e->syscall, e->cmd) == ROLE_NONE)
		return -EINVAL;
	/* An older call of this thread whose exit was lost is replaced. */
	c = get_slot(ctx, ctx->priv, e->hdr.tid);
	if (!c)
		return -ENOMEM;
	memset(c, 0, sizeof(*c));
	c->tid = e->hdr.tid;
	c->pid = e->hdr.pid;
	c->syscall = e->syscall;
	c->cmd = e->cmd;
	/* futex(2) and futex_wake/futex_wait(2) use the same PRIVATE bit; arrays carry per-entry
	 * flags that are not recorded, so they stay private (same process only) */
	c->shared = (e->syscall == WS_FUTEX_SYS_FUTEX || e->syscall == WS_FUTEX_SYS_WAKE ||
		     e->syscall == WS_FUTEX_SYS_WAIT) &&
		    !(e->op & WS_FUTEX_PRIVATE_FLAG);
	c->ts = e->hdr.ts;
	add_addr(c, e->uaddr);
	/* uaddr2 is a futex only for these; for the rest it is unused or a timeout. */
	if (e->syscall == WS_FUTEX_SYS_REQUEUE ||
	    (e->syscall == WS_FUTEX_SYS_FUTEX &&
	     (is_requeue(e->syscall, e->cmd) || e->cmd == WS_FUTEX_WAKE_OP ||
	      e->cmd == WS_FUTEX_WAIT_REQUEUE_PI)))
		add_addr(c, e->uaddr2);
	if (e->syscall == WS_FUTEX_SYS_WAITV)
		for (i = 0; i < e->naddrs; i++)
			add_addr(c, e->addrs[i]);
	c->nown = c->naddrs;
	if (is_requeue(e->syscall, e->cmd)) {
		c->src = e->uaddr;
		c->dst = e->uaddr2;
		alias_requeued(ctx->priv, c);
	}
	return 0;
}

static int decode_exit(struct futex *f, const struct ws_futex_exit *x)
{
	struct call *c;

	if (x->hdr.size < sizeof(*x))
		return -EINVAL;
	c = ws_table_get(&f->calls, x->hdr.tid);
	if (!c)
		return 0; /* its enter was lost, or it is one we never saw start */
	/* A negative return moved nobody; a positive one counts woken and requeued waiters. */
	if (is_requeue(c->syscall, c->cmd) && (int64_t)x->ret > 0)
		alias_requeued(f, c);
	ws_table_del(&f->calls, c);
	return 0;
}

static int futex_decode(struct ws_plugin_ctx *ctx, const struct ws_rec_hdr *rec)
{
	switch (rec->kind) {
	case WS_FUTEX_ENTER:
		return decode_enter(ctx, (const struct ws_futex_enter *)rec);
	case WS_FUTEX_EXIT:
		return decode_exit(ctx->priv, (const struct ws_futex_exit *)rec);
	}
	return -EINVAL;
}

/*
 * The futex call a struct ws_syscall is, as the in-flight table would hold it; false, with
 * @c untouched, when it is none. Every wakeup asks this of both its threads, and most are in
 * other calls: those are told apart by name before @c is cleared.
 */
static bool call_from_sys(const struct ws_syscall *sys, uint32_t tid, uint32_t pid, uint64_t ts,
			  struct call *c)
{
	const char *name = ws_syscall_known(sys) ? ws_syscall_name(sys->arch, sys->nr) : NULL;
	uint32_t flags;

	if (!name || strncmp(name, "futex", 5))
		return false;
	memset(c, 0, sizeof(*c));
	c->tid = tid;
	c->pid = pid;
	c->ts = ts;
	if (!strcmp(name, "futex")) {
		c->syscall = WS_FUTEX_SYS_FUTEX;
		flags = sys->args[1];
		c->cmd = flags & WS_FUTEX_CMD_MASK;
		add_addr(c, sys->args[0]);
		if (is_requeue(c->syscall, c->cmd) || c->cmd == WS_FUTEX_WAKE_OP ||
		    c->cmd == WS_FUTEX_WAIT_REQUEUE_PI)
			add_addr(c, sys->args[4]);
		/* the timeout argument of the waits (LOCK_PI's is absolute, still a timeout) */
		c->timed = sys->args[3] != 0;
	} else if (!strcmp(name, "futex_wait")) {
		/* futex_wait(uaddr, val, mask, flags, timeout, clockid) */
		c->syscall = WS_FUTEX_SYS_WAIT;
		flags = sys->args[3];
		add_addr(c, sys->args[0]);
		c->timed = sys->args[4] != 0;
	} else if (!strcmp(name, "futex_wake")) {
		/* futex_wake(uaddr, mask, nr, flags) */
		c->syscall = WS_FUTEX_SYS_WAKE;
		flags = sys->args[3];
		add_addr(c, sys->args[0]);
	} else {
		/*
		 * futex_waitv and futex_requeue(2) pass their futexes in a user array,
		 * which registers do not show: no claim rests on them.
		 */
		return false;
	}
	if (role_of(c->syscall, c->cmd) == ROLE_NONE)
		return false;
	c->shared = !(flags & WS_FUTEX_PRIVATE_FLAG);
	c->nown = c->naddrs;
	if (is_requeue(c->syscall, c->cmd)) {
		c->src = sys->args[0];
		c->dst = sys->args[4];
	}
	return true;
}

static void remember(struct futex *f, const struct call *waker)
{
	struct recent *r = &f->seen.r[f->seen.next++ % RECENT];

	r->tid = waker->tid;
	r->pid = waker->pid;
	r->shared = waker->shared;
	r->ts = waker->ts;
	r->src = waker->src ? waker->src : waker->addrs[0];
	r->dst = waker->dst;
}

/* Could @r have touched @victim's futexes (same process, or both shared)? */
static bool reaches(const struct recent *r, const struct call *victim)
{
	return r->pid == victim->pid || (r->shared && victim->shared);
}

/* Add the targets of requeues seen during the wait that moved waiters of @victim's futexes. */
static void alias_seen_requeues(const struct futex *f, struct call *victim, uint64_t from,
				uint64_t to)
{
	for (unsigned int i = 0; i < RECENT; i++) {
		const struct recent *r = &f->seen.r[i];
		bool alias;

		if (r->dst && r->ts >= from && r->ts <= to && reaches(r, victim) &&
		    has_addr(victim, r->src, &alias))
			add_addr(victim, r->dst);
	}
}

static uint64_t mix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

/* One key for a word of one process, here and in the session's name table (a recording). */
static uint64_t word_key(uint32_t pid, uint64_t addr)
{
	uint64_t k = mix64(addr ^ mix64(pid));

	return k ? k : 1;
}

/*
 * Say which global or static holds futex word @addr of process @pid, when one does
 * ("addr_symbol": "_PyRuntime+0x1b0"): live, the core reads it from the process's files; a
 * replay takes the name the live run kept in the recording. Asked once per word.
 */
static void claim_word_name(struct ws_plugin_ctx *ctx, uint32_t pid, uint64_t addr,
			    struct ws_claim *out)
{
	const struct ws_host *h = ctx->host;
	struct futex *f = ctx->priv;
	uint64_t key = word_key(pid, addr);
	struct word_name *wn = ws_table_get(&f->words, key);

	if (!h->data_symbol)
		return;
	if (!wn) {
		if (f->words.live >= WORDS_MAX || !(wn = ws_table_put(&f->words, key, NULL)))
			return; /* unnamed, never misnamed */
		if (ctx->replay) {
			wn->named = h->name_get(ctx, key, wn->name, sizeof(wn->name)) == 0 &&
				    wn->name[0];
		} else {
			wn->named = h->data_symbol(ctx, pid, addr, wn->name, sizeof(wn->name)) > 0;
			if (wn->named)
				h->name_set(ctx, key, wn->name);
		}
	}
	if (wn->named)
		h->claim_str(out, "addr_symbol", wn->name);
}

/* The name-table key of the lock at a word (a key of its own beside the word's symbol). */
static uint64_t lock_key(uint32_t pid, uint64_t addr)
{
	uint64_t k = mix64(word_key(pid, addr) ^ 0x6c6f636bULL);

	return k ? k : 2;
}

/*
 * Say which lock a language runtime keeps at futex word @addr of process @pid, when one does
 * ("lock": "gil", "lock_name": "the GIL (python3.11 pid 4821)"): live, the core knows from the
 * runtime's own layout; a replay takes what the live run kept ("gil:the GIL (...)"). Asked once
 * per word: the answer sits in the word's entry.
 */
static void claim_word_lock(struct ws_plugin_ctx *ctx, uint32_t pid, uint64_t addr,
			    struct ws_claim *out)
{
	const struct ws_host *h = ctx->host;
	struct word_name *wn =
		ws_table_get(&((struct futex *)ctx->priv)->words, word_key(pid, addr));
	char buf[sizeof(wn->lock) + 8]; /* "gil:" and the name */

	if (!wn || !h->lock_name)
		return;
	if (!wn->lock_asked) {
		wn->lock_asked = true;
		if (ctx->replay) {
			if (h->name_get(ctx, lock_key(pid, addr), buf, sizeof(buf)) == 0 &&
			    !strncmp(buf, "gil:", 4) && buf[4])
				snprintf(wn->lock, sizeof(wn->lock), "%.*s",
					 (int)sizeof(wn->lock) - 1, buf + 4);
		} else if (h->lock_name(ctx, pid, addr, wn->lock, sizeof(wn->lock)) ==
				   WS_LOCK_GIL &&
			   wn->lock[0]) {
			snprintf(buf, sizeof(buf), "gil:%s", wn->lock);
			h->name_set(ctx, lock_key(pid, addr), buf);
		} else {
			wn->lock[0] = 0;
		}
	}
	if (wn->lock[0]) {
		h->claim_str(out, "lock", "gil");
		h->claim_str(out, "lock_name", wn->lock);
	}
}

/*
 * Fill @out if @waker's call wakes or hands over one of @victim's futexes
 * (the check both ways of learning the calls share).
 */
static int claim_match(struct ws_plugin_ctx *ctx, const struct ws_wait *w,
		       const struct call *victim, const struct call *waker, struct ws_claim *out)
{
	const struct ws_wake *wk = w->wake;
	const char *vop, *wop;
	bool other;
	uint32_t i;

	if (role_of(waker->syscall, waker->cmd) != ROLE_WAKE)
		return 0;
	/*
	 * A private futex names memory of one address space. Across processes only
	 * shared futexes on both sides can match, and then by the same address: a
	 * mapping inherited through fork has it in both (one mapped elsewhere is
	 * not recognised, and the link stays a plain wakeup).
	 */
	other = w->pid != wk->waker_pid;
	if (other && !(victim->shared && waker->shared))
		return 0;
	vop = op_name(victim->syscall, victim->cmd);
	wop = op_name(waker->syscall, waker->cmd);
	for (i = 0; i < waker->naddrs; i++) {
		uint64_t a = waker->addrs[i];
		bool alias;

		if (!has_addr(victim, a, &alias))
			continue;
		out->strength = WS_CLAIM_SPECIFIC;
		snprintf(out->kind, sizeof(out->kind), "futex");
		out->woken_by = wk->waker_tid;
		out->root = false;
		if (alias)
			snprintf(out->evidence, sizeof(out->evidence),
				 "waker in %s on the uaddr the wait was requeued to", wop);
		else if (other)
			snprintf(out->evidence, sizeof(out->evidence),
				 "waker (another process) in %s on the same shared uaddr", wop);
		else
			snprintf(out->evidence, sizeof(out->evidence), "waker in %s on same uaddr",
				 wop);
		ctx->host->claim_hex(out, "addr", a);
		if (alias)
			ctx->host->claim_hex(out, "waited_addr", victim->addrs[0]);
		ctx->host->claim_str(out, "op", vop);
		ctx->host->claim_str(out, "waker_op", wop);
		claim_word_name(ctx, w->pid, a, out);
		claim_word_lock(ctx, w->pid, a, out);
		return 1;
	}
	return 0;
}

/*
 * A timed futex wait woken from a timer callback ended by its timeout. If a
 * thread was seen waking or handing over that futex during the wait, the
 * futex was being passed around without this thread getting it: that thread
 * is named (and the chain follows it); otherwise the timeout is the root.
 */
static int claim_timeout(struct ws_plugin_ctx *ctx, const struct ws_wait *w,
			 const struct call *victim, struct ws_claim *out)
{
	const struct recent *by = NULL;
	uint64_t a = victim->addrs[0];

	for (unsigned int i = 0; i < RECENT; i++) {
		const struct recent *r = &((const struct futex *)ctx->priv)->seen.r[i];

		if (r->ts >= w->start_ns && r->ts <= w->wake->ts && r->src == a &&
		    r->tid != w->tid && reaches(r, victim) && (!by || r->ts > by->ts))
			by = r;
	}
	out->strength = WS_CLAIM_SPECIFIC;
	snprintf(out->kind, sizeof(out->kind), "timeout");
	out->woken_by = by ? by->tid : 0;
	out->root = !by;
	if (by)
		snprintf(
			out->evidence, sizeof(out->evidence),
			"timed wait ended by its timer; tid %u woke this futex's waiters meanwhile",
			by->tid);
	else
		snprintf(out->evidence, sizeof(out->evidence),
			 "timed wait ended by its timer; no wake on this futex was seen meanwhile");
	ctx->host->claim_hex(out, "addr", a);
	ctx->host->claim_str(out, "op", op_name(victim->syscall, victim->cmd));
	claim_word_name(ctx, w->pid, a, out);
	claim_word_lock(ctx, w->pid, a, out);
	return 1;
}

/* The register path: both calls come with the wakeup. */
static int infer_from_regs(struct ws_plugin_ctx *ctx, const struct ws_wait *w, struct ws_claim *out)
{
	const struct ws_wake *wk = w->wake;
	struct call victim, waker;
	bool in_irq = wk->ctx & (WS_CTX_HARDIRQ | WS_CTX_SOFTIRQ);
	bool have_waker =
		!in_irq &&
		call_from_sys(&wk->waker_sys, wk->waker_tid, wk->waker_pid, wk->ts, &waker) &&
		role_of(waker.syscall, waker.cmd) == ROLE_WAKE;

	/* every wake seen feeds the requeue aliases and the timeout evidence */
	if (have_waker)
		remember(ctx->priv, &waker);
	if (!call_from_sys(&wk->wakee_sys, w->tid, w->pid, w->start_ns, &victim) ||
	    role_of(victim.syscall, victim.cmd) != ROLE_BLOCK)
		return 0;
	if (wk->ctx & WS_CTX_TIMER)
		return victim.timed ? claim_timeout(ctx, w, &victim, out) : 0;
	if (!have_waker)
		return 0;
	alias_seen_requeues(ctx->priv, &victim, w->start_ns, wk->ts);
	return claim_match(ctx, w, &victim, &waker, out);
}

static int futex_infer(struct ws_plugin_ctx *ctx, const struct ws_wait *w, struct ws_claim *out)
{
	const struct ws_wake *wk = w->wake;
	const struct call *victim, *waker;

	if (!wk)
		return 0;
	if (wk->sz >= sizeof(*wk) && wk->wakee_sys.arch != WS_ARCH_UNKNOWN)
		return infer_from_regs(ctx, w, out);
	/* In an interrupt, current did not do the wakeup: it is no evidence. */
	if (wk->ctx & (WS_CTX_HARDIRQ | WS_CTX_SOFTIRQ))
		return 0;
	victim = ws_table_get(&((struct futex *)ctx->priv)->calls, w->tid);
	if (!victim || victim->pid != w->pid || role_of(victim->syscall, victim->cmd) != ROLE_BLOCK)
		return 0;
	/* It must have gone to sleep inside this call, not before it. */
	if (victim->ts > w->start_ns)
		return 0;
	waker = ws_table_get(&((struct futex *)ctx->priv)->calls, wk->waker_tid);
	if (!waker || waker->pid != wk->waker_pid)
		return 0;
	if (waker->ts > wk->ts)
		return 0;
	return claim_match(ctx, w, victim, waker, out);
}

/* "futex 0x7f2a3c001000", "futex 0xa5b8f0 (_PyRuntime+0x1b0)": the word, and the global
 * holding it when one does; "the GIL (python3.11 pid 4821) at futex 0xa5b8f0": the lock a
 * runtime keeps there. */
static int word_text(const struct ws_claim *claim, uint64_t addr, char *buf, size_t len)
{
	const char *sym = ws_claim_str(claim, "addr_symbol", NULL);
	const char *lock = ws_claim_str(claim, "lock_name", NULL);

	if (lock && *lock)
		return snprintf(buf, len, "%s at futex 0x%llx", lock, (unsigned long long)addr);
	if (sym && *sym)
		return snprintf(buf, len, "futex 0x%llx (%s)", (unsigned long long)addr, sym);
	return snprintf(buf, len, "futex 0x%llx", (unsigned long long)addr);
}

static int futex_describe(struct ws_plugin_ctx *ctx, const struct ws_claim *claim, char *buf,
			  size_t len)
{
	const struct ws_field *addr = ws_claim_field(claim, "addr"),
			      *op = ws_claim_field(claim, "op");
	int n;

	(void)ctx;
	if (!strcmp(claim->kind, "timeout")) {
		if (!addr)
			return snprintf(buf, len, "a futex wait that timed out");
		n = word_text(claim, addr->u, buf, len);
		if (n >= 0 && (size_t)n < len)
			n += snprintf(buf + n, len - n, ": wait timed out");
		return n;
	}
	if (!addr)
		return snprintf(buf, len, "futex");
	n = word_text(claim, addr->u, buf, len);
	/* Only PI ops get a suffix: they are locks with an owner, worth naming. */
	if (op && op->type == WS_FIELD_STR && strstr(op->s, "_PI") && n >= 0 && (size_t)n < len)
		n += snprintf(buf + n, len - n, " (%s)", op->s);
	return n;
}

/* Waits on one futex word are one cause, whoever woke each; waits on one lock's words (the
 * GIL's condition variable and mutexes) are one too. */
static int futex_resource(struct ws_plugin_ctx *ctx, const struct ws_claim *claim, char *buf,
			  size_t len)
{
	const struct ws_field *addr = ws_claim_field(claim, "addr");
	const char *lock = ws_claim_str(claim, "lock_name", NULL);

	(void)ctx;
	if (lock && *lock)
		return snprintf(buf, len, "%s", lock);
	if (!addr)
		return 0;
	return word_text(claim, addr->u, buf, len);
}

static int futex_init(struct ws_plugin_ctx *ctx)
{
	struct futex *f = calloc(1, sizeof(*f));

	if (!f)
		return -ENOMEM;
	ws_table_init(&f->calls, sizeof(struct call));
	ws_table_init(&f->words, sizeof(struct word_name));
	ctx->priv = f;
	return 0;
}

static void futex_fini(struct ws_plugin_ctx *ctx)
{
	struct futex *f = ctx->priv;

	if (f) {
		ws_table_free(&f->calls);
		ws_table_free(&f->words);
	}
	free(f);
	ctx->priv = NULL;
}

static const struct ws_plugin futex_plugin = {
	.sz = sizeof(struct ws_plugin),
	.abi_major = WS_ABI_MAJOR,
	.abi_minor = WS_ABI_MINOR,
	.name = "futex",
	.description = "futex waits and wakes: names the futex a thread slept on and who woke it",
	.version = "2.0",
	.kind_base = WS_KIND_FUTEX,
	.bpf_object = NULL, /* it reads the sched source's wakeups; no program of its own */
	.config_keys = NULL,
	.init = futex_init,
	.configure = NULL,
	.decode = futex_decode,
	.infer = futex_infer,
	.describe = futex_describe,
	.fini = futex_fini,
	.resource = futex_resource,
	.describe_open = futex_describe_open,
	.open_owner = futex_open_owner,
};

WS_PLUGIN_DEFINE(futex_plugin)
