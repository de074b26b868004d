/* SPDX-License-Identifier: MIT */
/*
 * How a wait's syscall is shown: "futex_wait(0x7f2a3c001000)", "read(fd 3)",
 * "epoll_wait(timeout 1000ms)" in text, and the link's "syscall" object in
 * JSON. The number-to-name table is the SDK's <whyslow/syscall_names.h>.
 */
#ifndef WS_SYSCALL_FMT_H
#define WS_SYSCALL_FMT_H

#include <stddef.h>
#include <stdio.h>

#include <whyslow/record.h>

/* Write the call as text into @buf; 0 (and "" in @buf) when @s is unknown. */
int ws_syscall_format(const struct ws_syscall *s, char *buf, size_t len);

/* The fd the call waited on (its first argument), or -1 when it takes none. */
int ws_syscall_fd(const struct ws_syscall *s);
/* As ws_syscall_format, with the fd's @path when known: "fdatasync(fd 7 → /var/lib/x)". */
int ws_syscall_format_path(const struct ws_syscall *s, const char *path, char *buf, size_t len);

/* Write ,"syscall":{...} to @f; nothing when @s is unknown. */
void ws_syscall_json(FILE *f, const struct ws_syscall *s);

/*
 * Keep only the arguments shown (zero the rest: buffers, values, pointers), so
 * waits in the same call on the same object share one interned claim.
 */
void ws_syscall_normalize(struct ws_syscall *s);

#endif
