// SPDX-License-Identifier: MIT
/*
 * klock source, user side: which sleeping kernel lock each traced thread is
 * waiting for, and a claim for a wait that ended while it waited for one.
 *
 * The claim (kind "kernel_lock", SPECIFIC) needs three facts from records:
 *  1. the woken thread was inside a blocking contention on lock L since
 *     before it switched out (ws_klock_begin, no ws_klock_end since);
 *  2. the wakeup was done in task context (an interrupt's current did not
 *     do it);
 *  3. the waker's kernel stack at the wakeup ran through a function that
 *     releases a sleeping lock and wakes that lock's waiters (up_write,
 *     up_read, mutex_unlock, ...; ws_klock_wake.fn). A thread waits for one
 *     lock at a time, so that lock is L: the waker released L.
 * With 1 and 2 but not 3 (a signal, a reader that let other readers in, or
 * no kernel symbols to compare with) the claim says only what was seen, at
 * FALLBACK strength: "woken by W while waiting for L".
 *
 * Built only against the installed SDK (pkg-config whyslow-plugin).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <whyslow/plugin.h>
#include <whyslow/table.h>

#include "klock_rec.h"
#include "klock.skel.h"

#define TABLE_MAX_LIVE 65536

/* One traced thread inside a blocking contention. */
struct waiter {
	uint32_t tid; /* 0: free slot */
	uint32_t pid;
	uint64_t lock;
	uint32_t flags;
	uint64_t begin_ts;
	/* the last wakeup seen while it waited (ws_klock_wake), or wake_ts 0 */
	uint64_t wake_ts;
	uint32_t waker_tid;
	uint8_t waker_ctx;
	uint32_t fn;
	uint16_t nfn;
	uint64_t waker_lock;
	/* the lock's holder when the wait began, as the lock recorded it */
	uint32_t owner_tid, owner_src;
	char owner_comm[16];
};

/* The plugin's state for one session (ws_plugin_ctx.priv): tid -> struct waiter. */
struct klock {
	struct ws_table waiters;
};

static const char *const fn_names[KLOCK_FN_COUNT] = {
	[KLOCK_FN_UP_WRITE] = "up_write",
	[KLOCK_FN_UP_READ] = "up_read",
	[KLOCK_FN_DOWNGRADE_WRITE] = "downgrade_write",
	[KLOCK_FN_RWSEM_WAKE] = "rwsem_wake",
	[KLOCK_FN_MUTEX_UNLOCK] = "mutex_unlock",
	[KLOCK_FN_MUTEX_UNLOCK_SLOWPATH] = "__mutex_unlock_slowpath",
	[KLOCK_FN_WW_MUTEX_UNLOCK] = "ww_mutex_unlock",
	[KLOCK_FN_RT_MUTEX_UNLOCK] = "rt_mutex_unlock",
	[KLOCK_FN_UP] = "up",
	[KLOCK_FN_PERCPU_UP_WRITE] = "percpu_up_write",
	[KLOCK_FN_RT_MUTEX_SLOWUNLOCK] = "rt_mutex_slowunlock",
};

/* --- lock types -------------------------------------------------------------------------- */

/* The lock's type as contention_begin's flags tell it (as perf lock names them). */
static const char *lock_type(uint32_t f)
{
	if (f & KLOCK_F_SPIN)
		return (f & (KLOCK_F_READ | KLOCK_F_WRITE)) ? "rwlock" : "spinlock";
	if (f & KLOCK_F_MUTEX)
		return "mutex";
	if (f & KLOCK_F_PERCPU)
		return "percpu-rwsem";
	if (f & KLOCK_F_RT)
		return (f & (KLOCK_F_READ | KLOCK_F_WRITE)) ? "rt-rwlock" : "rtmutex";
	if (f & (KLOCK_F_READ | KLOCK_F_WRITE))
		return "rwsem";
	return "semaphore";
}

/* "read", "write" or NULL for a lock without modes. */
static const char *lock_mode(uint32_t f)
{
	if (f & KLOCK_F_WRITE)
		return "write";
	if (f & KLOCK_F_READ)
		return "read";
	return NULL;
}

/* --- waiters ----------------------------------------------------------------------------- */

