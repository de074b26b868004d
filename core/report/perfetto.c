// SPDX-License-Identifier: MIT
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <whyslow/table.h>

#include "perfetto.h"
#include "requests.h"
#include "base/util.h"
#include "stacks/stack_fmt.h"

/* Width of the marker slices that carry a flow's ends (flows bind to slices). */
#define MARK_NS 1000

/* A marker slice: where a flow binds on a thread whose timeline is not exported. */
struct mark {
	uint64_t start, end;
};

struct pthread {
	uint32_t tid, pid;
	char comm[WS_COMM];
	/*
	 * Its marker slices, sorted and disjoint. Chains arrive in the order their waits end,
	 * not in the order of their wakeups, so a new marker can fall before older ones.
	 */
	struct mark *marks;
	size_t nmarks, marks_cap;
};

struct ws_perfetto {
	FILE *spool; /* events so far, each preceded by ",\n" */
	uint64_t nevents, next_flow, next_request;
	struct ws_table th;   /* tid -> struct pthread */
	struct ws_table seen; /* hashes of slices and flows written (keys only) */
	int err;
	const struct ws_stacks *stacks;
	const char *(*cgroup_of)(void *ctx, uint32_t tid, uint32_t pid, uint64_t ts);
	void *cgroup_ctx;
};

void ws_perfetto_set_cgroups(struct ws_perfetto *p,
			     const char *(*fn)(void *ctx, uint32_t tid, uint32_t pid, uint64_t ts),
			     void *ctx)
{
	p->cgroup_of = fn;
	p->cgroup_ctx = ctx;
}

void ws_perfetto_set_stacks(struct ws_perfetto *p, const struct ws_stacks *stacks)
{
	p->stacks = stacks;
}

/* ,"@key":"frame\nframe..." (innermost first) when the store has such a stack. */
static void stack_arg(FILE *f, const char *key, const struct ws_stack *const parts[], int n)
{
	char *text = NULL;
	size_t len = 0;
	FILE *m;

	if (!n || !(m = open_memstream(&text, &len)))
		return;
	ws_stack_lines(m, parts, n);
	if (!fclose(m) && len) {
		fprintf(f, ",\"%s\":", key);
		ws_json_str(f, text);
	}
	free(text);
}

struct ws_perfetto *ws_perfetto_new(void)
{
	struct ws_perfetto *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->spool = ws_tmpfile();
	if (!p->spool) {
		free(p);
		return NULL;
	}
	p->next_flow = 1;
	ws_table_init(&p->th, sizeof(struct pthread));
	ws_table_init(&p->seen, 0);
	return p;
}

void ws_perfetto_free(struct ws_perfetto *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->th.cap; i++) {
		struct pthread *t = ws_table_at(&p->th, i);

		if (t)
			free(t->marks);
	}
	fclose(p->spool);
	ws_table_free(&p->th);
	ws_table_free(&p->seen);
	free(p);
}

/* ---- thread table -------------------------------------------------------------------------- */

static struct pthread *th_find(struct ws_perfetto *p, uint32_t tid)
{
	return ws_table_get(&p->th, tid);
}

/*
 * The track of @tid. The first pid a thread is seen with names its process
 * for the whole trace; a better name replaces "?".
 */
static struct pthread *th_get(struct ws_perfetto *p, uint32_t tid, uint32_t pid, const char *comm)
{
	bool added;
	struct pthread *t = ws_table_put(&p->th, tid, &added);

	if (!t)
		return NULL;
	if (added) {
		t->tid = tid;
		t->pid = pid ? pid : tid;
	}
	if (comm && *comm && strcmp(comm, "?") && (!t->comm[0] || !strcmp(t->comm, "?")))
		snprintf(t->comm, sizeof(t->comm), "%s", comm);
	return t;
}

int ws_perfetto_thread(struct ws_perfetto *p, uint32_t tid, uint32_t pid, const char *comm)
{
	return tid && !th_get(p, tid, pid, comm) ? -ENOMEM : 0;
}

/* ---- dedup: one chain's links often reappear in another's ---------------------------------- */

/* true if @h was new (and is now recorded) */
static bool first_time(struct ws_perfetto *p, uint64_t h)
{
	bool added;

	h |= 1; /* 0 is no key */
	/* out of memory: a duplicate slice is better than none */
	return !ws_table_put(&p->seen, h, &added) || added;
}

/* ---- JSON ---------------------------------------------------------------------------------- */

