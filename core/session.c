// SPDX-License-Identifier: MIT
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include <whyslow/table.h>

#include "log.h"
#include "chain.h"
#include "core_bpf.skel.h"
#include "graph.h"
#include "reorder.h"
#include "stackcap.h"
#include "stacks.h"
#include "session.h"
#include "resolution.h"
#include "util.h"

#define MAX_TGIDS 16384
#define MAX_LOST_KINDS 1024
#define EVICT_EVERY_NS 1000000000ULL
#define GONE_GRACE_NS 1000000000ULL
#define MISSES_EVERY_NS 250000000ULL

const struct ws_config_key ws_core_keys[] = {
	{ "format", WS_CFG_STRING, "text", 0, 0,
	  "output format: text, json or folded (flame graph stacks)" },
	{ "output", WS_CFG_STRING, NULL, 0, 0, "write the report to this file instead of stdout" },
	{ "min_block", WS_CFG_DURATION, "10ms", 0, 3600000000000ULL,
	  "report waits (time off CPU) at least this long" },
	{ "resolution", WS_CFG_DURATION, NULL, 0, 3600000000000ULL,
	  "off-CPU periods shorter than this are summed per thread in the kernel, not recorded one by one (default 0: record every switch; min_block/64 is the finest a chain shows)" },
	{ "top", WS_CFG_U64, "5", 1, 100000, "text output: how many of the longest chains" },
	{ "include_idle", WS_CFG_BOOL, "false", 0, 0,
	  "rank idle waits (nobody was working to end them) with the rest" },
	{ "sources", WS_CFG_STRING, NULL, 0, 0,
	  "comma-separated sources (default: all installed)" },
	{ "plugin_dir", WS_CFG_STRING, NULL, 0, 0, "directory the source plugins are loaded from" },
	{ "ring_size", WS_CFG_U64, "16M", 65536, 1ULL << 30, "BPF ring buffer bytes (power of 2)" },
	{ "max_processes", WS_CFG_U64, "16384", 1, 1ULL << 22,
	  "processes traced at once; new ones past it are not traced, and are counted (UNTRACED) "
	  "with the chains touching them marked incomplete" },
	{ "reorder_window", WS_CFG_DURATION, "20ms", 1000000, 10000000000ULL,
	  "how long records are held to restore timestamp order" },
	{ "max_window", WS_CFG_DURATION, "10s", 1000000000ULL, 3600000000000ULL,
	  "longest wait whose chain is kept whole; longer ones are marked incomplete" },
	{ "max_history", WS_CFG_U64, "128M", 1ULL << 20, 1ULL << 40,
	  "most memory for the history chains are walked over; past it the oldest goes first and "
	  "waits reaching back further are marked incomplete" },
	{ "duration", WS_CFG_DURATION, "0", 0, 0,
	  "stop tracing after this long (0: until Ctrl-C); run then ends the command" },
	{ "command", WS_CFG_STRING, NULL, 0, 0,
	  "with no run/attach on the command line: run this shell command" },
	{ "attach", WS_CFG_STRING, NULL, 0, 0,
	  "with no run/attach on the command line: attach to these PIDs (space-separated)" },
	{ "stacks", WS_CFG_BOOL, "true", 0, 0,
	  "capture the user and kernel stacks of waits of at least min_block (and of their wakers)" },
	{ "stack_user_bytes", WS_CFG_U64, "16K", 0, WS_STACK_USER_MAX,
	  "bytes of user stack copied for unwinding (deeper stacks are cut short)" },
	{ "stack_depth", WS_CFG_U64, "3", 0, 64,
	  "text output: user frames shown per link (and one kernel frame; 0: none)" },
	{ NULL },
};

/* A plugin's handle: what it sees, and which session and slot it is (for host calls). */
struct plugin_ctx {
	struct ws_plugin_ctx pub;
	struct ws_session *s;
	int index;
};

/* A name a plugin gave a key (ws_host.name_set). */
struct plugin_name {
	int plugin;
	uint64_t key;
	char name[64];
};

struct ws_session {
	struct ws_config *cfg;
	int verbose;
	struct ws_loaded plugins[WS_MAX_PLUGINS];
	struct plugin_ctx ctxs[WS_MAX_PLUGINS];
	int nplugins;
	bool inited;	   /* every plugin's init has run */
	int8_t owner[256]; /* kind >> 8 -> plugin index, -1 none */
	char sources[256];

	/* BPF */
	int ring_fd, tgids_fd, cpu_fd, lost_fd;
	struct core_bpf *core_skel;
	struct bpf_object *objs[WS_MAX_PLUGINS];
	struct bpf_link **links;
	size_t nlinks, links_cap;
	int *prog_fds;
	size_t nprogs, progs_cap;
	struct ring_buffer *rb;
	uint64_t recursion_misses, last_poll_ns;

	/* analysis */
	struct ws_clock clock;
	struct ws_graph *g;
	struct ws_reorder *ro;
	struct ws_report *rep;
	struct ws_chain chain;
	struct ws_stackcap *stackcap; /* raw captures -> frames, made at the first one */
	struct ws_stacks *stacks;
	uint64_t max_window;
	struct ws_table pids; /* traced thread groups (keys only) */
	struct gone_pid {
		uint32_t pid;
		uint64_t ts;
	} * gone; /* thread groups whose last thread exited, dropped a little later */
	size_t ngone, gone_cap;
	uint64_t records, bad_records, lost, last_evict, first_ts, last_ts, start_mono;
	uint64_t by_plugin[WS_MAX_PLUGINS]; /* records each source wrote */
	char by_source_json[512];
	int err;
	bool report_lost; /* the report's output failed: chains are no longer written */
	bool replay;	  /* fed from a recording: no sysfs, no BPF */
	ws_tap_fn tap;
	void *tap_ctx;
	ws_chain_sink_fn sink;
	void *sink_ctx;
	ws_ival_sink_fn ival_sink;
	void *ival_sink_ctx;
	struct plugin_name *names;
	size_t nnames, names_cap;
	uint64_t lost_total, end_mono;
	char *lost_json;
};

static const struct ws_host host;

/* ---- traced pid set ------------------------------------------------------------------ */

static bool pid_traced(struct ws_session *s, uint32_t pid)
{
	return ws_table_get(&s->pids, pid) != NULL;
}

static int pid_add(struct ws_session *s, uint32_t pid)
{
	return ws_table_put(&s->pids, pid, NULL) ? 0 : -ENOMEM;
}

/* A traced thread group lost its last thread at @ts (core record from the kernel filter). */
static void pid_gone(struct ws_session *s, uint32_t pid, uint64_t ts)
{
	if (!pid_traced(s, pid) ||
	    ws_grow((void **)&s->gone, &s->gone_cap, s->ngone + 1, sizeof(*s->gone)))
		return;
	s->gone[s->ngone++] = (struct gone_pid){ pid, ts };
}

/* A new traced thread group took @pid: an earlier exit of that pid no longer applies. */
static void pid_reborn(struct ws_session *s, uint32_t pid)
{
	size_t k = 0;

	for (size_t i = 0; i < s->ngone; i++)
		if (s->gone[i].pid != pid)
			s->gone[k++] = s->gone[i];
	s->ngone = k;
}

/*
 * Forget thread groups gone for a while: their last switch-outs have been
 * dispatched by then, and a later process reusing the pid is not one we trace.
 * Threads still open (their end was lost) are retired.
 */
