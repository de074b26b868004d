// SPDX-License-Identifier: MIT
/* Prometheus metrics of the reported waits: see metrics.h. */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "metrics.h"

#define BLOCK_IO_PREFIX "block I/O on "
/* the blkio source's root of a request held back by its cgroup's I/O limit (plugins/blkio) */
#define IO_LIMIT_PREFIX "I/O limit of "
/* its roots of a read under a page fault: of a swap area, of anything else on a disk */
#define SWAP_IN_PREFIX "swap-in from "
#define FAULT_READ_PREFIX "page fault reading "
#define OTHER "other"

/* Upper bounds of the wait-duration histogram, in ns (+Inf follows). */
static const uint64_t bucket_ns[] = {
	1000000ULL,    2500000ULL,    5000000ULL,     10000000ULL,    25000000ULL,
	50000000ULL,   100000000ULL,  250000000ULL,   500000000ULL,   1000000000ULL,
	2500000000ULL, 5000000000ULL, 10000000000ULL, 30000000000ULL, 60000000000ULL,
};
#define NBUCKETS (sizeof(bucket_ns) / sizeof(bucket_ns[0]))

static const char *const cause_names[WS_CAUSE_COUNT] = {
	[WS_CAUSE_BLOCK_IO] = "block_io",
	[WS_CAUSE_LOCK] = "lock",
	[WS_CAUSE_RUNQUEUE] = "runqueue",
	[WS_CAUSE_CPU_QUOTA] = "cpu_quota",
	[WS_CAUSE_IO_THROTTLE] = "io_throttle",
	[WS_CAUSE_MEMORY] = "memory",
	[WS_CAUSE_SLEEP] = "sleep",
	[WS_CAUSE_NETWORK] = "network",
	[WS_CAUSE_CPU_WORK] = "cpu_work",
	[WS_CAUSE_OTHER] = "other",
	[WS_CAUSE_UNKNOWN] = "unknown",
};

/* Link kinds (the sources' claims' and the core's own) and the class each one's root is. */
static const struct {
	const char *kind;
	enum ws_cause cause;
} kind_causes[] = {
	{ "block_io", WS_CAUSE_BLOCK_IO },
	{ "futex", WS_CAUSE_LOCK },
	{ "kernel_lock", WS_CAUSE_LOCK },
	{ WS_KIND_RUNQUEUE, WS_CAUSE_RUNQUEUE },
	{ WS_KIND_WAKEUP_LATENCY, WS_CAUSE_RUNQUEUE },
	{ WS_CLAIM_QUOTA, WS_CAUSE_CPU_QUOTA },
	{ WS_CLAIM_RECLAIM, WS_CAUSE_MEMORY },
	{ WS_CLAIM_COMPACTION, WS_CAUSE_MEMORY },
	{ WS_CLAIM_MEMORY_HIGH, WS_CAUSE_MEMORY },
	{ "sleep", WS_CAUSE_SLEEP },
	{ "timer", WS_CAUSE_SLEEP },
	{ "timeout", WS_CAUSE_SLEEP },
	{ "network", WS_CAUSE_NETWORK },
	{ "socket", WS_CAUSE_NETWORK },
	{ WS_KIND_RUNNING, WS_CAUSE_CPU_WORK },
	{ WS_KIND_UNKNOWN, WS_CAUSE_UNKNOWN },
};

struct proc {
	uint32_t pid;
	char comm[WS_COMM];
	bool other; /* the sum of the processes past the bound */
	bool used;  /* a process's, now (one that exited frees its place) */
	uint64_t ns[WS_CAUSE_COUNT];
	uint64_t dev_ns[WS_METRICS_MAX_DEVICES + 1]; /* by devices[]; the last: "other" */
	uint64_t idle_ns;
	uint64_t short_ns; /* waits shorter than min_block */
};

struct hist {
	uint64_t count, sum_ns;
	uint64_t le[NBUCKETS]; /* not cumulative: cumulated when written */
};

struct ws_metrics {
	pthread_mutex_t lock;
	struct proc procs[WS_METRICS_MAX_PROCS + 1]; /* the last: "other" */
	int nprocs;
	char devices[WS_METRICS_MAX_DEVICES][32];
	int ndevices;
	struct hist hist[WS_CAUSE_COUNT];
	uint64_t records, lost, threads;
};

