// SPDX-License-Identifier: MIT
#include <dirent.h>
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "loader.h"
#include "access/trust.h"
#include "sched/sched.h"

/* The core's own sources: listed, configured and asked like plugins, never loaded from a file. */
static const struct ws_plugin *const core_sources[] = { &ws_sched_source };

/* Size of struct ws_plugin in ABI 3.0: a smaller descriptor is incomplete. */
#define WS_PLUGIN_SZ_3_0 sizeof(struct ws_plugin)
/* No descriptor of 3.x is near this: a larger sz is garbage, not a newer minor. */
#define WS_PLUGIN_SZ_MAX 4096
/* Every ABI has the descriptor's first members where 1.0 had them: enough to read its version. */
#define WS_PLUGIN_SZ_VERSION (offsetof(struct ws_plugin, abi_minor) + sizeof(uint16_t))

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
	if (p->sz < WS_PLUGIN_SZ_VERSION)
		return "descriptor is too small to say its ABI (incomplete)";
	if (p->abi_major < 2) {
		/* 1.x callbacks take no context: calling them through a newer table would crash */
		snprintf(
			buf, len,
			"built for plugin ABI %u.%u, this whyslow has ABI %u.%u; port it to %u.0 (docs/PLUGINS.md, \"Migrating from ABI 1.x\") and rebuild it against this SDK",
			p->abi_major, p->abi_minor, WS_ABI_MAJOR, WS_ABI_MINOR, WS_ABI_MAJOR);
		return buf;
	}
	if (p->abi_major == 2) {
		/* 2.x handed the scheduler model to a plugin: its host table has another layout */
		snprintf(
			buf, len,
			"built for plugin ABI %u.%u, this whyslow has ABI %u.%u; rebuild it against this SDK (docs/PLUGINS.md, \"Moving from ABI 2.x\": most plugins need no change)",
			p->abi_major, p->abi_minor, WS_ABI_MAJOR, WS_ABI_MINOR);
		return buf;
	}
	if (p->abi_major != WS_ABI_MAJOR) {
		snprintf(
			buf, len,
			"built for plugin ABI %u.%u, this whyslow has ABI %u.%u; rebuild it against this SDK",
			p->abi_major, p->abi_minor, WS_ABI_MAJOR, WS_ABI_MINOR);
		return buf;
	}
	if (p->sz < WS_PLUGIN_SZ_3_0)
		return "descriptor is smaller than ABI 3.0's (incomplete)";
	if (p->sz > WS_PLUGIN_SZ_MAX)
		return "descriptor says it is larger than any ABI 3.x one (corrupt)";
	return NULL;
}

/* Are the @n bytes at @b all zero? */
static bool all_zero(const void *b, size_t n)
{
	const unsigned char *c = b;

	for (size_t i = 0; i < n; i++)
		if (c[i])
			return false;
	return true;
}

/*
 * The descriptor @p, whose size and ABI are checked, copied into @out at this core's size. A
 * plugin of a newer minor loads when it sets nothing this core does not know: its members past
 * ours, and what it put in our reserved slots, are all zero (its appended callbacks NULL).
 */
static const char *descriptor_copy(const struct ws_plugin *p, struct ws_plugin *out, char *buf,
				   size_t len)
{
	memset(out, 0, sizeof(*out));
	memcpy(out, p, p->sz < sizeof(*out) ? p->sz : sizeof(*out));
	if (all_zero(out->reserved, sizeof(out->reserved)) &&
	    (p->sz <= sizeof(*out) ||
	     all_zero((const char *)p + sizeof(*out), p->sz - sizeof(*out))))
		return NULL;
	snprintf(
		buf, len,
		"built for plugin ABI %u.%u and uses members this whyslow (ABI %u.%u) does not know; upgrade whyslow",
		p->abi_major, p->abi_minor, WS_ABI_MAJOR, WS_ABI_MINOR);
	return buf;
}

/* What is wrong with the descriptor's contents, once copied: see docs/PLUGINS.md. */
static const char *descriptor_content_problem(const struct ws_plugin *p)
{
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

/*
 * A shared object dlopen() would map past the end of the file (a truncated
 * copy) makes the process die of SIGBUS when the loader touches it: check
 * that every part the loader maps lies inside the file, on the descriptor
 * that will be loaded.
 */
static const char *elf_problem(int fd)
{
	ElfW(Ehdr) eh;
	ElfW(Phdr) ph;
	struct stat st;
	uint64_t size;

	if (fstat(fd, &st))
		return "cannot stat it";
	size = st.st_size;
	if (pread(fd, &eh, sizeof(eh), 0) != (ssize_t)sizeof(eh) ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG))
		return "not an ELF file";
	if (eh.e_ident[EI_CLASS] != (sizeof(void *) == 8 ? ELFCLASS64 : ELFCLASS32) ||
	    eh.e_type != ET_DYN)
		return "not a shared object for this machine";
	if (eh.e_phentsize != sizeof(ph) || !eh.e_phnum ||
	    (uint64_t)eh.e_phoff + (uint64_t)eh.e_phnum * sizeof(ph) > size)
		return "truncated (program headers past the end of the file)";
	if ((uint64_t)eh.e_shoff + (uint64_t)eh.e_shnum * eh.e_shentsize > size)
		return "truncated (section headers past the end of the file)";
	for (unsigned int i = 0; i < eh.e_phnum; i++) {
		if (pread(fd, &ph, sizeof(ph), eh.e_phoff + i * sizeof(ph)) != (ssize_t)sizeof(ph))
			return "cannot read its program headers";
		if (ph.p_type == PT_LOAD && ((uint64_t)ph.p_offset + ph.p_filesz > size ||
					     ph.p_offset + ph.p_filesz < ph.p_offset))
			return "truncated (a loadable segment ends past the end of the file)";
	}
	return NULL;
}