static void pids_expire(struct ws_session *s, uint64_t now)
{
	size_t n = 0, k = 0;

	while (n < s->ngone && s->gone[n].ts + GONE_GRACE_NS < now)
		n++;
	if (!n)
		return;
	for (size_t i = 0; i < n; i++) {
		ws_table_del_key(&s->pids, s->gone[i].pid);
		ws_graph_retire_pid(s->g, s->gone[i].pid, s->gone[i].ts);
	}
	for (size_t i = n; i < s->ngone; i++)
		s->gone[k++] = s->gone[i];
	s->ngone = k;
}

/* ---- host table ------------------------------------------------------------------------ */

static struct ws_session *session_of(struct ws_plugin_ctx *ctx)
{
	return ((struct plugin_ctx *)ctx)->s;
}

static int index_of(struct ws_plugin_ctx *ctx)
{
	return ((struct plugin_ctx *)ctx)->index;
}

static void host_log(struct ws_plugin_ctx *ctx, enum ws_log_level level, const char *fmt, ...)
{
	va_list ap;

	if (level == WS_LOG_DEBUG && !session_of(ctx)->verbose)
		return;
	va_start(ap, fmt);
	ws_vlog_as(ctx->name, level, fmt, ap);
	va_end(ap);
}

static int host_config_u64(struct ws_plugin_ctx *ctx, const char *key, uint64_t *out)
{
	struct ws_session *s = session_of(ctx);

	return ws_config_u64(s->cfg, ctx->name, s->plugins[index_of(ctx)].p->config_keys, key, out);
}

static int host_config_bool(struct ws_plugin_ctx *ctx, const char *key, bool *out)
{
	struct ws_session *s = session_of(ctx);

	return ws_config_bool(s->cfg, ctx->name, s->plugins[index_of(ctx)].p->config_keys, key,
			      out);
}

static const char *host_config_str(struct ws_plugin_ctx *ctx, const char *key)
{
	struct ws_session *s = session_of(ctx);

	return ws_config_str(s->cfg, ctx->name, s->plugins[index_of(ctx)].p->config_keys, key);
}

static uint64_t host_resolution_ns(struct ws_plugin_ctx *ctx)
{
	return ws_resolution_ns(session_of(ctx)->cfg);
}

/* Change the read-only global @name in @obj's .rodata image before load. */
static int ws_bpf_set_rodata(struct bpf_object *obj, const char *name, const void *val, size_t size)
{
	const struct btf *btf = bpf_object__btf(obj);
	const struct btf_var_secinfo *vs;
	const struct btf_type *sec;
	struct bpf_map *map = NULL, *m;
	const void *image;
	size_t mapsz;
	int id, err;

	bpf_object__for_each_map(m, obj)
		if (bpf_map__name(m) && strstr(bpf_map__name(m), ".rodata"))
			map = m;
	id = btf && map ? btf__find_by_name_kind(btf, ".rodata", BTF_KIND_DATASEC) : -ENOENT;
	if (id < 0)
		return -ENOENT;
	sec = btf__type_by_id(btf, id);
	vs = btf_var_secinfos(sec);
	image = bpf_map__initial_value(map, &mapsz);
	for (int i = 0; image && i < btf_vlen(sec); i++, vs++) {
		const struct btf_type *var = btf__type_by_id(btf, vs->type);
		char *copy;

		if (strcmp(btf__name_by_offset(btf, var->name_off), name))
			continue;
		if (vs->size != size || vs->offset + size > mapsz)
			return -EINVAL;
		/* libbpf hands out the image read-only: change a copy and set it back */
		copy = malloc(mapsz);
		if (!copy)
			return -ENOMEM;
		memcpy(copy, image, mapsz);
		memcpy(copy + vs->offset, val, size);
		err = bpf_map__set_initial_value(map, copy, mapsz);
		free(copy);
		return err;
	}
	return -ENOENT;
}

static int host_set_rodata(struct ws_plugin_ctx *ctx, struct bpf_object *obj, const char *name,
			   const void *val, size_t size)
{
	(void)ctx;
	return ws_bpf_set_rodata(obj, name, val, size);
}

static uint64_t host_wall_ns(struct ws_plugin_ctx *ctx, uint64_t mono)
{
	return ws_clock_wall(&session_of(ctx)->clock, mono);
}

static void host_switch(struct ws_plugin_ctx *ctx, const struct ws_switch *sw)
{
	ws_graph_switch(session_of(ctx)->g, sw);
}

static void host_wake(struct ws_plugin_ctx *ctx, const struct ws_wake *wk)
{
	ws_graph_wake(session_of(ctx)->g, wk);
}

static void host_thread_event(struct ws_plugin_ctx *ctx, const struct ws_thread_event *ev)
{
	struct ws_session *s = session_of(ctx);

	/* the sched source reports only forks of traced threads */
	if (ev->type == WS_THREAD_NEW) {
		pid_reborn(s, ev->pid);
		pid_add(s, ev->pid);
	}
	ws_graph_thread_event(s->g, ev);
}

static bool host_pid_traced(struct ws_plugin_ctx *ctx, uint32_t pid)
{
	return pid_traced(session_of(ctx), pid);
}

static int host_thread_comm(struct ws_plugin_ctx *ctx, uint32_t tid, char *buf, size_t len)
{
	const char *c = ws_graph_comm(session_of(ctx)->g, tid);

	if (!strcmp(c, "?"))
		return -ENOENT;
	snprintf(buf, len, "%s", c);
	return 0;
}

static struct ws_field *claim_field(struct ws_claim *c, const char *key, enum ws_field_type t)
{
	struct ws_field *f;

	if (c->nfields >= WS_CLAIM_FIELDS)
		return NULL;
	f = &c->fields[c->nfields++];
	memset(f, 0, sizeof(*f));
	strncpy(f->key, key, sizeof(f->key) - 1);
	f->type = t;
	return f;
}

static void host_claim_u64(struct ws_claim *c, const char *key, uint64_t v)
{
	struct ws_field *f = claim_field(c, key, WS_FIELD_U64);

	if (f)
		f->u = v;
}

static void host_claim_hex(struct ws_claim *c, const char *key, uint64_t v)
{
	struct ws_field *f = claim_field(c, key, WS_FIELD_HEX);

	if (f)
		f->u = v;
}

static void host_claim_str(struct ws_claim *c, const char *key, const char *v)
{
	struct ws_field *f = claim_field(c, key, WS_FIELD_STR);

	if (f)
		strncpy(f->s, v ? v : "", sizeof(f->s) - 1);
}

/* ---- plugins' name tables ------------------------------------------------------------ */

static struct plugin_name *name_find(struct ws_session *s, int plugin, uint64_t key)
{
	for (size_t i = 0; i < s->nnames; i++)
		if (s->names[i].plugin == plugin && s->names[i].key == key)
			return &s->names[i];
	return NULL;
}

static int name_set(struct ws_session *s, int plugin, uint64_t key, const char *name)
{
	struct plugin_name *n = name_find(s, plugin, key);

	if (!n) {
		if (ws_grow((void **)&s->names, &s->names_cap, s->nnames + 1, sizeof(*s->names)))
			return -ENOMEM;
		n = &s->names[s->nnames++];
		n->plugin = plugin;
		n->key = key;
	}
	snprintf(n->name, sizeof(n->name), "%s", name);
	return 0;
}

static int host_name_set(struct ws_plugin_ctx *ctx, uint64_t key, const char *name)
{
	return name_set(session_of(ctx), index_of(ctx), key, name);
}

