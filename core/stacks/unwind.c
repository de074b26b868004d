// SPDX-License-Identifier: MIT
/*
 * DWARF CFI unwinding of a captured user stack with libdw's Dwfl: the process's modules are
 * reported from its maps text, and a Dwfl "thread" is given the captured registers and a memory
 * reader that answers from the stack copy (and, for read-only code and data, from the ELF files).
 * libdw then steps frame to frame with each module's .eh_frame/.debug_frame.
 */
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>

#include "unwind.h"
#include "procmaps.h"
#include "symfile.h"

/* DWARF register numbers of the roles in struct ws_uregs (psABI tables). */
struct arch_regs {
	uint16_t machine;
	int sp, fp, lr; /* -1: none */
	int ncallee;
	int callee[WS_UREGS_NCALLEE];
};

static const struct arch_regs arch_regs[] = {
	/* x86_64 psABI: rbx 3, rbp 6, rsp 7, r12..r15 12..15; the return address is column 16. */
	{ WS_UNWIND_ARCH_X86_64, 7, 6, -1, 5, { 3, 12, 13, 14, 15 } },
	/* AAPCS64: x0..x30 are 0..30, sp 31. */
	{ WS_UNWIND_ARCH_ARM64, 31, 29, 30, 10, { 19, 20, 21, 22, 23, 24, 25, 26, 27, 28 } },
};

static const struct arch_regs *arch_find(uint16_t machine)
{
	for (size_t i = 0; i < sizeof(arch_regs) / sizeof(arch_regs[0]); i++)
		if (arch_regs[i].machine == machine)
			return &arch_regs[i];
	return NULL;
}

struct ws_unwinder {
	Dwfl *dwfl;
	pid_t pid;
	bool live; /* maps come from /proc now: may be re-read when a pc is not covered */
	bool attached;
	uint16_t machine;
	struct ws_procmaps maps;
	char *debuginfo_path;

	/* The walk in progress. */
	pid_t tid;
	const struct ws_uregs *regs;
	const struct ws_ustack *stack;
	const struct arch_regs *ar;
	uint32_t flags;
	uint32_t max_frames;
	uint64_t deadline;
	struct ws_unwind_result *res;
	bool mem_miss;
	int cb_stop; /* why frame_cb ended the walk, or -1 */
	uint64_t last_sp;
	uint64_t prev_look; /* the previous frame's pc as looked up (a return address - 1) */
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* --- memory: the copy first, then read-only file contents, then (if asked) the live process */

static bool read_copy(const struct ws_ustack *st, uint64_t addr, uint64_t *out)
{
	if (!st || !st->data || addr < st->addr || st->len < sizeof(*out) ||
	    addr - st->addr > st->len - sizeof(*out))
		return false;
	memcpy(out, (const char *)st->data + (addr - st->addr), sizeof(*out));
	return true;
}

/* Code and constants are the same on disk as in memory; writable data is not, so a word from a
 * writable segment is never read from the file. */
static bool read_elf(Dwfl *dwfl, uint64_t addr, uint64_t *out)
{
	Dwfl_Module *mod = dwfl_addrmodule(dwfl, addr);
	GElf_Addr bias;
	Elf *elf;
	size_t nph;

	if (!mod || !(elf = dwfl_module_getelf(mod, &bias)) || elf_getphdrnum(elf, &nph))
		return false;
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;
		uint64_t rel = addr - bias;
		Elf_Data *d;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD || (ph.p_flags & PF_W))
			continue;
		if (rel < ph.p_vaddr || ph.p_filesz < sizeof(*out) ||
		    rel - ph.p_vaddr > ph.p_filesz - sizeof(*out))
			continue;
		d = elf_getdata_rawchunk(elf, (int64_t)(ph.p_offset + (rel - ph.p_vaddr)),
					 sizeof(*out), ELF_T_BYTE);
		if (!d || !d->d_buf)
			return false;
		memcpy(out, d->d_buf, sizeof(*out));
		return true;
	}
	return false;
}