/* Trace-event timestamps are microseconds; keep the nanoseconds as decimals. */
static void json_us(FILE *f, const char *key, uint64_t ns)
{
	fprintf(f, ",\"%s\":%" PRIu64 ".%03u", key, ns / 1000, (unsigned int)(ns % 1000));
}

static FILE *event_begin(struct ws_perfetto *p)
{
	fputs(p->nevents++ ? ",\n" : "\n", p->spool);
	return p->spool;
}

static const char *state_name(uint8_t state)
{
	switch (state) {
	case WS_STATE_RUNNING:
		return "running";
	case WS_STATE_RUNNABLE:
		return "runnable";
	case WS_STATE_BLOCKED:
		return "blocked";
	default:
		return "not observed";
	}
}

/*
 * "blocked: futex": the state and, for a wait, its kind. Perfetto groups and aggregates slices
 * by name, so a name holds nothing that varies from one wait to the next: the values (address,
 * device, sector...) go to args (claim_args).
 */
static void label(char *buf, size_t len, uint8_t state, const struct ws_claim *cl)
{
	/* a wait's claim, or a CPU quota's ("runnable: cpu_quota"), or a memory reclaim's
	 * ("running: memory_reclaim"); a stretch not observed is none of these */
	if (!cl || state == WS_STATE_UNKNOWN)
		snprintf(buf, len, "%s", state_name(state));
	else
		snprintf(buf, len, "%s: %.*s", state_name(state), (int)sizeof(cl->kind), cl->kind);
}

static void claim_args(FILE *f, const struct ws_claim *cl)
{
	char key[sizeof(cl->fields[0].key) + 1], s[sizeof(cl->fields[0].s) + 1];
	char evidence[sizeof(cl->evidence) + 1];

	snprintf(evidence, sizeof(evidence), "%.*s", (int)sizeof(cl->evidence), cl->evidence);
	fputs(",\"evidence\":", f);
	ws_json_str(f, evidence);
	if (cl->woken_by)
		fprintf(f, ",\"woken_by\":%u", cl->woken_by);
	for (unsigned int i = 0; i < cl->nfields && i < WS_CLAIM_FIELDS; i++) {
		const struct ws_field *fl = &cl->fields[i];

		snprintf(key, sizeof(key), "%.*s", (int)sizeof(fl->key), fl->key);
		fputc(',', f);
		ws_json_str(f, key);
		if (fl->type == WS_FIELD_U64) {
			fprintf(f, ":%" PRIu64, fl->u);
		} else if (fl->type == WS_FIELD_HEX) {
			fprintf(f, ":\"0x%" PRIx64 "\"", fl->u);
		} else {
			snprintf(s, sizeof(s), "%.*s", (int)sizeof(fl->s), fl->s);
			fputc(':', f);
			ws_json_str(f, s);
		}
	}
}

static void slice_begin(struct ws_perfetto *p, const struct pthread *t, const char *name,
			const char *cat, uint64_t start, uint64_t dur)
{
	FILE *f = event_begin(p);

	fprintf(f, "{\"ph\":\"X\",\"pid\":%u,\"tid\":%u,\"cat\":", t->pid, t->tid);
	ws_json_str(f, cat);
	fputs(",\"name\":", f);
	ws_json_str(f, name);
	json_us(f, "ts", start);
	json_us(f, "dur", dur);
}

int ws_perfetto_ival(struct ws_perfetto *p, const struct ws_thread *th, const struct ws_ival *iv,
		     const struct ws_claim *cl)
{
	const struct pthread *t = th_get(p, th->tid, th->pid, th->comm);
	char name[256];
	FILE *f;

	if (!t)
		return -ENOMEM;
	label(name, sizeof(name), iv->state, cl);
	slice_begin(p, t, name, state_name(iv->state), iv->start, iv->end - iv->start);
	f = p->spool;
	fputs(",\"args\":{", f);
	if (iv->state == WS_STATE_RUNNING)
		fprintf(f, "\"cpu\":%u", iv->cpu);
	else
		fprintf(f, "\"state\":\"%s\"", state_name(iv->state));
	if (cl && (iv->state == WS_STATE_BLOCKED || iv->state == WS_STATE_RUNNABLE))
		claim_args(f, cl);
	if (p->stacks && iv->state == WS_STATE_BLOCKED) {
		const struct ws_stack *own[WS_STACK_PARTS], *wk[WS_STACK_PARTS];
		int n = ws_stacks_find(p->stacks, WS_STACK_WAITER, th->tid, iv->start, iv->end,
				       own);
		int nw = ws_stacks_find(p->stacks, WS_STACK_WAKER, th->tid, iv->start, iv->end, wk);

		stack_arg(f, "stack", own, n);
		if (nw && cl && wk[0]->tid == cl->woken_by)
			stack_arg(f, "waker_stack", wk, nw);
	}
	fputs("}}", f);
	return ferror(f) ? -EIO : 0;
}