static int host_name_get(struct ws_plugin_ctx *ctx, uint64_t key, char *buf, size_t len)
{
	const struct plugin_name *n = name_find(session_of(ctx), index_of(ctx), key);

	if (!n)
		return -ENOENT;
	snprintf(buf, len, "%s", n->name);
	return 0;
}

int ws_session_set_name(struct ws_session *s, const char *plugin, uint64_t key, const char *name)
{
	for (int i = 0; i < s->nplugins; i++)
		if (!strcmp(s->plugins[i].p->name, plugin))
			return name_set(s, i, key, name);
	return 0; /* a source this session has not loaded: nobody asks */
}

size_t ws_session_names(struct ws_session *s, size_t from, struct ws_name *out, size_t max)
{
	size_t n = 0;

	for (size_t i = from; i < s->nnames && n < max; i++, n++) {
		out[n].plugin = s->plugins[s->names[i].plugin].p->name;
		out[n].key = s->names[i].key;
		out[n].name = s->names[i].name;
	}
	return n;
}

size_t ws_session_nnames(struct ws_session *s)
{
	return s->nnames;
}

static const struct ws_host host = {
	.sz = sizeof(struct ws_host),
	.abi_major = WS_ABI_MAJOR,
	.abi_minor = WS_ABI_MINOR,
	.log = host_log,
	.config_u64 = host_config_u64,
	.config_bool = host_config_bool,
	.config_str = host_config_str,
	.set_rodata = host_set_rodata,
	.wall_ns = host_wall_ns,
	.sched_switch = host_switch,
	.sched_wake = host_wake,
	.thread_event = host_thread_event,
	.pid_traced = host_pid_traced,
	.thread_comm = host_thread_comm,
	.claim_u64 = host_claim_u64,
	.claim_hex = host_claim_hex,
	.claim_str = host_claim_str,
	.name_set = host_name_set,
	.name_get = host_name_get,
	.resolution_ns = host_resolution_ns,
};

/*
 * Every plugin's init, once: before configure when tracing, before the first
 * record when replaying (whichever comes first).
 */
static int plugins_init(struct ws_session *s)
{
	if (s->inited)
		return 0;
	s->inited = true;
	for (int i = 0; i < s->nplugins; i++) {
		const struct ws_plugin *p = s->plugins[i].p;
		struct plugin_ctx *c = &s->ctxs[i];
		int err;

		c->pub = (struct ws_plugin_ctx){
			.sz = sizeof(c->pub),
			.host = &host,
			.name = p->name,
			.replay = s->replay,
		};
		c->s = s;
		c->index = i;
		if (p->init && (err = p->init(&c->pub)))
			return err; /* the plugin said why */
	}
	return 0;
}

/* ---- analysis callbacks ------------------------------------------------------------------ */

static int infer_all(void *ctx, const struct ws_wait *w, struct ws_claim *out)
{
	struct ws_session *s = ctx;
	struct ws_claim best, c;
	bool have = false;

	for (int i = 0; i < s->nplugins; i++) {
		const struct ws_plugin *p = s->plugins[i].p;

		if (!p->infer)
			continue;
		memset(&c, 0, sizeof(c));
		c.sz = sizeof(c);
		if (p->infer(&s->ctxs[i].pub, w, &c) <= 0 || c.strength <= WS_CLAIM_NONE)
			continue;
		c.owner = i;
		if (c.nfields > WS_CLAIM_FIELDS)
			c.nfields = WS_CLAIM_FIELDS;
		if (!have || c.strength > best.strength) {
			/* padding too: claims are compared as bytes */
			memcpy(&best, &c, sizeof(c));
			have = true;
		}
	}
	if (have)
		memcpy(out, &best, sizeof(best));
	return have;
}

static void on_wait(void *ctx, const struct ws_wait_done *d)
{
	struct ws_session *s = ctx;
	int err = ws_chain_build(s->g, d, &s->chain);

	if (!err && d->below_min_block) {
		ws_report_follow_chain(s->rep, &s->chain); /* the critical path's, not a report's */
		return;
	}
	if (!err && (!s->sink || s->sink(s->sink_ctx, &s->chain)) && !s->report_lost) {
		errno = 0;
		err = ws_report_chain(s->rep, &s->chain);
		/*
		 * The report's output failed (a full disk, a closed pipe): the
		 * command, a recording and the Perfetto export go on without it.
		 */
		if (err == -EIO) {
			ws_log(WS_LOG_ERROR,
			       "cannot write the report: %s; it is lost, tracing goes on (a recording or Perfetto export is still written)",
			       strerror(errno ? errno : EIO));
			s->report_lost = true;
			err = 0;
		}
	} else if (!err) {
		/* filtered out of the report: still part of the command's wall time */
		ws_report_follow_chain(s->rep, &s->chain);
	}
	if (err && !s->err)
		s->err = err;
}

bool ws_session_report_lost(const struct ws_session *s)
{
	return s->report_lost;
}

static bool graph_pid_traced(void *ctx, uint32_t pid)
{
	return pid_traced(ctx, pid);
}

static void on_ival(void *ctx, const struct ws_thread *t, const struct ws_ival *iv,
		    const struct ws_claim *claim)
{
	struct ws_session *s = ctx;

	ws_report_ival(s->rep, t, iv, claim);
	if (s->ival_sink)
		s->ival_sink(s->ival_sink_ctx, t, iv, claim);
}

static void describe(void *ctx, const struct ws_claim *c, char *buf, size_t len)
{
	struct ws_session *s = ctx;
	const struct ws_plugin *p = c->owner < s->nplugins ? s->plugins[c->owner].p : NULL;

	if (p && p->describe && p->describe(&s->ctxs[c->owner].pub, c, buf, len) > 0)
		return;
	snprintf(buf, len, "%s (%s)", c->kind, c->evidence);
}

static void open_wait(struct ws_session *s, const struct ws_rec_hdr *rec)
{
	const struct ws_rec_open_wait *w = (const void *)rec;
	char comm[sizeof(w->comm) + 1];

	if (rec->size < sizeof(*w) || w->since_ns > rec->ts) {
		s->bad_records++;
		return;
	}
	memcpy(comm, w->comm, sizeof(w->comm));
	comm[sizeof(w->comm)] = 0;
	ws_graph_open_wait(s->g, rec->tid, rec->pid, comm, w->since_ns, w->off_state);
}

/* The resource a claim is about, from its source; 0 when it names none. */
static int resource(void *ctx, const struct ws_claim *c, char *buf, size_t len)
{
	struct ws_session *s = ctx;
	const struct ws_plugin *p = c->owner < s->nplugins ? s->plugins[c->owner].p : NULL;

	if (!p || !p->resource)
		return 0;
	return p->resource(&s->ctxs[c->owner].pub, c, buf, len);
}

/* The root cause a chain ending in claim @c has, from its source; 0 when it names none. */
static int root_label(void *ctx, const struct ws_claim *c, const char *comm, char *buf, size_t len)
{
	struct ws_session *s = ctx;
	const struct ws_plugin *p = c->owner < s->nplugins ? s->plugins[c->owner].p : NULL;

	if (!p || !p->root_label)
		return 0;
	return p->root_label(&s->ctxs[c->owner].pub, c, comm, buf, len);
}

