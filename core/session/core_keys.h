/* SPDX-License-Identifier: MIT */
/* The [core] section's keys (core_keys.c). */
#ifndef WS_CORE_KEYS_H
#define WS_CORE_KEYS_H

#include "config.h"

extern const struct ws_config_key ws_core_keys[];

#endif
