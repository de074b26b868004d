/* SPDX-License-Identifier: MIT */
/*
 * whyslow source-plugin ABI.
 *
 * A plugin is a shared object exporting one symbol, WS_PLUGIN_ENTRY_NAME, a
 * function returning its descriptor (struct ws_plugin). Everything the plugin
 * needs from whyslow reaches it through the host table (struct ws_host) it is
 * handed, so it links nothing from the executable.
 *
 * Evolution rules (ABI 3.0; see docs/PLUGINS.md):
 *  - Every struct that crosses the boundary begins with its own size (sz) and ends in reserved
 *    space (zero). There is no implicit padding in any of them (tests/sdk/headers.sh builds
 *    this header with -Wpadded), so a member appended later takes reserved bytes, never what
 *    an older build left undefined.
 *  - The core copies what a plugin hands it (its descriptor) into a full-size struct of its own,
 *    zero-filled: a member the plugin's SDK did not have reads as 0 / NULL. Bytes the core does
 *    not know (reserved space, or past its own size) must be zero: if not, the plugin uses
 *    members of a newer ABI and is refused. Nothing the core hands a plugin needs a size test
 *    either: a member appended after the plugin's SDK was made is simply not read, and one
 *    appended after the core's reads as 0 / NULL (reserved space is zero).
 *  - WS_ABI_MINOR rises only when members are appended; a change in the core's behaviour alone
 *    does not move it. A plugin built for a newer minor loads as long as it sets no member this
 *    core lacks. WS_ABI_MAJOR rises when anything else changes; the core loads a plugin of its
 *    own major only.
 *  - A NULL callback or host member means "not supported", never a crash; each member says what
 *    happens then.
 *  - 3.2: ws_sock_io.seq_end and .flags (a TCP call's place in its stream: joins recordings).
 *  - 3.1: ws_host.lock_name (the lock a language runtime keeps at a futex word: the GIL).
 *  - 3.0 (from 2.6): the scheduler model is the core's own (no ws_host.sched_switch, sched_wake,
 *    thread_event; no struct ws_switch, ws_thread_event); the structs were laid out again with
 *    explicit padding and reserved space; WS_HAS is gone (every 3.0 member is always there).
 *    Behaviour kept from 2.x: an iterator in a plugin's BPF object (SEC("iter/task")) is
 *    walked to its end right after the object's other programs are attached, and again an RCU
 *    grace period later, to seed per-task state (a source must stay right without the walks).
 */
#ifndef WHYSLOW_PLUGIN_H
#define WHYSLOW_PLUGIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <whyslow/record.h>