static bool read_live(pid_t pid, uint64_t addr, uint64_t *out)
{
	struct iovec local = { out, sizeof(*out) };
	struct iovec remote = { (void *)(uintptr_t)addr, sizeof(*out) };

	return process_vm_readv(pid, &local, 1, &remote, 1, 0) == (ssize_t)sizeof(*out);
}

static bool read_word(struct ws_unwinder *u, uint64_t addr, uint64_t *out)
{
	if (read_copy(u->stack, addr, out) || read_elf(u->dwfl, addr, out))
		return true;
	if ((u->flags & WS_UNWIND_READ_LIVE) && read_live(u->pid, addr, out))
		return true;
	u->mem_miss = true;
	return false;
}

/* --- Dwfl thread callbacks: one thread, the one being unwound ---------------------------- */

static pid_t cb_next_thread(Dwfl *dwfl, void *arg, void **thread_argp)
{
	struct ws_unwinder *u = arg;

	(void)dwfl;
	if (*thread_argp)
		return 0;
	*thread_argp = u;
	return u->tid;
}

static bool cb_get_thread(Dwfl *dwfl, pid_t tid, void *arg, void **thread_argp)
{
	struct ws_unwinder *u = arg;

	(void)dwfl;
	if (tid != u->tid)
		return false;
	*thread_argp = u;
	return true;
}

static bool cb_memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *arg)
{
	uint64_t v;

	(void)dwfl;
	if (!read_word(arg, addr, &v))
		return false;
	*result = v;
	return true;
}

static bool set_reg(Dwfl_Thread *thread, int regno, uint64_t v)
{
	Dwarf_Word w = v;

	return regno < 0 || dwfl_thread_state_registers(thread, regno, 1, &w);
}

static bool cb_set_initial_registers(Dwfl_Thread *thread, void *arg)
{
	struct ws_unwinder *u = arg;
	const struct ws_uregs *r = u->regs;
	const struct arch_regs *ar = u->ar;

	/* Only what was captured is set: libdw treats the rest as unknown, so a rule that needs
	 * one ends the walk instead of producing a frame from garbage. */
	if (!set_reg(thread, ar->sp, r->sp))
		return false;
	if ((r->valid & WS_UREG_FP) && !set_reg(thread, ar->fp, r->fp))
		return false;
	if ((r->valid & WS_UREG_LR) && !set_reg(thread, ar->lr, r->lr))
		return false;
	for (int i = 0; i < ar->ncallee; i++)
		if ((r->valid & WS_UREG_CALLEE(i)) && !set_reg(thread, ar->callee[i], r->callee[i]))
			return false;
	dwfl_thread_state_register_pc(thread, r->pc);
	return true;
}

static const Dwfl_Thread_Callbacks thread_callbacks = {
	.next_thread = cb_next_thread,
	.get_thread = cb_get_thread,
	.memory_read = cb_memory_read,
	.set_initial_registers = cb_set_initial_registers,
};

/* --- modules ------------------------------------------------------------------------------ */

static const Dwfl_Callbacks proc_callbacks = {
	.find_elf = ws_symfile_find_elf,
	.find_debuginfo = ws_symfile_find_debuginfo,
};

static int report_maps(struct ws_unwinder *u, bool add)
{
	FILE *f = fmemopen(u->maps.text, strlen(u->maps.text), "r");
	int err;

	if (!f)
		return -errno;
	if (add)
		dwfl_report_begin_add(u->dwfl);
	else
		dwfl_report_begin(u->dwfl);
	err = dwfl_linux_proc_maps_report(u->dwfl, f);
	fclose(f);
	if (dwfl_report_end(u->dwfl, NULL, NULL) != 0 || err < 0)
		return -EINVAL;
	return err > 0 ? -err : 0;
}

