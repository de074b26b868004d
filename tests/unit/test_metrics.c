// SPDX-License-Identifier: MIT
/* The Prometheus metrics (core/report/metrics.c): root kinds into classes, the text exposition
 * format 0.0.4 as written, label values escaped, the process and device bounds, the histogram;
 * and the sink fed real chains counting what the report's root causes sum. */
#include <criterion/criterion.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>

#include "graph_infer.h"
#include "report/metrics.h"

static const struct ws_metrics_self self = { .user_ns = 1500000000ULL,
					     .system_ns = 250000000ULL,
					     .rss_bytes = 4096 * 1000 };

/* The metrics as a scrape returns them (malloc'd). */
static char *scrape(struct ws_metrics *m)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	cr_assert_not_null(f);
	cr_assert_eq(ws_metrics_write(m, &self, f), 0);
	cr_assert_eq(fclose(f), 0);
	return text;
}

/* Does @text hold @line as a whole line? */
static bool has_line(const char *text, const char *line)
{
	size_t n = strlen(line);

	for (const char *p = text; (p = strstr(p, line)); p++)
		if ((p == text || p[-1] == '\n') && p[n] == '\n')
			return true;
	return false;
}

static int count_prefix(const char *text, const char *prefix)
{
	int n = 0;

	for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		n += !strncmp(p, prefix, strlen(prefix));
	return n;
}

Test(metrics, root_kinds_fall_into_their_classes)
{
	cr_assert_eq(ws_cause_of("block_io", true), WS_CAUSE_BLOCK_IO);
	cr_assert_eq(ws_cause_of("futex", true), WS_CAUSE_LOCK);
	cr_assert_eq(ws_cause_of("kernel_lock", true), WS_CAUSE_LOCK);
	cr_assert_eq(ws_cause_of("runqueue", true), WS_CAUSE_RUNQUEUE);
	cr_assert_eq(ws_cause_of("wakeup_latency", true), WS_CAUSE_RUNQUEUE);
	cr_assert_eq(ws_cause_of("cpu_quota", true), WS_CAUSE_CPU_QUOTA);
	cr_assert_eq(ws_cause_of("memory_reclaim", true), WS_CAUSE_MEMORY);
	cr_assert_eq(ws_cause_of("memory_high", true), WS_CAUSE_MEMORY);
	cr_assert_eq(ws_cause_of("compaction", true), WS_CAUSE_MEMORY);
	cr_assert_eq(ws_cause_of("sleep", true), WS_CAUSE_SLEEP);
	cr_assert_eq(ws_cause_of("timer", true), WS_CAUSE_SLEEP);
	cr_assert_eq(ws_cause_of("timeout", true), WS_CAUSE_SLEEP);
	cr_assert_eq(ws_cause_of("network", true), WS_CAUSE_NETWORK);
	cr_assert_eq(ws_cause_of("socket", true), WS_CAUSE_NETWORK);
	cr_assert_eq(ws_cause_of("running", true), WS_CAUSE_CPU_WORK);
	cr_assert_eq(ws_cause_of("signal", true), WS_CAUSE_OTHER);
	cr_assert_eq(ws_cause_of("untraced", true), WS_CAUSE_OTHER);
	cr_assert_eq(ws_cause_of("unknown", true), WS_CAUSE_UNKNOWN);
	/* a root that names no cause is unknown, whatever link it ends in */
	cr_assert_eq(ws_cause_of("block_io", false), WS_CAUSE_UNKNOWN);
	cr_assert_str_eq(ws_cause_name(WS_CAUSE_CPU_QUOTA), "cpu_quota");
	/* a request held back by an I/O limit for most of its wait: the blkio source's root */
	cr_assert_eq(ws_cause_of_root("block_io", true, "I/O limit of /batch (1 reads/s on 7:0)"),
		     WS_CAUSE_IO_THROTTLE);
	cr_assert_eq(ws_cause_of_root("block_io", true, "block I/O on loop0"), WS_CAUSE_BLOCK_IO);
	cr_assert_eq(ws_cause_of_root("block_io", false, "I/O limit of /batch"), WS_CAUSE_UNKNOWN);
	/* a swap-in is memory's; any other read under a page fault stays block I/O (issue 32) */
	cr_assert_eq(ws_cause_of_root("block_io", true, "swap-in from /dev/loop3"),
		     WS_CAUSE_MEMORY);
	cr_assert_eq(ws_cause_of_root("block_io", true, "page fault reading loop3"),
		     WS_CAUSE_BLOCK_IO);
	cr_assert_str_eq(ws_cause_name(WS_CAUSE_IO_THROTTLE), "io_throttle");
	cr_assert_str_eq(ws_cause_name(WS_CAUSE_MEMORY), "memory");
}