/* A thread that dies waiting never writes its end record: at the limit the oldest goes. */
static void evict_oldest(struct ws_table *t)
{
	struct waiter *old = NULL;

	for (size_t i = 0; i < t->cap; i++) {
		struct waiter *c = ws_table_at(t, i);

		if (c && (!old || c->begin_ts < old->begin_ts))
			old = c;
	}
	if (old)
		ws_table_del(t, old);
}

static struct waiter *get_slot(struct ws_table *t, uint32_t tid)
{
	struct waiter *c = ws_table_get(t, tid);

	if (c)
		return c;
	if (t->live >= TABLE_MAX_LIVE)
		evict_oldest(t);
	return ws_table_put(t, tid, NULL);
}

/* --- configure: where the release functions are ------------------------------------------- */

/* enum klock_fn of kallsyms name @sym ("rwsem_wake.isra.0" counts as rwsem_wake), or 0. */
static uint32_t fn_of(const char *sym)
{
	for (uint32_t id = 1; id < KLOCK_FN_COUNT; id++) {
		size_t n = strlen(fn_names[id]);

		if (!strncmp(sym, fn_names[id], n) && (sym[n] == 0 || sym[n] == '.'))
			return id;
	}
	return 0;
}

/*
 * Fill @lo/@hi/@id from /proc/kallsyms: each release function's start and the
 * next symbol's start. Returns how many were found (0 when addresses are
 * hidden, kernel.kptr_restrict).
 */
static uint32_t find_release_fns(uint64_t *lo, uint64_t *hi, uint32_t *id)
{
	unsigned long long addr;
	char type, name[256];
	uint32_t n = 0, i;
	FILE *f = fopen("/proc/kallsyms", "re");

	if (!f)
		return 0;
	while (n < KLOCK_MAX_FN && fscanf(f, "%llx %c %255s%*[^\n]", &addr, &type, name) == 3) {
		uint32_t fn = (type == 't' || type == 'T') ? fn_of(name) : 0;

		if (fn && addr) {
			lo[n] = addr;
			hi[n] = ~0ULL;
			id[n++] = fn;
		}
	}
	/* the end of each: the lowest symbol address above its start */
	rewind(f);
	while (n && fscanf(f, "%llx %c %255s%*[^\n]", &addr, &type, name) == 3)
		for (i = 0; i < n; i++)
			if (addr > lo[i] && addr < hi[i])
				hi[i] = addr;
	fclose(f);
	/* a function without a known end proves nothing */
	for (i = 0; i < n; i++)
		if (hi[i] == ~0ULL)
			hi[i] = lo[i];
	return n;
}

static int klock_configure(struct ws_plugin_ctx *ctx, struct bpf_object *obj)
{
	uint64_t lo[KLOCK_MAX_FN] = { 0 }, hi[KLOCK_MAX_FN] = { 0 };
	uint32_t id[KLOCK_MAX_FN] = { 0 }, n = find_release_fns(lo, hi, id);
	int err;

	if (!n)
		ctx->host->log(
			ctx, WS_LOG_WARN,
			"no kernel symbol addresses in /proc/kallsyms; lock waits are named but no releaser is proven");
	if ((err = ctx->host->set_rodata(ctx, obj, "klock_fn_lo", lo, sizeof(lo))) ||
	    (err = ctx->host->set_rodata(ctx, obj, "klock_fn_hi", hi, sizeof(hi))) ||
	    (err = ctx->host->set_rodata(ctx, obj, "klock_fn_id", id, sizeof(id))) ||
	    (err = ctx->host->set_rodata(ctx, obj, "klock_nfn", &n, sizeof(n)))) {
		ctx->host->log(ctx, WS_LOG_ERROR, "cannot set the BPF object's settings: %s",
			       strerror(-err));
		return err;
	}
	ctx->host->log(ctx, WS_LOG_DEBUG, "%u release functions located", n);
	return 0;
}

/* --- records ------------------------------------------------------------------------------ */

