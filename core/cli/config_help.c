// SPDX-License-Identifier: MIT
/* `whyslow --config-help`: see config_help.h. */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "config_help.h"
#include "base/log.h"
#include "base/util.h"
#include "session/loader.h"
#include "session/session.h"

/* Every source's section has this key; the core checks it before the plugin's own. */
static const struct ws_config_key enabled_key[] = {
	{ "enabled", WS_CFG_BOOL, "yes", 0, 0, "load this source (no: leave it out)" },
	{ NULL },
};

int ws_config_help_format_parse(const char *s, enum ws_config_help_format *out)
{
	if (!s || !strcmp(s, "text"))
		*out = WS_CONFIG_HELP_TEXT;
	else if (!strcmp(s, "ini"))
		*out = WS_CONFIG_HELP_INI;
	else if (!strcmp(s, "man"))
		*out = WS_CONFIG_HELP_MAN;
	else
		return -EINVAL;
	return 0;
}

/* 16777216 -> "16M": the form ws_parse_u64 reads back. */
static void format_size(uint64_t v, char *buf, size_t len)
{
	static const char suffix[] = "KMGT";
	int i = -1;

	while (v >= 1024 && v % 1024 == 0 && i < 3) {
		v /= 1024;
		i++;
	}
	if (i < 0)
		snprintf(buf, len, "%" PRIu64, v);
	else
		snprintf(buf, len, "%" PRIu64 "%c", v, suffix[i]);
}

static void format_bound(const struct ws_config_key *k, uint64_t v, char *buf, size_t len)
{
	if (k->type == WS_CFG_DURATION)
		ws_format_duration(v, buf, len);
	else
		format_size(v, buf, len);
}

/* "a duration, 1ms to 10s": what the value looks like and which values are accepted. */
static void describe_type(const struct ws_config_key *k, char *buf, size_t len)
{
	static const char *const kind[] = {
		[WS_CFG_BOOL] = "yes or no",
		[WS_CFG_U64] = "a whole number (K, M, G, T: powers of 1024)",
		[WS_CFG_DURATION] = "a duration (ns, us, ms, s, m)",
		[WS_CFG_STRING] = "a string",
	};
	char lo[32], hi[32];
	const char *what = "a value";

	if (k->type >= WS_CFG_BOOL && k->type <= WS_CFG_STRING)
		what = kind[k->type];
	if ((k->type == WS_CFG_U64 || k->type == WS_CFG_DURATION) && (k->min || k->max)) {
		format_bound(k, k->min, lo, sizeof(lo));
		format_bound(k, k->max, hi, sizeof(hi));
		snprintf(buf, len, "%s, %s to %s", what, lo, hi);
	} else {
		snprintf(buf, len, "%s", what);
	}
}

/* roff: a leading dot or quote starts a request, and a backslash an escape. */
static void man_text(FILE *f, const char *s)
{
	if (*s == '.' || *s == '\'')
		fputs("\\&", f);
	for (; *s; s++) {
		if (*s == '\\')
			fputs("\\e", f);
		else if (*s == '-')
			fputs("\\-", f);
		else
			fputc(*s, f);
	}
}

static void print_section(FILE *f, enum ws_config_help_format fmt, const char *section,
			  const char *about, const struct ws_config_key *const *tables)
{
	char type[128];

	switch (fmt) {
	case WS_CONFIG_HELP_TEXT:
		fprintf(f, "[%s]  %s\n", section, about);
		break;
	case WS_CONFIG_HELP_INI:
		fprintf(f, "\n[%s]\n; %s\n", section, about);
		break;
	case WS_CONFIG_HELP_MAN:
		fprintf(f, ".SS [%s]\n", section);
		man_text(f, about);
		fputc('\n', f);
		break;
	}
	for (; *tables; tables++) {
		for (const struct ws_config_key *k = *tables; k->key; k++) {
			describe_type(k, type, sizeof(type));
			switch (fmt) {
			case WS_CONFIG_HELP_TEXT:
				fprintf(f, "  %-15s default %s; %s\n  %15s %s\n", k->key,
					k->def ? k->def : "none", type, "", k->help);
				break;
			case WS_CONFIG_HELP_INI:
				fprintf(f, "; %s (%s)\n%s%s = %s\n", k->help, type,
					k->def ? "" : ";", k->key, k->def ? k->def : "");
				break;
			case WS_CONFIG_HELP_MAN:
				fprintf(f, ".TP\n.BR %s \" = ", k->key);
				man_text(f, k->def ? k->def : "(none)");
				fputs("\"\n", f);
				man_text(f, k->help);
				fputs(" (", f);
				man_text(f, type);
				fputs(")\n", f);
				break;
			}
		}
	}
	if (fmt == WS_CONFIG_HELP_TEXT)
		fputc('\n', f);
}

int ws_config_help(FILE *f, enum ws_config_help_format fmt, const char *plugin_dir)
{
	const struct ws_config_key *core[] = { ws_core_keys, NULL };
	char **names = NULL;
	int n;

	if (fmt == WS_CONFIG_HELP_INI)
		fprintf(f,
			"; whyslow configuration: every key with its default (whyslow --config-help=ini).\n; Keys commented out have no default.\n");
	print_section(f, fmt, "core", "settings of the analysis and its output", core);
	n = ws_source_names(plugin_dir, &names);
	if (n < 0) {
		ws_log(WS_LOG_ERROR, "cannot list the plugins in %s: %s; give --plugin-dir DIR",
		       plugin_dir, strerror(-n));
		return n;
	}
	for (int i = 0; i < n; i++) {
		const struct ws_config_key *tables[3] = { enabled_key };
		char err[512];
		struct ws_loaded l;

		if (ws_source_load(plugin_dir, names[i], &l, err, sizeof(err))) {
			ws_log(WS_LOG_ERROR, "%s; its keys are not listed", err);
		} else {
			tables[1] = l.p->config_keys;
			print_section(f, fmt, l.p->name, l.p->description, tables);
			ws_plugin_unload(&l);
		}
		free(names[i]);
	}
	free(names);
	return fflush(f) == EOF ? -errno : 0;
}