Test(metrics, counters_are_exact_sums_in_seconds)
{
	struct ws_metrics *m = ws_metrics_new();
	char *t;

	cr_assert_not_null(m);
	ws_metrics_add(m, 42, "app", WS_CAUSE_BLOCK_IO, "vda", 367000000ULL);
	ws_metrics_add(m, 42, "app", WS_CAUSE_BLOCK_IO, "vda", 1);
	ws_metrics_add(m, 42, "app", WS_CAUSE_BLOCK_IO, "loop0", 2500000000ULL);
	ws_metrics_add(m, 42, "app", WS_CAUSE_LOCK, NULL, 5000);
	ws_metrics_add(m, 7, "db", WS_CAUSE_SLEEP, NULL, 12000000000ULL);
	ws_metrics_idle(m, 7, "db", 3000000000ULL);
	ws_metrics_progress(m, 1234, 5, 9);
	t = scrape(m);
	cr_assert(
		has_line(
			t,
			"whyslow_offcpu_seconds_total{pid=\"42\",comm=\"app\",cause=\"block_io\"} 2.867000001"),
		"%s", t);
	cr_assert(has_line(
		t,
		"whyslow_offcpu_seconds_total{pid=\"42\",comm=\"app\",cause=\"lock\"} 0.000005000"));
	/* every class of a process that has series, zero or not: rate() sees each one start */
	cr_assert(has_line(
		t,
		"whyslow_offcpu_seconds_total{pid=\"42\",comm=\"app\",cause=\"cpu_quota\"} 0.000000000"));
	cr_assert_eq(count_prefix(t, "whyslow_offcpu_seconds_total{pid=\"42\""), WS_CAUSE_COUNT);
	cr_assert(has_line(
		t,
		"whyslow_offcpu_seconds_total{pid=\"7\",comm=\"db\",cause=\"sleep\"} 12.000000000"));
	cr_assert(has_line(
		t,
		"whyslow_block_io_seconds_total{pid=\"42\",comm=\"app\",device=\"vda\"} 0.367000001"));
	cr_assert(has_line(
		t,
		"whyslow_block_io_seconds_total{pid=\"42\",comm=\"app\",device=\"loop0\"} 2.500000000"));
	cr_assert_eq(count_prefix(t, "whyslow_block_io_seconds_total{"), 2,
		     "no device line without time");
	cr_assert(
		has_line(t, "whyslow_idle_wait_seconds_total{pid=\"7\",comm=\"db\"} 3.000000000"));
	cr_assert_eq(count_prefix(t, "whyslow_idle_wait_seconds_total{"), 1);
	cr_assert(has_line(t, "whyslow_records_total 1234"));
	cr_assert(has_line(t, "whyslow_records_lost_total 5"));
	cr_assert(has_line(t, "whyslow_threads 9"));
	cr_assert(has_line(t, "whyslow_cpu_seconds_total{mode=\"user\"} 1.500000000"));
	cr_assert(has_line(t, "whyslow_cpu_seconds_total{mode=\"system\"} 0.250000000"));
	cr_assert(has_line(t, "whyslow_resident_memory_bytes 4096000"));
	/* nobody past the bound: no "other" series */
	cr_assert_null(strstr(t, "{pid=\"other\""));
	free(t);
	ws_metrics_free(m);
}

