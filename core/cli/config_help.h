/* SPDX-License-Identifier: MIT */
/*
 * `whyslow --config-help`: every ini key with its default, range and meaning,
 * printed from the key tables themselves (ws_core_keys and each plugin's
 * config_keys), so the help, whyslow.ini(5) and conf/whyslow.ini cannot drift.
 */
#ifndef WS_CONFIG_HELP_H
#define WS_CONFIG_HELP_H

#include <stdio.h>

enum ws_config_help_format {
	WS_CONFIG_HELP_TEXT, /* for a terminal */
	WS_CONFIG_HELP_INI,  /* an ini file holding every default (";key =" when none) */
	WS_CONFIG_HELP_MAN,  /* roff for the body of whyslow.ini(5) */
};

/* "text", "ini" or "man" (NULL: text). 0 or -EINVAL. */
int ws_config_help_format_parse(const char *s, enum ws_config_help_format *out);

/*
 * Print [core] and one section per plugin found in @plugin_dir. 0, or a
 * negative errno after one line on stderr (a plugin that cannot be loaded).
 */
int ws_config_help(FILE *f, enum ws_config_help_format fmt, const char *plugin_dir);

#endif