static void flow_end(struct ws_perfetto *p, const char *ph, const struct pthread *t, uint64_t id,
		     uint64_t ts, uint32_t victim)
{
	FILE *f = event_begin(p);

	fprintf(f,
		"{\"ph\":\"%s\",\"pid\":%u,\"tid\":%u,\"cat\":\"wakeup\",\"name\":\"wakeup\",\"id\":%" PRIu64
		",\"bp\":\"e\"",
		ph, t->pid, t->tid, id);
	json_us(f, "ts", ts);
	fprintf(f, ",\"args\":{\"chain_of\":%u}}", victim);
}

/*
 * A short marker slice on @t ending at @ts, for an arrow to bind to: @t has no exported slice
 * there (see has_slices). Markers of one thread never overlap, so the track stays properly
 * nested. It is named @what; its args give @other as "@other_key" (tid) and "@other_key_comm".
 * 0 (placed, or one already covers @ts), 1 if none fits, -ENOMEM.
 */
static int marker(struct ws_perfetto *p, struct pthread *t, uint64_t ts, const char *what,
		  const char *other_key, const struct pthread *other, uint32_t victim)
{
	uint64_t start = ts >= MARK_NS ? ts - MARK_NS : 0;
	size_t lo = 0, hi = t->nmarks;
	FILE *f;

	while (lo < hi) { /* the first marker ending at or after @ts */
		size_t mid = lo + (hi - lo) / 2;

		if (t->marks[mid].end < ts)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < t->nmarks && t->marks[lo].start <= ts)
		return 0;
	if (lo > 0 && start < t->marks[lo - 1].end)
		start = t->marks[lo - 1].end;
	if (start >= ts)
		return 1;
	if (ws_grow((void **)&t->marks, &t->marks_cap, t->nmarks + 1, sizeof(*t->marks)))
		return -ENOMEM;
	memmove(&t->marks[lo + 1], &t->marks[lo], (t->nmarks - lo) * sizeof(*t->marks));
	t->marks[lo] = (struct mark){ .start = start, .end = ts };
	t->nmarks++;
	/* named by what it is alone (see label); the thread at the arrow's other end is in args */
	slice_begin(p, t, what, "wakeup", start, ts - start);
	f = p->spool;
	fprintf(f, ",\"args\":{\"chain_of\":%u,\"%s\":%u,\"%s_comm\":", victim, other_key,
		other->tid, other_key);
	ws_json_str(f, other->comm[0] ? other->comm : "?");
	fputs("}}", f);
	return 0;
}

/*
 * Does @th's exported timeline hold @ts? Traced threads' timelines are exported whole from
 * their first event; a helper's (a kernel thread working for them) is not exported at all.
 */
static bool has_slices(const struct ws_thread *th, uint64_t ts)
{
	return th && !th->helper && ts > th->born;
}

/*
 * Link @i of @c was ended by a wakeup from the thread of link @i+1: an arrow from the waker's
 * slice at the wakeup to the wakee's. Where either has no exported slice at that moment, a
 * marker slice carries the arrow's end.
 */
static int wake_flow(struct ws_perfetto *p, const struct ws_chain *c, int i, uint32_t victim)
{
	const struct ws_link *l = &c->links[i], *nx = &c->links[i + 1];
	uint64_t wake = l->start + l->dur, id;
	struct pthread *wakee, *waker;
	int err;

	/* adding the waker may move the table: look the wakee up again after it */
	if (!th_get(p, l->tid, l->pid, l->comm) ||
	    !(waker = th_get(p, nx->tid, nx->pid, nx->comm)) || !(wakee = th_find(p, l->tid)))
		return -ENOMEM;
	if (!first_time(p, ws_hash64(((uint64_t)l->tid << 32 | l->woken_by) ^ ws_hash64(wake))))
		return 0; /* this wakeup is already drawn, from another chain */
	if (!has_slices(nx->thread, wake) &&
	    (err = marker(p, waker, wake, "wakes", "wakee", wakee, victim)))
		return err < 0 ? err : 0;
	if (!has_slices(l->thread, wake) &&
	    (err = marker(p, wakee, wake, "woken by", "waker", waker, victim)))
		return err < 0 ? err : 0;
	id = p->next_flow++;
	flow_end(p, "s", waker, id, wake, victim);
	flow_end(p, "f", wakee, id, wake, victim);
	return 0;
}