static int klock_decode(struct ws_plugin_ctx *ctx, const struct ws_rec_hdr *rec)
{
	struct ws_table *t = &((struct klock *)ctx->priv)->waiters;
	struct waiter *c;

	switch (rec->kind) {
	case WS_KLOCK_BEGIN: {
		const struct ws_klock_begin *b = (const void *)rec;
		bool has_owner = rec->size >= sizeof(*b);

		if (rec->size < WS_KLOCK_BEGIN_V1_SIZE)
			return -EINVAL;
		c = ws_table_get(t, rec->tid);
		/* a mutex's waiter begins again after each spin: the wait goes on */
		if (!c || c->lock != b->lock) {
			c = get_slot(t, rec->tid);
			if (!c)
				return -ENOMEM;
			memset(c, 0, sizeof(*c));
			c->tid = rec->tid;
			c->pid = rec->pid;
			c->lock = b->lock;
			c->begin_ts = rec->ts;
		}
		c->flags = b->flags;
		/* the latest reading: the one just before it went to sleep */
		c->owner_src = has_owner && b->owner_src <= KLOCK_OWNER_RELEASED ? b->owner_src
										 : KLOCK_OWNER_NONE;
		c->owner_tid = has_owner ? b->owner_tid : 0;
		if (has_owner)
			memcpy(c->owner_comm, b->owner_comm, sizeof(c->owner_comm));
		c->owner_comm[sizeof(c->owner_comm) - 1] = 0;
		return 0;
	}
	case WS_KLOCK_END: {
		const struct ws_klock_end *e = (const void *)rec;

		if (rec->size < sizeof(*e))
			return -EINVAL;
		c = ws_table_get(t, rec->tid);
		if (c && c->lock == e->lock)
			ws_table_del(t, c);
		return 0;
	}
	case WS_KLOCK_WAKE: {
		const struct ws_klock_wake *k = (const void *)rec;

		if (rec->size < sizeof(*k) || k->fn >= KLOCK_FN_COUNT)
			return -EINVAL;
		c = ws_table_get(t, k->wakee_tid);
		if (!c || c->lock != k->lock)
			return 0; /* its begin was lost */
		c->wake_ts = rec->ts;
		c->waker_tid = rec->tid;
		c->waker_ctx = rec->ctx;
		c->fn = k->fn;
		c->nfn = k->nfn;
		c->waker_lock = k->waker_lock;
		return 0;
	}
	}
	return -EINVAL;
}

/* --- inference ---------------------------------------------------------------------------- */

static const char *const owner_src_names[] = {
	[KLOCK_OWNER_MUTEX] = "mutex_owner_field",
	[KLOCK_OWNER_RWSEM_WRITER] = "rwsem_owner_field",
	[KLOCK_OWNER_RWSEM_READERS] = "rwsem_reader_owned",
	[KLOCK_OWNER_RELEASED] = "owner_field_empty",
};

static int klock_infer(struct ws_plugin_ctx *ctx, const struct ws_wait *w, struct ws_claim *out)
{
	const struct ws_wake *wk = w->wake;
	const char *type, *mode;
	struct waiter *c;
	bool released;

	if (!wk)
		return 0;
	c = ws_table_get(&((struct klock *)ctx->priv)->waiters, w->tid);
	if (!c || c->pid != w->pid)
		return 0;
	/* 1. waiting for the lock since before it slept */
	if (c->begin_ts > w->start_ns)
		return 0;
	/* 2. an interrupt's current did not do the wakeup */
	if (wk->ctx & (WS_CTX_HARDIRQ | WS_CTX_SOFTIRQ))
		return 0;
	/* 3. our record of this very wakeup: same waker, inside this wait, not after it */
	released = c->wake_ts && c->wake_ts >= c->begin_ts && c->wake_ts <= wk->ts &&
		   c->waker_tid == wk->waker_tid &&
		   !(c->waker_ctx & (WS_CTX_HARDIRQ | WS_CTX_SOFTIRQ)) && c->fn != KLOCK_FN_NONE;
	type = lock_type(c->flags);
	mode = lock_mode(c->flags);
	out->strength = released ? WS_CLAIM_SPECIFIC : WS_CLAIM_FALLBACK;
	snprintf(out->kind, sizeof(out->kind), "kernel_lock");
	out->woken_by = wk->waker_tid;
	/* an untraced waker has no timeline to follow */
	out->root = !w->waker_traced;
	if (released)
		snprintf(out->evidence, sizeof(out->evidence),
			 "blocked in kernel lock contention (%s); the waker released it (%s)", type,
			 fn_names[c->fn]);
	else
		snprintf(
			out->evidence, sizeof(out->evidence),
			"blocked in kernel lock contention (%s); woken by the waker, release not seen",
			type);
	ctx->host->claim_hex(out, "lock", c->lock);
	ctx->host->claim_str(out, "lock_type", type);
	if (mode)
		ctx->host->claim_str(out, "mode", mode);
	ctx->host->claim_hex(out, "flags", c->flags);
	if (released)
		ctx->host->claim_str(out, "waker_fn", fn_names[c->fn]);
	if (!w->waker_traced)
		ctx->host->claim_str(out, "waker_comm", wk->waker_comm ? wk->waker_comm : "?");
	if (c->owner_src == KLOCK_OWNER_MUTEX || c->owner_src == KLOCK_OWNER_RWSEM_WRITER) {
		ctx->host->claim_u64(out, "owner", c->owner_tid);
		ctx->host->claim_str(out, "owner_comm", c->owner_comm);
	}
	if (c->owner_src != KLOCK_OWNER_NONE)
		ctx->host->claim_str(out, "owner_evidence", owner_src_names[c->owner_src]);
	/* this wakeup's evidence is used up */
	c->wake_ts = 0;
	return 1;
}

