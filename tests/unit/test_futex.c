// SPDX-License-Identifier: MIT
/*
 * The futex plugin's decode/infer/describe, driven by synthetic records
 * through its real entry point (dlopen of the built futex.so) and a fake host.
 */
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <whyslow/plugin.h>

#include "fake_host.h"

#include "../../plugins/futex/futex_rec.h"

#define PID 1000
#define PID2 2000
#define X 0x7f2a3c001000ull
#define Y 0x7f2a3c002000ull
#define Z 0x7f2a3c003000ull

static const struct ws_plugin *plug;

static void setup(void)
{
	plug = fake_load("futex.so", false);
	cr_assert_eq(plug->kind_base, WS_KIND_FUTEX);
	cr_assert_not_null(plug->decode);
	cr_assert_not_null(plug->infer);
}

static void teardown(void)
{
	fake_unload();
	plug = NULL;
}

TestSuite(futex, .init = setup, .fini = teardown);

static void hdr(struct ws_rec_hdr *h, uint16_t size, uint16_t kind, uint32_t tid, uint32_t pid,
		uint64_t ts)
{
	memset(h, 0, sizeof(*h));
	h->size = size;
	h->kind = kind;
	h->tid = tid;
	h->pid = pid;
	h->ts = ts;
}

/* futex(2) with @cmd on @uaddr (and @uaddr2) entered by @tid at @ts; @shared: no PRIVATE flag. */
static void enter_as(uint32_t tid, uint32_t pid, uint64_t ts, uint32_t cmd, uint64_t uaddr,
		     uint64_t uaddr2, bool shared)
{
	struct ws_futex_enter e;

	memset(&e, 0, sizeof(e));
	hdr(&e.hdr, sizeof(e), WS_FUTEX_ENTER, tid, pid, ts);
	e.syscall = WS_FUTEX_SYS_FUTEX;
	e.op = cmd | (shared ? 0 : WS_FUTEX_PRIVATE_FLAG);
	e.cmd = cmd;
	e.val = 1;
	e.uaddr = uaddr;
	e.uaddr2 = uaddr2;
	cr_assert_eq(plug->decode(&fake.ctx, &e.hdr), 0);
}

static void enter(uint32_t tid, uint32_t pid, uint64_t ts, uint32_t cmd, uint64_t uaddr,
		  uint64_t uaddr2)
{
	enter_as(tid, pid, ts, cmd, uaddr, uaddr2, false);
}

static void leave(uint32_t tid, uint32_t pid, uint64_t ts, int64_t ret)
{
	struct ws_futex_exit x;

	memset(&x, 0, sizeof(x));
	hdr(&x.hdr, sizeof(x), WS_FUTEX_EXIT, tid, pid, ts);
	x.ret = (uint64_t)ret;
	x.syscall = WS_FUTEX_SYS_FUTEX;
	cr_assert_eq(plug->decode(&fake.ctx, &x.hdr), 0);
}

/* Ask about @tid of @pid, blocked since @start, woken at @ts by @waker of @wpid in @ctx. */
static int ask(uint32_t tid, uint32_t pid, uint64_t start, uint64_t ts, uint32_t waker,
	       uint32_t wpid, uint8_t ctx, struct ws_claim *c)
{
	struct ws_wake wk = {
		.sz = sizeof(wk),
		.ts = ts,
		.ctx = ctx,
		.waker_tid = waker,
		.waker_pid = wpid,
		.wakee_tid = tid,
		.wakee_pid = pid,
	};
	struct ws_wait w = {
		.sz = sizeof(w),
		.tid = tid,
		.pid = pid,
		.start_ns = start,
		.off_state = 1,
		.wake = &wk,
		.waker_traced = true,
	};

	memset(c, 0, sizeof(*c));
	c->sz = sizeof(*c);
	return plug->infer(&fake.ctx, &w, c);
}

static const struct ws_field *get(const struct ws_claim *c, const char *key)
{
	unsigned int i;

	for (i = 0; i < c->nfields; i++)
		if (!strcmp(c->fields[i].key, key))
			return &c->fields[i];
	return NULL;
}

static void expect_claim(const struct ws_claim *c, uint32_t waker, uint64_t addr, const char *op,
			 const char *waker_op)
{
	const struct ws_field *f;

	cr_assert_eq(c->strength, WS_CLAIM_SPECIFIC);
	cr_assert_str_eq(c->kind, "futex");
	cr_assert_eq(c->woken_by, waker);
	cr_assert_not(c->root);
	cr_assert_neq(c->evidence[0], '\0');
	f = get(c, "addr");
	cr_assert_not_null(f);
	cr_assert_eq(f->type, WS_FIELD_HEX);
	cr_assert_eq(f->u, addr, "addr %#llx, want %#llx", (unsigned long long)f->u,
		     (unsigned long long)addr);
	f = get(c, "op");
	cr_assert_not_null(f);
	cr_assert_str_eq(f->s, op);
	f = get(c, "waker_op");
	cr_assert_not_null(f);
	cr_assert_str_eq(f->s, waker_op);
}

