/* SPDX-License-Identifier: MIT */
/*
 * A descriptor opened in a child with other credentials (invoker.c, useropen.c), handed back
 * over a message-preserving socket (SOCK_DGRAM or SOCK_SEQPACKET): one message, the result
 * (0 or -errno) and, on success, the descriptor. System calls only, so a child of a process
 * with threads may send.
 */
#ifndef WS_FDPASS_H
#define WS_FDPASS_H

/* Send @err (0 or -errno) and, when @fd >= 0, @fd. 0, or -1 when the message did not go. */
int ws_fdpass_send(int sock, int err, int fd);

/*
 * Receive what ws_fdpass_send() sent (recvmsg @flags added): the descriptor, close-on-exec,
 * or the -errno sent; -EIO when the peer died or sent something else.
 */
int ws_fdpass_recv(int sock, int flags);

#endif
