/* SPDX-License-Identifier: MIT */
/*
 * One fake host for the plugin unit tests: loads a built plugin as the core
 * does (dlopen + entry symbol), gives it a context and the host services a
 * test needs (log, claims, a name table, a settable pid filter), and runs its
 * init and fini. One plugin per test process.
 */
#ifndef WS_TEST_FAKE_HOST_H
#define WS_TEST_FAKE_HOST_H

#include <criterion/criterion.h>
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <whyslow/plugin.h>

#define FAKE_NAMES 16

struct fake_host {
	struct ws_plugin_ctx ctx; /* first: a host call's ctx is this struct */
	const struct ws_plugin *plugin;
	void *dl;
	unsigned int dropped;		  /* claim fields refused because the claim was full */
	bool (*pid_traced)(uint32_t pid); /* NULL: nothing is traced */
	struct {
		uint64_t key;
		char name[64];
	} names[FAKE_NAMES];
	size_t nnames;
	/* ws_host.data_symbol's answer (NULL: no address is in a named object), and its calls */
	int (*data_symbol)(uint32_t pid, uint64_t addr, char *buf, size_t len);
	unsigned int data_symbol_calls;
	/* ws_host.lock_name's answer (NULL: no word is a known lock), and its calls */
	int (*lock_name)(uint32_t pid, uint64_t addr, char *buf, size_t len);
	unsigned int lock_name_calls;
	/* the last ws_host.sock_io handed in (its strings copied), and how many */
	struct ws_sock_io last_io;
	char io_local[64], io_peer[64];
	unsigned int sock_ios;
};

static struct fake_host fake;