Test(futex, wake_on_same_uaddr_claims)
{
	struct ws_claim c;
	char buf[64];

	enter(11, PID, 100, WS_FUTEX_WAIT, X, 0);
	enter(12, PID, 200, WS_FUTEX_WAKE, X, 0);
	cr_assert_eq(ask(11, PID, 110, 210, 12, PID, WS_CTX_TASK, &c), 1);
	expect_claim(&c, 12, X, "FUTEX_WAIT", "FUTEX_WAKE");
	cr_assert_not_null(strstr(c.evidence, "FUTEX_WAKE"));
	cr_assert_eq(plug->describe(&fake.ctx, &c, buf, sizeof(buf)),
		     (int)strlen("futex 0x7f2a3c001000"));
	cr_assert_str_eq(buf, "futex 0x7f2a3c001000");
	/* snprintf semantics: the full length even when truncated. */
	cr_assert_eq(plug->describe(&fake.ctx, &c, buf, 6), (int)strlen("futex 0x7f2a3c001000"));
	cr_assert_str_eq(buf, "futex");
}

Test(futex, wake_bitset_on_same_uaddr_claims)
{
	struct ws_claim c;

	enter(11, PID, 100, WS_FUTEX_WAIT_BITSET, X, 0);
	enter(12, PID, 200, WS_FUTEX_WAKE, X, 0);
	cr_assert_eq(ask(11, PID, 110, 210, 12, PID, WS_CTX_TASK, &c), 1);
	expect_claim(&c, 12, X, "FUTEX_WAIT_BITSET", "FUTEX_WAKE");
}

Test(futex, wake_on_other_uaddr_no_claim)
{
	struct ws_claim c;

	enter(11, PID, 100, WS_FUTEX_WAIT, X, 0);
	enter(12, PID, 200, WS_FUTEX_WAKE, Y, 0);
	cr_assert_eq(ask(11, PID, 110, 210, 12, PID, WS_CTX_TASK, &c), 0);
	cr_assert_eq(c.strength, WS_CLAIM_NONE);
	cr_assert_eq(c.nfields, 0);
}

Test(futex, waker_in_no_futex_no_claim)
{
	struct ws_claim c;

	enter(11, PID, 100, WS_FUTEX_WAIT, X, 0);
	cr_assert_eq(ask(11, PID, 110, 210, 12, PID, WS_CTX_TASK, &c), 0);
	/* A waker that is itself waiting on X did not wake anyone through it. */
	enter(12, PID, 150, WS_FUTEX_WAIT, X, 0);
	cr_assert_eq(ask(11, PID, 110, 210, 12, PID, WS_CTX_TASK, &c), 0);
}

Test(futex, irq_context_no_claim)
{
	struct ws_claim c;

	enter(11, PID, 100, WS_FUTEX_WAIT, X, 0);
	enter(12, PID, 200, WS_FUTEX_WAKE, X, 0);
	cr_assert_eq(ask(11, PID, 110, 210, 12, PID, WS_CTX_SOFTIRQ, &c), 0);
	cr_assert_eq(ask(11, PID, 110, 210, 12, PID, WS_CTX_HARDIRQ, &c), 0);
	cr_assert_eq(ask(11, PID, 110, 210, 12, PID, WS_CTX_HARDIRQ | WS_CTX_TIMER, &c), 0);
	/* The same wakeup in task context is claimed: the context alone decided. */
	cr_assert_eq(ask(11, PID, 110, 210, 12, PID, WS_CTX_TASK, &c), 1);
}

Test(futex, other_process_same_addr_no_claim)
{
	struct ws_claim c;

	enter(11, PID, 100, WS_FUTEX_WAIT, X, 0);
	enter(21, PID2, 200, WS_FUTEX_WAKE, X, 0);
	cr_assert_eq(ask(11, PID, 110, 210, 21, PID2, WS_CTX_TASK, &c), 0);
}

/* A process-shared mutex between a parent and its child: both sides shared, same address. */
Test(futex, other_process_shared_futex_claims)
{
	struct ws_claim c;

	enter_as(11, PID, 100, WS_FUTEX_WAIT, X, 0, true);
	enter_as(21, PID2, 200, WS_FUTEX_WAKE, X, 0, true);
	cr_assert_eq(ask(11, PID, 110, 210, 21, PID2, WS_CTX_TASK, &c), 1);
	expect_claim(&c, 21, X, "FUTEX_WAIT", "FUTEX_WAKE");
	cr_assert(strstr(c.evidence, "another process"), "%s", c.evidence);
}

