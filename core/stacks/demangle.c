// SPDX-License-Identifier: MIT
/*
 * Demangling through the C++ runtime: glibc has no demangler, and libstdc++'s __cxa_demangle is
 * the one c++filt, gdb and perf share. It is looked up with dlopen, not linked, so whyslow
 * needs no C++ runtime to run, and it is opened only when a mangled name is first met.
 *
 * Rust v0 names ("_R...") are left as they are: __cxa_demangle does not read them, and a
 * demangler of our own for them is more code than their rarity (rustc's default is still the
 * legacy scheme) is worth.
 */
#include <dlfcn.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <whyslow/table.h>

#include "demangle.h"
#include "base/util.h"

/* Longest mangled name read: past it a name is left as it is (a recording's are 255 bytes). */
#define MANGLED_MAX 1024
/* Names kept at most: past it every kept name is forgotten and the count starts again. */
#define KEPT_MAX 65536

typedef char *(*cxa_demangle_fn)(const char *mangled, char *out, size_t *len, int *status);

/* One name met: @dem NULL when it stays as it was. */
struct kept {
	char *sym;
	char *dem;
};

static struct {
	const char *soname;
	bool tried;
	cxa_demangle_fn fn;
	struct ws_table kept; /* hash of the name (probed on past a collision) -> struct kept */
} dm = { .soname = "libstdc++.so.6", .kept = { .val_size = sizeof(struct kept) } };

static void forget_all(void)
{
	for (size_t i = 0; i < dm.kept.cap; i++) {
		struct kept *k = ws_table_at(&dm.kept, i);

		if (k) {
			free(k->sym);
			free(k->dem);
		}
	}
	ws_table_free(&dm.kept);
}

void ws_demangle_use(const char *soname)
{
	forget_all();
	dm.soname = soname;
	dm.tried = false;
	dm.fn = NULL;
}

static cxa_demangle_fn demangler(void)
{
	void *lib, *sym;

	if (dm.tried)
		return dm.fn;
	dm.tried = true;
	/* a library the process already links (libelf, libbpf) comes from the same places */
	lib = dm.soname ? dlopen(dm.soname, RTLD_LAZY | RTLD_LOCAL) : NULL;
	sym = lib ? dlsym(lib, "__cxa_demangle") : NULL;
	/* ISO C has no object-to-function pointer cast; copy the bits instead */
	if (sym)
		memcpy(&dm.fn, &sym, sizeof(dm.fn));
	/* kept open: code of it may run until the process ends */
	return dm.fn;
}

static bool is_hex(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return true;
}

/*
 * A legacy Rust name: its last path element is "h" and 16 hex digits ("17h<hash>E"), maybe
 * followed by a suffix LLVM added (".llvm.1234"). The length of the name without that suffix,
 * or 0. (Its elements may hold '.' themselves: "..", Rust's "::".)
 */
static size_t rust_legacy(const char *m)
{
	size_t n = strlen(m);

	if (strncmp(m, "_ZN", 3))
		return 0;
	for (size_t i = 3; i + 20 <= n; i++)
		if (!strncmp(m + i, "17h", 3) && is_hex(m + i + 3, 16) && m[i + 19] == 'E' &&
		    (m[i + 20] == 0 || m[i + 20] == '.'))
			return i + 20;
	return 0;
}

/* The character Rust's legacy escape @e (between '$'s, @n bytes) stands for, into @out: its
 * length, or 0 for an escape it does not know. */