enum ws_cause ws_cause_of_root(const char *kind, bool named, const char *key)
{
	enum ws_cause c = ws_cause_of(kind, named);

	if (c == WS_CAUSE_BLOCK_IO && key &&
	    !strncmp(key, IO_LIMIT_PREFIX, strlen(IO_LIMIT_PREFIX)))
		return WS_CAUSE_IO_THROTTLE;
	if (c == WS_CAUSE_BLOCK_IO && key && !strncmp(key, SWAP_IN_PREFIX, strlen(SWAP_IN_PREFIX)))
		return WS_CAUSE_MEMORY;
	return c;
}

const char *ws_cause_name(enum ws_cause c)
{
	return c < WS_CAUSE_COUNT ? cause_names[c] : "unknown";
}

enum ws_cause ws_cause_of(const char *kind, bool named)
{
	if (!named || !kind)
		return WS_CAUSE_UNKNOWN;
	for (size_t i = 0; i < sizeof(kind_causes) / sizeof(kind_causes[0]); i++)
		if (!strcmp(kind, kind_causes[i].kind))
			return kind_causes[i].cause;
	/* a signal, an untraced waker, an unexplained syscall: named, but none of the classes */
	return WS_CAUSE_OTHER;
}

struct ws_metrics *ws_metrics_new(void)
{
	struct ws_metrics *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	pthread_mutex_init(&m->lock, NULL);
	m->procs[WS_METRICS_MAX_PROCS].other = true;
	return m;
}

void ws_metrics_free(struct ws_metrics *m)
{
	if (!m)
		return;
	pthread_mutex_destroy(&m->lock);
	free(m);
}

/*
 * The entry of (@pid, @comm), made in a free place if there is one (a gone process's, or a new
 * one) and @may_make, else the "other" one. Under the lock.
 */
static struct proc *proc_find(struct ws_metrics *m, uint32_t pid, const char *comm, bool may_make)
{
	struct proc *p = NULL;

	for (int i = 0; i < m->nprocs; i++) {
		if (!m->procs[i].used)
			p = p ? p : &m->procs[i];
		else if (m->procs[i].pid == pid && !strncmp(m->procs[i].comm, comm, WS_COMM - 1))
			return &m->procs[i];
	}
	if (!may_make || (!p && m->nprocs == WS_METRICS_MAX_PROCS))
		return &m->procs[WS_METRICS_MAX_PROCS];
	if (!p)
		p = &m->procs[m->nprocs++];
	memset(p, 0, sizeof(*p));
	p->used = true;
	p->pid = pid;
	snprintf(p->comm, sizeof(p->comm), "%s", comm);
	return p;
}

static struct proc *proc_of(struct ws_metrics *m, uint32_t pid, const char *comm)
{
	return proc_find(m, pid, comm, true);
}

/* The index of block device @name in devices[], added if there is room; else "other". */
static int device_of(struct ws_metrics *m, const char *name)
{
	for (int i = 0; i < m->ndevices; i++)
		if (!strcmp(m->devices[i], name))
			return i;
	if (m->ndevices == WS_METRICS_MAX_DEVICES)
		return WS_METRICS_MAX_DEVICES;
	snprintf(m->devices[m->ndevices], sizeof(m->devices[0]), "%s", name);
	return m->ndevices++;
}

void ws_metrics_add(struct ws_metrics *m, uint32_t pid, const char *comm, enum ws_cause cause,
		    const char *device, uint64_t ns)
{
	struct proc *p;

	if (cause >= WS_CAUSE_COUNT)
		cause = WS_CAUSE_UNKNOWN;
	pthread_mutex_lock(&m->lock);
	p = proc_of(m, pid, comm);
	p->ns[cause] += ns;
	if (cause == WS_CAUSE_BLOCK_IO && device)
		p->dev_ns[device_of(m, device)] += ns;
	pthread_mutex_unlock(&m->lock);
}

void ws_metrics_observe(struct ws_metrics *m, enum ws_cause cause, uint64_t ns)
{
	struct hist *h;
	size_t b = 0;

	if (cause >= WS_CAUSE_COUNT)
		cause = WS_CAUSE_UNKNOWN;
	while (b < NBUCKETS && ns > bucket_ns[b])
		b++;
	pthread_mutex_lock(&m->lock);
	h = &m->hist[cause];
	h->count++;
	h->sum_ns += ns;
	if (b < NBUCKETS)
		h->le[b]++;
	pthread_mutex_unlock(&m->lock);
}