int ws_perfetto_chain(struct ws_perfetto *p, const struct ws_chain *c)
{
	uint32_t victim = c->victim ? c->victim->tid : c->nlinks ? c->links[0].tid : 0;

	if (c->victim && !th_get(p, c->victim->tid, c->victim->pid, c->victim->comm))
		return -ENOMEM;
	for (int i = 0; i + 1 < c->nlinks && i + 1 < WS_CHAIN_MAX_LINKS; i++) {
		const struct ws_link *l = &c->links[i];
		int err;

		if (l->has_woken_by && l->woken_by && c->links[i + 1].tid == l->woken_by &&
		    (err = wake_flow(p, c, i, victim)))
			return err;
	}
	if (ferror(p->spool))
		return -EIO;
	return 0;
}

/*
 * A request as an async slice of its process ("request", one track per connection under the
 * process in Perfetto): it overlaps its thread's slices without nesting in them.
 */
static void request_event(struct ws_perfetto *p, const struct ws_request *q, const char *ph,
			  uint64_t ts, uint64_t id)
{
	FILE *f = event_begin(p);

	fprintf(f,
		"{\"ph\":\"%s\",\"cat\":\"request\",\"name\":\"request\",\"pid\":%u,\"tid\":%u,\"id\":%" PRIu64,
		ph, q->pid, q->tid, id);
	json_us(f, "ts", ts);
}

int ws_perfetto_request(struct ws_perfetto *p, const struct ws_request *q)
{
	const struct pthread *t = th_get(p, q->tid, q->pid, q->comm);
	uint64_t id = ++p->next_request;
	FILE *f;

	if (!t)
		return -ENOMEM;
	request_event(p, q, "b", q->start, id);
	f = p->spool;
	fputs(",\"args\":{\"local\":", f);
	ws_json_str(f, q->local);
	fputs(",\"peer\":", f);
	ws_json_str(f, q->peer);
	fprintf(f, ",\"conn\":%" PRIu64 ",\"incomplete\":%s,\"cause\":", q->conn,
		q->incomplete ? "true" : "false");
	if (q->cause)
		ws_json_str(f, q->cause);
	else
		fputs("null", f);
	fputs(",\"parts_us\":{", f);
	for (int i = 0; i < q->nparts; i++) {
		fputs(i ? "," : "", f);
		ws_json_str(f, q->parts[i].what);
		fprintf(f, ":%" PRIu64 ".%03u", q->parts[i].ns / 1000,
			(unsigned int)(q->parts[i].ns % 1000));
	}
	fputs("}}}", f);
	request_event(p, q, "e", q->end, id);
	fputc('}', f);
	return ferror(f) ? -EIO : 0;
}

static void meta(FILE *out, bool *first, const char *what, uint32_t pid, uint32_t tid,
		 const char *name, const char *cgroup)
{
	fprintf(out, "%s{\"ph\":\"M\",\"name\":\"%s\",\"pid\":%u,\"tid\":%u,\"args\":{\"name\":",
		*first ? "\n" : ",\n", what, pid, tid);
	ws_json_str(out, name);
	if (cgroup) {
		fputs(",\"cgroup\":", out);
		ws_json_str(out, cgroup);
	}
	fputs("}}", out);
	*first = false;
}