static void dispatch(void *ctx, const struct ws_rec_hdr *rec)
{
	struct ws_session *s = ctx;
	int8_t o = s->owner[rec->kind >> 8];

	s->records++;
	if (s->tap)
		s->tap(s->tap_ctx, rec);
	if (!s->first_ts)
		s->first_ts = rec->ts;
	s->last_ts = rec->ts;
	if (rec->kind == WS_KIND_LOST) {
		/* its window was noted when it arrived: see note_loss() */
	} else if (rec->kind == WS_KIND_PROC_EXIT) {
		pid_gone(s, rec->pid, rec->ts);
		if (s->stackcap)
			ws_stackcap_forget(s->stackcap, rec->pid);
	} else if (rec->kind == WS_KIND_OPEN_WAIT) {
		open_wait(s, rec);
	} else if (rec->kind == WS_KIND_STACK) {
		if (ws_stacks_add(s->stacks, rec) == -EINVAL)
			s->bad_records++;
	} else if (rec->kind == WS_KIND_STACK_RAW) {
		/* resolved on arrival (see stack_arrived()); one that reaches here is not used */
	} else if (o >= 0) {
		s->by_plugin[o]++;
		if (s->plugins[o].p->decode && s->plugins[o].p->decode(&s->ctxs[o].pub, rec) < 0)
			s->bad_records++;
	}
	if (rec->ts - s->last_evict > EVICT_EVERY_NS) {
		pids_expire(s, rec->ts);
		ws_graph_evict(s->g, rec->ts);
		/* twice the window: intervals reach on_ival (Perfetto) as they leave the history */
		if (rec->ts > 2 * s->max_window)
			ws_stacks_evict(s->stacks, rec->ts - 2 * s->max_window);
		s->last_evict = rec->ts;
	}
}

/*
 * A loss note is written only with the next record on its CPU, maybe after
 * waits it covers have ended; noting the window when the note arrives, not
 * when it is dispatched, lets the reorder window cover that delay.
 */
static void note_loss(struct ws_session *s, const struct ws_rec_hdr *rec)
{
	if (rec->kind == WS_KIND_LOST && rec->size >= sizeof(struct ws_rec_lost)) {
		const struct ws_rec_lost *l = (const void *)rec;

		ws_graph_loss(s->g, l->first_ts, rec->ts);
	}
}

void ws_session_feed(struct ws_session *s, const struct ws_rec_hdr *rec)
{
	if (rec->size < sizeof(*rec)) {
		s->bad_records++;
		return;
	}
	note_loss(s, rec);
	if (ws_reorder_push(s->ro, rec))
		s->err = -ENOMEM;
	/* stream: hold only the reorder window, whatever the recording's length */
	ws_reorder_flush(s->ro, 0);
}

/* ---- open: plugins and config ------------------------------------------------------------ */

static bool wanted(const char *sources, const char *name)
{
	size_t n = strlen(name);

	for (const char *p = sources; p && *p;) {
		const char *e = strchr(p, ',');
		size_t len = e ? (size_t)(e - p) : strlen(p);

		if (len == n && !strncmp(p, name, n))
			return true;
		p = e ? e + 1 : NULL;
	}
	return false;
}

static int check_sources(const char *sources, char **found, int nfound)
{
	for (const char *p = sources; p && *p;) {
		const char *e = strchr(p, ',');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		bool ok = false;

		for (int i = 0; i < nfound; i++)
			ok |= strlen(found[i]) == len && !strncmp(found[i], p, len);
		if (!ok) {
			char avail[256] = "";

			for (int i = 0; i < nfound; i++)
				snprintf(avail + strlen(avail), sizeof(avail) - strlen(avail),
					 "%s%s", i ? "," : "", found[i]);
			ws_log(WS_LOG_ERROR, "unknown source '%.*s' (available: %s)", (int)len, p,
			       avail);
			return -EINVAL;
		}
		p = e ? e + 1 : NULL;
	}
	return 0;
}

static int check_config(struct ws_session *s, char **found, int nfound)
{
	const char *secs[64];
	size_t n = ws_config_sections(s->cfg, secs, ARRAY_SIZE(secs));
	char err[512];

	if (ws_config_check_section(s->cfg, "core", ws_core_keys, err, sizeof(err)))
		goto fail;
	/* a string key with a closed set of values: "xml" must not mean text */
	const char *fmt = ws_config_get(s->cfg, "core", "format");

	if (fmt && strcmp(fmt, "text") && strcmp(fmt, "json") && strcmp(fmt, "folded")) {
		snprintf(err, sizeof(err), "%s: [core] format: '%s' is not text, json or folded",
			 s->cfg->path ? s->cfg->path : "command line", fmt);
		goto fail;
	}
	for (size_t i = 0; i < n; i++) {
		bool known = !strcmp(secs[i], "core");

		for (int k = 0; k < nfound; k++)
			known |= !strcmp(secs[i], found[k]);
		if (!known) {
			snprintf(err, sizeof(err),
				 "%s:%d: unknown section [%s]; sections are [core] and one per "
				 "installed source",
				 s->cfg->path ? s->cfg->path : "config",
				 ws_config_section_line(s->cfg, secs[i]), secs[i]);
			goto fail;
		}
	}
	return 0;
fail:
	ws_log(WS_LOG_ERROR, "%s", err);
	return -EINVAL;
}

static int enabled_in_config(struct ws_session *s, const char *name, bool *on)
{
	const char *v = ws_config_get(s->cfg, name, "enabled");
	int b = 1;

	if (v && ws_parse_bool(v, &b)) {
		ws_log(WS_LOG_ERROR, "%s: [%s] enabled: '%s' is not yes or no",
		       s->cfg->path ? s->cfg->path : "config", name, v);
		return -EINVAL;
	}
	*on = b;
	return 0;
}

int ws_session_open(struct ws_session **out, const struct ws_session_opts *o, struct ws_config *cfg)
{
	struct ws_session *s = calloc(1, sizeof(*s));
	char **found = NULL, path[512], err[768];
	int nfound, rc = 0;

	if (!s)
		return -ENOMEM;
	s->cfg = cfg;
	s->verbose = o->verbose;
	s->ring_fd = s->tgids_fd = s->cpu_fd = s->lost_fd = -1;
	memset(s->owner, -1, sizeof(s->owner));
	ws_table_init(&s->pids, 0);
	*out = s;

	nfound = ws_plugin_scan(o->plugin_dir, &found);
	if (nfound < 0) {
		ws_log(WS_LOG_ERROR, "cannot read plugin directory %s: %s; set --plugin-dir",
		       o->plugin_dir, strerror(-nfound));
		return nfound;
	}
	if (nfound == 0) {
		ws_log(WS_LOG_ERROR, "no plugins (*.so) in %s; set --plugin-dir", o->plugin_dir);
		rc = -ENOENT;
		goto out;
	}
	if ((rc = check_sources(o->sources, found, nfound)) ||
	    (rc = check_config(s, found, nfound)))
		goto out;
	for (int i = 0; i < nfound; i++) {
		bool on;

		if ((rc = enabled_in_config(s, found[i], &on)))
			goto out;
		if (o->sources ? !wanted(o->sources, found[i]) : !on)
			continue;
		if (s->nplugins == WS_MAX_PLUGINS) {
			ws_log(WS_LOG_ERROR, "more than %d sources enabled", WS_MAX_PLUGINS);
			rc = -E2BIG;
			goto out;
		}
		snprintf(path, sizeof(path), "%s/%s.so", o->plugin_dir, found[i]);
		struct ws_loaded *l = &s->plugins[s->nplugins];

		rc = ws_plugin_load(path, l, err, sizeof(err));
		if (rc) {
			ws_log(WS_LOG_ERROR, "%s", err);
			goto out;
		}
		if (strcmp(l->p->name, found[i])) {
			ws_log(WS_LOG_ERROR,
			       "%s: refused: it calls itself '%s'; the file must be named %s.so",
			       path, l->p->name, l->p->name);
			ws_plugin_unload(l);
			rc = -EINVAL;
			goto out;
		}
		if (s->owner[l->p->kind_base >> 8] >= 0) {
			ws_log(WS_LOG_ERROR,
			       "%s: refused: record kinds 0x%x.. already belong to %s", path,
			       l->p->kind_base, s->plugins[s->owner[l->p->kind_base >> 8]].p->name);
			ws_plugin_unload(l);
			rc = -EEXIST;
			goto out;
		}
		/* "enabled" is every source's key, checked above */
		if ((rc = ws_config_check_section_but(cfg, found[i], l->p->config_keys, "enabled",
						      err, sizeof(err)))) {
			ws_log(WS_LOG_ERROR, "%s", err);
			ws_plugin_unload(l);
			goto out;
		}
		s->owner[l->p->kind_base >> 8] = s->nplugins;
		snprintf(s->sources + strlen(s->sources), sizeof(s->sources) - strlen(s->sources),
			 "%s%s", s->nplugins ? "," : "", l->p->name);
		s->nplugins++;
	}
	if (!s->nplugins) {
		ws_log(WS_LOG_ERROR, "every source is disabled; enable one with --sources");
		rc = -ENOENT;
	}
out:
	for (int i = 0; i < nfound; i++)
		free(found[i]);
	free(found);
	return rc;
}