void ws_metrics_idle(struct ws_metrics *m, uint32_t pid, const char *comm, uint64_t ns)
{
	pthread_mutex_lock(&m->lock);
	proc_of(m, pid, comm)->idle_ns += ns;
	pthread_mutex_unlock(&m->lock);
}

void ws_metrics_short(struct ws_metrics *m, uint32_t pid, const char *comm, uint64_t ns,
		      bool exited)
{
	pthread_mutex_lock(&m->lock);
	/*
	 * an exited thread's come late, maybe after its process's series ended: no place is made
	 * for them, which nothing would free again
	 */
	proc_find(m, pid, comm, !exited)->short_ns += ns;
	pthread_mutex_unlock(&m->lock);
}

void ws_metrics_progress(struct ws_metrics *m, uint64_t records, uint64_t lost, uint64_t threads)
{
	pthread_mutex_lock(&m->lock);
	m->records = records;
	m->lost = lost;
	m->threads = threads;
	pthread_mutex_unlock(&m->lock);
}

/*
 * The process's name: its main thread's (the victim may be a thread named otherwise), so one
 * process is one series whatever its threads are called.
 */
static const char *process_comm(struct ws_graph *g, const struct ws_thread *victim)
{
	const struct ws_thread *main = ws_graph_thread(g, victim->pid);

	if (main && main->pid == victim->pid && main->comm[0])
		return main->comm;
	return victim->comm[0] ? victim->comm : "?";
}

void ws_metrics_wait_sink(void *ctx, struct ws_graph *g, const struct ws_chain *c, bool ranked)
{
	struct ws_metrics *m = ctx;
	const char *comm = process_comm(g, c->victim);
	uint32_t pid = c->victim->pid;
	enum ws_cause root = WS_CAUSE_UNKNOWN;
	bool root_found = false;

	if (!ranked) {
		ws_metrics_idle(m, pid, comm, c->end - c->start);
		return;
	}
	/* each segment under its own root, as the report's root causes sum them */
	for (size_t i = 0; i < c->nsegs; i++) {
		struct ws_seg_root scratch;
		const struct ws_seg_root *r = ws_chain_seg_root(g, c, i, &scratch);
		enum ws_cause cause = ws_cause_of_root(r->kind, r->named, r->key);
		const char *dev = NULL;

		if (cause == WS_CAUSE_BLOCK_IO &&
		    !strncmp(r->key, BLOCK_IO_PREFIX, strlen(BLOCK_IO_PREFIX)))
			dev = r->key + strlen(BLOCK_IO_PREFIX);
		else if (cause == WS_CAUSE_BLOCK_IO &&
			 !strncmp(r->key, FAULT_READ_PREFIX, strlen(FAULT_READ_PREFIX)))
			dev = r->key + strlen(FAULT_READ_PREFIX);
		ws_metrics_add(m, pid, comm, cause, dev, c->segs[i].dur);
		/* the wait is counted in the histogram under the root it settled on */
		if (!root_found && !strcmp(r->key, c->root)) {
			root = cause;
			root_found = true;
		}
	}
	ws_metrics_observe(m, root, c->end - c->start);
}

void ws_metrics_short_sink(void *ctx, struct ws_graph *g, const struct ws_thread *t, uint64_t ns)
{
	ws_metrics_short(ctx, t->pid, process_comm(g, t), ns, t->exited);
}

void ws_metrics_gone(void *ctx, const struct ws_thread *t)
{
	struct ws_metrics *m = ctx;

	/*
	 * its series end (Prometheus marks them stale): its threads' chains are all in; short
	 * waits of its other threads let go later go to "other" (ws_metrics_short)
	 */
	if (t->tid != t->pid)
		return;
	pthread_mutex_lock(&m->lock);
	for (int i = 0; i < m->nprocs; i++)
		if (m->procs[i].used && m->procs[i].pid == t->pid)
			m->procs[i].used = false;
	pthread_mutex_unlock(&m->lock);
}

/* ---- the exposition format ---------------------------------------------------------------- */

/*
 * @s as a label value: backslash, double quote and newline escaped, as the format asks; bytes
 * that are not printable ASCII as '?', since a thread's name is any bytes and a label value
 * must be UTF-8.
 */