/* Only one side shared (or neither): the same address in two processes proves nothing. */
Test(futex, other_process_half_shared_no_claim)
{
	struct ws_claim c;

	enter_as(11, PID, 100, WS_FUTEX_WAIT, X, 0, true);
	enter_as(21, PID2, 200, WS_FUTEX_WAKE, X, 0, false);
	cr_assert_eq(ask(11, PID, 110, 210, 21, PID2, WS_CTX_TASK, &c), 0);
	leave(21, PID2, 220, 1);
	enter_as(21, PID2, 300, WS_FUTEX_WAKE, Y, 0, true);
	cr_assert_eq(ask(11, PID, 110, 310, 21, PID2, WS_CTX_TASK, &c), 0);
}

Test(futex, requeue_alias_claims)
{
	struct ws_claim c;
	const struct ws_field *f;

	enter(11, PID, 100, WS_FUTEX_WAIT, X, 0);
	/* Without the requeue a wake on Y proves nothing about a waiter on X. */
	enter(13, PID, 150, WS_FUTEX_WAKE, Y, 0);
	cr_assert_eq(ask(11, PID, 110, 160, 13, PID, WS_CTX_TASK, &c), 0);
	leave(13, PID, 170, 0);

	enter(12, PID, 200, WS_FUTEX_CMP_REQUEUE, X, Y);
	leave(12, PID, 210, 1);
	enter(13, PID, 300, WS_FUTEX_WAKE, Y, 0);
	cr_assert_eq(ask(11, PID, 110, 305, 13, PID, WS_CTX_TASK, &c), 1);
	expect_claim(&c, 13, Y, "FUTEX_WAIT", "FUTEX_WAKE");
	f = get(&c, "waited_addr");
	cr_assert_not_null(f);
	cr_assert_eq(f->u, X);
}

Test(futex, requeue_in_other_process_no_alias)
{
	struct ws_claim c;

	enter(11, PID, 100, WS_FUTEX_WAIT, X, 0);
	enter(21, PID2, 200, WS_FUTEX_CMP_REQUEUE, X, Y);
	leave(21, PID2, 210, 1);
	enter(13, PID, 300, WS_FUTEX_WAKE, Y, 0);
	cr_assert_eq(ask(11, PID, 110, 305, 13, PID, WS_CTX_TASK, &c), 0);
}

Test(futex, requeue_waker_wakes_source)
{
	struct ws_claim c;

	/* CMP_REQUEUE wakes nr_wake waiters of X itself before moving the rest. */
	enter(11, PID, 100, WS_FUTEX_WAIT, X, 0);
	enter(12, PID, 200, WS_FUTEX_CMP_REQUEUE, X, Y);
	cr_assert_eq(ask(11, PID, 110, 205, 12, PID, WS_CTX_TASK, &c), 1);
	expect_claim(&c, 12, X, "FUTEX_WAIT", "FUTEX_CMP_REQUEUE");
}

Test(futex, lock_pi_unlock_pi_claims)
{
	struct ws_claim c;
	char buf[64];

	enter(11, PID, 100, WS_FUTEX_LOCK_PI, X, 0);
	enter(12, PID, 200, WS_FUTEX_UNLOCK_PI, X, 0);
	cr_assert_eq(ask(11, PID, 110, 210, 12, PID, WS_CTX_TASK, &c), 1);
	expect_claim(&c, 12, X, "FUTEX_LOCK_PI", "FUTEX_UNLOCK_PI");
	plug->describe(&fake.ctx, &c, buf, sizeof(buf));
	cr_assert_str_eq(buf, "futex 0x7f2a3c001000 (FUTEX_LOCK_PI)");
}

Test(futex, waitv_wake_on_second_claims)
{
	struct ws_futex_enter e;
	struct ws_claim c;

	memset(&e, 0, sizeof(e));
	hdr(&e.hdr, sizeof(e), WS_FUTEX_ENTER, 11, PID, 100);
	e.syscall = WS_FUTEX_SYS_WAITV;
	e.val = 3;
	e.naddrs = 3;
	e.addrs[0] = X;
	e.addrs[1] = Y;
	e.addrs[2] = Z;
	cr_assert_eq(plug->decode(&fake.ctx, &e.hdr), 0);

	memset(&e, 0, sizeof(e));
	hdr(&e.hdr, sizeof(e), WS_FUTEX_ENTER, 12, PID, 200);
	e.syscall = WS_FUTEX_SYS_WAKE;
	e.uaddr = Y;
	cr_assert_eq(plug->decode(&fake.ctx, &e.hdr), 0);

	cr_assert_eq(ask(11, PID, 110, 210, 12, PID, WS_CTX_TASK, &c), 1);
	expect_claim(&c, 12, Y, "futex_waitv", "futex_wake");
}