static inline void fake_log(struct ws_plugin_ctx *ctx, enum ws_log_level level, const char *fmt,
			    ...)
{
	va_list ap;

	fprintf(stderr, "[%d] %s: ", level, ctx->name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static inline int fake_config_u64(struct ws_plugin_ctx *ctx, const char *key, uint64_t *out)
{
	(void)ctx, (void)key, (void)out;
	return -ENOENT;
}

static inline int fake_config_bool(struct ws_plugin_ctx *ctx, const char *key, bool *out)
{
	(void)ctx, (void)key, (void)out;
	return -ENOENT;
}

static inline const char *fake_config_str(struct ws_plugin_ctx *ctx, const char *key)
{
	(void)ctx, (void)key;
	return NULL;
}

static inline bool fake_pid_traced(struct ws_plugin_ctx *ctx, uint32_t pid)
{
	(void)ctx;
	return fake.pid_traced && fake.pid_traced(pid);
}

static inline int fake_thread_comm(struct ws_plugin_ctx *ctx, uint32_t tid, char *buf, size_t len)
{
	(void)ctx, (void)tid, (void)buf, (void)len;
	return -ENOENT;
}

static inline struct ws_field *fake_field(struct ws_claim *c, const char *key,
					  enum ws_field_type type)
{
	struct ws_field *f;

	/* like the core: a full claim ignores further keys */
	if (c->nfields >= WS_CLAIM_FIELDS) {
		fake.dropped++;
		return NULL;
	}
	f = &c->fields[c->nfields++];
	memset(f, 0, sizeof(*f));
	snprintf(f->key, sizeof(f->key), "%s", key);
	f->type = type;
	return f;
}

static inline void fake_claim_u64(struct ws_claim *c, const char *key, uint64_t v)
{
	struct ws_field *f = fake_field(c, key, WS_FIELD_U64);

	if (f)
		f->u = v;
}

static inline void fake_claim_hex(struct ws_claim *c, const char *key, uint64_t v)
{
	struct ws_field *f = fake_field(c, key, WS_FIELD_HEX);

	if (f)
		f->u = v;
}

static inline void fake_claim_str(struct ws_claim *c, const char *key, const char *v)
{
	struct ws_field *f = fake_field(c, key, WS_FIELD_STR);

	if (f)
		snprintf(f->s, sizeof(f->s), "%s", v);
}

static inline int fake_name_set(struct ws_plugin_ctx *ctx, uint64_t key, const char *name)
{
	size_t i = 0;

	(void)ctx;
	while (i < fake.nnames && fake.names[i].key != key)
		i++;
	if (i == FAKE_NAMES)
		return -ENOMEM;
	if (i == fake.nnames)
		fake.nnames++;
	fake.names[i].key = key;
	snprintf(fake.names[i].name, sizeof(fake.names[i].name), "%s", name);
	return 0;
}

static inline int fake_name_get(struct ws_plugin_ctx *ctx, uint64_t key, char *buf, size_t len)
{
	(void)ctx;
	for (size_t i = 0; i < fake.nnames; i++) {
		if (fake.names[i].key == key) {
			snprintf(buf, len, "%s", fake.names[i].name);
			return 0;
		}
	}
	return -ENOENT;
}

static inline int fake_data_symbol(struct ws_plugin_ctx *ctx, uint32_t pid, uint64_t addr,
				   char *buf, size_t len)
{
	(void)ctx;
	fake.data_symbol_calls++;
	return fake.data_symbol ? fake.data_symbol(pid, addr, buf, len) : 0;
}

static inline int fake_lock_name(struct ws_plugin_ctx *ctx, uint32_t pid, uint64_t addr, char *buf,
				 size_t len)
{
	(void)ctx;
	fake.lock_name_calls++;
	return fake.lock_name ? fake.lock_name(pid, addr, buf, len) : 0;
}

static inline void fake_sock_io(struct ws_plugin_ctx *ctx, const struct ws_sock_io *io)
{
	(void)ctx;
	fake.last_io = *io;
	snprintf(fake.io_local, sizeof(fake.io_local), "%s", io->local ? io->local : "");
	snprintf(fake.io_peer, sizeof(fake.io_peer), "%s", io->peer ? io->peer : "");
	fake.sock_ios++;
}

static const struct ws_host fake_host_table = {
	.sz = sizeof(struct ws_host),
	.abi_major = WS_ABI_MAJOR,
	.abi_minor = WS_ABI_MINOR,
	.log = fake_log,
	.config_u64 = fake_config_u64,
	.config_bool = fake_config_bool,
	.config_str = fake_config_str,
	.pid_traced = fake_pid_traced,
	.thread_comm = fake_thread_comm,
	.claim_u64 = fake_claim_u64,
	.claim_hex = fake_claim_hex,
	.claim_str = fake_claim_str,
	.name_set = fake_name_set,
	.name_get = fake_name_get,
	.data_symbol = fake_data_symbol,
	.lock_name = fake_lock_name,
	.sock_io = fake_sock_io,
};

/*
 * dlopen PLUGIN_BUILD_DIR/@file, check its descriptor and run its init as a
 * replay (@replay) or a live session would. Returns the descriptor.
 */
static inline const struct ws_plugin *fake_load(const char *file, bool replay)
{
	char path[512];
	ws_plugin_entry_fn entry;
	void *sym;

	memset(&fake, 0, sizeof(fake));
	snprintf(path, sizeof(path), "%s/%s", PLUGIN_BUILD_DIR, file);
	fake.dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	cr_assert_not_null(fake.dl, "dlopen: %s", dlerror());
	sym = dlsym(fake.dl, WS_PLUGIN_ENTRY_NAME);
	cr_assert_not_null(sym, "no entry symbol");
	/* ISO C cannot cast an object pointer to a function pointer; copy it. */
	memcpy(&entry, &sym, sizeof(entry));
	fake.plugin = entry();
	cr_assert_not_null(fake.plugin);
	cr_assert_eq(fake.plugin->abi_major, WS_ABI_MAJOR);
	fake.ctx = (struct ws_plugin_ctx){ .sz = sizeof(fake.ctx),
					   .host = &fake_host_table,
					   .name = fake.plugin->name,
					   .replay = replay };
	if (fake.plugin->init)
		cr_assert_eq(fake.plugin->init(&fake.ctx), 0);
	return fake.plugin;
}

static inline void fake_unload(void)
{
	if (fake.plugin && fake.plugin->fini)
		fake.plugin->fini(&fake.ctx);
	if (fake.dl)
		dlclose(fake.dl);
	fake.plugin = NULL;
	fake.dl = NULL;
}

#endif
