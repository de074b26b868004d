/* SPDX-License-Identifier: MIT */
/*
 * User-space stack unwinding from a copy: the registers of a thread at the moment of capture and
 * the top bytes of its user stack, unwound with DWARF CFI (.eh_frame / .debug_frame) through
 * libdw, as `perf record --call-graph dwarf` does.  Debian builds glibc and its packages without
 * frame pointers, so a frame-pointer walk there gives one or two useless frames; frame pointers
 * are only a fallback.  The copy is the evidence: the unwinder never reads the live process's
 * memory unless asked to (WS_UNWIND_READ_LIVE).  Code is read from the ELF files on disk.
 */
#ifndef WS_UNWIND_H
#define WS_UNWIND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Architecture of a capture: ELF e_machine values, so a recording says which registers it has. */
#define WS_UNWIND_ARCH_X86_64 62 /* EM_X86_64 */
#define WS_UNWIND_ARCH_ARM64 183 /* EM_AARCH64 */

/* Callee-saved registers beyond sp/fp/lr: what a frame's CFA rule may need in the first frames. */
#define WS_UREGS_NCALLEE 10

/*
 * The user registers of a thread where it was captured (a blocked task's pt_regs).  Named by role
 * so that one layout serves both architectures:
 *                 x86_64          arm64
 *   pc            rip             pc
 *   sp            rsp             sp
 *   fp            rbp             x29
 *   lr            (none)          x30
 *   callee[0..]   rbx, r12..r15   x19..x28
 * A register the capture did not have is left out of @valid; the unwinder then treats it as
 * unknown (a frame whose CFA needs it ends the walk) rather than guessing.
 */
struct ws_uregs {
	uint16_t arch; /* WS_UNWIND_ARCH_* */
	uint16_t pad;
	uint32_t valid; /* WS_UREG_* bits */
	uint64_t pc;
	uint64_t sp;
	uint64_t fp;
	uint64_t lr;
	uint64_t callee[WS_UREGS_NCALLEE];
};

#define WS_UREG_PC (1u << 0)
#define WS_UREG_SP (1u << 1)
#define WS_UREG_FP (1u << 2)
#define WS_UREG_LR (1u << 3)
#define WS_UREG_CALLEE(i) (1u << (4 + (i)))

/* The bytes copied from the thread's user stack: @len bytes that lived at [@addr, @addr + @len). */
struct ws_ustack {
	uint64_t addr; /* normally the captured sp */
	const void *data;
	size_t len;
};

/* One unwound frame.  Frame 0 is the exact pc; the others are return addresses, so a symbolizer
 * should look up pc - 1 for them (the call instruction) unless WS_UFRAME_ACTIVATION is set
 * (a signal frame's interrupted pc). */
struct ws_uframe {
	uint64_t pc;
	uint32_t flags;
};
#define WS_UFRAME_ACTIVATION (1u << 0) /* pc is where the frame was executing, not a return */
#define WS_UFRAME_FP                                                     \
	(1u << 1) /* found through the frame pointer: the frame below it \
		   * had no CFI */

/* Why a walk ended (besides the frame array being full). */
enum ws_unwind_stop {
	WS_UNWIND_END,	      /* the outermost frame (CFI says no caller, or pc 0) */
	WS_UNWIND_MAX_FRAMES, /* the caller's limit */
	WS_UNWIND_DEADLINE,   /* the time budget */
	WS_UNWIND_NO_MEMORY,  /* needed a stack word outside the copy */
	WS_UNWIND_NO_CFI,     /* a pc outside every known module, or a module without CFI */
	WS_UNWIND_STUCK,      /* the walk went nowhere (sp not increasing), stopped to be safe */
	WS_UNWIND_BAD_FP,     /* the frame pointer does not lead to a frame record in the copy */
};

struct ws_unwind_opts {
	uint32_t max_frames; /* 0: WS_UNWIND_DEFAULT_FRAMES */
	uint64_t max_ns;     /* 0: WS_UNWIND_DEFAULT_NS of wall time per stack */
	uint32_t flags;	     /* WS_UNWIND_* below */
};
#define WS_UNWIND_DEFAULT_FRAMES 64
#define WS_UNWIND_DEFAULT_NS \
	50000000ULL /* 50 ms: the first stack of a process also opens its files */

#define WS_UNWIND_READ_LIVE                                                                   \
	(1u << 0)		  /* words outside the copy may be read from the live process \
				   */
#define WS_UNWIND_NO_FP (1u << 1) /* stop where CFI ends instead of following frame pointers */
#define WS_UNWIND_FP_ONLY                                                      \
	(1u << 2) /* frame pointers only (to compare; what bpf_get_stack does) \
		   */

struct ws_unwind_result {
	struct ws_uframe *frames; /* caller's array of opts.max_frames entries */
	uint32_t n;
	enum ws_unwind_stop stop;
	uint32_t fp_frames; /* how many were found through a frame pointer (WS_UFRAME_FP) */
};

/* One process's address space, reused across the stacks of its threads (modules and their CFI
 * stay loaded between calls). */
struct ws_unwinder;

/*
 * An unwinder for process @pid.  @maps is the text of /proc/PID/maps saved when the stack was
 * captured, so unwinding works after the process is gone; NULL reads /proc/@pid/maps now and
 * again whenever a pc falls outside every mapping (a library dlopen()ed since).
 * 0 or a negative errno (-ENOENT: no such process and no saved maps; -EINVAL: bad maps text).
 */
int ws_unwinder_new(pid_t pid, const char *maps, struct ws_unwinder **out);
void ws_unwinder_free(struct ws_unwinder *u);

/*
 * Unwind thread @tid from @regs and the stack copy @stack into @res->frames.  @opts may be NULL.
 * Returns 0 with at least the first frame, or a negative errno: -EINVAL for registers without pc
 * and sp or of another architecture than the unwinder's modules.  What ended the walk is in
 * @res->stop: a stack that ends early is still a result.
 */
int ws_unwind(struct ws_unwinder *u, pid_t tid, const struct ws_uregs *regs,
	      const struct ws_ustack *stack, const struct ws_unwind_opts *opts,
	      struct ws_unwind_result *res);

#endif