Test(futex, waker_exited_no_claim)
{
	struct ws_claim c;

	enter(11, PID, 100, WS_FUTEX_WAIT, X, 0);
	enter(12, PID, 200, WS_FUTEX_WAKE, X, 0);
	leave(12, PID, 205, 0);
	cr_assert_eq(ask(11, PID, 110, 210, 12, PID, WS_CTX_TASK, &c), 0);
}

Test(futex, stale_entry_replaced)
{
	struct ws_claim c;

	/* The waker's WAKE on X lost its exit; its later WAKE on Y replaces it. */
	enter(11, PID, 100, WS_FUTEX_WAIT, X, 0);
	enter(12, PID, 150, WS_FUTEX_WAKE, X, 0);
	enter(12, PID, 200, WS_FUTEX_WAKE, Y, 0);
	cr_assert_eq(ask(11, PID, 110, 210, 12, PID, WS_CTX_TASK, &c), 0);
}

Test(futex, victim_not_yet_in_wait_no_claim)
{
	struct ws_claim c;

	/* It went to sleep at 90, before entering the futex call at 100. */
	enter(11, PID, 100, WS_FUTEX_WAIT, X, 0);
	enter(12, PID, 200, WS_FUTEX_WAKE, X, 0);
	cr_assert_eq(ask(11, PID, 90, 210, 12, PID, WS_CTX_TASK, &c), 0);
	/* Its exit ends the call: a later wakeup has no futex to name. */
	leave(11, PID, 220, 0);
	cr_assert_eq(ask(11, PID, 110, 230, 12, PID, WS_CTX_TASK, &c), 0);
}

Test(futex, waker_entered_after_wakeup_no_claim)
{
	struct ws_claim c;

	enter(11, PID, 100, WS_FUTEX_WAIT, X, 0);
	enter(12, PID, 220, WS_FUTEX_WAKE, X, 0);
	cr_assert_eq(ask(11, PID, 110, 210, 12, PID, WS_CTX_TASK, &c), 0);
}

Test(futex, many_threads_table)
{
	struct ws_claim c;
	uint32_t t;

	/* Enough live calls to make the table grow and shift on deletion. */
	for (t = 1; t <= 3000; t++)
		enter(t, PID, 100 + t, WS_FUTEX_WAIT, X + 4 * t, 0);
	for (t = 1; t <= 3000; t += 2)
		leave(t, PID, 5000, 0);
	enter(9000, PID, 6000, WS_FUTEX_WAKE, X + 4 * 2998, 0);
	cr_assert_eq(ask(2998, PID, 6000, 6010, 9000, PID, WS_CTX_TASK, &c), 1);
	expect_claim(&c, 9000, X + 4 * 2998, "FUTEX_WAIT", "FUTEX_WAKE");
	cr_assert_eq(ask(2999, PID, 6000, 6010, 9000, PID, WS_CTX_TASK, &c), 0);
}

Test(futex, malformed_records)
{
	struct ws_futex_enter e;
	struct ws_futex_exit x;

	memset(&e, 0, sizeof(e));
	hdr(&e.hdr, sizeof(struct ws_rec_hdr) + 4, WS_FUTEX_ENTER, 11, PID, 100);
	e.syscall = WS_FUTEX_SYS_FUTEX;
	e.uaddr = X;
	cr_assert_eq(plug->decode(&fake.ctx, &e.hdr), -EINVAL);

	memset(&x, 0, sizeof(x));
	hdr(&x.hdr, sizeof(x) - 1, WS_FUTEX_EXIT, 11, PID, 100);
	cr_assert_eq(plug->decode(&fake.ctx, &x.hdr), -EINVAL);

	hdr(&e.hdr, sizeof(e), WS_FUTEX_ENTER, 11, PID, 100);
	e.syscall = WS_FUTEX_SYS_WAITV;
	e.naddrs = WS_FUTEX_MAX_ADDRS + 1;
	cr_assert_eq(plug->decode(&fake.ctx, &e.hdr), -EINVAL);

	hdr(&e.hdr, sizeof(e), WS_KIND_FUTEX + 0x7f, 11, PID, 100);
	cr_assert_eq(plug->decode(&fake.ctx, &e.hdr), -EINVAL);
}

