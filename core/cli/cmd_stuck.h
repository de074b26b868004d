/* SPDX-License-Identifier: MIT */
/* `whyslow stuck PID...`: a one-shot snapshot of every thread's wait, owners and deadlocks. */
#ifndef WS_CMD_STUCK_H
#define WS_CMD_STUCK_H

struct ws_cli;

/* `whyslow stuck PID...` with the options @c holds. Exit status for main(). */
int ws_cmd_stuck(const struct ws_cli *c);

#endif