/*
 * The exposition format's grammar, line by line: each family's HELP then TYPE before its
 * samples, sample names of the family (a histogram's _bucket/_sum/_count), counters named
 * _total, label values quoted, the value a number, and the text ending in a newline.
 */
Test(metrics, every_line_is_valid_exposition_format)
{
	struct ws_metrics *m = ws_metrics_new();
	regex_t sample;
	char family[128] = "", type[16] = "";
	char *t, *save = NULL;
	int samples = 0;

	cr_assert_not_null(m);
	ws_metrics_add(m, 1, "a \"quoted\" \\ name", WS_CAUSE_RUNQUEUE, NULL, 10);
	ws_metrics_add(m, 2, "b", WS_CAUSE_BLOCK_IO, "nvme0n1", 10);
	ws_metrics_observe(m, WS_CAUSE_BLOCK_IO, 20000000ULL);
	ws_metrics_idle(m, 2, "b", 1);
	t = scrape(m);
	cr_assert_eq(t[strlen(t) - 1], '\n');
	cr_assert_eq(
		regcomp(&sample,
			"^([a-zA-Z_:][a-zA-Z0-9_:]*)(\\{([a-zA-Z_][a-zA-Z0-9_]*=\"([^\"\\\\\n]|\\\\[\"\\\\n])*\",?)*\\})? [0-9]+(\\.[0-9]+)?$",
			REG_EXTENDED),
		0);
	for (char *line = strtok_r(t, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		regmatch_t mt[2];
		char name[128];

		if (!strncmp(line, "# HELP ", 7)) {
			cr_assert_eq(sscanf(line, "# HELP %127s", family), 1);
			type[0] = 0;
			continue;
		}
		if (!strncmp(line, "# TYPE ", 7)) {
			char tf[128];

			cr_assert_eq(sscanf(line, "# TYPE %127s %15s", tf, type), 2, "%s", line);
			cr_assert_str_eq(tf, family, "TYPE of another family than HELP: %s", line);
			cr_assert(!strcmp(type, "counter") || !strcmp(type, "gauge") ||
				  !strcmp(type, "histogram"));
			if (!strcmp(type, "counter"))
				cr_assert(strstr(family, "_total") == family + strlen(family) - 6,
					  "counter %s without _total", family);
			continue;
		}
		cr_assert_neq(line[0], '#', "a comment that is not HELP/TYPE: %s", line);
		cr_assert_eq(regexec(&sample, line, 2, mt, 0), 0, "not a sample line: %s", line);
		snprintf(name, sizeof(name), "%.*s", (int)(mt[1].rm_eo - mt[1].rm_so), line);
		cr_assert_neq(type[0], 0, "sample before its TYPE: %s", line);
		if (!strcmp(type, "histogram")) {
			size_t n = strlen(family);

			cr_assert(!strncmp(name, family, n) && (!strcmp(name + n, "_bucket") ||
								!strcmp(name + n, "_sum") ||
								!strcmp(name + n, "_count")),
				  "%s is not of %s", line, family);
		} else {
			cr_assert_str_eq(name, family, "%s", line);
		}
		samples++;
	}
	cr_assert_gt(samples, 50);
	regfree(&sample);
	free(t);
	ws_metrics_free(m);
}

Test(metrics, label_values_are_escaped_and_ascii)
{
	struct ws_metrics *m = ws_metrics_new();
	char *t;

	cr_assert_not_null(m);
	ws_metrics_add(m, 3, "a\"b\\c\nd\xc3\xa9", WS_CAUSE_OTHER, NULL, 1000000000ULL);
	t = scrape(m);
	cr_assert(
		has_line(
			t,
			"whyslow_offcpu_seconds_total{pid=\"3\",comm=\"a\\\"b\\\\c\\nd??\",cause=\"other\"} 1.000000000"),
		"%s", t);
	free(t);
	ws_metrics_free(m);
}

Test(metrics, processes_past_the_bound_are_summed_as_other)
{
	struct ws_metrics *m = ws_metrics_new();
	char *t, comm[16];

	cr_assert_not_null(m);
	for (int i = 0; i < WS_METRICS_MAX_PROCS + 10; i++) {
		snprintf(comm, sizeof(comm), "p%d", i);
		ws_metrics_add(m, 1000 + i, comm, WS_CAUSE_SLEEP, NULL, 1000000000ULL);
	}
	/* one already seen keeps its series */
	ws_metrics_add(m, 1000, "p0", WS_CAUSE_SLEEP, NULL, 1000000000ULL);
	/* same pid, another name (an exec): another process */
	ws_metrics_add(m, 1001, "renamed", WS_CAUSE_SLEEP, NULL, 1000000000ULL);
	t = scrape(m);
	cr_assert(has_line(
		t,
		"whyslow_offcpu_seconds_total{pid=\"1000\",comm=\"p0\",cause=\"sleep\"} 2.000000000"));
	cr_assert(
		has_line(
			t,
			"whyslow_offcpu_seconds_total{pid=\"other\",comm=\"other\",cause=\"sleep\"} 11.000000000"),
		"%s", t);
	/* the bound, plus other: the number of series per class */
	cr_assert_eq(count_prefix(t, "whyslow_offcpu_seconds_total{"),
		     (WS_METRICS_MAX_PROCS + 1) * WS_CAUSE_COUNT);
	cr_assert_null(strstr(t, "pid=\"1064\""));
	cr_assert(strstr(t, "At most 64 processes at a time have series of their own"),
		  "the HELP says the bound");
	free(t);
	ws_metrics_free(m);
}

Test(metrics, devices_past_the_bound_are_other)
{
	struct ws_metrics *m = ws_metrics_new();
	char *t, dev[16];

	cr_assert_not_null(m);
	for (int i = 0; i < WS_METRICS_MAX_DEVICES + 2; i++) {
		snprintf(dev, sizeof(dev), "sd%c", 'a' + i);
		ws_metrics_add(m, 5, "io", WS_CAUSE_BLOCK_IO, dev, 1000000ULL);
	}
	t = scrape(m);
	cr_assert(has_line(
		t,
		"whyslow_block_io_seconds_total{pid=\"5\",comm=\"io\",device=\"sda\"} 0.001000000"));
	cr_assert(
		has_line(
			t,
			"whyslow_block_io_seconds_total{pid=\"5\",comm=\"io\",device=\"other\"} 0.002000000"),
		"%s", t);
	cr_assert_eq(count_prefix(t, "whyslow_block_io_seconds_total{"),
		     WS_METRICS_MAX_DEVICES + 1);
	cr_assert(has_line(
		t,
		"whyslow_offcpu_seconds_total{pid=\"5\",comm=\"io\",cause=\"block_io\"} 0.018000000"));
	free(t);
	ws_metrics_free(m);
}

Test(metrics, histogram_buckets_are_cumulative_with_inclusive_bounds)
{
	struct ws_metrics *m = ws_metrics_new();
	char *t;

	cr_assert_not_null(m);
	ws_metrics_observe(m, WS_CAUSE_LOCK, 3000000ULL);     /* in le 0.005 */
	ws_metrics_observe(m, WS_CAUSE_LOCK, 10000000ULL);    /* exactly 0.01: in le 0.01 */
	ws_metrics_observe(m, WS_CAUSE_LOCK, 10000001ULL);    /* in le 0.025 */
	ws_metrics_observe(m, WS_CAUSE_LOCK, 70000000000ULL); /* past every bound: +Inf only */
	t = scrape(m);
	cr_assert(
		has_line(
			t,
			"whyslow_wait_duration_seconds_bucket{cause=\"lock\",le=\"0.002500000\"} 0"),
		"%s", t);
	cr_assert(has_line(
		t, "whyslow_wait_duration_seconds_bucket{cause=\"lock\",le=\"0.005000000\"} 1"));
	cr_assert(has_line(
		t, "whyslow_wait_duration_seconds_bucket{cause=\"lock\",le=\"0.010000000\"} 2"));
	cr_assert(has_line(
		t, "whyslow_wait_duration_seconds_bucket{cause=\"lock\",le=\"0.025000000\"} 3"));
	cr_assert(has_line(
		t, "whyslow_wait_duration_seconds_bucket{cause=\"lock\",le=\"60.000000000\"} 3"));
	cr_assert(
		has_line(t, "whyslow_wait_duration_seconds_bucket{cause=\"lock\",le=\"+Inf\"} 4"));
	cr_assert(has_line(t, "whyslow_wait_duration_seconds_sum{cause=\"lock\"} 70.023000001"));
	cr_assert(has_line(t, "whyslow_wait_duration_seconds_count{cause=\"lock\"} 4"));
	cr_assert(has_line(t, "whyslow_wait_duration_seconds_count{cause=\"sleep\"} 0"));
	free(t);
	ws_metrics_free(m);
}

Test(metrics, an_exited_process_gives_its_place_to_the_next)
{
	struct ws_metrics *m = ws_metrics_new();
	struct ws_thread worker = { .tid = 1001, .pid = 1000 }, main = { .tid = 1000, .pid = 1000 };
	char *t, comm[16];

	cr_assert_not_null(m);
	for (int i = 0; i < WS_METRICS_MAX_PROCS; i++) {
		snprintf(comm, sizeof(comm), "p%d", i);
		ws_metrics_add(m, 1000 + i, comm, WS_CAUSE_SLEEP, NULL, 1000000000ULL);
	}
	/* another thread of it leaving changes nothing */
	ws_metrics_gone(m, &worker);
	ws_metrics_add(m, 5000, "late", WS_CAUSE_SLEEP, NULL, 1000000000ULL);
	t = scrape(m);
	cr_assert(has_line(
		t,
		"whyslow_offcpu_seconds_total{pid=\"1000\",comm=\"p0\",cause=\"sleep\"} 1.000000000"));
	cr_assert(has_line(
		t,
		"whyslow_offcpu_seconds_total{pid=\"other\",comm=\"other\",cause=\"sleep\"} 1.000000000"));
	free(t);
	/* its main thread leaving ends its series; the next process has its place, from zero */
	ws_metrics_gone(m, &main);
	ws_metrics_add(m, 6000, "next", WS_CAUSE_LOCK, NULL, 2000000000ULL);
	t = scrape(m);
	cr_assert_null(strstr(t, "{pid=\"1000\""), "%s", t);
	cr_assert(has_line(
		t,
		"whyslow_offcpu_seconds_total{pid=\"6000\",comm=\"next\",cause=\"lock\"} 2.000000000"));
	cr_assert(has_line(
		t,
		"whyslow_offcpu_seconds_total{pid=\"6000\",comm=\"next\",cause=\"sleep\"} 0.000000000"));
	cr_assert(has_line(
		t,
		"whyslow_offcpu_seconds_total{pid=\"other\",comm=\"other\",cause=\"sleep\"} 1.000000000"));
	cr_assert_eq(count_prefix(t, "whyslow_offcpu_seconds_total{"),
		     (WS_METRICS_MAX_PROCS + 1) * WS_CAUSE_COUNT);
	free(t);
	ws_metrics_free(m);
}

/* ---- the sink on real chains: what the report's root causes sum, the metrics count ---- */

enum {
	VICTIM = GRAPH_TEST_PID, /* the process's main thread: its name is the process's */
	WAKER = GRAPH_TEST_PID + 1,
	IRQ = 7 /* a thread outside the process, standing for the disk's interrupt */
};

static struct ws_graph *sink_g;
static struct ws_metrics *sink_m;
static uint64_t waits_ns, block_key_ns; /* summed as the report does: by each segment's root */
static bool sink_ranked = true;		/* false: every wait handed on as an idle one */

static const char *sink_comm(uint32_t tid)
{
	return tid == VICTIM ? "victim" : tid == WAKER ? "waker" : "irq";
}

/* The waker's wait is block I/O (a root naming its disk); every other wakeup, its waker's. */
static int sink_infer(void *ctx, const struct ws_wait *w, struct ws_claim *out)
{
	if (w->tid != WAKER)
		return graph_infer_waker(ctx, w, out);
	out->strength = WS_CLAIM_SPECIFIC;
	snprintf(out->kind, sizeof(out->kind), "block_io");
	snprintf(out->evidence, sizeof(out->evidence), "test");
	out->root = true;
	return 1;
}

static int sink_resource(void *ctx, const struct ws_claim *c, char *buf, size_t len)
{
	(void)ctx;
	return strcmp(c->kind, "block_io") ? 0 : snprintf(buf, len, "block I/O on vda");
}

static void sink_on_wait(void *ctx, const struct ws_wait_done *d)
{
	struct ws_chain c = { 0 };

	(void)ctx;
	cr_assert_eq(ws_chain_build(sink_g, d, &c), 0);
	ws_chain_settle_root(sink_g, &c);
	for (size_t i = 0; i < c.nsegs; i++) {
		struct ws_seg_root scratch;
		const struct ws_seg_root *r = ws_chain_seg_root(sink_g, &c, i, &scratch);

		if (!strcmp(r->key, "block I/O on vda"))
			block_key_ns += c.segs[i].dur;
	}
	waits_ns += c.end - c.start;
	ws_metrics_wait_sink(sink_m, sink_g, &c, sink_ranked);
	ws_chain_release(&c);
}

static void sink_sw(uint64_t ms, uint16_t cpu, uint32_t prev, uint32_t state, uint32_t next)
{
	graph_test_switch_named(sink_g, ms, cpu, prev, state, next, next ? sink_comm(next) : NULL);
}

static void sink_wake(uint64_t ms, uint16_t cpu, uint32_t waker, uint32_t wakee)
{
	struct ws_wake w = { .sz = sizeof(w),
			     .ts = ms * GRAPH_TEST_MS,
			     .cpu = cpu,
			     .waker_tid = waker,
			     .waker_pid = waker == IRQ ? IRQ : GRAPH_TEST_PID,
			     .waker_comm = sink_comm(waker),
			     .wakee_tid = wakee,
			     .wakee_pid = GRAPH_TEST_PID };

	ws_graph_wake(sink_g, &w);
}

/* The victim waits 62 ms for the waker: its 10 ms on CPU, 40 ms of block I/O, 10 ms more. */
static void sink_scenario(void)
{
	struct ws_graph_ops ops = { .infer = sink_infer,
				    .on_wait = sink_on_wait,
				    .pid_traced = graph_test_pid_traced,
				    .resource = sink_resource };

	sink_m = ws_metrics_new();
	cr_assert_not_null(sink_m);
	sink_g = ws_graph_new(&ops, 10 * GRAPH_TEST_MS, 10000000000ULL, 0);
	cr_assert_not_null(sink_g);
	sink_sw(0, 0, 0, 0, VICTIM);
	sink_sw(0, 1, 0, 0, WAKER);
	sink_sw(1, 0, VICTIM, 1, 0); /* the victim waits for the waker, 1 ms to 63 ms */
	sink_sw(11, 1, WAKER, 2, 0); /* the waker: 10 ms on CPU, then 40 ms of block I/O */
	sink_wake(51, 1, IRQ, WAKER);
	sink_sw(51, 1, 0, 0, WAKER);
	sink_wake(61, 1, WAKER, VICTIM); /* 10 ms more on CPU, then it wakes the victim */
	sink_sw(63, 0, 0, 0, VICTIM);
	sink_sw(70, 0, VICTIM, 1, 0);
}

Test(metrics, the_sink_counts_what_the_report_sums)
{
	char *t;

	sink_scenario();
	cr_assert_eq(waits_ns, 102 * GRAPH_TEST_MS,
		     "two waits: the victim's 62 ms, the waker's 40 ms");
	/* 40 ms of the victim's wait and the waker's own 40 ms wait */
	cr_assert_eq(block_key_ns, 80 * GRAPH_TEST_MS);
	t = scrape(sink_m);
	cr_assert(
		has_line(
			t,
			"whyslow_offcpu_seconds_total{pid=\"100\",comm=\"victim\",cause=\"block_io\"} 0.080000000"),
		"%s", t);
	cr_assert(has_line(
		t,
		"whyslow_block_io_seconds_total{pid=\"100\",comm=\"victim\",device=\"vda\"} 0.080000000"));
	/* the rest of the victim's 62 ms: 20 ms of the waker's work, 2 of its own queueing */
	cr_assert(has_line(
		t,
		"whyslow_offcpu_seconds_total{pid=\"100\",comm=\"victim\",cause=\"cpu_work\"} 0.020000000"));
	cr_assert(has_line(
		t,
		"whyslow_offcpu_seconds_total{pid=\"100\",comm=\"victim\",cause=\"runqueue\"} 0.002000000"));
	cr_assert(has_line(
		t,
		"whyslow_offcpu_seconds_total{pid=\"100\",comm=\"victim\",cause=\"unknown\"} 0.000000000"));
	/* both waits settled on block I/O (the victim's: 40 of its 62 ms), whole in the histogram
	 */
	cr_assert(has_line(t, "whyslow_wait_duration_seconds_count{cause=\"block_io\"} 2"), "%s",
		  t);
	cr_assert(has_line(t, "whyslow_wait_duration_seconds_sum{cause=\"block_io\"} 0.102000000"));
	cr_assert(has_line(
		t,
		"whyslow_wait_duration_seconds_bucket{cause=\"block_io\",le=\"0.050000000\"} 1"));
	cr_assert(has_line(
		t,
		"whyslow_wait_duration_seconds_bucket{cause=\"block_io\",le=\"0.100000000\"} 2"));
	cr_assert(has_line(t, "whyslow_wait_duration_seconds_count{cause=\"cpu_work\"} 0"));
	free(t);
	ws_graph_free(sink_g);
	ws_metrics_free(sink_m);
}

Test(metrics, idle_waits_are_counted_apart)
{
	char *t;

	sink_ranked = false;
	sink_scenario();
	t = scrape(sink_m);
	cr_assert(
		has_line(
			t,
			"whyslow_idle_wait_seconds_total{pid=\"100\",comm=\"victim\"} 0.102000000"),
		"%s", t);
	cr_assert(has_line(
		t,
		"whyslow_offcpu_seconds_total{pid=\"100\",comm=\"victim\",cause=\"block_io\"} 0.000000000"));
	cr_assert_eq(count_prefix(t, "whyslow_block_io_seconds_total{"), 0);
	cr_assert(has_line(t, "whyslow_wait_duration_seconds_count{cause=\"block_io\"} 0"),
		  "not ranked, not in the histogram");
	free(t);
	ws_graph_free(sink_g);
	ws_metrics_free(sink_m);
}

Test(metrics, short_waits_of_an_exited_thread_make_no_process)
{
	struct ws_metrics *m = ws_metrics_new();
	char *t;

	cr_assert_not_null(m);
	ws_metrics_short(m, 10, "app", 1500000, false);
	ws_metrics_short(m, 10, "app", 500000, true);	/* its process has a place: there */
	ws_metrics_short(m, 11, "gone", 3000000, true); /* no place, none made: other */
	t = scrape(m);
	cr_assert(has_line(t,
			   "whyslow_short_wait_seconds_total{pid=\"10\",comm=\"app\"} 0.002000000"),
		  "%s", t);
	cr_assert(has_line(
		t, "whyslow_short_wait_seconds_total{pid=\"other\",comm=\"other\"} 0.003000000"));
	cr_assert_null(strstr(t, "{pid=\"11\""));
	/* short waits are no cause class: the process's classes stay 0 */
	cr_assert(has_line(
		t,
		"whyslow_offcpu_seconds_total{pid=\"10\",comm=\"app\",cause=\"unknown\"} 0.000000000"));
	free(t);
	ws_metrics_free(m);
}