/* ---- the register path: the calls come with the wakeup (struct ws_wake.wakee_sys/waker_sys) -- */

#define NR_FUTEX 202 /* x86_64 numbers: the records say which table (arch) */
#define NR_FUTEX_WAITV 449
#define NR_READ 0

static struct ws_syscall sys_futex(uint32_t op, uint64_t uaddr, uint64_t timeout, uint64_t uaddr2)
{
	struct ws_syscall s = { .nr = NR_FUTEX, .arch = WS_ARCH_X86_64 };

	s.args[0] = uaddr;
	s.args[1] = op;
	s.args[2] = 1;
	s.args[3] = timeout;
	s.args[4] = uaddr2;
	return s;
}

static struct ws_syscall sys_other(int nr)
{
	struct ws_syscall s = { .nr = nr, .arch = WS_ARCH_X86_64 };

	s.args[0] = X;
	return s;
}

static const struct ws_syscall no_sys = { .nr = WS_SYSCALL_NONE, .arch = WS_ARCH_X86_64 };

static int ask_regs(uint32_t tid, uint32_t pid, uint64_t start, uint64_t ts, uint32_t waker,
		    uint32_t wpid, uint8_t ctx, struct ws_syscall wakee_sys,
		    struct ws_syscall waker_sys, struct ws_claim *c)
{
	struct ws_wake wk = {
		.sz = sizeof(wk),
		.ts = ts,
		.ctx = ctx,
		.waker_tid = waker,
		.waker_pid = wpid,
		.wakee_tid = tid,
		.wakee_pid = pid,
		.wakee_sys = wakee_sys,
		.waker_sys = waker_sys,
	};
	struct ws_wait w = {
		.sz = sizeof(w),
		.tid = tid,
		.pid = pid,
		.start_ns = start,
		.off_state = 1,
		.wake = &wk,
		.waker_traced = true,
	};

	memset(c, 0, sizeof(*c));
	c->sz = sizeof(*c);
	return plug->infer(&fake.ctx, &w, c);
}

#define PRIV WS_FUTEX_PRIVATE_FLAG

Test(futex, regs_wake_on_same_uaddr_claims)
{
	struct ws_claim c;

	cr_assert_eq(ask_regs(11, PID, 100, 200, 12, PID, WS_CTX_TASK,
			      sys_futex(WS_FUTEX_WAIT | PRIV, X, 0, 0),
			      sys_futex(WS_FUTEX_WAKE | PRIV, X, 0, 0), &c),
		     1);
	expect_claim(&c, 12, X, "FUTEX_WAIT", "FUTEX_WAKE");
	/* another address, another syscall, no syscall, an interrupt: no claim */
	cr_assert_eq(ask_regs(11, PID, 100, 200, 12, PID, WS_CTX_TASK,
			      sys_futex(WS_FUTEX_WAIT | PRIV, X, 0, 0),
			      sys_futex(WS_FUTEX_WAKE | PRIV, Y, 0, 0), &c),
		     0);
	cr_assert_eq(ask_regs(11, PID, 100, 200, 12, PID, WS_CTX_TASK,
			      sys_futex(WS_FUTEX_WAIT | PRIV, X, 0, 0), sys_other(NR_READ), &c),
		     0);
	cr_assert_eq(ask_regs(11, PID, 100, 200, 12, PID, WS_CTX_TASK,
			      sys_futex(WS_FUTEX_WAIT | PRIV, X, 0, 0), no_sys, &c),
		     0);
	cr_assert_eq(ask_regs(11, PID, 100, 200, 12, PID, WS_CTX_SOFTIRQ,
			      sys_futex(WS_FUTEX_WAIT | PRIV, X, 0, 0),
			      sys_futex(WS_FUTEX_WAKE | PRIV, X, 0, 0), &c),
		     0);
	/* a waker that is itself waiting on X woke nobody through it */
	cr_assert_eq(ask_regs(11, PID, 100, 200, 12, PID, WS_CTX_TASK,
			      sys_futex(WS_FUTEX_WAIT | PRIV, X, 0, 0),
			      sys_futex(WS_FUTEX_WAIT | PRIV, X, 0, 0), &c),
		     0);
}

Test(futex, regs_shared_across_processes)
{
	struct ws_claim c;

	cr_assert_eq(ask_regs(11, PID, 100, 200, 21, PID2, WS_CTX_TASK,
			      sys_futex(WS_FUTEX_WAIT, X, 0, 0), sys_futex(WS_FUTEX_WAKE, X, 0, 0),
			      &c),
		     1);
	expect_claim(&c, 21, X, "FUTEX_WAIT", "FUTEX_WAKE");
	cr_assert_eq(ask_regs(11, PID, 100, 200, 21, PID2, WS_CTX_TASK,
			      sys_futex(WS_FUTEX_WAIT | PRIV, X, 0, 0),
			      sys_futex(WS_FUTEX_WAKE | PRIV, X, 0, 0), &c),
		     0);
}

