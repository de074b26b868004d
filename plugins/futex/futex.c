// SPDX-License-Identifier: MIT
/*
 * futex source, user side: keeps the futex call each traced thread is inside
 * and explains a wakeup as "woken through futex X" when the wakee sleeps in a
 * futex call on X and the waker, in task context, is inside a call that wakes
 * or hands over X. Both facts come from records; time overlap alone is never
 * enough.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <whyslow/plugin.h>

#include "futex_rec.h"
#include "futex.skel.h"

/* A call's own addresses (up to WS_FUTEX_MAX_ADDRS) plus requeue targets. */
#define CALL_ADDRS 12

/* Live in-flight calls at most; a full table drops its oldest call. */
#define TABLE_MIN_CAP 256
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
};

static struct {
	struct call *slot;
	size_t cap; /* power of two, or 0 */
	size_t live;
	bool warned;
} tab;

enum role {
	ROLE_NONE,
	ROLE_BLOCK,
	ROLE_WAKE
};

static const char *const cmd_names[] = {
	[WS_FUTEX_WAIT] = "FUTEX_WAIT",
	[WS_FUTEX_WAKE] = "FUTEX_WAKE",
	[2] = "FUTEX_FD",
	[WS_FUTEX_REQUEUE] = "FUTEX_REQUEUE",
	[WS_FUTEX_CMP_REQUEUE] = "FUTEX_CMP_REQUEUE",
	[WS_FUTEX_WAKE_OP] = "FUTEX_WAKE_OP",
	[WS_FUTEX_LOCK_PI] = "FUTEX_LOCK_PI",
	[WS_FUTEX_UNLOCK_PI] = "FUTEX_UNLOCK_PI",
	[WS_FUTEX_TRYLOCK_PI] = "FUTEX_TRYLOCK_PI",
	[WS_FUTEX_WAIT_BITSET] = "FUTEX_WAIT_BITSET",
	[WS_FUTEX_WAKE_BITSET] = "FUTEX_WAKE_BITSET",
	[WS_FUTEX_WAIT_REQUEUE_PI] = "FUTEX_WAIT_REQUEUE_PI",
	[WS_FUTEX_CMP_REQUEUE_PI] = "FUTEX_CMP_REQUEUE_PI",
	[WS_FUTEX_LOCK_PI2] = "FUTEX_LOCK_PI2",
};