static size_t rust_escape(const char *e, size_t n, char *out)
{
	static const struct {
		const char *esc;
		char c;
	} named[] = { { "SP", '@' }, { "BP", '*' }, { "RF", '&' }, { "LT", '<' },
		      { "GT", '>' }, { "LP", '(' }, { "RP", ')' }, { "C", ',' } };
	unsigned long cp;
	char hex[9];

	for (size_t i = 0; i < sizeof(named) / sizeof(named[0]); i++)
		if (strlen(named[i].esc) == n && !strncmp(e, named[i].esc, n)) {
			out[0] = named[i].c;
			return 1;
		}
	if (n < 2 || n > 7 || e[0] != 'u' || !is_hex(e + 1, n - 1))
		return 0;
	memcpy(hex, e + 1, n - 1);
	hex[n - 1] = 0;
	cp = strtoul(hex, NULL, 16);
	if (cp < 0x20 || cp == 0x7f || (cp >= 0xd800 && cp < 0xe000) || cp > 0x10ffff)
		return 0;
	if (cp < 0x80) {
		out[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		out[0] = (char)(0xc0 | cp >> 6);
		out[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		out[0] = (char)(0xe0 | cp >> 12);
		out[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		out[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	out[0] = (char)(0xf0 | cp >> 18);
	out[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
	out[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
	out[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

/*
 * What __cxa_demangle made of a legacy Rust name ("a::b::h0123456789abcdef") as Rust's own
 * demangler prints it: without the hash, its escapes decoded
 * ("_$LT$T$u20$as$u20$core..fmt..Debug$GT$" is "<T as core::fmt::Debug>"), unless one of them
 * is not Rust's. @d is rewritten in place (never longer).
 */
static void rust_tidy(char *d)
{
	char *h = NULL, *out, tmp[4];
	const char *p;
	bool start;
	size_t n;

	for (char *q = strstr(d, "::h"); q; q = strstr(q + 1, "::h"))
		if (is_hex(q + 3, 16) && q[19] == 0)
			h = q;
	if (!h)
		return;
	*h = 0; /* the hash */
	/* first check every escape, so a name is decoded whole or not at all */
	for (p = d; *p; p++) {
		if (*p != '$')
			continue;
		n = strcspn(p + 1, "$");
		if (!p[1 + n] || !rust_escape(p + 1, n, tmp))
			return;
		p += n + 1;
	}
	/* an element ("::" apart) may begin with "_$": the '_' only keeps it an identifier */
	for (p = d, out = d, start = true; *p;) {
		if (start && p[0] == '_' && p[1] == '$')
			p++;
		start = p[0] == ':' && p[1] == ':';
		if (start) {
			*out++ = *p++;
			*out++ = *p++;
		} else if (*p == '$') {
			/* every escape is longer than the text it stands for */
			n = strcspn(p + 1, "$");
			out += rust_escape(p + 1, n, out);
			p += n + 2;
		} else if (p[0] == '.' && p[1] == '.') {
			*out++ = ':';
			*out++ = ':';
			p += 2;
		} else {
			*out++ = *p++;
		}
	}
	*out = 0;
}

/* @m (a name without its version) demangled, malloc'ed; NULL when it is not a name we read. */
static char *demangle_name(const char *m)
{
	cxa_demangle_fn fn;
	int status = -1;
	char *d, *r = NULL;
	size_t rust;

	/* "_Z": the Itanium ABI. __cxa_demangle also reads bare type names ("i" is "int"):
	 * anything else is a C name and stays one. */
	if (strncmp(m, "_Z", 2) || strlen(m) > MANGLED_MAX || !(fn = demangler()))
		return NULL;
	/* Rust's demangler leaves LLVM's suffix out (and the C++ one does not read it) */
	rust = rust_legacy(m);
	if (rust && !(r = strndup(m, rust)))
		return NULL;
	d = fn(rust ? r : m, NULL, NULL, &status);
	free(r);
	if (!d || status != 0 || !*d) {
		free(d);
		return NULL;
	}
	if (rust)
		rust_tidy(d);
	return d;
}

/* @d and the version @ver, at most WS_DEMANGLE_MAX bytes (a cut name ends with "..."). */
static char *bounded(const char *d, const char *ver)
{
	size_t dn = strlen(d), vn = strlen(ver), room = WS_DEMANGLE_MAX - 1;
	char *out;

	if (vn > room / 2)
		vn = 0; /* a version that long is no version */
	if (dn + vn > room) {
		dn = room - vn - 3;
		while (dn && ((unsigned char)d[dn] & 0xc0) == 0x80)
			dn--; /* never half a character */
	}
	out = malloc(dn + 3 + vn + 1);
	if (!out)
		return NULL;
	memcpy(out, d, dn);
	out[dn] = 0;
	if (dn < strlen(d))
		strcat(out, "...");
	strncat(out, ver, vn);
	return out;
}

static struct kept *keep(const char *sym, uint64_t key)
{
	const char *at = strchr(sym, '@');
	size_t n = at ? (size_t)(at - sym) : strlen(sym);
	struct kept *k;
	char *base, *d;

	k = ws_table_put(&dm.kept, key, NULL);
	if (!k)
		return NULL;
	k->sym = strdup(sym);
	k->dem = NULL;
	base = strndup(sym, n);
	d = base ? demangle_name(base) : NULL;
	if (d)
		k->dem = bounded(d, at ? at : "");
	free(d);
	free(base);
	if (!k->sym) { /* out of memory: not kept */
		free(k->dem);
		ws_table_del(&dm.kept, k);
		return NULL;
	}
	return k;
}

const char *ws_demangle(const char *sym, char *buf, size_t len)
{
	struct kept *k = NULL;
	uint64_t hash, key;

	if (!sym || strncmp(sym, "_Z", 2) || !len)
		return sym;
	/* keys are the name's hash; names with one hash take consecutive keys */
	hash = ws_hash_bytes(sym, strlen(sym));
	for (key = hash;; key++) {
		k = ws_table_get(&dm.kept, key ? key : 1);
		if (!k || !strcmp(k->sym, sym))
			break;
	}
	if (!k && dm.kept.live >= KEPT_MAX) {
		forget_all();
		key = hash;
	}
	if (!k)
		k = keep(sym, key ? key : 1);
	if (!k || !k->dem)
		return sym;
	snprintf(buf, len, "%s", k->dem);
	return buf;
}
