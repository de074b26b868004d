// SPDX-License-Identifier: MIT
#include <errno.h>
#include <fcntl.h>
#include <ini.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "access/trust.h"
#include "base/util.h"

/* inih's handler gets no line number: the reader counts lines as it hands them over. */
struct parse_ctx {
	struct ws_config *c;
	FILE *f;
	int line;
	int max; /* the longest line inih takes, newline and NUL included */
	int err;
};

static int add(struct ws_config *c, const char *section, const char *key, const char *value,
	       int line);

static char *read_line(char *str, int num, void *stream)
{
	struct parse_ctx *p = stream;
	char *r = fgets(str, num, p->f);
	const char *h, *e;

	if (!r)
		return r;
	p->line++;
	/*
	 * A line that does not fit would be split and its tail read as a line
	 * of its own (a comment's tail becoming a setting): refuse it instead.
	 */
	if (!strchr(r, '\n') && !feof(p->f) && (int)strlen(r) == num - 1) {
		p->max = num;
		p->err = -E2BIG;
		return NULL;
	}
	/*
	 * Note each section header with its own line, so a section without
	 * keys is known too and messages point at the header.
	 */
	for (h = r; *h == ' ' || *h == '\t'; h++)
		;
	if (*h == '[' && (e = strchr(h, ']')) && e > h + 1) {
		char name[64];

		snprintf(name, sizeof(name), "%.*s", (int)(e - h - 1), h + 1);
		if (add(p->c, name, "", "", p->line))
			p->err = -ENOMEM;
	}
	return r;
}

static int add(struct ws_config *c, const char *section, const char *key, const char *value,
	       int line)
{
	struct ws_config_entry *e;

	if (ws_grow((void **)&c->e, &c->cap, c->n + 1, sizeof(*c->e)))
		return -ENOMEM;
	e = &c->e[c->n];
	e->section = strdup(section);
	e->key = strdup(key);
	e->value = strdup(value);
	e->line = line;
	if (!e->section || !e->key || !e->value) {
		free(e->section);
		free(e->key);
		free(e->value);
		return -ENOMEM;
	}
	c->n++;
	return 0;
}

static int on_entry(void *user, const char *section, const char *key, const char *value)
{
	struct parse_ctx *p = user;
	int line = p->line;

	if (!key) /* a header alone; read_line already noted it */
		return 1;
	if (!section || !*section) {
		p->err = -EINVAL;
		return 0;
	}
	return add(p->c, section, key, value, line) == 0;
}

int ws_config_load(struct ws_config *c, const char *path, char *err, size_t errlen)
{
	struct parse_ctx p = { .c = c };
	int rc;

	int fd;

	c->path = strdup(path);
	/*
	 * As root, the file picks what root writes and loads: it is checked and
	 * read through one descriptor, never opened by name a second time.
	 */
	if (geteuid() == 0) {
		fd = ws_trusted_open(path, WS_TRUST_FILE, err, errlen);
		if (fd == -EPERM || fd == -EINVAL || fd == -EAGAIN)
			return fd; /* refused: @err says why */
		if (fd < 0) {
			snprintf(err, errlen, "%s: cannot open: %s", path, strerror(-fd));
			return -ENOENT;
		}
	} else if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
		snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
		return -ENOENT;
	}
	p.f = fdopen(fd, "re");
	if (!p.f) {
		snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
		close(fd);
		return -ENOMEM;
	}
	rc = ini_parse_stream(read_line, &p, on_entry, &p);
	fclose(p.f);
	if (p.err == -E2BIG) {
		snprintf(err, errlen,
			 "%s:%d: line longer than %d characters; shorten it or split the value",
			 path, p.line, p.max - 2);
		return -EINVAL;
	}
	if (rc == -2) {
		snprintf(err, errlen, "%s: out of memory while reading it", path);
		return -ENOMEM;
	}
	if (rc > 0) {
		snprintf(err, errlen,
			 "%s:%d: syntax error (%s); expected \"[section]\" or \"key = value\"",
			 path, rc,
			 p.err ? "a key before any [section]"
			       : "not a section header or key = value");
		return -EINVAL;
	}
	return 0;
}

void ws_config_free(struct ws_config *c)
{
	for (size_t i = 0; i < c->n; i++) {
		free(c->e[i].section);
		free(c->e[i].key);
		free(c->e[i].value);
	}
	free(c->e);
	free(c->path);
	memset(c, 0, sizeof(*c));
}

const char *ws_config_get(const struct ws_config *c, const char *section, const char *key)
{
	/* the last assignment wins, so command-line overrides appended later take effect */
	for (size_t i = c->n; i-- > 0;)
		if (!strcmp(c->e[i].section, section) && !strcmp(c->e[i].key, key))
			return c->e[i].value;
	return NULL;
}

int ws_config_set(struct ws_config *c, const char *section, const char *key, const char *value)
{
	return add(c, section, key, value, 0);
}

const struct ws_config_key *ws_config_key_find(const struct ws_config_key *keys, const char *key)
{
	for (; keys && keys->key; keys++)
		if (!strcmp(keys->key, key))
			return keys;
	return NULL;
}