/* The cgroup of process @pid's track: its leader's (another thread's may differ: v2 threaded). */
static const char *proc_cgroup(struct ws_perfetto *p, uint32_t pid)
{
	const struct pthread *leader = th_find(p, pid);

	return leader && p->cgroup_of
		       ? p->cgroup_of(p->cgroup_ctx, leader->tid, leader->pid, UINT64_MAX)
		       : NULL;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * The distinct cgroups of the processes, sorted, into *@out (@n of them; each a copy). A
 * process's sort index is its cgroup's place here: the JSON trace format has no track above a
 * process, so one cgroup's processes are put next to each other, each labelled with it.
 */
static int proc_cgroups(struct ws_perfetto *p, char ***out, size_t *n)
{
	size_t cap = 0, k = 0;
	char **v = NULL;

	for (size_t i = 0; i < p->th.cap; i++) {
		const struct pthread *t = ws_table_at(&p->th, i);
		const char *cg = t && (t->tid == t->pid || !th_find(p, t->pid))
					 ? proc_cgroup(p, t->pid)
					 : NULL;
		bool dup = false;

		for (size_t j = 0; cg && j < k && !dup; j++)
			dup = !strcmp(v[j], cg);
		if (!cg || dup)
			continue;
		if (ws_grow((void **)&v, &cap, k + 1, sizeof(*v)) || !(v[k] = strdup(cg))) {
			for (size_t j = 0; j < k; j++)
				free(v[j]);
			free(v);
			return -ENOMEM;
		}
		k++;
	}
	if (k)
		qsort(v, k, sizeof(*v), cmp_str);
	*out = v;
	*n = k;
	return 0;
}

/* Process @pid's place and label by its cgroup @cg (NULL: not known, after every group). */
static void proc_group(FILE *out, uint32_t pid, const char *cg, char *const *cgs, size_t ncgs)
{
	const char *const *at = cg && ncgs ? bsearch(&cg, cgs, ncgs, sizeof(*cgs), cmp_str) : NULL;

	fprintf(out,
		",\n{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":%u,\"tid\":%u,\"args\":{\"sort_index\":%zu}}",
		pid, pid, at ? (size_t)(at - (const char *const *)cgs) : ncgs);
	if (!cg)
		return;
	fprintf(out,
		",\n{\"ph\":\"M\",\"name\":\"process_labels\",\"pid\":%u,\"tid\":%u,\"args\":{\"labels\":",
		pid, pid);
	ws_json_str(out, cg);
	fputs("}}", out);
}

int ws_perfetto_write(struct ws_perfetto *p, FILE *out, const struct ws_clock *clock)
{
	bool first = p->nevents == 0;
	char buf[65536], name[64], iso[48], **cgs = NULL;
	size_t n, ncgs = 0;

	/* ts are CLOCK_MONOTONIC microseconds; the anchor maps them to the text report's times */
	ws_clock_iso(clock->wall_ns, iso, sizeof(iso));
	fprintf(out,
		"{\"displayTimeUnit\":\"ns\",\"otherData\":{\"producer\":\"whyslow\",\"clock\":\"CLOCK_MONOTONIC\",\"anchor_monotonic_us\":%" PRIu64
		".%03u,\"anchor_utc\":\"%s\"},\"traceEvents\":[",
		clock->mono_ns / 1000, (unsigned int)(clock->mono_ns % 1000), iso);
	rewind(p->spool);
	while ((n = fread(buf, 1, sizeof(buf), p->spool)) > 0)
		fwrite(buf, 1, n, out);
	if (ferror(p->spool))
		return -EIO;
	fseek(p->spool, 0, SEEK_END);
	if (proc_cgroups(p, &cgs, &ncgs))
		return -ENOMEM;
	/* a track per thread, grouped under its process; processes by cgroup */
	for (size_t i = 0; i < p->th.cap; i++) {
		const struct pthread *t = ws_table_at(&p->th, i);
		const struct pthread *leader;
		const char *cg;

		if (!t)
			continue;
		snprintf(name, sizeof(name), "%s", t->comm[0] ? t->comm : "?");
		meta(out, &first, "thread_name", t->pid, t->tid, name,
		     p->cgroup_of ? p->cgroup_of(p->cgroup_ctx, t->tid, t->pid, UINT64_MAX) : NULL);
		if (t->tid != t->pid && th_find(p, t->pid))
			continue; /* the leader's own entry names the process */
		leader = th_find(p, t->pid);
		if (leader && leader->comm[0])
			snprintf(name, sizeof(name), "%s", leader->comm);
		else
			snprintf(name, sizeof(name), "process %u", t->pid);
		cg = proc_cgroup(p, t->pid);
		meta(out, &first, "process_name", t->pid, t->pid, name, cg);
		if (p->cgroup_of)
			proc_group(out, t->pid, cg, cgs, ncgs);
	}
	for (size_t i = 0; i < ncgs; i++)
		free(cgs[i]);
	free(cgs);
	fputs("\n]}\n", out);
	return ferror(out) ? -EIO : 0;
}