const char *ws_session_sources(struct ws_session *s)
{
	return s->sources;
}

/* ---- BPF ------------------------------------------------------------------------------- */

/*
 * libbpf's messages: with -v they go to stderr as they come; without, the
 * last lines are kept so a failure can be explained in one line.
 */
#define LOG_LINES 128
static struct {
	int owner; /* which object's load logged it (objects load in parallel) */
	char text[200];
} log_lines[LOG_LINES];
static unsigned int log_next;
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static __thread int log_owner = -1;
/* libbpf has one print callback per process: the verbosity of the session that set it */
static int libbpf_verbose;

static void log_keep(const char *text)
{
	pthread_mutex_lock(&log_lock);
	while (*text) {
		size_t n = strcspn(text, "\n");

		if (n) {
			log_lines[log_next % LOG_LINES].owner = log_owner;
			snprintf(log_lines[log_next % LOG_LINES].text, sizeof(log_lines[0].text),
				 "%.*s", (int)n, text);
			log_next++;
		}
		text += n + (text[n] == '\n');
	}
	pthread_mutex_unlock(&log_lock);
}

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	char buf[8192];

	if (level == LIBBPF_DEBUG && libbpf_verbose < 2)
		return 0;
	if (libbpf_verbose)
		return vfprintf(stderr, fmt, ap);
	if (level != LIBBPF_WARN)
		return 0;
	vsnprintf(buf, sizeof(buf), fmt, ap);
	log_keep(buf);
	return 0;
}

/* The most telling line libbpf logged: the verifier's complaint if there is one. */
static const char *libbpf_reason(char *buf, size_t len, int err, int owner)
{
	const char *pick = NULL;
	bool in_log = false;

	for (unsigned int i = log_next > LOG_LINES ? log_next - LOG_LINES : 0; i < log_next; i++) {
		const char *l = log_lines[i % LOG_LINES].text;

		if (log_lines[i % LOG_LINES].owner != owner)
			continue;

		if (strstr(l, "-- BEGIN PROG LOAD LOG --")) {
			in_log = true;
			continue;
		}
		if (strstr(l, "-- END PROG LOAD LOG --")) {
			in_log = false;
			continue;
		}
		/* the verifier ends with statistics; its complaint is the line before them */
		if (in_log && (!strncmp(l, "processed ", 10) || strstr(l, "verification time") ||
			       strstr(l, "stack depth") || !strncmp(l, "Validating", 10)))
			continue;
		if (in_log || !pick)
			pick = l;
	}
	if (pick && err != -ENOENT) {
		snprintf(buf, len, "%s", pick);
		return buf;
	}
	libbpf_strerror(err, buf, len);
	return buf;
}

static int create_maps(struct ws_session *s, uint64_t ring_size, uint64_t max_procs)
{
	LIBBPF_OPTS(bpf_map_create_opts, none);

	s->ring_fd = bpf_map_create(BPF_MAP_TYPE_RINGBUF, "ws_ring", 0, 0, ring_size, &none);
	s->tgids_fd = bpf_map_create(BPF_MAP_TYPE_HASH, "ws_tgids", 4, 1, max_procs, &none);
	s->cpu_fd = bpf_map_create(BPF_MAP_TYPE_PERCPU_ARRAY, "ws_cpu", 4,
				   sizeof(struct ws_cpu_state), 1, &none);
	s->lost_fd =
		bpf_map_create(BPF_MAP_TYPE_PERCPU_HASH, "ws_lost", 4, 8, MAX_LOST_KINDS, &none);
	if (s->ring_fd < 0 || s->tgids_fd < 0 || s->cpu_fd < 0 || s->lost_fd < 0) {
		int err = -errno;

		ws_log(WS_LOG_ERROR, "cannot create BPF maps: %s", strerror(errno));
		return err;
	}
	return 0;
}

/* Point the object's placeholder maps at the session's. */
static int share_maps(struct ws_session *s, struct bpf_object *obj)
{
	const struct {
		const char *name;
		int fd;
	} shared[] = { { "ws_ring", s->ring_fd },
		       { "ws_tgids", s->tgids_fd },
		       { "ws_cpu", s->cpu_fd },
		       { "ws_lost", s->lost_fd } };

	for (size_t i = 0; i < ARRAY_SIZE(shared); i++) {
		struct bpf_map *m = bpf_object__find_map_by_name(obj, shared[i].name);
		int err;

		if (m && (err = bpf_map__reuse_fd(m, shared[i].fd)))
			return err;
	}
	return 0;
}

/* Skip BTF tracepoints this kernel does not have (e.g. x86 vectors elsewhere). */
static void skip_missing_tracepoints(struct ws_session *s, struct bpf_object *obj,
				     const struct btf *vmlinux)
{
	struct bpf_program *p;

	bpf_object__for_each_program(p, obj) {
		const char *sec = bpf_program__section_name(p);
		char name[128];

		if (!vmlinux || strncmp(sec, "tp_btf/", 7))
			continue;
		snprintf(name, sizeof(name), "btf_trace_%s", sec + 7);
		if (btf__find_by_name_kind(vmlinux, name, BTF_KIND_TYPEDEF) < 0) {
			bpf_program__set_autoload(p, false);
			if (s->verbose)
				ws_log(WS_LOG_ERROR, "%s: kernel has no tracepoint %s; skipped",
				       bpf_object__name(obj), sec + 7);
		}
	}
}

static int attach_object(struct ws_session *s, struct bpf_object *obj, const char *who)
{
	struct bpf_program *p;

	bpf_object__for_each_program(p, obj) {
		struct bpf_link *l;

		if (!bpf_program__autoload(p))
			continue;
		l = bpf_program__attach(p);
		if (!l) {
			int err = -errno;

			ws_log(WS_LOG_ERROR, "%s: cannot attach %s: %s", who,
			       bpf_program__section_name(p), strerror(errno));
			return err;
		}
		if (ws_grow((void **)&s->links, &s->links_cap, s->nlinks + 1, sizeof(*s->links)) ||
		    ws_grow((void **)&s->prog_fds, &s->progs_cap, s->nprogs + 1, sizeof(int))) {
			bpf_link__destroy(l);
			return -ENOMEM;
		}
		s->links[s->nlinks++] = l;
		s->prog_fds[s->nprogs++] = bpf_program__fd(p);
	}
	return 0;
}

