/* SPDX-License-Identifier: MIT */
/*
 * The user stack of a thread that is off CPU now, read without ptrace or BPF: the stack pointer
 * and program counter /proc/PID/task/TID/syscall shows, the top of its stack copied with
 * process_vm_readv, unwound with DWARF CFI and named as captured stacks are (stackcap.c: the
 * files the process names are opened as its user). The same access checks as the rest of
 * `stuck` (ptrace read for the syscall file, ptrace attach for the memory): the process's user
 * may read its own. Nothing here can block on the target: only the anonymous mapping holding the
 * stack pointer is read (never a file mapping, which FUSE could serve), only its pages resident
 * now, at most WS_USTACK_NOW_BYTES, and the copy is kept only if the thread did not run while it
 * was taken.
 */
#ifndef WS_USTACK_NOW_H
#define WS_USTACK_NOW_H

#include "procsnap.h"
#include "stacks/stackrec.h"

#define WS_USTACK_NOW_BYTES 32768

struct ws_ustack_now;

int ws_ustack_now_new(struct ws_ustack_now **out);
void ws_ustack_now_free(struct ws_ustack_now *u);

/*
 * The user stack of the thread @t snapshots (its registers as /proc showed them then): 0 with
 * *@out a stack of user frames, innermost first (ws_stack_free() frees it; role WS_STACK_WAITER,
 * wait_tid its tid, wait_start = wait_end = @t's read time), or -errno with *@why (static text)
 * saying why there is none, for a reader: -EAGAIN it ran meanwhile, -ENODATA no registers or
 * no memory readable, -EPERM no access, -ENOMEM.
 */
int ws_ustack_now_read(struct ws_ustack_now *u, const struct ws_task_snap *t, struct ws_stack **out,
		       const char **why);

#endif
