/* SPDX-License-Identifier: MIT */
#ifndef WS_USAGE_H
#define WS_USAGE_H

extern const char ws_usage_main[], ws_usage_run[], ws_usage_attach[], ws_usage_record[];

#endif