/*
 * Objects that capture stacks (<whyslow/stack.bpf.h>) learn the threshold from the core: the
 * report's min_block, so no wait too short to be reported costs a capture (0: stacks off).
 */
static void stack_rodata(struct ws_session *s, struct bpf_object *obj)
{
	uint64_t min_ns = 0, bytes = 0;
	bool on = true;
	__u32 b32;

	ws_config_bool(s->cfg, "core", ws_core_keys, "stacks", &on);
	ws_config_u64(s->cfg, "core", ws_core_keys, "min_block", &min_ns);
	ws_config_u64(s->cfg, "core", ws_core_keys, "stack_user_bytes", &bytes);
	if (!on)
		min_ns = 0;
	else if (!min_ns)
		min_ns = 1; /* 0 means off in BPF: every wait is at least 1ns */
	b32 = bytes;
	ws_bpf_set_rodata(obj, "ws_stack_min_ns", &min_ns, sizeof(min_ns));
	ws_bpf_set_rodata(obj, "ws_stack_user_bytes", &b32, sizeof(b32));
}

/* Open a plugin's object and get it ready to load: shared maps, programs, its configure. */
static int prepare_plugin_object(struct ws_session *s, int i, const struct btf *vmlinux)
{
	const struct ws_plugin *p = s->plugins[i].p;
	LIBBPF_OPTS(bpf_object_open_opts, oo, .object_name = p->name);
	const void *bytes;
	size_t size = 0;
	int err;

	if (!p->bpf_object)
		return 0;
	bytes = p->bpf_object(&size);
	if (!bytes || !size) {
		ws_log(WS_LOG_ERROR, "%s: the plugin returned no BPF object", s->plugins[i].path);
		return -EINVAL;
	}
	s->objs[i] = bpf_object__open_mem(bytes, size, &oo);
	if (!s->objs[i]) {
		char why[256];

		err = -errno;
		libbpf_strerror(err, why, sizeof(why));
		ws_log(WS_LOG_ERROR, "%s: its BPF object is not valid: %s", s->plugins[i].path,
		       why);
		return err;
	}
	if ((err = share_maps(s, s->objs[i]))) {
		ws_log(WS_LOG_ERROR, "%s: cannot share the ring buffer with it: %s", p->name,
		       strerror(-err));
		return err;
	}
	skip_missing_tracepoints(s, s->objs[i], vmlinux);
	stack_rodata(s, s->objs[i]);
	if (p->configure && (err = p->configure(&s->ctxs[i].pub, s->objs[i])))
		return err; /* the plugin said why */
	return 0;
}

struct load_job {
	struct bpf_object *obj;
	int owner, err;
	pthread_t thread;
	bool started;
};

static void *load_thread(void *arg)
{
	struct load_job *j = arg;

	log_owner = j->owner;
	j->err = bpf_object__load(j->obj);
	return NULL;
}

/*
 * Load every object at once: each load parses the kernel's BTF for its CO-RE
 * relocations, which is most of whyslow's start-up; in parallel it costs one
 * parse per CPU rather than one per object. Index WS_MAX_PLUGINS is the core.
 */
static int load_all(struct ws_session *s)
{
	struct load_job jobs[WS_MAX_PLUGINS + 1] = { 0 };
	int err = 0;

	for (int i = 0; i <= s->nplugins; i++) {
		struct load_job *j = &jobs[i];

		j->owner = i;
		j->obj = i == s->nplugins ? s->core_skel->obj : s->objs[i];
		if (!j->obj)
			continue;
		j->started = pthread_create(&j->thread, NULL, load_thread, j) == 0;
		if (!j->started)
			load_thread(j);
	}
	for (int i = 0; i <= s->nplugins; i++) {
		struct load_job *j = &jobs[i];
		char why[256];

		if (j->started)
			pthread_join(j->thread, NULL);
		if (!j->obj || !j->err || err)
			continue;
		err = j->err;
		ws_log(WS_LOG_ERROR,
		       "%s: the kernel refused its BPF programs: %s (-v shows the full log)",
		       i == s->nplugins ? "core" : s->plugins[i].p->name,
		       libbpf_reason(why, sizeof(why), err, i));
	}
	return err;
}

/*
 * A raw stack capture is unwound and named now, while its process lives; only the resolved
 * frames go on (to the report and to a recording), so nothing later needs the traced binaries.
 */
static int stack_arrived(struct ws_session *s, const struct ws_rec_hdr *h)
{
	struct ws_rec_hdr *res = NULL;
	int err;

	if (!s->stackcap && ws_stackcap_new(&s->stackcap))
		return 0; /* no stacks, the trace goes on */
	err = ws_stackcap_resolve(s->stackcap, h, &res);
	if (err == -EINVAL)
		s->bad_records++;
	if (err)
		return 0;
	err = ws_reorder_push(s->ro, res);
	free(res);
	return err ? -ENOMEM : 0;
}

static int on_ring_record(void *ctx, void *data, size_t size)
{
	struct ws_session *s = ctx;
	const struct ws_rec_hdr *h = data;

	if (size < sizeof(*h) || h->size > size || h->size < sizeof(*h)) {
		s->bad_records++;
		return 0;
	}
	note_loss(s, h);
	if (h->kind == WS_KIND_STACK_RAW)
		return stack_arrived(s, h);
	if (ws_reorder_push(s->ro, h))
		return -ENOMEM;
	return 0;
}

int ws_session_attach(struct ws_session *s)
{
	uint64_t ring_size = 16 << 20, max_procs = MAX_TGIDS;
	struct btf *vmlinux;
	int err;

	libbpf_verbose = s->verbose;
	libbpf_set_print(libbpf_print);
	ws_config_u64(s->cfg, "core", ws_core_keys, "ring_size", &ring_size);
	if (ring_size & (ring_size - 1)) {
		ws_log(WS_LOG_ERROR, "ring_size %" PRIu64 " is not a power of 2 (e.g. 16M)",
		       ring_size);
		return -EINVAL;
	}
	ws_config_u64(s->cfg, "core", ws_core_keys, "max_processes", &max_procs);
	if ((err = plugins_init(s)) || (err = create_maps(s, ring_size, max_procs)))
		return err;
	/* targets named before the maps existed */
	for (size_t i = 0; i < s->pids.cap; i++) {
		__u32 pid =
			ws_table_at(&s->pids, i) ? ws_table_key_of(ws_table_at(&s->pids, i)) : 0;
		__u8 one = 1;

		if (pid && bpf_map_update_elem(s->tgids_fd, &pid, &one, BPF_ANY)) {
			err = -errno;
			if (err == -E2BIG)
				ws_log(WS_LOG_ERROR,
				       "more processes named than max_processes (%" PRIu64
				       ") allows; raise [core] max_processes",
				       max_procs);
			return err;
		}
	}
	vmlinux = btf__load_vmlinux_btf();
	if (!vmlinux) {
		err = -errno;
		ws_log(WS_LOG_ERROR,
		       "this kernel has no BTF (/sys/kernel/btf/vmlinux): whyslow needs Linux >= 5.8 built with CONFIG_DEBUG_INFO_BTF");
		return err;
	}
	s->core_skel = core_bpf__open();
	err = s->core_skel ? share_maps(s, s->core_skel->obj) : -errno;
	if (err)
		ws_log(WS_LOG_ERROR, "cannot open the core BPF object: %s", strerror(-err));
	else
		skip_missing_tracepoints(s, s->core_skel->obj, vmlinux);
	for (int i = 0; !err && i < s->nplugins; i++)
		err = prepare_plugin_object(s, i, vmlinux);
	btf__free(vmlinux);
	log_next = 0;
	if (!err)
		err = load_all(s);
	/* the core first: records carry its interrupt context from the start */
	if (!err)
		err = attach_object(s, s->core_skel->obj, "core");
	for (int i = 0; !err && i < s->nplugins; i++)
		if (s->objs[i])
			err = attach_object(s, s->objs[i], s->plugins[i].p->name);
	if (err)
		return err;
	s->rb = ring_buffer__new(s->ring_fd, on_ring_record, s, NULL);
	if (!s->rb) {
		err = -errno;
		ws_log(WS_LOG_ERROR, "cannot read the ring buffer: %s", strerror(errno));
		return err;
	}
	return 0;
}