int ws_plugin_load(const char *path, struct ws_loaded *out, char *err, size_t errlen)
{
	ws_plugin_entry_fn entry;
	const char *why;
	char tmp[256], proc[512];
	void *sym;
	int fd;

	memset(out, 0, sizeof(*out));
	out->fd = -1;
	/* checked and loaded through one descriptor: the name is never resolved twice */
	fd = ws_trusted_open(path, WS_TRUST_FILE, err, errlen);
	if (fd < 0)
		return fd == -ENOENT ? -ENOENT : -EPERM;
	why = elf_problem(fd);
	if (why) {
		snprintf(err, errlen, "%s: cannot load: %s", path, why);
		close(fd);
		return -ENOEXEC;
	}
	/*
	 * glibc knows a loaded object by every name it was opened with, for the
	 * life of the process: a /proc/self/fd/N used once must never name
	 * another file. Each load gets a descriptor number above all earlier ones.
	 */
	static int last_fd = 2, generation;
	int nfd = fcntl(fd, F_DUPFD_CLOEXEC, last_fd + 1);

	/*
	 * Past the descriptor limit (a long-lived process that loads plugins thousands of times:
	 * a fuzzer, reports of many recordings), numbers start again from the bottom under a new
	 * spelling of the path, /proc/self/./fd/N, /proc/self/././fd/N...: still never a name
	 * glibc has seen.
	 */
	if (nfd < 0 && (errno == EINVAL || errno == EMFILE) && last_fd > 3 && generation < 200) {
		generation++;
		last_fd = 2;
		nfd = fcntl(fd, F_DUPFD_CLOEXEC, last_fd + 1);
	}
	close(fd);
	if (nfd < 0) {
		snprintf(err, errlen, "%s: cannot load: %s", path, strerror(errno));
		return -errno;
	}
	fd = last_fd = nfd;
	{
		int n = snprintf(proc, sizeof(proc), "/proc/self/");

		for (int g = 0; g < generation; g++)
			n += snprintf(proc + n, sizeof(proc) - n, "./");
		snprintf(proc + n, sizeof(proc) - n, "fd/%d", fd);
	}
	out->dl = dlopen(proc, RTLD_NOW | RTLD_LOCAL);
	if (!out->dl) {
		snprintf(err, errlen, "%s: cannot load: %s", path, dlerror());
		close(fd);
		return -ENOEXEC;
	}
	out->fd = fd;
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
	if (!why)
		why = descriptor_copy(out->p, &out->desc, tmp, sizeof(tmp));
	if (!why) {
		out->p = &out->desc;
		why = descriptor_content_problem(out->p);
	}
	if (why) {
		snprintf(err, errlen, "%s: refused: %s", path, why);
		goto fail;
	}
	snprintf(out->path, sizeof(out->path), "%s", path);
	return 0;
fail:
	ws_plugin_unload(out);
	out->p = NULL;
	return -EINVAL;
}

void ws_plugin_unload(struct ws_loaded *l)
{
	if (l && l->dl)
		dlclose(l->dl);
	if (l && l->fd >= 0)
		close(l->fd);
	if (l) {
		l->dl = NULL;
		l->fd = -1;
	}
}

int ws_path_trusted(const char *path, char *err, size_t errlen)
{
	int fd = ws_trusted_open(path, WS_TRUST_FILE, err, errlen);

	if (fd < 0)
		return fd;
	close(fd);
	return 0;
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

static const struct ws_plugin *core_source(const char *name)
{
	for (size_t i = 0; i < sizeof(core_sources) / sizeof(core_sources[0]); i++)
		if (!strcmp(core_sources[i]->name, name))
			return core_sources[i];
	return NULL;
}

int ws_core_sources(void)
{
	return (int)(sizeof(core_sources) / sizeof(core_sources[0]));
}

const struct ws_plugin *ws_core_source_at(int i)
{
	return i >= 0 && i < ws_core_sources() ? core_sources[i] : NULL;
}

int ws_source_names(const char *dir, char ***names)
{
	int n = ws_plugin_scan(dir, names), k = 0;
	char **v;

	if (n < 0)
		return n;
	/* a file named like a core source (left by an older whyslow) is not the source */
	for (int i = 0; i < n; i++) {
		if (core_source((*names)[i]))
			free((*names)[i]);
		else
			(*names)[k++] = (*names)[i];
	}
	v = realloc(*names, (k + ws_core_sources()) * sizeof(*v));
	if (!v) {
		for (int i = 0; i < k; i++)
			free((*names)[i]);
		free(*names);
		*names = NULL;
		return -ENOMEM;
	}
	for (int i = 0; i < ws_core_sources(); i++) {
		v[k] = strdup(core_sources[i]->name);
		if (!v[k])
			break;
		k++;
	}
	qsort(v, k, sizeof(*v), cmp_str);
	*names = v;
	return k;
}

int ws_source_load(const char *dir, const char *name, struct ws_loaded *out, char *err,
		   size_t errlen)
{
	const struct ws_plugin *core = core_source(name);
	char path[512];

	if (!core) {
		snprintf(path, sizeof(path), "%s/%s.so", dir, name);
		return ws_plugin_load(path, out, err, errlen);
	}
	memset(out, 0, sizeof(*out));
	out->p = core;
	out->core = true;
	out->fd = -1;
	snprintf(out->path, sizeof(out->path), "whyslow's core (%s)", name);
	return 0;
}