#ifdef __cplusplus
extern "C" {
#endif

#define WS_ABI_MAJOR 3
#define WS_ABI_MINOR 2

#define WS_PLUGIN_ENTRY_NAME "whyslow_plugin_entry"
#define WS_PLUGIN_EXPORT __attribute__((visibility("default")))

struct bpf_object;
struct ws_host;

/* Reserved space at the end of each struct, in 8-byte words: zero, for members appended in 3.x. */
#define WS_RESERVED_WORDS 8

/*
 * A plugin's handle for one session, made by the core and passed to every
 * callback. Host functions take it, so the core knows which plugin calls and
 * in which session, without globals on either side.
 */
struct ws_plugin_ctx {
	size_t sz;
	const struct ws_host *host; /* the core's services */
	const char *name;	    /* the plugin's name, as in its descriptor */
	void *priv;		    /* the plugin's own state: set it in init, free it in fini */
	bool replay; /* fed from a recording: the live system is not what was traced */
	uint8_t pad0[7];
	uint64_t reserved[WS_RESERVED_WORDS];
};

/* Log levels for ws_host.log. */
enum ws_log_level {
	WS_LOG_ERROR = 0,
	WS_LOG_WARN = 1,
	WS_LOG_INFO = 2,
	WS_LOG_DEBUG = 3,
};

/* Thread states of a timeline interval. */
enum ws_thread_state {
	WS_STATE_UNKNOWN = 0,  /* not observed (before tracing, or records lost) */
	WS_STATE_RUNNING = 1,  /* on a CPU */
	WS_STATE_RUNNABLE = 2, /* woken or preempted, waiting for a CPU */
	WS_STATE_BLOCKED = 3,  /* off CPU and not runnable */
};

/*
 * A wakeup, as the core's scheduler model saw it (ws_wait.wake: the one that ended a wait).
 * When @ctx has WS_CTX_HARDIRQ or WS_CTX_SOFTIRQ the waker fields name the
 * task the interrupt hit, which did not do the wakeup; the core never treats
 * it as the waker.
 */
struct ws_wake {
	size_t sz;
	uint64_t ts;
	uint32_t cpu;
	uint8_t ctx; /* WS_CTX_* */
	/*
	 * The wakee is a helper, a kernel thread working for the traced processes (not traced
	 * itself): its timeline is kept so chains go on through it, never a victim.
	 */
	bool wakee_helper;
	bool wakee_signals_known; /* @wakee_sigpending and @wakee_state are valid */
	uint8_t pad0;
	uint32_t ctx_id; /* ws_rec_hdr.ctx_id of the wakeup */
	uint32_t waker_tid, waker_pid;
	uint32_t wakee_tid, wakee_pid;
	/* the wakee left a CPU at @off_ts, not reported then (0: it was reported) */
	uint32_t off_state, off_cpu;
	/*
	 * The waker (task context) was off CPU this many times since its last reported switch-in,
	 * each time shorter than the resolution (summarised in the kernel, causes not recorded);
	 * 0 when none or unknown.
	 */
	uint32_t waker_short;
	/* the wakee's task state (1 interruptible, 2 uninterruptible, ...) at the wakeup */
	uint32_t wakee_state;
	uint32_t pad1;
	const char *waker_comm; /* may be NULL */
	/* the syscall the wakee slept in, and the one the waker was in (task context only); nr is
	 * WS_SYSCALL_NONE when unknown (and in older recordings) */
	struct ws_syscall wakee_sys, waker_sys;
	uint64_t off_ts;
	/* the signals pending for the wakee that it does not block (bit n-1: signal n) */
	uint64_t wakee_sigpending;
	uint64_t reserved[WS_RESERVED_WORDS];
};

/*
 * What the edge-inference callback is asked about: thread @tid was blocked
 * from @start_ns and has just been woken. Called in timestamp order, at the
 * moment the wakeup is processed, so a source's own state reflects every
 * record up to @wake.ts and none after it.
 */
struct ws_wait {
	size_t sz;
	uint32_t tid, pid;
	uint64_t start_ns;  /* when it switched out */
	uint32_t off_state; /* prev_state at switch-out */
	/* the waker's timeline is followed: it belongs to a traced process, or it is a helper
	 * (a kernel thread working for them, see ws_wake.wakee_helper) */
	bool waker_traced;
	uint8_t pad0[3];
	const struct ws_wake *wake; /* the wakeup that ended the wait */
	uint64_t reserved[WS_RESERVED_WORDS];
};

/* Values of a claim's extra keys (ws_claim.fields). */
enum ws_field_type {
	WS_FIELD_NONE = 0,
	WS_FIELD_U64 = 1, /* printed as a JSON number */
	WS_FIELD_HEX = 2, /* printed as a JSON string "0x..." */
	WS_FIELD_STR = 3, /* printed as a JSON string */
};

#define WS_CLAIM_FIELDS 12

struct ws_field {
	char key[24];
	enum ws_field_type type;
	uint32_t pad0;
	uint64_t u;
	char s[40];
};

/* How specific a claim is; the strongest claim on a wait wins. */
enum ws_claim_strength {
	WS_CLAIM_NONE = 0,
	WS_CLAIM_FALLBACK = 1, /* what is known when nothing better is: "woken by W" */
	WS_CLAIM_SPECIFIC = 2, /* a named resource proven by evidence (futex, request) */
};

/*
 * A source's explanation of one wait. The source fills it in its infer
 * callback; the core stores it with the blocked interval and asks the same
 * source to describe it later.
 *
 * @kind:      link kind in the output ("futex", "block_io", "sleep", ...).
 * @woken_by:  the thread whose timeline explains the wait next, or 0.
 * @root:      the chain ends here even if @woken_by is set (e.g. "untraced").
 * @evidence:  why the claim holds, in a few words a person can check.
 * @fields:    extra keys for JSON, in order ("addr", "dev", "sector", ...).
 *
 * A claim the core hands back (describe, resource, root_label) is its stored copy: the
 * fields past @nfields and the reserved words are not there. Read fields with
 * ws_claim_field() and its kin, and never copy the struct whole.
 */
struct ws_claim {
	size_t sz;
	enum ws_claim_strength strength;
	uint32_t woken_by;
	char kind[16];
	char evidence[96];
	bool root;
	/*
	 * Set by a source: the claim says only how the wait ended (a signal that interrupted it),
	 * not what the thread waited for: whoever ended it did not cause it. When it wins, the
	 * core describes the wait from its syscall as an open wait (describe_open), that claim
	 * becomes the wait's (a root: nothing is followed), and this one's kind and fields are
	 * added to it as "ended_by" and "ended_<key>".
	 */
	bool ends_only;
	uint16_t owner; /* set by the core: index of the source that claimed */
	/* set by the core: 1 + the index of the source whose ends_only claim ended the wait (its
	 * fields are the "ended_" ones); 0: none */
	uint16_t ended_owner;
	uint16_t pad0;
	unsigned int nfields;
	uint32_t pad1;
	/* set by the core: the syscall the thread waited in (the wake's wakee_sys) */
	struct ws_syscall syscall;
	struct ws_field fields[WS_CLAIM_FIELDS];
	uint64_t reserved[WS_RESERVED_WORDS];
};

/* The field @key of claim @c (as a source's describe or resource reads it back), or NULL. */
static inline const struct ws_field *ws_claim_field(const struct ws_claim *c, const char *key)
{
	for (unsigned int i = 0; i < c->nfields && i < WS_CLAIM_FIELDS; i++)
		if (!strcmp(c->fields[i].key, key))
			return &c->fields[i];
	return NULL;
}

/* The number in field @key (U64 or HEX), or @def. */
static inline uint64_t ws_claim_u64(const struct ws_claim *c, const char *key, uint64_t def)
{
	const struct ws_field *f = ws_claim_field(c, key);

	return f && (f->type == WS_FIELD_U64 || f->type == WS_FIELD_HEX) ? f->u : def;
}

/* The string in field @key, or @def. */
static inline const char *ws_claim_str(const struct ws_claim *c, const char *key, const char *def)
{
	const struct ws_field *f = ws_claim_field(c, key);

	return f && f->type == WS_FIELD_STR ? f->s : def;
}

/*
 * A wait that has not ended, seen in /proc rather than in records: `whyslow stuck`,
 * and the waits still open when a run or attach stops. No wakeup ended it, so there is nothing
 * to infer from; only what the thread is doing now.
 */
struct ws_open_wait {
	size_t sz;
	uint32_t tid, pid;
	char state; /* its /proc state letter: 'S' sleeping, 'D' uninterruptible */
	uint8_t pad0[3];
	int nkstack;
	struct ws_syscall syscall; /* the syscall it is blocked in; nr WS_SYSCALL_NONE: none, or
				    * not readable (no ptrace access) */
	/* innermost kernel frames, function names (root only; may be 0) */
	const char *const *kstack;
	/*
	 * The memory at syscall.args[0] as the waiter's own context read it when a signal ended
	 * the wait (a program killed while it waited: the process is gone); NULL otherwise.
	 * open_owner reads the lock from here when set, never from the process.
	 */
	const uint8_t *mem;
	uint32_t mem_len;
	/*
	 * The thread's user stack as function names, innermost first (NULL: a frame no symbol
	 * covers), when the core read it from the thread's memory (`whyslow stuck`); 0 frames
	 * otherwise. What a wait is may show only there: the same futex call serves a mutex and a
	 * condition variable.
	 */
	int nustack;
	const char *const *ustack;
	uint64_t reserved[WS_RESERVED_WORDS];
};

/*
 * Who holds the lock an open wait waits for, as the lock itself says (the holder is never
 * guessed). Filled by ws_plugin.open_owner; the strings end up in the output and in
 * recordings.
 */
struct ws_open_owner {
	size_t sz;
	uint32_t tid; /* the holder; 0: not named, @why says why */
	bool pshared; /* the lock is shared between processes: the holder may be in another */
	uint8_t pad0[3];
	uint64_t lock;	       /* the lock's address */
	char lock_name[24];    /* what the lock is, for a sentence: "mutex" */
	char evidence[32];     /* what named the holder, for a sentence: "mutex word" */
	char evidence_key[32]; /* the same as a JSON value: "mutex_word" */
	char why[96];	       /* @tid 0: why no holder was named */
	uint64_t reserved[WS_RESERVED_WORDS];
};

/* Is @tid a live thread that may hold a lock of @pid's thread? With @pshared also a thread of
 * another process of the same user (a lock word naming another user's thread is a claim). */
typedef bool (*ws_tid_live_fn)(void *live_ctx, uint32_t tid, bool pshared);

/* One ini key a plugin accepts in its own section. */
enum ws_config_type {
	WS_CFG_BOOL = 1,
	WS_CFG_U64 = 2,
	WS_CFG_DURATION = 3, /* "10ms", "2s", "500us"; read as nanoseconds */
	WS_CFG_STRING = 4,
};

struct ws_config_key {
	const char *key;
	/* an enum ws_config_type, 8 bytes wide: no padding, and tables written in order (key,
	 * type, def, min, max, help) compile as they did in 2.x */
	uint64_t type;
	const char *def;   /* default, as written in an ini file */
	uint64_t min, max; /* accepted range for U64 and DURATION (ns) */
	const char *help;
	/* no reserved space: its size is a table's stride, so it does not change within 3.x */
};

/* ws_sock_io.dir */
#define WS_SOCK_RECV 1
#define WS_SOCK_SEND 2
/* ws_sock_io.proto */
#define WS_SOCK_TCP 1
#define WS_SOCK_UDP 2
#define WS_SOCK_UNIX 3
/* ws_sock_io.role: which end of its connection the socket is */
#define WS_SOCK_ROLE_UNKNOWN 0
#define WS_SOCK_SERVER 1 /* the end that answers: requests are served on it */
#define WS_SOCK_CLIENT 2
/* ws_sock_io.flags (3.2) */
#define WS_SOCK_SEQ 0x1	       /* TCP: seq_end is the stream's sequence number after the bytes */
#define WS_SOCK_NOT_SERVED 0x2 /* an end known not to serve (a client's): no request is on it */

/*
 * A receive that returned data (@bytes; 0: the peer ended the stream) or a send, by a traced
 * thread on a socket: what the core's requests are found from (docs/DESIGN.md, "Requests").
 * Handed in by a source through ws_host.sock_io, in record order.
 */
struct ws_sock_io {
	size_t sz;
	uint64_t ts;
	uint64_t sock; /* the socket: an id, stable while it lives */
	uint32_t tid, pid;
	uint64_t bytes;
	uint32_t dir;	/* WS_SOCK_RECV or WS_SOCK_SEND */
	uint32_t proto; /* WS_SOCK_* */
	uint32_t role;	/* WS_SOCK_SERVER, _CLIENT, _ROLE_UNKNOWN */
	uint32_t pad0;
	/* "127.0.0.1:5432", "[::1]:8080", a unix path ("@name": abstract); "" when unknown */
	const char *local, *peer;
	/*
	 * 3.2, TCP with WS_SOCK_SEQ: the bytes were [seq_end - bytes, seq_end) of their direction's
	 * sequence space (mod 2^32), the same numbers at both ends: a send and its receive on
	 * another host's recording match by them and the mirrored endpoints.
	 */
	uint32_t seq_end;
	uint32_t flags; /* WS_SOCK_SEQ, WS_SOCK_NOT_SERVED */
	uint64_t reserved[WS_RESERVED_WORDS - 1];
};

/*
 * Services of the core. Every call names its caller by @ctx. Members are
 * appended only, into the reserved slots: a member this core lacks is NULL there.
 */
struct ws_host {
	size_t sz;
	uint16_t abi_major, abi_minor;
	uint32_t pad0;

	/* Print a message prefixed with the plugin's name. */
	void (*log)(struct ws_plugin_ctx *ctx, enum ws_log_level level, const char *fmt, ...)
		__attribute__((format(printf, 3, 4)));

	/*
	 * Value of @key in the plugin's ini section (or its default), already
	 * validated against its ws_config_key. Returns 0 or -ENOENT.
	 */
	int (*config_u64)(struct ws_plugin_ctx *ctx, const char *key, uint64_t *out);
	int (*config_bool)(struct ws_plugin_ctx *ctx, const char *key, bool *out);
	const char *(*config_str)(struct ws_plugin_ctx *ctx, const char *key);

	/*
	 * Set the read-only global @name of the plugin's BPF object before load.
	 * Returns 0, -ENOENT (no such variable) or -EINVAL (size differs).
	 */
	int (*set_rodata)(struct ws_plugin_ctx *ctx, struct bpf_object *obj, const char *name,
			  const void *val, size_t size);

	/* Nanoseconds since the Unix epoch for a record timestamp. */
	uint64_t (*wall_ns)(struct ws_plugin_ctx *ctx, uint64_t mono_ns);

	/* Whether thread group @pid is traced. */
	bool (*pid_traced)(struct ws_plugin_ctx *ctx, uint32_t pid);

	/* Copy the last known name of @tid into @buf; returns 0 or -ENOENT. */
	int (*thread_comm)(struct ws_plugin_ctx *ctx, uint32_t tid, char *buf, size_t len);

	/* Append a key to a claim; ignored when the claim is full. */
	void (*claim_u64)(struct ws_claim *c, const char *key, uint64_t v);
	void (*claim_hex)(struct ws_claim *c, const char *key, uint64_t v);
	void (*claim_str)(struct ws_claim *c, const char *key, const char *v);

	/*
	 * The plugin's own name table: what @key (a device number, an address,
	 * an id) is called. A recording keeps every name set, and a replay
	 * starts with them, so names the plugin learned from the live system
	 * (sysfs, /proc) still resolve when the recording is reported elsewhere.
	 * name_set: 0 or -ENOMEM (a name is cut at 63 bytes; setting a key
	 * again replaces it). name_get: 0, or -ENOENT.
	 */
	int (*name_set)(struct ws_plugin_ctx *ctx, uint64_t key, const char *name);
	int (*name_get)(struct ws_plugin_ctx *ctx, uint64_t key, char *buf, size_t len);

	/*
	 * The core's resolution ([core] resolution, default from min_block):
	 * off-CPU periods shorter than this may be summed instead of reported
	 * one by one (struct ws_short_waits).
	 */
	uint64_t (*resolution_ns)(struct ws_plugin_ctx *ctx);

	/*
	 * The data object of traced process @pid whose memory holds @addr (a global
	 * or static of the program or of a library: a sized object in the symbol table of a file
	 * it maps), as "name+0xoff" ("name" at its start) into @buf, demangled: "_PyRuntime+0x1b0".
	 * The files are read as the process's user, as for its stacks. Returns the length
	 * written (snprintf semantics, cut to fit), 0 when no object is known to hold @addr
	 * (the heap, a stack, a replay: the process is not there to read), or -ENOMEM. Each call
	 * may read files: keep the answer (name_set keeps it in a recording too).
	 */
	int (*data_symbol)(struct ws_plugin_ctx *ctx, uint32_t pid, uint64_t addr, char *buf,
			   size_t len);

	/* A traced thread received or sent on a socket (struct ws_sock_io): requests. */
	void (*sock_io)(struct ws_plugin_ctx *ctx, const struct ws_sock_io *io);

	/*
	 * 3.1. The lock a language runtime of traced process @pid keeps at futex word @addr, as
	 * the runtime's own state says where it is (CPython's GIL: its condition variable and
	 * mutexes in _PyRuntime): WS_LOCK_* (> 0) with its name in @buf ("the GIL (python3.11
	 * pid 4821)", cut to fit), 0 when no lock whyslow knows lies there (and in a replay: keep
	 * the answer with name_set), or -ENOMEM. NULL on a 3.0 core.
	 */
	int (*lock_name)(struct ws_plugin_ctx *ctx, uint32_t pid, uint64_t addr, char *buf,
			 size_t len);

	/* NULL: members appended in 3.x take these slots (check a member for NULL before use) */
	void (*reserved[WS_RESERVED_WORDS - 1])(void);
};

/* ws_host.lock_name's results: which lock a futex word is */
#define WS_LOCK_GIL 1 /* CPython's global interpreter lock ("lock": "gil" in a futex claim) */

/*
 * The descriptor a plugin's entry function returns. It must stay valid while
 * the plugin is loaded (a static const object is the usual choice).
 */
struct ws_plugin {
	/* sizeof(struct ws_plugin) as the plugin was built. Required. */
	size_t sz;
	/* WS_ABI_MAJOR and WS_ABI_MINOR as the plugin was built. Required. */
	uint16_t abi_major, abi_minor;
	/*
	 * Record kinds this plugin owns: [kind_base, kind_base + WS_KIND_RANGE), one of the
	 * ranges <whyslow/record.h> lists. Required; must not overlap the core's or another
	 * loaded plugin's.
	 */
	uint16_t kind_base;
	uint16_t pad0;

	/* Short name: [a-z0-9_]+, also its ini section and --sources entry. Required. */
	const char *name;
	/* One line on what the source watches. Required. */
	const char *description;
	/* The plugin's own version. Required. */
	const char *version;

	/*
	 * The compiled BPF object (ELF bytes) and its size. NULL: the plugin
	 * writes no records (it may still infer edges from others' graph).
	 */
	const void *(*bpf_object)(size_t *size);

	/*
	 * Ini keys the plugin reads, terminated by an entry with key NULL.
	 * NULL: it has none beyond "enabled". Unknown keys are refused by the
	 * core before any callback runs.
	 */
	const struct ws_config_key *config_keys;

	/*
	 * Called once per session before any other callback that takes a ctx
	 * (both when tracing and when replaying a recording): allocate the
	 * plugin's state into ctx->priv. Return 0 or a negative errno (the run
	 * stops with the plugin's message). NULL: no state.
	 */
	int (*init)(struct ws_plugin_ctx *ctx);

	/*
	 * Called once after the BPF object is opened and before it is loaded
	 * (live tracing only): read config, set rodata, disable programs the
	 * kernel lacks. Return 0 or a negative errno (the run stops with the
	 * plugin's message). NULL: nothing to configure.
	 */
	int (*configure)(struct ws_plugin_ctx *ctx, struct bpf_object *obj);

	/*
	 * Consume one of the plugin's own records, in timestamp order. @rec
	 * has been checked to be at least sizeof(struct ws_rec_hdr) and
	 * rec->size bytes long; the plugin checks its own minimum size and
	 * returns -EINVAL when the record is malformed. NULL: records of this
	 * plugin are counted and ignored.
	 */
	int (*decode)(struct ws_plugin_ctx *ctx, const struct ws_rec_hdr *rec);

	/*
	 * Edge inference: explain @w, or leave @out alone. Return 1 if @out
	 * was filled, 0 if the plugin has no claim (then @out must be untouched:
	 * the next plugin gets the same buffer). Every plugin's claim is
	 * collected; the strongest wins (ties: the earlier plugin). A claim
	 * must rest on evidence the plugin saw, never on time overlap alone.
	 * NULL: the plugin never claims waits.
	 */
	int (*infer)(struct ws_plugin_ctx *ctx, const struct ws_wait *w, struct ws_claim *out);

	/*
	 * Render a claim this plugin made as the words after "blocked 12ms on",
	 * e.g. "futex 0x7f2a3c001000". Returns the length written (snprintf
	 * semantics). NULL: the core prints the claim's kind.
	 */
	int (*describe)(struct ws_plugin_ctx *ctx, const struct ws_claim *claim, char *buf,
			size_t len);

	/*
	 * Name the resource a claim is about, without what is particular to
	 * one wait: "block I/O on vda" (not the sector), "futex 0x7f2a3c001000".
	 * Claims of one plugin with the same kind and the same resource are one
	 * cause when the core weighs what a waker was doing (200 short requests
	 * on one disk outweigh 20 ms of running), and the text names a link of
	 * several waits by it ("in 200 waits for block I/O on vda"); a chain
	 * that ends in a root claim is summed under it. Returns the length
	 * written (snprintf semantics). NULL, or a result <= 0: every distinct
	 * claim is its own resource.
	 */
	int (*resource)(struct ws_plugin_ctx *ctx, const struct ws_claim *claim, char *buf,
			size_t len);

	/*
	 * Name the root cause of a chain that ends in one of this plugin's
	 * claims and has no resource: "timer sleep in worker", "untraced
	 * thread cron". @comm is the name of the thread that waited. Chains
	 * with equal root labels are summed together in the summary. Returns
	 * the length written (snprintf semantics). NULL, or a result <= 0: the
	 * core says "<kind> in <comm>".
	 */
	int (*root_label)(struct ws_plugin_ctx *ctx, const struct ws_claim *claim, const char *comm,
			  char *buf, size_t len);

	/* Called once when the session ends: free ctx->priv. NULL: nothing to release. */
	void (*fini)(struct ws_plugin_ctx *ctx);

	/*
	 * Say what the open wait @w waits for: a claim as infer makes (kind, evidence,
	 * fields; woken_by and root unused) and the words after "blocked on" in @what ("futex
	 * 0x7f2a3c001000 (FUTEX_WAIT_PRIVATE)"). Return 1 if described, 0 if the wait is not of
	 * this source's kinds. Every plugin is asked; the strongest claim wins (ties: the earlier
	 * plugin); none: the core says "unknown". Uses @w alone: a report describes a
	 * recording's open waits again, long after the process is gone. NULL: never.
	 */
	int (*describe_open)(struct ws_plugin_ctx *ctx, const struct ws_open_wait *w,
			     struct ws_claim *out, char *what, size_t len);

	/*
	 * Name the holder of the lock that the open wait @w, described by this plugin
	 * as @c, waits for, from the live process (its memory, never a guess). @is_live says
	 * whether a tid may hold it. Return 1 with @out filled (out->tid 0 and out->why when
	 * the lock names no holder), 0 when @c is not a lock, or -errno when the process cannot
	 * be read. Called while the process lives, or with @w->mem set: then the lock
	 * is read from there alone, the process may be gone. NULL: never.
	 */
	int (*open_owner)(struct ws_plugin_ctx *ctx, const struct ws_open_wait *w,
			  const struct ws_claim *c, ws_tid_live_fn is_live, void *live_ctx,
			  struct ws_open_owner *out);

	/* Zero (NULL): members appended in 3.x take these slots. */
	void (*reserved[WS_RESERVED_WORDS])(void);
};

/* The entry symbol's type. */
typedef const struct ws_plugin *(*ws_plugin_entry_fn)(void);

/* C linkage for the entry symbol, so a plugin written in C++ exports the right name. */
#ifdef __cplusplus
#define WS_PLUGIN_LINKAGE extern "C"
#else
#define WS_PLUGIN_LINKAGE
#endif

/* Define the entry symbol returning @desc (a struct ws_plugin). */
#define WS_PLUGIN_DEFINE(desc)                                                                 \
	WS_PLUGIN_LINKAGE WS_PLUGIN_EXPORT const struct ws_plugin *whyslow_plugin_entry(void); \
	WS_PLUGIN_LINKAGE WS_PLUGIN_EXPORT const struct ws_plugin *whyslow_plugin_entry(void)  \
	{                                                                                      \
		return &(desc);                                                                \
	}

#ifdef __cplusplus
}
#endif

#endif /* WHYSLOW_PLUGIN_H */
