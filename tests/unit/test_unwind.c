// SPDX-License-Identifier: MIT
/*
 * core/stacks/unwind.c on a real process built without frame pointers
 * (tests/programs/unwind_target.c). The capture stands in for what BPF will copy: while a thread
 * sleeps in its syscall, its user registers (here from ptrace) and the top of its user stack (here
 * process_vm_readv).  The unwinder then works from that copy alone, and the frames are named with
 * core/stacks/symbols.c.
 */
#include <criterion/criterion.h>
#include <elf.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "stacks/procmaps.h"
#include "stacks/stack_fmt.h"
#include "stacks/symbols.h"
#include "stacks/unwind.h"

#define STACK_COPY 16384 /* what the BPF side is expected to copy (perf's default is 8 KiB) */
#define MAX_FRAMES 64
/* A time budget no walk here needs, even on a machine busy with other builds. */
#define SLOW_MACHINE_NS 2000000000ULL

struct target {
	pid_t pid;
	pid_t victim, holder;
	FILE *to; /* its stdin: closing it ends the program */
	FILE *from;
};

struct capture {
	pid_t tid;
	struct ws_uregs regs;
	unsigned char stack[STACK_COPY];
	struct ws_ustack st;
};

static void target_start_exe(struct target *t, const char *exe)
{
	int in[2], out[2];
	char word[16];
	int tid;

	cr_assert_eq(pipe(in), 0);
	cr_assert_eq(pipe(out), 0);
	t->pid = fork();
	cr_assert_geq(t->pid, 0);
	if (t->pid == 0) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		close(in[1]);
		close(out[0]);
		execl(exe, exe, (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	t->to = fdopen(in[1], "w");
	t->from = fdopen(out[0], "r");
	t->victim = t->holder = 0;
	for (int i = 0; i < 2; i++) {
		cr_assert_eq(fscanf(t->from, "%15s %d", word, &tid), 2,
			     "unwind_target said nothing");
		if (!strcmp(word, "victim"))
			t->victim = tid;
		else if (!strcmp(word, "holder"))
			t->holder = tid;
	}
	cr_assert(t->victim && t->holder);
}

static void target_start(struct target *t)
{
	target_start_exe(t, UNWIND_TARGET);
}

static void target_stop(struct target *t)
{
	int st;

	if (t->to)
		fclose(t->to);
	if (t->from)
		fclose(t->from);
	t->to = t->from = NULL;
	if (t->pid > 0 && waitpid(t->pid, &st, 0) == t->pid)
		cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 0, "unwind_target failed");
	t->pid = 0;
}

/* Wait until thread @tid sleeps in syscall @nr (its /proc syscall file names it). */
/*
 * Under qemu-user (the arm64 unit run, tools/arm64-test sets WHYSLOW_TEST_EMULATED) ptrace and
 * /proc/TID/syscall describe the emulator, not the guest program: the tests that stop a live
 * thread are skipped there; on a real kernel they always run.
 */
static void skip_if_emulated(void)
{
	if (getenv("WHYSLOW_TEST_EMULATED"))
		cr_skip_test("ptrace of a live thread under user-mode emulation");
}

static void wait_in_syscall(pid_t pid, pid_t tid, long nr)
{
	char path[64], buf[256];

	snprintf(path, sizeof(path), "/proc/%d/task/%d/syscall", pid, tid);
	for (int i = 0; i < 1000; i++) {
		FILE *f = fopen(path, "r");
		long cur = -2;

		if (f) {
			/* "running" when it is not in a syscall, which strtol would read as 0 */
			if (fgets(buf, sizeof(buf), f) && buf[0] >= '0' && buf[0] <= '9')
				cur = strtol(buf, NULL, 10);
			fclose(f);
		}
		if (cur == nr)
			return;
		usleep(5000);
	}
	cr_assert_fail("thread %d never blocked in syscall %ld", tid, nr);
}

/* Stop @tid with ptrace, take its registers and copy the top of its stack, let it go. */
static void capture(pid_t pid, pid_t tid, struct capture *c)
{
	struct iovec iov, local, remote;
	int st;
	ssize_t n;

	memset(c, 0, sizeof(*c));
	c->tid = tid;
	cr_assert_eq(ptrace(PTRACE_SEIZE, tid, 0, 0), 0, "PTRACE_SEIZE: %s", strerror(errno));
	cr_assert_eq(ptrace(PTRACE_INTERRUPT, tid, 0, 0), 0);
	cr_assert_eq(waitpid(tid, &st, __WALL), tid);
#if defined(__x86_64__)
	struct user_regs_struct r;

	iov = (struct iovec){ &r, sizeof(r) };
	cr_assert_eq(ptrace(PTRACE_GETREGSET, tid, (void *)NT_PRSTATUS, &iov), 0);
	c->regs = (struct ws_uregs){
		.arch = WS_UNWIND_ARCH_X86_64,
		.valid = WS_UREG_PC | WS_UREG_SP | WS_UREG_FP | WS_UREG_CALLEE(0) |
			 WS_UREG_CALLEE(1) | WS_UREG_CALLEE(2) | WS_UREG_CALLEE(3) |
			 WS_UREG_CALLEE(4),
		.pc = r.rip,
		.sp = r.rsp,
		.fp = r.rbp,
		.callee = { r.rbx, r.r12, r.r13, r.r14, r.r15 },
	};
#elif defined(__aarch64__)
	struct user_regs_struct r; /* glibc: regs[31], sp, pc, pstate */

	iov = (struct iovec){ &r, sizeof(r) };
	cr_assert_eq(ptrace(PTRACE_GETREGSET, tid, (void *)NT_PRSTATUS, &iov), 0);
	c->regs = (struct ws_uregs){
		.arch = WS_UNWIND_ARCH_ARM64,
		.valid = WS_UREG_PC | WS_UREG_SP | WS_UREG_FP | WS_UREG_LR,
		.pc = r.pc,
		.sp = r.sp,
		.fp = r.regs[29],
		.lr = r.regs[30],
	};
	for (int i = 0; i < 10; i++) {
		c->regs.callee[i] = r.regs[19 + i];
		c->regs.valid |= WS_UREG_CALLEE(i);
	}
#else
#error "the test captures registers on x86_64 and arm64 only"
#endif
	local = (struct iovec){ c->stack, sizeof(c->stack) };
	remote = (struct iovec){ (void *)(uintptr_t)c->regs.sp, sizeof(c->stack) };
	/* The copy may end early where the stack's mapping ends, as BPF's would. */
	n = process_vm_readv(pid, &local, 1, &remote, 1, 0);
	cr_assert_gt(n, 0, "process_vm_readv: %s", strerror(errno));
	c->st = (struct ws_ustack){ c->regs.sp, c->stack, (size_t)n };
	cr_assert_eq(ptrace(PTRACE_DETACH, tid, 0, 0), 0);
}

struct named {
	struct ws_frame f[MAX_FRAMES];
	uint32_t n;
};

static void name_frames(struct ws_symbols *s, pid_t pid, const struct ws_unwind_result *res,
			struct named *out)
{
	char buf[512];

	out->n = res->n;
	for (uint32_t i = 0; i < res->n; i++) {
		bool ret = !(res->frames[i].flags & WS_UFRAME_ACTIVATION);

		cr_assert_eq(ws_symbols_resolve(s, pid, res->frames[i].pc, ret, &out->f[i]), 0);
		ws_frame_format(&out->f[i], buf, sizeof(buf));
		cr_log_info("#%u %s%s", i, buf, res->frames[i].flags & WS_UFRAME_FP ? " [fp]" : "");
	}
}

static int find_sym(const struct named *nf, const char *name)
{
	for (uint32_t i = 0; i < nf->n; i++)
		if (nf->f[i].sym && !strcmp(nf->f[i].sym, name))
			return (int)i;
	return -1;
}

static bool in_libc(const struct ws_frame *f)
{
	const char *b = f->module ? strrchr(f->module, '/') : NULL;

	return b && !strncmp(b + 1, "libc.so", 7);
}

/* @names appear as consecutive frames, innermost first, below at least one glibc frame (the
 * blocking call) and above another (start_thread). */
static void assert_chain(const struct named *nf, const char *const *names, int count)
{
	int at = find_sym(nf, names[0]);
	bool libc_below = false, libc_above = false;

	cr_assert_geq(at, 1, "%s not found among %u frames", names[0], nf->n);
	for (int i = 1; i < count; i++) {
		cr_assert_lt(at + i, (int)nf->n, "stack ends before %s", names[i]);
		cr_assert_str_eq(nf->f[at + i].sym ? nf->f[at + i].sym : "(none)", names[i],
				 "frame %d after %s", at + i, names[0]);
	}
	for (int i = 0; i < at; i++)
		libc_below |= in_libc(&nf->f[i]);
	for (uint32_t i = (uint32_t)(at + count); i < nf->n; i++)
		libc_above |= in_libc(&nf->f[i]);
	cr_assert(libc_below, "no glibc frame under %s", names[0]);
	cr_assert(libc_above, "no glibc frame (start_thread) above %s", names[count - 1]);
}

static const char *const victim_chain[] = { "gt_lock", "victim_wait", "victim_thread" };
static const char *const holder_chain[] = { "holder_read", "holder_io", "holder_thread" };

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

Test(unwind, dwarf_walks_a_stack_without_frame_pointers)
{
	static struct capture cv, ch;
	struct ws_uframe frames[MAX_FRAMES];
	struct ws_unwind_result res = { .frames = frames };
	struct ws_unwind_opts opts = { .max_frames = MAX_FRAMES, .max_ns = SLOW_MACHINE_NS };
	static struct named nf;
	struct ws_unwinder *u;
	struct ws_symbols *s;
	struct target t;
	uint64_t t0, t1, t2, t3, each[101];

	skip_if_emulated();
	target_start(&t);
	wait_in_syscall(t.pid, t.victim, SYS_futex);
	wait_in_syscall(t.pid, t.holder, SYS_read);
	capture(t.pid, t.victim, &cv);
	capture(t.pid, t.holder, &ch);
	cr_assert_eq(ws_unwinder_new(t.pid, NULL, &u), 0);
	cr_assert_eq(ws_symbols_new(&s), 0);

	t0 = now_ns();
	cr_assert_eq(ws_unwind(u, cv.tid, &cv.regs, &cv.st, &opts, &res), 0);
	t1 = now_ns();
	cr_log_info("victim: %u frames, %s", res.n, ws_unwind_stop_str(res.stop));
	t2 = now_ns();
	name_frames(s, t.pid, &res, &nf);
	t3 = now_ns();
	for (uint32_t i = 0; i < res.n; i++)
		ws_symbols_resolve(s, t.pid, res.frames[i].pc, i > 0, &nf.f[i]);
	cr_log_info("cost: naming %u frames %.1f us the first time (opens files, reads DWARF), "
		    "then %.1f us",
		    res.n, (double)(t3 - t2) / 1e3, (double)(now_ns() - t3) / 1e3);
	assert_chain(&nf, victim_chain, 3);
	cr_expect_eq(res.stop, WS_UNWIND_END, "stopped on: %s", ws_unwind_stop_str(res.stop));
	cr_expect_eq(res.fp_frames, 0u, "CFI alone walks this stack");

	/* Once modules and CFI are loaded, another stack of the process costs much less.  The
	 * median of 101 (the machine is shared: a mean would measure the neighbours). */
	for (int i = 0; i < 101; i++) {
		uint64_t a = now_ns();

		cr_assert_eq(ws_unwind(u, cv.tid, &cv.regs, &cv.st, &opts, &res), 0);
		each[i] = now_ns() - a;
	}
	qsort(each, 101, sizeof(each[0]), cmp_u64);
	cr_log_info("cost: first unwind %.1f us (loads modules and CFI), then median %.1f us, "
		    "max %.1f us (%u frames)",
		    (double)(t1 - t0) / 1e3, (double)each[50] / 1e3, (double)each[100] / 1e3,
		    res.n);

	cr_assert_eq(ws_unwind(u, ch.tid, &ch.regs, &ch.st, &opts, &res), 0);
	cr_log_info("holder: %u frames, %s", res.n, ws_unwind_stop_str(res.stop));
	name_frames(s, t.pid, &res, &nf);
	assert_chain(&nf, holder_chain, 3);

	ws_symbols_free(s);
	ws_unwinder_free(u);
	target_stop(&t);
}

/* What bpf_get_stack(BPF_F_USER_STACK) would give on this program: frame pointers that are not
 * there.  If this ever found the chain, the program would have frame pointers and the test
 * above would prove nothing about CFI. */
Test(unwind, frame_pointers_alone_do_not_find_the_chain)
{
	static struct capture cv;
	struct ws_uframe frames[MAX_FRAMES];
	struct ws_unwind_result res = { .frames = frames };
	struct ws_unwind_opts opts = { .max_frames = MAX_FRAMES, .flags = WS_UNWIND_FP_ONLY };
	static struct named nf;
	struct ws_unwinder *u;
	struct ws_symbols *s;
	struct target t;

	skip_if_emulated();
	target_start(&t);
	wait_in_syscall(t.pid, t.victim, SYS_futex);
	capture(t.pid, t.victim, &cv);
	cr_assert_eq(ws_unwinder_new(t.pid, NULL, &u), 0);
	cr_assert_eq(ws_symbols_new(&s), 0);
	cr_assert_eq(ws_unwind(u, cv.tid, &cv.regs, &cv.st, &opts, &res), 0);
	cr_log_info("frame pointers: %u frames, %s", res.n, ws_unwind_stop_str(res.stop));
	name_frames(s, t.pid, &res, &nf);
	cr_assert(find_sym(&nf, "victim_wait") < 0 || find_sym(&nf, "victim_thread") < 0,
		  "a frame-pointer walk found the chain: unwind_target has frame pointers");
	ws_symbols_free(s);
	ws_unwinder_free(u);
	target_stop(&t);
}

/* Code with frame pointers but no unwind tables (a JIT, an old toolchain): CFI walks glibc's
 * frames, finds none for the program's own, and the frame-pointer fallback carries on from the
 * frame pointer CFI recovered — each step checked to stay in the copy and land in code. */
Test(unwind, frame_pointer_fallback_where_cfi_runs_out)
{
	static struct capture cv;
	struct ws_uframe frames[MAX_FRAMES];
	struct ws_unwind_result res = { .frames = frames };
	struct ws_unwind_opts opts = { .max_frames = MAX_FRAMES, .max_ns = SLOW_MACHINE_NS };
	static struct named nf;
	struct ws_unwinder *u;
	struct ws_symbols *s;
	struct target t;
	int at;

	skip_if_emulated();
	target_start_exe(&t, UNWIND_TARGET_FP);
	wait_in_syscall(t.pid, t.victim, SYS_futex);
	capture(t.pid, t.victim, &cv);
	cr_assert_eq(ws_unwinder_new(t.pid, NULL, &u), 0);
	cr_assert_eq(ws_symbols_new(&s), 0);
	cr_assert_eq(ws_unwind(u, cv.tid, &cv.regs, &cv.st, &opts, &res), 0);
	cr_log_info("fallback: %u frames (%u by frame pointer), %s", res.n, res.fp_frames,
		    ws_unwind_stop_str(res.stop));
	name_frames(s, t.pid, &res, &nf);
	at = find_sym(&nf, "gt_lock");
	cr_assert_geq(at, 1);
	cr_assert_lt(at + 2, (int)nf.n);
	cr_assert_str_eq(nf.f[at + 1].sym ? nf.f[at + 1].sym : "(none)", "victim_wait");
	cr_assert_str_eq(nf.f[at + 2].sym ? nf.f[at + 2].sym : "(none)", "victim_thread");
	cr_assert(res.frames[at + 1].flags & WS_UFRAME_FP, "victim_wait not found by the fallback");

	/* Told not to use frame pointers, the walk stops where CFI does, before the program. */
	opts.flags = WS_UNWIND_NO_FP;
	cr_assert_eq(ws_unwind(u, cv.tid, &cv.regs, &cv.st, &opts, &res), 0);
	cr_assert_eq(res.fp_frames, 0u);
	name_frames(s, t.pid, &res, &nf);
	cr_assert_lt(find_sym(&nf, "victim_wait"), 0);
	ws_symbols_free(s);
	ws_unwinder_free(u);
	target_stop(&t);
}

/* A library dlopen()ed after the unwinder read the maps: a return address in no known mapping
 * makes it read them again and walk once more. */
Test(unwind, rereads_maps_after_dlopen)
{
	static struct capture cm;
	struct ws_uframe frames[MAX_FRAMES];
	struct ws_unwind_result res = { .frames = frames };
	struct ws_unwind_opts opts = { .max_frames = MAX_FRAMES, .max_ns = SLOW_MACHINE_NS };
	static struct named nf;
	struct ws_unwinder *u;
	struct ws_symbols *s;
	int in[2], out[2], at;
	FILE *to, *from;
	char word[32];
	void *addr;
	pid_t pid;

	skip_if_emulated();
	cr_assert_eq(pipe(in), 0);
	cr_assert_eq(pipe(out), 0);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		close(in[1]);
		close(out[0]);
		execl(SYM_TARGET, SYM_TARGET, ST_DL_LIB, (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	to = fdopen(in[1], "w");
	from = fdopen(out[0], "r");
	for (int i = 0; i < 3; i++) /* its address lines, then its line numbers */
		cr_assert_eq(fscanf(from, "%31s %p", word, &addr), 2);
	cr_assert_eq(fscanf(from, "%31s %d %d", word, &at, &at), 3);
	cr_assert_eq(ws_unwinder_new(pid, NULL, &u), 0); /* before the library is loaded */
	fprintf(to, "dlopen\nblock\n");
	fflush(to);
	cr_assert_eq(fscanf(from, "%31s %p", word, &addr), 2);
	cr_assert_eq(fscanf(from, "%31s %p", word, &addr), 2);
	cr_assert_str_eq(word, "st_dl_block");
	wait_in_syscall(pid, pid, SYS_read);
	capture(pid, pid, &cm);

	cr_assert_eq(ws_symbols_new(&s), 0);
	cr_assert_eq(ws_unwind(u, pid, &cm.regs, &cm.st, &opts, &res), 0);
	name_frames(s, pid, &res, &nf);
	at = find_sym(&nf, "st_dl_block");
	cr_assert_geq(at, 1, "st_dl_block not unwound (%s)", ws_unwind_stop_str(res.stop));
	cr_assert_lt(at + 1, (int)nf.n);
	cr_assert_str_eq(nf.f[at + 1].sym ? nf.f[at + 1].sym : "(none)", "main");
	ws_symbols_free(s);
	ws_unwinder_free(u);
	fputs("x\n", to); /* st_dl_block's byte; then stdin closes and main's loop ends */
	fclose(to);
	fclose(from);
	cr_assert_eq(waitpid(pid, &at, 0), pid);
	cr_expect(WIFEXITED(at) && WEXITSTATUS(at) == 0, "sym_target failed");
}

/* The copy is the evidence: with the maps saved at capture, the stack unwinds and names the same
 * after the process has exited. */
Test(unwind, works_after_the_process_is_gone)
{
	static struct capture cv;
	struct ws_uframe frames[MAX_FRAMES], live[MAX_FRAMES];
	struct ws_unwind_result res = { .frames = frames }, lres = { .frames = live };
	struct ws_unwind_opts opts = { .max_frames = MAX_FRAMES, .max_ns = SLOW_MACHINE_NS };
	static struct named nf;
	struct ws_unwinder *u;
	struct ws_symbols *s;
	struct target t;
	char *maps;
	pid_t pid;

	skip_if_emulated();
	target_start(&t);
	wait_in_syscall(t.pid, t.victim, SYS_futex);
	capture(t.pid, t.victim, &cv);
	cr_assert_eq(ws_procmaps_read_text(t.pid, &maps), 0);
	cr_assert_eq(ws_unwinder_new(t.pid, NULL, &u), 0);
	cr_assert_eq(ws_unwind(u, cv.tid, &cv.regs, &cv.st, &opts, &lres), 0);
	ws_unwinder_free(u);
	pid = t.pid;
	target_stop(&t);
	cr_assert_neq(kill(pid, 0), 0, "the target is still there");

	cr_assert_eq(ws_unwinder_new(pid, NULL, &u), -ENOENT, "no maps for a gone process");
	cr_assert_eq(ws_unwinder_new(pid, maps, &u), 0);
	cr_assert_eq(ws_symbols_new(&s), 0);
	cr_assert_eq(ws_symbols_set_maps(s, pid, maps), 0);
	cr_assert_eq(ws_unwind(u, cv.tid, &cv.regs, &cv.st, &opts, &res), 0);
	name_frames(s, pid, &res, &nf);
	assert_chain(&nf, victim_chain, 3);
	cr_assert_eq(res.n, lres.n);
	for (uint32_t i = 0; i < res.n; i++)
		cr_assert_eq(res.frames[i].pc, live[i].pc, "frame %u", i);
	ws_symbols_free(s);
	ws_unwinder_free(u);
	free(maps);
}

/* Limits: a frame cap, a stack copy that is too short, a time budget; each ends the walk early
 * with the reason, and what was found is a prefix of the whole stack, never a guess. */
Test(unwind, bounded_walks_stop_early_and_say_why)
{
	static struct capture cv;
	struct ws_uframe full[MAX_FRAMES], part[MAX_FRAMES];
	struct ws_unwind_result fres = { .frames = full }, res = { .frames = part };
	struct ws_unwind_opts opts = { .max_frames = MAX_FRAMES, .max_ns = SLOW_MACHINE_NS };
	struct ws_ustack shortst;
	struct ws_uregs bad;
	struct ws_unwinder *u;
	struct target t;

	skip_if_emulated();
	target_start(&t);
	wait_in_syscall(t.pid, t.victim, SYS_futex);
	capture(t.pid, t.victim, &cv);
	cr_assert_eq(ws_unwinder_new(t.pid, NULL, &u), 0);
	cr_assert_eq(ws_unwind(u, cv.tid, &cv.regs, &cv.st, &opts, &fres), 0);
	cr_assert_geq(fres.n, 6u);

	opts.max_frames = 3;
	cr_assert_eq(ws_unwind(u, cv.tid, &cv.regs, &cv.st, &opts, &res), 0);
	cr_assert_eq(res.n, 3u);
	cr_assert_eq(res.stop, WS_UNWIND_MAX_FRAMES);

	/* 64 bytes of stack: the first frames at most, then "stack copy too short". */
	opts = (struct ws_unwind_opts){ .max_frames = MAX_FRAMES,
					.max_ns = SLOW_MACHINE_NS,
					.flags = WS_UNWIND_NO_FP };
	shortst = cv.st;
	shortst.len = 64;
	cr_assert_eq(ws_unwind(u, cv.tid, &cv.regs, &shortst, &opts, &res), 0);
	cr_log_info("64 bytes: %u frames, %s", res.n, ws_unwind_stop_str(res.stop));
	cr_assert_lt(res.n, fres.n);
	cr_assert_eq(res.stop, WS_UNWIND_NO_MEMORY, "stopped on: %s", ws_unwind_stop_str(res.stop));
	for (uint32_t i = 0; i < res.n; i++)
		cr_assert_eq(res.frames[i].pc, full[i].pc, "frame %u differs", i);

	/* How much of the stack the whole walk needs (what BPF must copy for this program). */
	for (shortst.len = 256; shortst.len < cv.st.len; shortst.len += 256) {
		cr_assert_eq(ws_unwind(u, cv.tid, &cv.regs, &shortst, &opts, &res), 0);
		if (res.stop == WS_UNWIND_END)
			break;
	}
	cr_assert_eq(res.n, fres.n);
	cr_log_info("the whole walk needs %zu bytes of stack (of %zu copied)", shortst.len,
		    cv.st.len);

	/* No stack at all: the pc alone. */
	cr_assert_eq(ws_unwind(u, cv.tid, &cv.regs, NULL, &opts, &res), 0);
	cr_assert_geq(res.n, 1u);
	cr_assert_eq(res.frames[0].pc, cv.regs.pc);

	opts.max_ns = 1;
	cr_assert_eq(ws_unwind(u, cv.tid, &cv.regs, &cv.st, &opts, &res), 0);
	cr_assert_eq(res.n, 1u);
	cr_assert_eq(res.stop, WS_UNWIND_DEADLINE);

	/* Registers without sp, or of another architecture, are refused. */
	bad = cv.regs;
	bad.valid &= ~WS_UREG_SP;
	cr_assert_eq(ws_unwind(u, cv.tid, &bad, &cv.st, NULL, &res), -EINVAL);
	bad = cv.regs;
	bad.arch = bad.arch == WS_UNWIND_ARCH_X86_64 ? WS_UNWIND_ARCH_ARM64 : WS_UNWIND_ARCH_X86_64;
	cr_assert_eq(ws_unwind(u, cv.tid, &bad, &cv.st, NULL, &res), -EINVAL);

	ws_unwinder_free(u);
	target_stop(&t);
}

Test(unwind, refuses_bad_maps)
{
	struct ws_unwinder *u;

	cr_assert_eq(ws_unwinder_new(1, "this is not a maps line\n", &u), -EINVAL);
	cr_assert_eq(ws_unwinder_new(1, "2000-1000 r-xp 00000000 00:00 0\n", &u), -EINVAL);
}