int ws_session_trace_pid(struct ws_session *s, uint32_t pid)
{
	__u8 one = 1;

	if (s->tgids_fd >= 0 && bpf_map_update_elem(s->tgids_fd, &pid, &one, BPF_ANY))
		return -errno;
	return pid_add(s, pid);
}

void ws_session_untrace_pid(struct ws_session *s, uint32_t pid)
{
	if (s->tgids_fd >= 0)
		bpf_map_delete_elem(s->tgids_fd, &pid);
}

bool ws_session_any_traced(struct ws_session *s)
{
	__u32 key;

	return s->tgids_fd >= 0 && bpf_map_get_next_key(s->tgids_fd, NULL, &key) == 0;
}

/* ---- running ------------------------------------------------------------------------------ */

int ws_session_start(struct ws_session *s, FILE *out)
{
	const char *fmt = ws_config_str(s->cfg, "core", ws_core_keys, "format");
	/* every one of these keys has its default in ws_core_keys; that is the only copy */
	uint64_t min_block = 0, window = 0, max_window = 0, max_history = 0, top = 0;
	struct ws_graph_ops ops = {
		.infer = infer_all,
		.on_wait = on_wait,
		.pid_traced = graph_pid_traced,
		.on_ival = on_ival,
		.resource = resource,
		.root_label = root_label,
		.ctx = s,
	};
	struct ws_report_opts ro = {
		.out = out,
		.clock = &s->clock,
		.describe = describe,
		.describe_ctx = s,
	};

	ws_config_u64(s->cfg, "core", ws_core_keys, "min_block", &min_block);
	ws_config_u64(s->cfg, "core", ws_core_keys, "reorder_window", &window);
	ws_config_u64(s->cfg, "core", ws_core_keys, "max_window", &max_window);
	ws_config_u64(s->cfg, "core", ws_core_keys, "max_history", &max_history);
	ws_config_u64(s->cfg, "core", ws_core_keys, "top", &top);
	int err = plugins_init(s);

	if (err)
		return err;
	ro.format = !fmt || !strcmp(fmt, "text") ? WS_FORMAT_TEXT
		    : !strcmp(fmt, "folded")	 ? WS_FORMAT_FOLDED
						 : WS_FORMAT_JSON;
	ro.top = top;
	ro.min_block_ns = min_block;
	ws_config_bool(s->cfg, "core", ws_core_keys, "include_idle", &ro.include_idle);
	if (!s->replay)
		ws_clock_anchor(&s->clock);
	s->start_mono = ws_clock_mono_now();
	s->last_poll_ns = s->start_mono;
	s->g = ws_graph_new(&ops, min_block, max_window, max_history);
	s->ro = ws_reorder_new(window, dispatch, s);
	s->rep = s->g ? ws_report_new(&ro, s->g) : NULL;
	s->stacks = ws_stacks_new();
	s->max_window = max_window;
	if (!s->g || !s->ro || !s->rep || !s->stacks)
		return -ENOMEM;
	ws_config_u64(s->cfg, "core", ws_core_keys, "stack_depth", &top);
	ws_report_set_stacks(s->rep, s->stacks, top);
	return 0;
}

static uint64_t recursion_misses(struct ws_session *s)
{
	uint64_t total = 0;

	for (size_t i = 0; i < s->nprogs; i++) {
		struct bpf_prog_info info;
		__u32 len = sizeof(info);

		memset(&info, 0, sizeof(info));
		if (bpf_obj_get_info_by_fd(s->prog_fds[i], &info, &len) == 0)
			total += info.recursion_misses;
	}
	return total;
}

/*
 * Losses a CPU has not reported yet (it writes the note with its next
 * record): treat them as lasting until now, so waits about to be reported
 * are not called complete while a note is still on its way.
 */
static void note_pending_losses(struct ws_session *s, uint64_t now)
{
	int ncpu = libbpf_num_possible_cpus();
	struct ws_cpu_state *st;
	__u32 zero = 0;

	if (s->cpu_fd < 0 || ncpu <= 0)
		return;
	st = calloc(ncpu, sizeof(*st));
	if (st && bpf_map_lookup_elem(s->cpu_fd, &zero, st) == 0) {
		for (int c = 0; c < ncpu; c++)
			if (st[c].lost_pending)
				ws_graph_loss(s->g, st[c].lost_first_ts, now);
	}
	free(st);
}

/* Maps of the traced processes, so stacks of one that exits before they are read still unwind. */
static void stack_snapshots(struct ws_session *s, uint64_t now)
{
	bool on = true;

	if (!s->stackcap) {
		ws_config_bool(s->cfg, "core", ws_core_keys, "stacks", &on);
		if (!on || ws_stackcap_new(&s->stackcap))
			return;
	}
	for (size_t i = 0; i < s->pids.cap; i++)
		if (ws_table_at(&s->pids, i))
			ws_stackcap_snapshot(s->stackcap, ws_table_key_of(ws_table_at(&s->pids, i)),
					     now);
}

int ws_session_poll(struct ws_session *s, int timeout_ms)
{
	uint64_t now, misses;
	int n;

	n = ring_buffer__poll(s->rb, timeout_ms);
	if (n >= 0)
		n = ring_buffer__consume(s->rb);
	if (n < 0 && n != -EINTR)
		return n;
	now = ws_clock_mono_now();
	/*
	 * Reading every program's counter is ~40 syscalls: at most every MISSES_EVERY_NS, not on
	 * every poll (a busy ring wakes the reader dozens of times a second). If the kernel
	 * skipped programs, every wait across that interval is suspect.
	 */
	if (now - s->last_poll_ns < MISSES_EVERY_NS)
		goto flush;
	misses = recursion_misses(s);
	if (misses > s->recursion_misses) {
		/* as a record, so a recording keeps the loss where it happened */
		struct ws_rec_lost l = {
			.hdr = { .size = sizeof(l),
				 .kind = WS_KIND_LOST,
				 .ts = now,
				 .flags = WS_LOST_RECURSION },
			.count = misses - s->recursion_misses,
			.first_ts = s->last_poll_ns,
		};

		note_loss(s, &l.hdr);
		ws_reorder_push(s->ro, &l.hdr);
		s->recursion_misses = misses;
	}
	s->last_poll_ns = now;
flush:
	stack_snapshots(s, now);
	note_pending_losses(s, now);
	ws_reorder_flush(s->ro, now);
	return s->err;
}

