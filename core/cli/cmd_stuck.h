/* SPDX-License-Identifier: MIT */
/* `whyslow stuck PID...`: a one-shot snapshot of every thread's wait, owners and deadlocks. */
#ifndef WS_CMD_STUCK_H
#define WS_CMD_STUCK_H

#include "cmd_trace.h"

/* @argv: the arguments after "stuck"; @g: the plugin directory and verbosity. Exit status for
 * main(). */
int ws_cmd_stuck(int argc, char **argv, const struct ws_report_globals *g);

#endif
