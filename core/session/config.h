/* SPDX-License-Identifier: MIT */
/*
 * The ini file: "[core]" plus one section per source, each holding
 * "enabled = yes|no" and the source's own keys. Parsed by inih; every key is
 * checked against a table of known keys (type, range, help) before use.
 */
#ifndef WS_CONFIG_H
#define WS_CONFIG_H

#include <stddef.h>

#include <whyslow/plugin.h>

struct ws_config_entry {
	char *section, *key, *value;
	int line;
};

struct ws_config {
	char *path;
	struct ws_config_entry *e;
	size_t n, cap;
};

/* Parse @path. 0, or -errno with "file:line: problem" in @err. */
int ws_config_load(struct ws_config *c, const char *path, char *err, size_t errlen);
void ws_config_free(struct ws_config *c);

/* The value of section.key as written, or NULL. */
const char *ws_config_get(const struct ws_config *c, const char *section, const char *key);
/* Set (or override) section.key, e.g. from the command line. 0 or -ENOMEM. */
int ws_config_set(struct ws_config *c, const char *section, const char *key, const char *value);

/*
 * Check every key of @section against @keys (terminated by key NULL):
 * unknown keys and bad values are errors naming file:line, the accepted
 * values, and the fix. 0 or -EINVAL.
 */
int ws_config_check_section(const struct ws_config *c, const char *section,
			    const struct ws_config_key *keys, char *err, size_t errlen);
/* The same, leaving out key @checked, which the caller checks itself (a source's "enabled"). */
int ws_config_check_section_but(const struct ws_config *c, const char *section,
				const struct ws_config_key *keys, const char *checked, char *err,
				size_t errlen);
/* Check one value against its key's type and range. 0 or -EINVAL (reason in @err). */
int ws_config_check_value(const struct ws_config_key *k, const char *value, char *err,
			  size_t errlen);

/* Typed lookups: the set value, else the key's default. 0, -ENOENT or -EINVAL. */
const struct ws_config_key *ws_config_key_find(const struct ws_config_key *keys, const char *key);
int ws_config_u64(const struct ws_config *c, const char *section, const struct ws_config_key *keys,
		  const char *key, uint64_t *out);
int ws_config_bool(const struct ws_config *c, const char *section, const struct ws_config_key *keys,
		   const char *key, bool *out);
const char *ws_config_str(const struct ws_config *c, const char *section,
			  const struct ws_config_key *keys, const char *key);

/* Every section named in the file, for "unknown section" checks; count written. */
size_t ws_config_sections(const struct ws_config *c, const char **out, size_t max);
/* Line of the first occurrence of @section (0 if none), for messages. */
int ws_config_section_line(const struct ws_config *c, const char *section);

#endif