/* {"cpu0":{"0x101":3},...} from the kernel's per-CPU loss counters; CPUs with none left out. */
static char *lost_detail(struct ws_session *s, uint64_t *total)
{
	int ncpu = libbpf_num_possible_cpus();
	uint64_t *vals = ncpu > 0 ? calloc(ncpu, sizeof(*vals)) : NULL;
	char *out = NULL;
	size_t len = 0;
	FILE *f = vals ? open_memstream(&out, &len) : NULL;
	bool any_cpu = false;

	*total = 0;
	if (!f) {
		free(vals);
		return NULL;
	}
	fputc('{', f);
	for (int c = 0; c < ncpu; c++) {
		__u32 key, *prev = NULL;
		bool any = false;

		while (bpf_map_get_next_key(s->lost_fd, prev, &key) == 0) {
			prev = &key;
			if (bpf_map_lookup_elem(s->lost_fd, &key, vals) || !vals[c])
				continue;
			if (!any)
				fprintf(f, "%s\"cpu%d\":{", any_cpu ? "," : "", c);
			fprintf(f, "%s\"0x%x\":%" PRIu64, any ? "," : "", key, vals[c]);
			any = any_cpu = true;
			*total += vals[c];
		}
		if (any)
			fputc('}', f);
	}
	fputc('}', f);
	fclose(f);
	free(vals);
	return out;
}

void ws_session_progress(struct ws_session *s, struct ws_progress *p)
{
	struct ws_graph_stats st;
	char *detail = NULL;

	memset(p, 0, sizeof(*p));
	if (s->g) {
		ws_graph_stats(s->g, &st);
		p->threads = st.threads;
	}
	p->records = s->records;
	if (s->lost_fd >= 0)
		detail = lost_detail(s, &p->lost);
	free(detail);
	if (s->start_mono)
		p->elapsed_ns = ws_clock_mono_now() - s->start_mono;
}

size_t ws_session_traced_pids(struct ws_session *s, uint32_t *out, size_t max)
{
	__u32 key, *prev = NULL;
	size_t n = 0;

	while (s->tgids_fd >= 0 && n < max && bpf_map_get_next_key(s->tgids_fd, prev, &key) == 0) {
		out[n++] = key;
		prev = &key;
	}
	return n;
}

int ws_session_drain(struct ws_session *s)
{
	if (s->rb) {
		ring_buffer__consume(s->rb);
		s->recursion_misses = recursion_misses(s);
	}
	ws_reorder_drain(s->ro);
	if (s->lost_fd >= 0) {
		free(s->lost_json);
		s->lost_json = lost_detail(s, &s->lost_total);
	}
	if (!s->replay)
		s->end_mono = ws_clock_mono_now();
	return s->err;
}

void ws_session_summary(struct ws_session *s, struct ws_summary *sum)
{
	struct ws_graph_stats st;

	ws_graph_stats(s->g, &st);
	memset(sum, 0, sizeof(*sum));
	sum->records = s->records;
	sum->records_late = ws_reorder_late(s->ro);
	sum->lost = s->lost_total;
	sum->lost_recursion = s->recursion_misses;
	if (s->replay)
		sum->duration_ns = s->end_mono ? s->end_mono : s->last_ts - s->first_ts;
	else
		sum->duration_ns = s->end_mono - s->start_mono;
	sum->sources = s->sources;
	sum->lost_detail = s->lost_json;
	sum->threads = st.threads;
	sum->waits_unexplained = st.waits_unexplained;
	sum->wake_races = st.races;
	sum->history_trims = st.history_trims;
	sum->out_of_memory = st.oom;
	sum->shortest_history_ns = st.shortest_history_ns;
	sum->bad_records = s->bad_records;
	s->by_source_json[0] = 0;
	for (int i = 0; i < s->nplugins; i++) {
		size_t n = strlen(s->by_source_json);

		snprintf(s->by_source_json + n, sizeof(s->by_source_json) - n, "%s\"%s\":%" PRIu64,
			 i ? "," : "{", s->plugins[i].p->name, s->by_plugin[i]);
	}
	strncat(s->by_source_json, "}", sizeof(s->by_source_json) - strlen(s->by_source_json) - 1);
	sum->events_by_source = s->by_source_json;
}

void ws_session_set_summary_counts(struct ws_session *s, uint64_t lost, uint64_t lost_recursion,
				   uint64_t duration_ns, const char *lost_json)
{
	s->lost_total = lost;
	s->recursion_misses = lost_recursion;
	s->end_mono = duration_ns;
	free(s->lost_json);
	s->lost_json = lost_json ? strdup(lost_json) : NULL;
}

int ws_session_finish(struct ws_session *s)
{
	struct ws_summary sum;
	int err = ws_session_drain(s);

	/* the rest of every timeline reaches the critical path (and any timeline export) now */
	ws_graph_flush(s->g);
	ws_session_summary(s, &sum);
	if (!err)
		err = ws_report_finish(s->rep, &sum);
	return err;
}

void ws_session_set_tap(struct ws_session *s, ws_tap_fn fn, void *ctx)
{
	s->tap = fn;
	s->tap_ctx = ctx;
}

void ws_session_set_chain_sink(struct ws_session *s, ws_chain_sink_fn fn, void *ctx)
{
	s->sink = fn;
	s->sink_ctx = ctx;
}

int ws_session_follow(struct ws_session *s, uint32_t tid)
{
	uint64_t min_block = 0;

	ws_config_u64(s->cfg, "core", ws_core_keys, "min_block", &min_block);
	/* shorter waits are counted by the thread's own state, without a walk each */
	ws_graph_follow(s->g, tid, min_block / WS_CHAIN_SEG_PARTS);
	return ws_report_follow(s->rep, tid);
}

void ws_session_set_ival_sink(struct ws_session *s, ws_ival_sink_fn fn, void *ctx)
{
	s->ival_sink = fn;
	s->ival_sink_ctx = ctx;
}

void ws_session_flush_timelines(struct ws_session *s)
{
	if (s->g)
		ws_graph_flush(s->g);
	s->ival_sink = NULL;
}

void ws_session_set_replay(struct ws_session *s, const struct ws_clock *clock)
{
	s->replay = true;
	s->clock = *clock;
}

const struct ws_stacks *ws_session_stacks(struct ws_session *s)
{
	return s->stacks;
}

const struct ws_clock *ws_session_clock(struct ws_session *s)
{
	return &s->clock;
}

void ws_session_free(struct ws_session *s)
{
	if (!s)
		return;
	ring_buffer__free(s->rb);
	for (size_t i = 0; i < s->nlinks; i++)
		bpf_link__destroy(s->links[i]);
	free(s->links);
	free(s->prog_fds);
	for (int i = 0; i < s->nplugins; i++) {
		if (s->inited && s->plugins[i].p->fini)
			s->plugins[i].p->fini(&s->ctxs[i].pub);
		bpf_object__close(s->objs[i]);
	}
	core_bpf__destroy(s->core_skel);
	for (int i = 0; i < s->nplugins; i++)
		ws_plugin_unload(&s->plugins[i]);
	if (s->ring_fd >= 0)
		close(s->ring_fd);
	if (s->tgids_fd >= 0)
		close(s->tgids_fd);
	if (s->cpu_fd >= 0)
		close(s->cpu_fd);
	if (s->lost_fd >= 0)
		close(s->lost_fd);
	ws_chain_release(&s->chain);
	ws_report_free(s->rep);
	ws_reorder_free(s->ro);
	ws_graph_free(s->g);
	ws_stacks_free(s->stacks);
	ws_stackcap_free(s->stackcap);
	ws_table_free(&s->pids);
	free(s->gone);
	free(s->names);
	free(s->lost_json);
	free(s);
}
