/* SPDX-License-Identifier: MIT */
/*
 * attach/watch --comm LIST: the command names whose processes are traced. The names as the
 * kernel keeps them (task->comm: at most 15 bytes, NUL-padded to 16), the processes that bear
 * one now (from /proc), and the kernel side that follows those that take one later by exec
 * (ctx.bpf.c ws_follow_exec).
 */
#ifndef WS_COMM_H
#define WS_COMM_H

#include <stddef.h>
#include <stdint.h>

#define WS_COMM_NAMES 8 /* ctx.bpf.c's WS_FOLLOW_COMMS */
#define WS_COMM_BYTES 16

/*
 * The comma-separated names of @list into @names, NUL-padded. The count, or -EINVAL with
 * @why saying what is wrong (empty, too long, too many).
 */
int ws_comm_parse(const char *list, char names[WS_COMM_NAMES][WS_COMM_BYTES], char *why,
		  size_t len);

/*
 * The processes whose command name is one of @names now (not whyslow, not kernel threads),
 * malloc'd into *@pids (*@n of them). 0 or -errno.
 */
int ws_comm_pids(char names[WS_COMM_NAMES][WS_COMM_BYTES], int nnames, uint32_t **pids, size_t *n);

#endif