static void put_label(FILE *out, const char *s)
{
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch == '\\' || ch == '"')
			fprintf(out, "\\%c", ch);
		else if (ch == '\n')
			fputs("\\n", out);
		else
			fputc(ch >= 0x20 && ch < 0x7f ? ch : '?', out);
	}
}

/* ns as seconds, exactly (no float rounding: a sum of ns stays that sum). */
static void put_seconds(FILE *out, uint64_t ns)
{
	fprintf(out, "%" PRIu64 ".%09" PRIu64, ns / UINT64_C(1000000000),
		ns % UINT64_C(1000000000));
}

/* HELP (@help_fmt: printf's, so a bound is said as the code has it) and TYPE of family @name. */
__attribute__((format(printf, 4, 5))) static void
put_head(FILE *out, const char *name, const char *type, const char *help_fmt, ...)
{
	va_list ap;

	fprintf(out, "# HELP %s ", name);
	va_start(ap, help_fmt);
	vfprintf(out, help_fmt, ap);
	va_end(ap);
	fprintf(out, "\n# TYPE %s %s\n", name, type);
}

/* `name{pid="...",comm="..."` of @p, the brace left open for more labels. */
static void put_proc(FILE *out, const char *name, const struct proc *p)
{
	if (p->other)
		fprintf(out, "%s{pid=\"" OTHER "\",comm=\"" OTHER "\"", name);
	else
		fprintf(out, "%s{pid=\"%" PRIu32 "\",comm=\"", name, p->pid);
	if (!p->other) {
		put_label(out, p->comm);
		fputc('"', out);
	}
}

/* Entry @i of those in use, 0 <= @i <= nprocs: the processes, then "other". */
static const struct proc *proc_at(const struct ws_metrics *m, int i)
{
	return i < m->nprocs ? &m->procs[i] : &m->procs[WS_METRICS_MAX_PROCS];
}

/* "other" has series once some time went there; a process, from its first wait to its end. */
static bool proc_used(const struct proc *p)
{
	uint64_t any = p->idle_ns | p->short_ns;

	for (int c = 0; c < WS_CAUSE_COUNT; c++)
		any |= p->ns[c];
	return p->other ? any != 0 : p->used;
}

static void write_offcpu(struct ws_metrics *m, FILE *out)
{
	put_head(
		out, "whyslow_offcpu_seconds_total", "counter",
		"Time off CPU of the reported waits (at least min_block, idle ones apart), by the class of each piece's root cause, as the report's root causes sum them: block_io, lock, runqueue, cpu_quota, io_throttle (a block request held back by its cgroup's I/O limit), memory (memory reclaim, direct compaction and swap-in), sleep, network, cpu_work, other, unknown. At most %d processes at a time have series of their own (an exited process's series end, its place taken by the next); the time of the others is summed under pid=\"other\", comm=\"other\".",
		WS_METRICS_MAX_PROCS);
	for (int i = 0; i <= m->nprocs; i++) {
		const struct proc *p = proc_at(m, i);

		for (int c = 0; c < WS_CAUSE_COUNT && proc_used(p); c++) {
			put_proc(out, "whyslow_offcpu_seconds_total", p);
			fprintf(out, ",cause=\"%s\"} ", cause_names[c]);
			put_seconds(out, p->ns[c]);
			fputc('\n', out);
		}
	}
}

static void write_block_io(struct ws_metrics *m, FILE *out)
{
	put_head(
		out, "whyslow_block_io_seconds_total", "counter",
		"Of whyslow_offcpu_seconds_total{cause=\"block_io\"}, the time by block device (the first %d devices seen; the rest as device=\"other\"); processes bounded as there.",
		WS_METRICS_MAX_DEVICES);
	for (int i = 0; i <= m->nprocs; i++) {
		const struct proc *p = proc_at(m, i);

		for (int d = 0; d <= WS_METRICS_MAX_DEVICES && proc_used(p); d++) {
			if (!p->dev_ns[d])
				continue;
			put_proc(out, "whyslow_block_io_seconds_total", p);
			fputs(",device=\"", out);
			put_label(out, d < WS_METRICS_MAX_DEVICES ? m->devices[d] : OTHER);
			fputs("\"} ", out);
			put_seconds(out, p->dev_ns[d]);
			fputc('\n', out);
		}
	}
}

