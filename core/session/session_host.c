// SPDX-License-Identifier: MIT
/* The host table sources call (struct ws_host), their contexts, name tables and callbacks. */
#include <whyslow/syscall_names.h>

#include "session_impl.h"
#include "base/syscall_fmt.h"
#include "stacks/pystack.h"

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

/* Named by the stacks' symbolizer (stackcap.c): one cache of files, one way to open them. */
static int host_data_symbol(struct ws_plugin_ctx *ctx, uint32_t pid, uint64_t addr, char *buf,
			    size_t len)
{
	struct ws_session *s = session_of(ctx);

	/* a replay's processes are not there to read; untraced ones are not ours to read */
	if (s->replay || !session_pid_traced(s, pid))
		return 0;
	if (!s->stackcap && ws_stackcap_new(&s->stackcap))
		return -ENOMEM;
	return ws_stackcap_data_name(s->stackcap, pid, addr, buf, len);
}

/* The stacks know which processes run CPython, and where their GIL is (stacks/pygil.h). */
static int host_lock_name(struct ws_plugin_ctx *ctx, uint32_t pid, uint64_t addr, char *buf,
			  size_t len)
{
	struct ws_session *s = session_of(ctx);

	if (s->replay || !session_pid_traced(s, pid))
		return 0;
	if (!s->stackcap && ws_stackcap_new(&s->stackcap))
		return -ENOMEM;
	return ws_stackcap_lock_name(s->stackcap, pid, addr, buf, len) == WS_PYSTACK_LOCK_GIL
		       ? WS_LOCK_GIL
		       : 0;
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

static bool host_pid_traced(struct ws_plugin_ctx *ctx, uint32_t pid)
{
	return session_pid_traced(session_of(ctx), pid);
}

static int host_thread_comm(struct ws_plugin_ctx *ctx, uint32_t tid, char *buf, size_t len)
{
	const char *c = ws_graph_comm(session_of(ctx)->g, tid);

	if (!strcmp(c, "?"))
		return -ENOENT;
	snprintf(buf, len, "%s", c);
	return 0;
}

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
	ws_str_copy(buf, len, n->name);
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

static void host_sock_io(struct ws_plugin_ctx *ctx, const struct ws_sock_io *io)
{
	struct ws_session *s = session_of(ctx);

	if (s->rep)
		ws_report_sock_io(s->rep, io);
	if (s->sock_io_sink)
		s->sock_io_sink(s->sock_io_sink_ctx, io);
}

const struct ws_host ws_session_host = {
	.sz = sizeof(struct ws_host),
	.abi_major = WS_ABI_MAJOR,
	.abi_minor = WS_ABI_MINOR,
	.log = host_log,
	.config_u64 = host_config_u64,
	.config_bool = host_config_bool,
	.config_str = host_config_str,
	.set_rodata = host_set_rodata,
	.wall_ns = host_wall_ns,
	.pid_traced = host_pid_traced,
	.thread_comm = host_thread_comm,
	.claim_u64 = ws_claim_put_u64,
	.claim_hex = ws_claim_put_hex,
	.claim_str = ws_claim_put_str,
	.name_set = host_name_set,
	.name_get = host_name_get,
	.resolution_ns = host_resolution_ns,
	.data_symbol = host_data_symbol,
	.sock_io = host_sock_io,
	.lock_name = host_lock_name,
};

/*
 * Every plugin's init, once: before configure when tracing, before the first
 * record when replaying (whichever comes first).
 */
int session_plugins_init(struct ws_session *s)
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
			.host = &ws_session_host,
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

static void claim_blank(struct ws_claim *c)
{
	ws_zero(c, sizeof(*c));
	c->sz = sizeof(*c);
}

/* Did source @plugin claim (@rc: its callback's result)? Then @c is marked its own. */
static bool claim_taken(struct ws_claim *c, int rc, int plugin)
{
	if (rc <= 0 || c->strength <= WS_CLAIM_NONE)
		return false;
	c->owner = plugin;
	if (c->nfields > WS_CLAIM_FIELDS)
		c->nfields = WS_CLAIM_FIELDS;
	return true;
}

static int open_describe(void *ctx, const struct ws_open_wait *w, struct ws_claim *out, char *what,
			 size_t len);

/* @c's fields appended to @to, each key prefixed "ended_", as many as fit. */
static void ended_fields(struct ws_claim *to, const struct ws_claim *c)
{
	ws_claim_put_str(to, "ended_by", c->kind);
	for (unsigned int i = 0; i < c->nfields && i < WS_CLAIM_FIELDS; i++) {
		struct ws_field *f;
		char key[sizeof(f->key)];

		if (snprintf(key, sizeof(key), "ended_%s", c->fields[i].key) >= (int)sizeof(key))
			continue;
		f = ws_claim_field_add(to, key, c->fields[i].type);
		if (!f)
			return;
		f->u = c->fields[i].u;
		memcpy(f->s, c->fields[i].s, sizeof(f->s));
	}
}

/*
 * @ending (the winner, from source @ending->owner) says only how the wait @w ended, a signal
 * that interrupted it: what the thread waited for is named from its syscall as for a wait
 * still open, into @out. Nothing is followed from it: the thread waited for that resource
 * until it was interrupted, and whoever sent the signal did not cause that (issue 34).
 */
static void claim_ended(struct ws_session *s, const struct ws_wait *w,
			const struct ws_claim *ending, struct ws_claim *out)
{
	struct ws_open_wait ow = { .sz = sizeof(ow), .tid = w->tid, .pid = w->pid };
	char what[160];

	/* TASK_UNINTERRUPTIBLE (2) at the switch-out: a killable wait */
	ow.state = w->off_state & 2 ? 'D' : 'S';
	ow.syscall.nr = WS_SYSCALL_NONE;
	if (w->wake)
		ow.syscall = w->wake->wakee_sys;
	claim_blank(out);
	if (open_describe(s, &ow, out, what, sizeof(what)) < 0) {
		claim_blank(out);
		out->owner = UINT16_MAX; /* the core's own */
		snprintf(out->kind, sizeof(out->kind), "interrupted");
		snprintf(out->evidence, sizeof(out->evidence),
			 "its syscall is not known: what it waited for is not known");
	}
	out->strength = WS_CLAIM_SPECIFIC;
	out->woken_by = 0;
	out->root = true;
	out->ends_only = false;
	out->ended_owner = (uint16_t)(ending->owner + 1);
	ended_fields(out, ending);
}

/*
 * The strongest claim (the first of equals) into @out. Each source writes into a zeroed claim
 * (1160 bytes: claims are compared as bytes, padding too) and the winner is never copied but
 * the once: a candidate that wins becomes the best in place and the other buffer takes the
 * next candidate. @out is one of the two, so it holds anything when this returns 0. @out
 * arrives blank (struct ws_graph_ops.infer), and a source that has no claim leaves the claim
 * alone (struct ws_plugin.infer): the buffer is cleared again only after a source wrote into
 * it. Most sources have nothing to say about most wakeups: clearing for each of them was a
 * twentieth of `report`'s instructions.
 */
int session_infer_all(void *ctx, const struct ws_wait *w, struct ws_claim *out)
{
	struct ws_session *s = ctx;
	struct ws_claim spare, *c = out, *best = NULL;
	bool blank = true;

	for (int i = 0; i < s->nplugins; i++) {
		const struct ws_plugin *p = s->plugins[i].p;
		int rc;

		if (!p->infer)
			continue;
		if (!blank)
			claim_blank(c);
		rc = p->infer(&s->ctxs[i].pub, w, c);
		blank = rc == 0;
		if (!claim_taken(c, rc, i))
			continue;
		if (!best || c->strength > best->strength) {
			best = c;
			c = c == out ? &spare : out;
			blank = false; /* the spare was never cleared, @out holds the last best */
		}
	}
	if (best && best->ends_only) {
		struct ws_claim ending = *best;

		claim_ended(s, w, &ending, out);
		return 1;
	}
	if (best && best != out)
		memcpy(out, best, sizeof(*out));
	return best != NULL;
}

/* The claim that ended the wait @c names (ws_claim.ended_owner), from its "ended_" fields. */
static bool ending_of(const struct ws_claim *c, struct ws_claim *e)
{
	const struct ws_field *by = ws_claim_field(c, "ended_by");

	if (!c->ended_owner || !by)
		return false;
	claim_blank(e);
	e->owner = (uint16_t)(c->ended_owner - 1);
	snprintf(e->kind, sizeof(e->kind), "%.*s", (int)sizeof(e->kind) - 1, by->s);
	for (unsigned int i = 0; i < c->nfields && i < WS_CLAIM_FIELDS; i++) {
		const struct ws_field *f = &c->fields[i];
		struct ws_field *to;

		if (strncmp(f->key, "ended_", 6) || f == by)
			continue;
		to = ws_claim_field_add(e, f->key + 6, f->type);
		if (!to)
			break;
		to->u = f->u;
		memcpy(to->s, f->s, sizeof(to->s));
	}
	return true;
}

static void describe_one(struct ws_session *s, const struct ws_claim *c, char *buf, size_t len)
{
	const struct ws_plugin *p = c->owner < s->nplugins ? s->plugins[c->owner].p : NULL;

	if (p && p->describe && p->describe(&s->ctxs[c->owner].pub, c, buf, len) > 0)
		return;
	if (!strcmp(c->kind, "interrupted") && c->owner == UINT16_MAX)
		snprintf(buf, len, "an unknown wait");
	else
		snprintf(buf, len, "%s (%s)", c->kind, c->evidence);
}

/* "futex 0x7f2a3c001000, interrupted by signal SIGINT from tid 4242 (bash)" */
void ws_session_describe(void *session, const struct ws_claim *c, char *buf, size_t len)
{
	session_describe(session, c, buf, len);
}

void session_describe(void *ctx, const struct ws_claim *c, char *buf, size_t len)
{
	struct ws_session *s = ctx;
	struct ws_claim e;
	size_t n;

	describe_one(s, c, buf, len);
	n = strnlen(buf, len);
	if (ending_of(c, &e) && n + 1 < len) {
		char how[160];

		describe_one(s, &e, how, sizeof(how));
		snprintf(buf + n, len - n, ", interrupted by %s", how);
	}
}

/* The resource a claim is about, from its source; 0 when it names none. */
int session_resource(void *ctx, const struct ws_claim *c, char *buf, size_t len)
{
	struct ws_session *s = ctx;
	const struct ws_plugin *p = c->owner < s->nplugins ? s->plugins[c->owner].p : NULL;

	if (!p || !p->resource)
		return 0;
	return p->resource(&s->ctxs[c->owner].pub, c, buf, len);
}

/* The root cause a chain ending in claim @c has, from its source; 0 when it names none. */
int session_root_label(void *ctx, const struct ws_claim *c, const char *comm, char *buf, size_t len)
{
	struct ws_session *s = ctx;
	const struct ws_plugin *p = c->owner < s->nplugins ? s->plugins[c->owner].p : NULL;

	if (!p || !p->root_label)
		return 0;
	return p->root_label(&s->ctxs[c->owner].pub, c, comm, buf, len);
}

/* ---- open waits (stuck.c): every source that describes them, the strongest claim first ---- */

static int open_describe(void *ctx, const struct ws_open_wait *w, struct ws_claim *out, char *what,
			 size_t len)
{
	struct ws_session *s = ctx;
	struct ws_claim c;
	char buf[160];
	int best = -1, rc;

	for (int i = 0; i < s->nplugins; i++) {
		const struct ws_plugin *p = s->plugins[i].p;

		if (!p->describe_open)
			continue;
		claim_blank(&c);
		buf[0] = 0;
		rc = p->describe_open(&s->ctxs[i].pub, w, &c, buf, sizeof(buf));
		if (!claim_taken(&c, rc, i) || (best >= 0 && c.strength <= out->strength))
			continue;
		memcpy(out, &c, sizeof(c));
		snprintf(what, len, "%s", buf[0] ? buf : c.kind);
		best = i;
	}
	return best;
}

static int open_owner(void *ctx, int source, const struct ws_open_wait *w, const struct ws_claim *c,
		      ws_tid_live_fn is_live, void *live_ctx, struct ws_open_owner *out)
{
	struct ws_session *s = ctx;
	const struct ws_plugin *p;

	if (source < 0 || source >= s->nplugins)
		return 0;
	p = s->plugins[source].p;
	if (!p->open_owner)
		return 0;
	return p->open_owner(&s->ctxs[source].pub, w, c, is_live, live_ctx, out);
}

int ws_session_killed_waits(struct ws_session *s, struct ws_stuck *out)
{
	struct ws_open_sources src;
	int err;

	memset(out, 0, sizeof(*out));
	if (!s->killed.n)
		return 0;
	err = ws_session_open_sources(s, &src);
	return err ? err : ws_killed_snapshot(&s->killed, &src, out);
}

int ws_session_open_sources(struct ws_session *s, struct ws_open_sources *out)
{
	int err = session_plugins_init(s);

	if (err)
		return err;
	*out = (struct ws_open_sources){ .describe = open_describe, .owner = open_owner, .ctx = s };
	return 0;
}

/* ---- waits a signal ended: their chains wait for the thread's exit, naming a holder ---- */

/*
 * How long a chain is held back at most: a thread the signal did not kill (a handler ran) has
 * no exit to wait for. A killed one exits a few microseconds after its wait ends.
 */
#define HELD_BACK_NS 1000000000ull

/* Did a signal end the wait @d? Its claim is then the core's (claim_ended()). */
static bool signal_ended(struct ws_session *s, const struct ws_wait_done *d)
{
	const struct ws_claim *c = ws_chain_wait_claim(s->g, d);

	return c && c->ended_owner;
}

static void held_release(struct ws_session *s, size_t i)
{
	struct ws_wait_done d = s->held_back[i];

	memmove(&s->held_back[i], &s->held_back[i + 1],
		(s->nheld_back - i - 1) * sizeof(s->held_back[0]));
	s->nheld_back--;
	session_chain(s, &d);
}

void session_wait_done(void *ctx, const struct ws_wait_done *d)
{
	struct ws_session *s = ctx;

	/* a thread that lived on past its wait (its next one ended), or long since: no exit */
	for (size_t i = 0; i < s->nheld_back;)
		if (s->held_back[i].t == d->t || s->held_back[i].end + HELD_BACK_NS < d->end)
			held_release(s, i);
		else
			i++;
	if (!signal_ended(s, d)) {
		session_chain(s, d);
		return;
	}
	if (s->nheld_back == HELD_BACK)
		held_release(s, 0);
	s->held_back[s->nheld_back++] = *d;
}

void session_held_flush(struct ws_session *s)
{
	while (s->nheld_back)
		held_release(s, 0);
}

/*
 * Its exit was never seen (records lost) and its timeline is being dropped, its intervals with
 * it: no chain can be built from it any more. Rare: a held wait goes at its thread's exit, at
 * any wait that ends a second later, or at the end, and an exited thread's timeline is kept
 * for max_window unless threads churn past the number kept (graph_evict.c).
 */
void session_held_gone(struct ws_session *s, const struct ws_thread *t)
{
	for (size_t i = 0; i < s->nheld_back; i++) {
		if (s->held_back[i].t != t)
			continue;
		memmove(&s->held_back[i], &s->held_back[i + 1],
			(s->nheld_back - i - 1) * sizeof(s->held_back[0]));
		s->nheld_back--;
		return;
	}
}

/* Whom the holder named by a lock word may be, for a wait a signal ended (held_live()). */
struct held_ctx {
	struct ws_graph *g;
	uint32_t pid;	     /* the waiter's process */
	uint64_t from, till; /* its wait */
};

/*
 * A thread of the waiter's own process, the same one from the wait's start to its end: the
 * trace vouches for it. A word in memory other processes write (pshared) may name another
 * process's thread, or another user's: not verified, not named (issue 34).
 */
static bool held_live(void *ctx, uint32_t tid, bool pshared)
{
	const struct held_ctx *h = ctx;
	struct ws_thread *t = ws_graph_thread_at(h->g, tid, h->from);

	(void)pshared;
	return t && t == ws_graph_thread_at(h->g, tid, h->till) && t->pid == h->pid && !t->helper;
}

/* The JSON value of what named a holder (ws_open_owner.evidence_key), kept for the report. */
static const char *held_evidence(const char *key)
{
	static const char *const known[] = { "mutex_word", "pi_futex_word" };

	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		if (!strcmp(key, known[i]))
			return known[i];
	return "lock";
}

/*
 * The signal that ended the wait @d killed its thread, which exits in @ev: the lock it waited
 * for, read in its own context as it died (ws_thread_event.mem), names its holder when the
 * source that describes the wait can read one (open_owner). Into @d when it names a live thread
 * of the same process, never a guess: otherwise the wait stays its own root.
 */
static void holder_at_exit(struct ws_session *s, struct ws_wait_done *d,
			   const struct ws_thread_event *ev)
{
	const struct ws_claim *c = ws_chain_wait_claim(s->g, d);
	struct ws_open_wait w = { .sz = sizeof(w), .tid = ev->tid, .pid = ev->pid, .state = 'S' };
	struct ws_open_owner o = { .sz = sizeof(o) };
	struct held_ctx h = { s->g, ev->pid, d->start, d->wake };
	struct ws_syscall sys;
	struct ws_claim dc;
	char what[160];
	int src;

	if (!c || !ev->exit_signal || !ev->mem || !ev->mem_len || !ws_syscall_known(&ev->sys))
		return;
	/* it died in the very call it waited in: the same lock */
	sys = ev->sys;
	ws_syscall_normalize(&sys);
	if (sys.nr != c->syscall.nr || memcmp(sys.args, c->syscall.args, sizeof(sys.args)))
		return;
	w.syscall = ev->sys;
	w.mem = ev->mem;
	w.mem_len = ev->mem_len;
	claim_blank(&dc);
	src = open_describe(s, &w, &dc, what, sizeof(what));
	if (src < 0 || open_owner(s, src, &w, &dc, held_live, &h, &o) <= 0 || !o.tid ||
	    o.tid == ev->tid)
		return;
	d->held_by = o.tid;
	d->held_evidence = held_evidence(o.evidence_key);
}

/* @ev is a thread's exit: the chain held back for its last wait, with the lock's holder. */
void session_held_exit(struct ws_session *s, const struct ws_thread_event *ev)
{
	struct ws_thread *t = ws_graph_thread(s->g, ev->tid);

	for (size_t i = 0; t && i < s->nheld_back; i++) {
		if (s->held_back[i].t != t)
			continue;
		holder_at_exit(s, &s->held_back[i], ev);
		held_release(s, i);
		return;
	}
}