Test(futex, regs_pi_unlock_claims)
{
	struct ws_claim c;

	cr_assert_eq(ask_regs(11, PID, 100, 200, 12, PID, WS_CTX_TASK,
			      sys_futex(WS_FUTEX_LOCK_PI | PRIV, X, 0, 0),
			      sys_futex(WS_FUTEX_UNLOCK_PI | PRIV, X, 0, 0), &c),
		     1);
	expect_claim(&c, 12, X, "FUTEX_LOCK_PI", "FUTEX_UNLOCK_PI");
}

/* A CMP_REQUEUE seen waking one waiter of X moves the rest to Y: a later wake on Y claims them. */
Test(futex, regs_requeue_alias_claims)
{
	struct ws_claim c;

	cr_assert_eq(ask_regs(11, PID, 100, 300, 14, PID, WS_CTX_TASK,
			      sys_futex(WS_FUTEX_WAIT | PRIV, X, 0, 0),
			      sys_futex(WS_FUTEX_WAKE | PRIV, Y, 0, 0), &c),
		     0);
	cr_assert_eq(ask_regs(10, PID, 100, 200, 12, PID, WS_CTX_TASK,
			      sys_futex(WS_FUTEX_WAIT | PRIV, X, 0, 0),
			      sys_futex(WS_FUTEX_CMP_REQUEUE | PRIV, X, 0, Y), &c),
		     1);
	expect_claim(&c, 12, X, "FUTEX_WAIT", "FUTEX_CMP_REQUEUE");
	cr_assert_eq(ask_regs(11, PID, 100, 300, 14, PID, WS_CTX_TASK,
			      sys_futex(WS_FUTEX_WAIT | PRIV, X, 0, 0),
			      sys_futex(WS_FUTEX_WAKE | PRIV, Y, 0, 0), &c),
		     1);
	expect_claim(&c, 14, Y, "FUTEX_WAIT", "FUTEX_WAKE");
	cr_assert_eq(get(&c, "waited_addr")->u, X);
	/* a wait that began after the requeue was not moved by it */
	cr_assert_eq(ask_regs(13, PID, 250, 300, 14, PID, WS_CTX_TASK,
			      sys_futex(WS_FUTEX_WAIT | PRIV, X, 0, 0),
			      sys_futex(WS_FUTEX_WAKE | PRIV, Y, 0, 0), &c),
		     0);
}

/* futex_waitv keeps its futexes in user memory, which registers do not show: no claim. */
Test(futex, regs_waitv_no_claim)
{
	struct ws_claim c;

	cr_assert_eq(ask_regs(11, PID, 100, 200, 12, PID, WS_CTX_TASK, sys_other(NR_FUTEX_WAITV),
			      sys_futex(WS_FUTEX_WAKE | PRIV, X, 0, 0), &c),
		     0);
}

static void expect_timeout(const struct ws_claim *c, uint32_t by)
{
	char buf[96];

	cr_assert_eq(c->strength, WS_CLAIM_SPECIFIC);
	cr_assert_str_eq(c->kind, "timeout");
	cr_assert_eq(c->woken_by, by);
	cr_assert_eq(c->root, by == 0);
	cr_assert_eq(get(c, "addr")->u, X);
	plug->describe(&fake.ctx, c, buf, sizeof(buf));
	cr_assert_str_eq(buf, "futex 0x7f2a3c001000: wait timed out");
}

/* A timed wait woken from a timer callback timed out; an untimed one did not. */
Test(futex, regs_timed_wait_timeout)
{
	struct ws_claim c;

	cr_assert_eq(ask_regs(11, PID, 100, 200, 0, 0, WS_CTX_HARDIRQ | WS_CTX_TIMER,
			      sys_futex(WS_FUTEX_WAIT_BITSET | PRIV, X, 0x7ffd0000, 0), no_sys, &c),
		     1);
	expect_timeout(&c, 0);
	cr_assert_eq(ask_regs(11, PID, 100, 200, 0, 0, WS_CTX_HARDIRQ | WS_CTX_TIMER,
			      sys_futex(WS_FUTEX_WAIT_BITSET | PRIV, X, 0, 0), no_sys, &c),
		     0);
	/* task-context wake of a timed wait is a plain futex handoff */
	cr_assert_eq(ask_regs(11, PID, 100, 200, 12, PID, WS_CTX_TASK,
			      sys_futex(WS_FUTEX_WAIT_BITSET | PRIV, X, 0x7ffd0000, 0),
			      sys_futex(WS_FUTEX_WAKE | PRIV, X, 0, 0), &c),
		     1);
	expect_claim(&c, 12, X, "FUTEX_WAIT_BITSET", "FUTEX_WAKE");
}