/*
 * "kernel lock 0xffff8881... (rwsem, write)", and the holder when the wait
 * began if the lock named one: "...; held by tid 12 (cc1) at the start, per
 * its owner field".
 */
static int klock_describe(struct ws_plugin_ctx *ctx, const struct ws_claim *claim, char *buf,
			  size_t len)
{
	const struct ws_field *lock = ws_claim_field(claim, "lock"),
			      *type = ws_claim_field(claim, "lock_type"),
			      *mode = ws_claim_field(claim, "mode"),
			      *owner = ws_claim_field(claim, "owner"),
			      *ocomm = ws_claim_field(claim, "owner_comm"),
			      *osrc = ws_claim_field(claim, "owner_evidence");
	char held[96] = "";

	(void)ctx;
	if (!lock || !type)
		return snprintf(buf, len, "kernel lock");
	if (owner && ocomm)
		snprintf(held, sizeof(held),
			 "; held by tid %llu (%s) at the start, per its owner field",
			 (unsigned long long)owner->u, ocomm->s);
	else if (osrc && !strcmp(osrc->s, "rwsem_reader_owned"))
		snprintf(held, sizeof(held), "; held by readers at the start");
	if (mode)
		return snprintf(buf, len, "kernel lock 0x%llx (%s, %s%s)",
				(unsigned long long)lock->u, type->s, mode->s, held);
	return snprintf(buf, len, "kernel lock 0x%llx (%s%s)", (unsigned long long)lock->u, type->s,
			held);
}

/* Waits for one kernel lock are one cause, whoever released it each time. */
static int klock_resource(struct ws_plugin_ctx *ctx, const struct ws_claim *claim, char *buf,
			  size_t len)
{
	const struct ws_field *lock = ws_claim_field(claim, "lock");

	(void)ctx;
	if (!lock)
		return 0;
	return snprintf(buf, len, "kernel lock 0x%llx", (unsigned long long)lock->u);
}

static int klock_init(struct ws_plugin_ctx *ctx)
{
	struct klock *k = calloc(1, sizeof(*k));

	if (!k)
		return -ENOMEM;
	ws_table_init(&k->waiters, sizeof(struct waiter));
	ctx->priv = k;
	return 0;
}

static void klock_fini(struct ws_plugin_ctx *ctx)
{
	struct klock *k = ctx->priv;

	if (k)
		ws_table_free(&k->waiters);
	free(k);
	ctx->priv = NULL;
}

static const void *klock_bpf_object(size_t *size)
{
	return klock_bpf__elf_bytes(size);
}

static const struct ws_plugin klock_plugin = {
	.sz = sizeof(struct ws_plugin),
	.abi_major = WS_ABI_MAJOR,
	.abi_minor = WS_ABI_MINOR,
	.name = "klock",
	.description =
		"kernel lock contention: the sleeping kernel lock (mutex, rwsem, ...) a thread waited for and who released it",
	.version = "1.0",
	.kind_base = WS_KIND_KLOCK,
	.bpf_object = klock_bpf_object,
	.config_keys = NULL,
	.init = klock_init,
	.configure = klock_configure,
	.decode = klock_decode,
	.infer = klock_infer,
	.describe = klock_describe,
	.fini = klock_fini,
	.resource = klock_resource,
};

WS_PLUGIN_DEFINE(klock_plugin)