static int first_machine(Dwfl_Module *mod, void **userdata, const char *name, Dwarf_Addr start,
			 void *arg)
{
	GElf_Addr bias;
	GElf_Ehdr eh;
	Elf *elf = dwfl_module_getelf(mod, &bias);

	(void)userdata;
	(void)name;
	(void)start;
	if (!elf || !gelf_getehdr(elf, &eh))
		return DWARF_CB_OK;
	*(uint16_t *)arg = eh.e_machine;
	return DWARF_CB_ABORT;
}

int ws_unwinder_new(pid_t pid, const char *maps, struct ws_unwinder **out)
{
	struct ws_unwinder *u = calloc(1, sizeof(*u));
	int err;

	if (!u)
		return -ENOMEM;
	u->pid = pid;
	u->live = !maps;
	err = maps ? ws_procmaps_parse(maps, &u->maps) : ws_procmaps_read(pid, &u->maps);
	if (err)
		goto fail;
	u->dwfl = dwfl_begin(&proc_callbacks);
	if (!u->dwfl) {
		err = -ENOMEM;
		goto fail;
	}
	err = report_maps(u, false);
	if (err)
		goto fail;
	*out = u;
	return 0;
fail:
	ws_unwinder_free(u);
	return err;
}

void ws_unwinder_free(struct ws_unwinder *u)
{
	if (!u)
		return;
	if (u->dwfl)
		dwfl_end(u->dwfl);
	ws_procmaps_free(&u->maps);
	free(u);
}

/* A library dlopen()ed after the maps were read: read them again (a live process only). */
static int refresh_maps(struct ws_unwinder *u)
{
	struct ws_procmaps pm;
	int err;

	if (!u->live)
		return -ENOENT;
	err = ws_procmaps_read(u->pid, &pm);
	if (err)
		return err;
	ws_procmaps_free(&u->maps);
	u->maps = pm;
	return report_maps(u, true);
}

static int attach(struct ws_unwinder *u)
{
	if (u->attached)
		return 0;
	dwfl_getmodules(u->dwfl, first_machine, &u->machine, 0);
	if (!u->machine)
		return -ENOENT; /* not one ELF file of the process could be opened */
	if (!dwfl_attach_state(u->dwfl, NULL, u->pid, &thread_callbacks, u))
		return -EINVAL;
	u->attached = true;
	return 0;
}

/* --- the walk ----------------------------------------------------------------------------- */

static bool push(struct ws_unwinder *u, uint64_t pc, uint32_t flags)
{
	struct ws_unwind_result *res = u->res;

	if (res->n >= u->max_frames) {
		res->stop = WS_UNWIND_MAX_FRAMES;
		return false;
	}
	res->frames[res->n].pc = pc;
	res->frames[res->n].flags = flags;
	res->n++;
	if (flags & WS_UFRAME_FP)
		res->fp_frames++;
	return true;
}

/* Is there CFI for @look?  If not, the frame above it came from libdw's own fallback (on x86_64
 * and arm64 it follows the frame pointer when a pc has no CFI). */
static bool has_cfi(Dwfl *dwfl, uint64_t look)
{
	Dwfl_Module *mod = dwfl_addrmodule(dwfl, look);
	Dwarf_Frame *frame = NULL;
	Dwarf_Addr bias;
	Dwarf_CFI *cfi;

	if (!mod)
		return false;
	cfi = dwfl_module_eh_cfi(mod, &bias);
	if (cfi && dwarf_cfi_addrframe(cfi, look - bias, &frame) == 0) {
		free(frame);
		return true;
	}
	cfi = dwfl_module_dwarf_cfi(mod, &bias);
	if (cfi && dwarf_cfi_addrframe(cfi, look - bias, &frame) == 0) {
		free(frame);
		return true;
	}
	return false;
}

static bool in_code(const struct ws_unwinder *u, uint64_t pc);