/* A thread seen waking the futex during a wait that then timed out is named; before it, not. */
Test(futex, regs_timeout_names_who_passed_the_futex)
{
	struct ws_claim c;

	/* tid 12 wakes tid 13 through X at 150: seen */
	cr_assert_eq(ask_regs(13, PID, 50, 150, 12, PID, WS_CTX_TASK,
			      sys_futex(WS_FUTEX_WAIT_BITSET | PRIV, X, 0x7ffd0000, 0),
			      sys_futex(WS_FUTEX_WAKE | PRIV, X, 0, 0), &c),
		     1);
	/* 11 waited 100..200 and timed out: 12 handed X around meanwhile */
	cr_assert_eq(ask_regs(11, PID, 100, 200, 0, 0, WS_CTX_HARDIRQ | WS_CTX_TIMER,
			      sys_futex(WS_FUTEX_WAIT_BITSET | PRIV, X, 0x7ffd0000, 0), no_sys, &c),
		     1);
	expect_timeout(&c, 12);
	/* a wait that began after that wake: nothing seen during it */
	cr_assert_eq(ask_regs(11, PID, 160, 260, 0, 0, WS_CTX_HARDIRQ | WS_CTX_TIMER,
			      sys_futex(WS_FUTEX_WAIT_BITSET | PRIV, X, 0x7ffd0000, 0), no_sys, &c),
		     1);
	expect_timeout(&c, 0);
}

/* ---- the global a futex word is in (ws_host.data_symbol), live and from a recording ---- */

static int runtime_holds_x(uint32_t pid, uint64_t addr, char *buf, size_t len)
{
	return pid == PID && addr == X ? snprintf(buf, len, "_PyRuntime+0x1b0") : 0;
}

static void described(const struct ws_claim *c, const char *want)
{
	char buf[160];

	cr_assert_gt(plug->describe(&fake.ctx, c, buf, sizeof(buf)), 0);
	cr_expect_str_eq(buf, want);
	cr_assert_gt(plug->resource(&fake.ctx, c, buf, sizeof(buf)), 0);
	cr_expect_eq(strncmp(buf, want, strlen(buf)), 0, "resource %s, described %s", buf, want);
}

static int hand_over(uint64_t addr, struct ws_claim *c)
{
	return ask_regs(11, PID, 100, 200, 12, PID, WS_CTX_TASK,
			sys_futex(WS_FUTEX_WAIT | PRIV, addr, 0, 0),
			sys_futex(WS_FUTEX_WAKE | PRIV, addr, 0, 0), c);
}

Test(futex, word_named_by_its_global)
{
	struct ws_claim c;
	const struct ws_field *f;
	char saved[sizeof(fake.names)];
	size_t nsaved;

	fake.data_symbol = runtime_holds_x;
	cr_assert_eq(hand_over(X, &c), 1);
	expect_claim(&c, 12, X, "FUTEX_WAIT", "FUTEX_WAKE");
	f = get(&c, "addr_symbol");
	cr_assert_not_null(f);
	cr_expect_str_eq(f->s, "_PyRuntime+0x1b0");
	described(&c, "futex 0x7f2a3c001000 (_PyRuntime+0x1b0)");
	/* asked once per word; the name kept for a recording */
	cr_assert_eq(hand_over(X, &c), 1);
	cr_expect_eq(fake.data_symbol_calls, 1);
	cr_expect_eq(fake.nnames, 1);
	/* a word in no named object: the address alone */
	cr_assert_eq(hand_over(Y, &c), 1);
	cr_expect_null(get(&c, "addr_symbol"));
	described(&c, "futex 0x7f2a3c002000");
	cr_expect_eq(fake.nnames, 1);
	/* a timed wait on it that timed out says the same */
	cr_assert_eq(ask_regs(11, PID, 100, 200, 0, 0, WS_CTX_HARDIRQ | WS_CTX_TIMER,
			      sys_futex(WS_FUTEX_WAIT_BITSET | PRIV, X, 0x7ffd0000, 0), no_sys, &c),
		     1);
	described(&c, "futex 0x7f2a3c001000 (_PyRuntime+0x1b0): wait timed out");

	/* a replay names it from the recording's name table, never from the files */
	memcpy(saved, fake.names, sizeof(saved));
	nsaved = fake.nnames;
	fake_unload();
	plug = fake_load("futex.so", true);
	memcpy(fake.names, saved, sizeof(saved));
	fake.nnames = nsaved;
	fake.data_symbol = runtime_holds_x;
	cr_assert_eq(hand_over(X, &c), 1);
	f = get(&c, "addr_symbol");
	cr_assert_not_null(f);
	cr_expect_str_eq(f->s, "_PyRuntime+0x1b0");
	cr_assert_eq(hand_over(Y, &c), 1);
	cr_expect_null(get(&c, "addr_symbol"));
	cr_expect_eq(fake.data_symbol_calls, 0);
}

