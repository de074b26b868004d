// SPDX-License-Identifier: MIT
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "loader.h"

/* Size of struct ws_plugin in ABI 1.0: a smaller descriptor is incomplete. */
#define WS_PLUGIN_SZ_1_0 (offsetof(struct ws_plugin, fini) + sizeof(void *))

static int valid_name(const char *s)
{
	if (!s || !*s || strlen(s) > 31)
		return 0;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '_'))
			return 0;
	return 1;
}

static const char *descriptor_problem(const struct ws_plugin *p, char *buf, size_t len)
{
	if (p->sz < WS_PLUGIN_SZ_1_0)
		return "descriptor is smaller than ABI 1.0's (incomplete)";
	if (p->abi_major != WS_ABI_MAJOR) {
		snprintf(buf, len,
			 "built for plugin ABI %u.%u, this whyslow has ABI %u.%u; rebuild it "
			 "against this SDK",
			 p->abi_major, p->abi_minor, WS_ABI_MAJOR, WS_ABI_MINOR);
		return buf;
	}
	if (p->abi_minor > WS_ABI_MINOR) {
		snprintf(buf, len,
			 "built for plugin ABI %u.%u, newer than this whyslow's %u.%u; upgrade "
			 "whyslow",
			 p->abi_major, p->abi_minor, WS_ABI_MAJOR, WS_ABI_MINOR);
		return buf;
	}
	if (!valid_name(p->name))
		return "descriptor has no valid name ([a-z0-9_]+)";
	if (!p->description || !*p->description)
		return "descriptor has no description";
	if (!p->version || !*p->version)
		return "descriptor has no version";
	if (p->kind_base < WS_KIND_RANGE || p->kind_base % WS_KIND_RANGE)
		return "descriptor's kind_base is not a multiple of 0x100 above the core's range";
	if (p->bpf_object && !p->decode)
		return "descriptor has a BPF object but no decode callback";
	return NULL;
}

int ws_plugin_load(const char *path, struct ws_loaded *out, char *err, size_t errlen)
{
	ws_plugin_entry_fn entry;
	const char *why;
	char tmp[256];
	void *sym;

	memset(out, 0, sizeof(*out));
	if (access(path, R_OK)) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -ENOENT;
	}
	if (ws_path_trusted(path, err, errlen))
		return -EPERM;
	out->dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!out->dl) {
		snprintf(err, errlen, "%s: cannot load: %s", path, dlerror());
		return -ENOEXEC;
	}
	sym = dlsym(out->dl, WS_PLUGIN_ENTRY_NAME);
	if (!sym) {
		snprintf(err, errlen, "%s: not a whyslow plugin (no %s symbol)", path,
			 WS_PLUGIN_ENTRY_NAME);
		goto fail;
	}
	/* ISO C has no object-to-function pointer cast; copy the bits instead */
	memcpy(&entry, &sym, sizeof(entry));
	out->p = entry();
	if (!out->p) {
		snprintf(err, errlen, "%s: the entry function returned no descriptor", path);
		goto fail;
	}
	why = descriptor_problem(out->p, tmp, sizeof(tmp));
	if (why) {
		snprintf(err, errlen, "%s: refused: %s", path, why);
		goto fail;
	}
	snprintf(out->path, sizeof(out->path), "%s", path);
	return 0;
fail:
	dlclose(out->dl);
	out->dl = NULL;
	out->p = NULL;
	return -EINVAL;
}

void ws_plugin_unload(struct ws_loaded *l)
{
	if (l && l->dl)
		dlclose(l->dl);
	if (l)
		l->dl = NULL;
}

int ws_path_trusted(const char *path, char *err, size_t errlen)
{
	char real[PATH_MAX], *slash;
	uid_t me = geteuid();

	if (!realpath(path, real)) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -errno;
	}
	for (;;) {
		struct stat st;

		if (stat(real[0] ? real : "/", &st)) {
			snprintf(err, errlen, "%s: %s", real, strerror(errno));
			return -errno;
		}
		if (st.st_uid != 0 && st.st_uid != me) {
			snprintf(err, errlen,
				 "%s: refused: %s is owned by uid %u, not root; chown root it or "
				 "use a root-owned directory",
				 path, real[0] ? real : "/", (unsigned)st.st_uid);
			return -EPERM;
		}
		if ((st.st_mode & (S_IWGRP | S_IWOTH)) &&
		    !(S_ISDIR(st.st_mode) && (st.st_mode & S_ISVTX))) {
			snprintf(err, errlen,
				 "%s: refused: %s is writable by group or others; run chmod go-w "
				 "on it",
				 path, real[0] ? real : "/");
			return -EPERM;
		}
		if (!real[0])
			return 0;
		slash = strrchr(real, '/');
		*slash = 0;
	}
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int ws_plugin_scan(const char *dir, char ***names)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char **v = NULL;
	int n = 0;

	if (!d)
		return -errno;
	while ((e = readdir(d))) {
		size_t len = strlen(e->d_name);
		char **nv;

		if (len < 4 || strcmp(e->d_name + len - 3, ".so"))
			continue;
		nv = realloc(v, (n + 1) * sizeof(*v));
		if (!nv)
			break;
		v = nv;
		v[n] = strndup(e->d_name, len - 3);
		if (v[n])
			n++;
	}
	closedir(d);
	if (n) /* qsort(NULL, 0, ...) is undefined */
		qsort(v, n, sizeof(*v), cmp_str);
	*names = v;
	return n;
}