static int frame_cb(Dwfl_Frame *state, void *arg)
{
	struct ws_unwinder *u = arg;
	uint32_t flags = 0;
	Dwarf_Addr pc;
	Dwarf_Word sp = 0;
	bool activation;

	if (!dwfl_frame_pc(state, &pc, &activation)) {
		u->cb_stop = WS_UNWIND_NO_CFI;
		return DWARF_CB_ABORT;
	}
	if (pc == 0) {
		u->cb_stop = WS_UNWIND_END; /* the end of the chain, as far as anyone can tell */
		return DWARF_CB_ABORT;
	}
	if (u->res->n && now_ns() > u->deadline) {
		u->cb_stop = WS_UNWIND_DEADLINE;
		return DWARF_CB_ABORT;
	}
	if (dwfl_frame_reg(state, (unsigned)u->ar->sp, &sp) == 0) {
		/* Each caller's frame lies above its callee's: a walk that does not climb is
		 * looping on bad data. */
		if (u->res->n && sp < u->last_sp) {
			u->cb_stop = WS_UNWIND_STUCK;
			return DWARF_CB_ABORT;
		}
		u->last_sp = sp;
	}
	if (u->res->n == 0 || activation)
		flags |= WS_UFRAME_ACTIVATION;
	if (u->res->n && !has_cfi(u->dwfl, u->prev_look)) {
		/* Taken from a frame pointer: in code built without them that register is just
		 * another variable, so the return address must at least land in code. */
		if (u->flags & WS_UNWIND_NO_FP) {
			u->cb_stop = WS_UNWIND_NO_CFI;
			return DWARF_CB_ABORT;
		}
		if (!in_code(u, pc)) {
			u->cb_stop = WS_UNWIND_BAD_FP;
			return DWARF_CB_ABORT;
		}
		flags |= WS_UFRAME_FP;
	}
	if (!push(u, pc, flags)) {
		u->cb_stop = WS_UNWIND_MAX_FRAMES;
		return DWARF_CB_ABORT;
	}
	u->prev_look = flags & WS_UFRAME_ACTIVATION ? pc : pc - 1;
	return DWARF_CB_OK;
}

/* Is @pc inside an executable mapping?  What a frame-pointer walk must check of every return
 * address it takes from the stack, since in code built without frame pointers the register is
 * just another variable. */
static bool in_code(const struct ws_unwinder *u, uint64_t pc)
{
	const struct ws_map *m = ws_procmaps_find(&u->maps, pc - 1);

	return m && m->executable;
}

/* Frame-pointer walk from @fp: each frame record is {saved fp, return address}, on both x86_64
 * (push rbp; mov rsp, rbp) and arm64 (stp x29, x30).  Only inside the copy, strictly upwards. */
static void fp_walk(struct ws_unwinder *u, uint64_t fp, uint64_t min_addr)
{
	while (u->res->n < u->max_frames) {
		uint64_t next_fp, ret;

		if (now_ns() > u->deadline) {
			u->res->stop = WS_UNWIND_DEADLINE;
			return;
		}
		if (fp == 0) {
			u->res->stop = WS_UNWIND_END;
			return;
		}
		/* Above the copy it may be a real frame the copy missed; anywhere else it is no
		 * frame pointer at all. */
		if (fp < min_addr || (fp & 7) || !read_copy(u->stack, fp, &next_fp) ||
		    !read_copy(u->stack, fp + 8, &ret)) {
			u->res->stop =
				u->stack && fp >= u->stack->addr + u->stack->len &&
						fp - (u->stack->addr + u->stack->len) < (1u << 20)
					? WS_UNWIND_NO_MEMORY
					: WS_UNWIND_BAD_FP;
			return;
		}
		if (ret == 0) {
			u->res->stop = WS_UNWIND_END;
			return;
		}
		if (!in_code(u, ret)) {
			u->res->stop = WS_UNWIND_NO_CFI;
			return;
		}
		if (!push(u, ret, WS_UFRAME_FP))
			return;
		if (next_fp == 0) {
			u->res->stop = WS_UNWIND_END;
			return;
		}
		if (next_fp <= fp) {
			u->res->stop = WS_UNWIND_STUCK;
			return;
		}
		fp = next_fp;
	}
	u->res->stop = WS_UNWIND_MAX_FRAMES;
}