int ws_config_check_value(const struct ws_config_key *k, const char *value, char *err,
			  size_t errlen)
{
	uint64_t v;
	int b;

	switch (k->type) {
	case WS_CFG_BOOL:
		if (ws_parse_bool(value, &b)) {
			snprintf(err, errlen, "'%s' is not yes or no", value);
			return -EINVAL;
		}
		return 0;
	case WS_CFG_U64:
	case WS_CFG_DURATION:
		if (k->type == WS_CFG_DURATION && ws_duration_lacks_unit(value)) {
			snprintf(err, errlen,
				 "'%s' has no unit; add one (ns, us, ms, s or m), e.g. %sms", value,
				 value);
			return -EINVAL;
		}
		if ((k->type == WS_CFG_U64 ? ws_parse_u64(value, &v)
					   : ws_parse_duration(value, &v))) {
			snprintf(err, errlen, "'%s' is not %s", value,
				 k->type == WS_CFG_U64 ? "a whole number"
						       : "a duration like 10ms, 2s or 500us");
			return -EINVAL;
		}
		if ((k->min || k->max) && (v < k->min || v > k->max)) {
			if (k->type == WS_CFG_U64)
				snprintf(err, errlen,
					 "%s is out of range (%" PRIu64 " to %" PRIu64 ")", value,
					 k->min, k->max);
			else
				snprintf(err, errlen,
					 "%s is out of range (%" PRIu64 "ns to %" PRIu64 "ns)",
					 value, k->min, k->max);
			return -EINVAL;
		}
		return 0;
	case WS_CFG_STRING:
		return 0;
	}
	snprintf(err, errlen, "key has an unknown type");
	return -EINVAL;
}

int ws_config_check_section(const struct ws_config *c, const char *section,
			    const struct ws_config_key *keys, char *err, size_t errlen)
{
	return ws_config_check_section_but(c, section, keys, NULL, err, errlen);
}

int ws_config_check_section_but(const struct ws_config *c, const char *section,
				const struct ws_config_key *keys, const char *checked, char *err,
				size_t errlen)
{
	for (size_t i = 0; i < c->n; i++) {
		const struct ws_config_entry *e = &c->e[i];
		const struct ws_config_key *k;
		char why[160];

		if (strcmp(e->section, section) || !*e->key ||
		    (checked && !strcmp(e->key, checked)))
			continue;
		k = ws_config_key_find(keys, e->key);
		if (!k) {
			char known[256] = "";

			for (const struct ws_config_key *p = keys; p && p->key; p++)
				snprintf(known + strlen(known), sizeof(known) - strlen(known),
					 "%s%s", known[0] ? ", " : "", p->key);
			snprintf(err, errlen, "%s:%d: unknown key '%s' in [%s] (known keys: %s)",
				 e->line ? c->path : "command line", e->line, e->key, section,
				 known);
			return -EINVAL;
		}
		if (ws_config_check_value(k, e->value, why, sizeof(why))) {
			snprintf(err, errlen, "%s:%d: [%s] %s: %s",
				 e->line ? c->path : "command line", e->line, section, e->key, why);
			return -EINVAL;
		}
	}
	return 0;
}

static const char *value_or_default(const struct ws_config *c, const char *section,
				    const struct ws_config_key *k)
{
	const char *v = ws_config_get(c, section, k->key);

	return v ? v : k->def;
}

int ws_config_u64(const struct ws_config *c, const char *section, const struct ws_config_key *keys,
		  const char *key, uint64_t *out)
{
	const struct ws_config_key *k = ws_config_key_find(keys, key);
	const char *v;

	if (!k || (k->type != WS_CFG_U64 && k->type != WS_CFG_DURATION))
		return -ENOENT;
	v = value_or_default(c, section, k);
	if (!v)
		return -ENOENT;
	return k->type == WS_CFG_U64 ? ws_parse_u64(v, out) : ws_parse_duration(v, out);
}

int ws_config_bool(const struct ws_config *c, const char *section, const struct ws_config_key *keys,
		   const char *key, bool *out)
{
	const struct ws_config_key *k = ws_config_key_find(keys, key);
	const char *v;
	int b;

	if (!k || k->type != WS_CFG_BOOL)
		return -ENOENT;
	v = value_or_default(c, section, k);
	if (!v || ws_parse_bool(v, &b))
		return -EINVAL;
	*out = b;
	return 0;
}

const char *ws_config_str(const struct ws_config *c, const char *section,
			  const struct ws_config_key *keys, const char *key)
{
	const struct ws_config_key *k = ws_config_key_find(keys, key);

	return k ? value_or_default(c, section, k) : NULL;
}

size_t ws_config_sections(const struct ws_config *c, const char **out, size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < c->n; i++) {
		size_t k;

		for (k = 0; k < n && strcmp(out[k], c->e[i].section); k++)
			;
		if (k == n && n < max)
			out[n++] = c->e[i].section;
	}
	return n;
}

int ws_config_section_line(const struct ws_config *c, const char *section)
{
	for (size_t i = 0; i < c->n; i++)
		if (!strcmp(c->e[i].section, section))
			return c->e[i].line;
	return 0;
}