static const char *op_name(uint32_t syscall, uint32_t cmd)
{
	switch (syscall) {
	case WS_FUTEX_SYS_FUTEX:
		if (cmd < sizeof(cmd_names) / sizeof(cmd_names[0]) && cmd_names[cmd])
			return cmd_names[cmd];
		return "FUTEX_?";
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

/* --- in-flight table: open addressing, linear probing, keyed by tid ------------------------ */

static size_t slot_of(uint32_t tid, size_t cap)
{
	return (size_t)(tid * 2654435761u) & (cap - 1);
}

static struct call *lookup(uint32_t tid)
{
	size_t i;

	if (!tab.cap || !tid)
		return NULL;
	for (i = slot_of(tid, tab.cap);; i = (i + 1) & (tab.cap - 1)) {
		if (tab.slot[i].tid == tid)
			return &tab.slot[i];
		if (!tab.slot[i].tid)
			return NULL;
	}
}

/* Backward-shift deletion keeps every probe chain unbroken without tombstones. */
static void remove_call(struct call *c)
{
	size_t i = c - tab.slot, j = i, home;

	tab.slot[i].tid = 0;
	tab.live--;
	for (;;) {
		j = (j + 1) & (tab.cap - 1);
		if (!tab.slot[j].tid)
			return;
		home = slot_of(tab.slot[j].tid, tab.cap);
		/* Move j into the hole unless its home lies cyclically in (i, j]. */
		if ((j > i && (home <= i || home > j)) || (j < i && home <= i && home > j)) {
			tab.slot[i] = tab.slot[j];
			tab.slot[j].tid = 0;
			i = j;
		}
	}
}

static struct call *insert_slot(struct call *slots, size_t cap, uint32_t tid)
{
	size_t i;

	for (i = slot_of(tid, cap); slots[i].tid && slots[i].tid != tid; i = (i + 1) & (cap - 1))
		;
	return &slots[i];
}

static int grow(void)
{
	size_t ncap = tab.cap ? tab.cap * 2 : TABLE_MIN_CAP, i;
	struct call *ns = calloc(ncap, sizeof(*ns));

	if (!ns)
		return -ENOMEM;
	for (i = 0; i < tab.cap; i++)
		if (tab.slot[i].tid)
			*insert_slot(ns, ncap, tab.slot[i].tid) = tab.slot[i];
	free(tab.slot);
	tab.slot = ns;
	tab.cap = ncap;
	return 0;
}

/*
 * A thread that dies inside a futex call (exit_group while it waits) never
 * writes its exit record, so entries can outlive their threads. Bound them:
 * at the limit the oldest call goes.
 */
static void evict_oldest(const struct ws_host *host)
{
	struct call *old = NULL;
	size_t i;

	for (i = 0; i < tab.cap; i++)
		if (tab.slot[i].tid && (!old || tab.slot[i].ts < old->ts))
			old = &tab.slot[i];
	if (!old)
		return;
	if (!tab.warned && host && host->log) {
		host->log(WS_LOG_DEBUG, "futex", "%d calls in flight; forgetting the oldest",
			  TABLE_MAX_LIVE);
		tab.warned = true;
	}
	remove_call(old);
}

static struct call *get_slot(const struct ws_host *host, uint32_t tid)
{
	struct call *c = lookup(tid);

	if (c)
		return c;
	if (tab.live >= TABLE_MAX_LIVE)
		evict_oldest(host);
	if ((tab.live + 1) * 2 > tab.cap && grow())
		return NULL;
	c = insert_slot(tab.slot, tab.cap, tid);
	tab.live++;
	return c;
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
static void alias_requeued(const struct call *req)
{
	size_t i;

	if (!req->src || !req->dst)
		return;
	for (i = 0; i < tab.cap; i++) {
		struct call *c = &tab.slot[i];
		bool alias;

		if (!c->tid || c == req || c->pid != req->pid)
			continue;
		if (role_of(c->syscall, c->cmd) != ROLE_BLOCK)
			continue;
		if (has_addr(c, req->src, &alias))
			add_addr(c, req->dst);
	}
}

static int decode_enter(const struct ws_host *host, const struct ws_futex_enter *e)
{
	struct call *c;
	uint32_t i;

	if (e->hdr.size < sizeof(*e) || e->naddrs > WS_FUTEX_MAX_ADDRS)
		return -EINVAL;
	if (role_of(e->syscall, e->cmd) == ROLE_NONE)
		return -EINVAL;
	/* An older call of this thread whose exit was lost is replaced. */
	c = get_slot(host, e->hdr.tid);
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
		alias_requeued(c);
	}
	return 0;
}

static int decode_exit(const struct ws_futex_exit *x)
{
	struct call *c;

	if (x->hdr.size < sizeof(*x))
		return -EINVAL;
	c = lookup(x->hdr.tid);
	if (!c)
		return 0; /* its enter was lost, or it is one we never saw start */
	/* A negative return moved nobody; a positive one counts woken and requeued waiters. */
	if (is_requeue(c->syscall, c->cmd) && (int64_t)x->ret > 0)
		alias_requeued(c);
	remove_call(c);
	return 0;
}

static int futex_decode(const struct ws_host *host, const struct ws_rec_hdr *rec)
{
	switch (rec->kind) {
	case WS_FUTEX_ENTER:
		return decode_enter(host, (const struct ws_futex_enter *)rec);
	case WS_FUTEX_EXIT:
		return decode_exit((const struct ws_futex_exit *)rec);
	}
	return -EINVAL;
}

static int futex_infer(const struct ws_host *host, const struct ws_wait *w, struct ws_claim *out)
{
	const struct ws_wake *wk = w->wake;
	const struct call *victim, *waker;
	const char *vop, *wop;
	bool other;
	uint32_t i;

	if (!wk)
		return 0;
	/* In an interrupt, current did not do the wakeup: it is no evidence. */
	if (wk->ctx & (WS_CTX_HARDIRQ | WS_CTX_SOFTIRQ))
		return 0;
	victim = lookup(w->tid);
	if (!victim || victim->pid != w->pid || role_of(victim->syscall, victim->cmd) != ROLE_BLOCK)
		return 0;
	/* It must have gone to sleep inside this call, not before it. */
	if (victim->ts > w->start_ns)
		return 0;
	waker = lookup(wk->waker_tid);
	if (!waker || waker->pid != wk->waker_pid ||
	    role_of(waker->syscall, waker->cmd) != ROLE_WAKE)
		return 0;
	if (waker->ts > wk->ts)
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
		host->claim_hex(out, "addr", a);
		if (alias)
			host->claim_hex(out, "waited_addr", victim->addrs[0]);
		host->claim_str(out, "op", vop);
		host->claim_str(out, "waker_op", wop);
		return 1;
	}
	return 0;
}

static const struct ws_field *field(const struct ws_claim *c, const char *key)
{
	unsigned int i;

	for (i = 0; i < c->nfields && i < WS_CLAIM_FIELDS; i++)
		if (!strcmp(c->fields[i].key, key))
			return &c->fields[i];
	return NULL;
}

static int futex_describe(const struct ws_claim *claim, char *buf, size_t len)
{
	const struct ws_field *addr = field(claim, "addr"), *op = field(claim, "op");

	if (!addr)
		return snprintf(buf, len, "futex");
	/* Only PI ops get a suffix: they are locks with an owner, worth naming. */
	if (op && op->type == WS_FIELD_STR && strstr(op->s, "_PI"))
		return snprintf(buf, len, "futex 0x%llx (%s)", (unsigned long long)addr->u, op->s);
	return snprintf(buf, len, "futex 0x%llx", (unsigned long long)addr->u);
}

/* Waits on one futex word are one cause, whoever woke each. */
static int futex_resource(const struct ws_claim *claim, char *buf, size_t len)
{
	const struct ws_field *addr = field(claim, "addr");

	if (!addr)
		return 0;
	return snprintf(buf, len, "futex 0x%llx", (unsigned long long)addr->u);
}

static void futex_fini(const struct ws_host *host)
{
	(void)host;
	free(tab.slot);
	memset(&tab, 0, sizeof(tab));
}

static const void *futex_bpf_object(size_t *size)
{
	return futex_bpf__elf_bytes(size);
}

static const struct ws_plugin futex_plugin = {
	.sz = sizeof(struct ws_plugin),
	.abi_major = WS_ABI_MAJOR,
	.abi_minor = WS_ABI_MINOR,
	.name = "futex",
	.description = "futex waits and wakes: names the futex a thread slept on and who woke it",
	.version = "1.0",
	.kind_base = WS_KIND_FUTEX,
	.bpf_object = futex_bpf_object,
	.config_keys = NULL,
	.configure = NULL,
	.decode = futex_decode,
	.infer = futex_infer,
	.describe = futex_describe,
	.fini = futex_fini,
	.resource = futex_resource,
};

WS_PLUGIN_DEFINE(futex_plugin)