static void dwarf_walk(struct ws_unwinder *u)
{
	int rc;

	u->mem_miss = false;
	u->cb_stop = -1;
	u->last_sp = 0;
	rc = dwfl_getthread_frames(u->dwfl, u->tid, frame_cb, u);
	/* libdw ends a walk as if at the outermost frame when a register it needs cannot be
	 * read, so after any failed read the end is not known to be the end: say the copy was
	 * too short rather than claim a complete stack. */
	if (u->cb_stop >= 0)
		u->res->stop = (enum ws_unwind_stop)u->cb_stop;
	else if (u->mem_miss)
		u->res->stop = WS_UNWIND_NO_MEMORY;
	else if (rc == 0)
		u->res->stop = WS_UNWIND_END;
	else
		u->res->stop = WS_UNWIND_NO_CFI;
}

static bool pc_covered(struct ws_unwinder *u, uint64_t pc)
{
	return dwfl_addrmodule(u->dwfl, pc) != NULL;
}

static void dwarf_walk_again(struct ws_unwinder *u)
{
	u->res->n = 0;
	u->res->fp_frames = 0;
	dwarf_walk(u);
	if (u->res->n == 0)
		push(u, u->regs->pc, WS_UFRAME_ACTIVATION);
}

int ws_unwind(struct ws_unwinder *u, pid_t tid, const struct ws_uregs *regs,
	      const struct ws_ustack *stack, const struct ws_unwind_opts *opts,
	      struct ws_unwind_result *res)
{
	static const struct ws_unwind_opts defaults;
	int err;

	if (!opts)
		opts = &defaults;
	if (!res->frames)
		return -EINVAL;
	res->n = 0;
	res->fp_frames = 0;
	res->stop = WS_UNWIND_END;
	if ((regs->valid & (WS_UREG_PC | WS_UREG_SP)) != (WS_UREG_PC | WS_UREG_SP))
		return -EINVAL;
	u->ar = arch_find(regs->arch);
	if (!u->ar)
		return -EINVAL;
	u->tid = tid;
	u->regs = regs;
	u->stack = stack;
	u->flags = opts->flags;
	u->max_frames = opts->max_frames ? opts->max_frames : WS_UNWIND_DEFAULT_FRAMES;
	u->deadline = now_ns() + (opts->max_ns ? opts->max_ns : WS_UNWIND_DEFAULT_NS);
	u->res = res;

	if (opts->flags & WS_UNWIND_FP_ONLY) {
		push(u, regs->pc, WS_UFRAME_ACTIVATION);
		if (regs->valid & WS_UREG_FP)
			fp_walk(u, regs->fp, regs->sp);
		else
			res->stop = WS_UNWIND_NO_MEMORY;
		return 0;
	}

	/* In no mapping known: dlopen()ed since the maps were read (JIT code is in a known
	 * anonymous mapping and does not come here).  Fine if it fails. */
	if (!ws_procmaps_find(&u->maps, regs->pc))
		refresh_maps(u);
	err = attach(u);
	if (err)
		return err;
	if (regs->arch != u->machine)
		return -EINVAL;
	dwarf_walk(u);
	if (res->n == 0) /* libdw could not even take the first frame */
		push(u, regs->pc, WS_UFRAME_ACTIVATION);

	/* A return address in no mapping known: maybe a library loaded since the maps were read;
	 * read them again and walk once more. */
	for (uint32_t i = 1; i < res->n && u->live; i++) {
		uint64_t look = res->frames[i].pc - 1;

		if (ws_procmaps_find(&u->maps, look))
			continue;
		if (refresh_maps(u) == 0 && pc_covered(u, look))
			dwarf_walk_again(u);
		break;
	}
	return 0;
}