/* ---- the lock a runtime keeps at a futex word (ws_host.lock_name): CPython's GIL ---- */

static int gil_at_x(uint32_t pid, uint64_t addr, char *buf, size_t len)
{
	if (pid != PID || addr != X)
		return 0;
	snprintf(buf, len, "the GIL (python3.11 pid %u)", pid);
	return WS_LOCK_GIL;
}

Test(futex, word_named_as_the_gil)
{
	char saved[sizeof(fake.names)], want[96];
	const struct ws_field *f;
	struct ws_claim c;
	size_t nsaved;

	fake.data_symbol = runtime_holds_x;
	fake.lock_name = gil_at_x;
	cr_assert_eq(hand_over(X, &c), 1);
	expect_claim(&c, 12, X, "FUTEX_WAIT", "FUTEX_WAKE");
	f = get(&c, "lock");
	cr_assert_not_null(f);
	cr_expect_str_eq(f->s, "gil");
	f = get(&c, "lock_name");
	cr_assert_not_null(f);
	snprintf(want, sizeof(want), "the GIL (python3.11 pid %u)", PID);
	cr_expect_str_eq(f->s, want);
	/* the global is still named: the JSON keeps its keys */
	cr_expect_not_null(get(&c, "addr_symbol"));
	snprintf(want, sizeof(want), "the GIL (python3.11 pid %u) at futex 0x7f2a3c001000", PID);
	described(&c, want);
	/* asked once per word */
	cr_assert_eq(hand_over(X, &c), 1);
	cr_expect_eq(fake.lock_name_calls, 1);
	/* another word is no lock: no key, the word as before */
	cr_assert_eq(hand_over(Y, &c), 1);
	cr_expect_null(get(&c, "lock"));
	cr_expect_null(get(&c, "lock_name"));
	described(&c, "futex 0x7f2a3c002000");
	/* a timed wait for the GIL that timed out */
	cr_assert_eq(ask_regs(11, PID, 100, 200, 0, 0, WS_CTX_HARDIRQ | WS_CTX_TIMER,
			      sys_futex(WS_FUTEX_WAIT_BITSET | PRIV, X, 0x7ffd0000, 0), no_sys, &c),
		     1);
	cr_expect_str_eq(get(&c, "lock")->s, "gil");
	snprintf(want, sizeof(want),
		 "the GIL (python3.11 pid %u) at futex 0x7f2a3c001000: wait timed out", PID);
	described(&c, want);

	/* a replay names it from the recording's name table, never asking the core */
	memcpy(saved, fake.names, sizeof(saved));
	nsaved = fake.nnames;
	fake_unload();
	plug = fake_load("futex.so", true);
	memcpy(fake.names, saved, sizeof(saved));
	fake.nnames = nsaved;
	fake.data_symbol = runtime_holds_x;
	fake.lock_name = gil_at_x;
	cr_assert_eq(hand_over(X, &c), 1);
	cr_expect_str_eq(get(&c, "lock")->s, "gil");
	snprintf(want, sizeof(want), "the GIL (python3.11 pid %u)", PID);
	cr_expect_str_eq(get(&c, "lock_name")->s, want);
	cr_assert_eq(hand_over(Y, &c), 1);
	cr_expect_null(get(&c, "lock"));
	cr_expect_eq(fake.lock_name_calls, 0);
}

/* A core of ABI 3.0 has no lock_name: the word is named as before, nothing more. */
Test(futex, no_lock_name_on_an_older_core)
{
	struct ws_host old = *fake.ctx.host;
	struct ws_claim c;

	old.lock_name = NULL;
	fake.ctx.host = &old;
	fake.data_symbol = runtime_holds_x;
	fake.lock_name = gil_at_x;
	cr_assert_eq(hand_over(X, &c), 1);
	cr_expect_null(get(&c, "lock"));
	described(&c, "futex 0x7f2a3c001000 (_PyRuntime+0x1b0)");
	fake.ctx.host = &fake_host_table;
}
