/* SPDX-License-Identifier: MIT */
#ifndef WS_USAGE_H
#define WS_USAGE_H

#include <stdio.h>

/*
 * The help of command @cmd (enum ws_cmd; WS_CMD_NONE: the general help): its prose, then its
 * options from the option table.
 */
void ws_usage(FILE *f, unsigned int cmd);

#endif