static void write_idle(struct ws_metrics *m, FILE *out)
{
	put_head(
		out, "whyslow_idle_wait_seconds_total", "counter",
		"Time off CPU of reported waits that were idle (nobody was working to end them: a server between requests), not ranked and not in whyslow_offcpu_seconds_total unless include_idle is set; processes bounded as there.");
	for (int i = 0; i <= m->nprocs; i++) {
		const struct proc *p = proc_at(m, i);

		if (!p->idle_ns || !proc_used(p))
			continue;
		put_proc(out, "whyslow_idle_wait_seconds_total", p);
		fputs("} ", out);
		put_seconds(out, p->idle_ns);
		fputc('\n', out);
	}
}

static void write_short(struct ws_metrics *m, FILE *out)
{
	put_head(
		out, "whyslow_short_wait_seconds_total", "counter",
		"Time off CPU in waits shorter than min_block (seen one by one, or summed in the kernel below the resolution): not chained, so in no cause class; counted as they leave the kept history, up to max_window late; processes bounded as there.");
	for (int i = 0; i <= m->nprocs; i++) {
		const struct proc *p = proc_at(m, i);

		if (!p->short_ns || !proc_used(p))
			continue;
		put_proc(out, "whyslow_short_wait_seconds_total", p);
		fputs("} ", out);
		put_seconds(out, p->short_ns);
		fputc('\n', out);
	}
}

static void write_hist(struct ws_metrics *m, FILE *out)
{
	const char *name = "whyslow_wait_duration_seconds";

	put_head(
		out, name, "histogram",
		"Durations of the ranked reported waits (at least min_block), by the class of the root cause each one settled on.");
	for (int c = 0; c < WS_CAUSE_COUNT; c++) {
		const struct hist *h = &m->hist[c];
		uint64_t cum = 0;

		for (size_t b = 0; b < NBUCKETS; b++) {
			cum += h->le[b];
			fprintf(out, "%s_bucket{cause=\"%s\",le=\"", name, cause_names[c]);
			put_seconds(out, bucket_ns[b]);
			fprintf(out, "\"} %" PRIu64 "\n", cum);
		}
		fprintf(out, "%s_bucket{cause=\"%s\",le=\"+Inf\"} %" PRIu64 "\n", name,
			cause_names[c], h->count);
		fprintf(out, "%s_sum{cause=\"%s\"} ", name, cause_names[c]);
		put_seconds(out, h->sum_ns);
		fprintf(out, "\n%s_count{cause=\"%s\"} %" PRIu64 "\n", name, cause_names[c],
			h->count);
	}
}

static void write_self(struct ws_metrics *m, const struct ws_metrics_self *self, FILE *out)
{
	put_head(out, "whyslow_records_total", "counter",
		 "Records the tracer read from its BPF ring buffer.");
	fprintf(out, "whyslow_records_total %" PRIu64 "\n", m->records);
	put_head(
		out, "whyslow_records_lost_total", "counter",
		"Records the kernel side could not write (ring buffer full or a program skipped): the waits around them may be misexplained; the report's summary says which.");
	fprintf(out, "whyslow_records_lost_total %" PRIu64 "\n", m->lost);
	put_head(out, "whyslow_threads", "gauge", "Threads the analysis holds a timeline for now.");
	fprintf(out, "whyslow_threads %" PRIu64 "\n", m->threads);
	put_head(out, "whyslow_cpu_seconds_total", "counter",
		 "CPU time whyslow itself used, by mode (getrusage).");
	fputs("whyslow_cpu_seconds_total{mode=\"user\"} ", out);
	put_seconds(out, self->user_ns);
	fputs("\nwhyslow_cpu_seconds_total{mode=\"system\"} ", out);
	put_seconds(out, self->system_ns);
	fputc('\n', out);
	put_head(out, "whyslow_resident_memory_bytes", "gauge",
		 "Resident memory of whyslow itself.");
	fprintf(out, "whyslow_resident_memory_bytes %" PRIu64 "\n", self->rss_bytes);
}

int ws_metrics_write(struct ws_metrics *m, const struct ws_metrics_self *self, FILE *out)
{
	pthread_mutex_lock(&m->lock);
	write_offcpu(m, out);
	write_block_io(m, out);
	write_idle(m, out);
	write_short(m, out);
	write_hist(m, out);
	write_self(m, self, out);
	pthread_mutex_unlock(&m->lock);
	return ferror(out) ? -EIO : 0;
}
