// SPDX-License-Identifier: MIT
/* record and the Perfetto export of a live run: see cmd_trace.h. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* fopencookie */
#endif
#include <dirent.h>
#include <errno.h>
#include <glob.h>
#include <regex.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "cmd_trace.h"
#include "access/outfile.h"
#include "base/log.h"
#include "base/util.h"
#include "base/when.h"
#include "record/stuck_rec.h"
#include "session/loader.h"
#include "session/resolution.h"

#ifndef WS_VERSION
#define WS_VERSION "unknown"
#endif

/* ---- recording ------------------------------------------------------------------------------ */

/* "sched=0.1.0,futex=0.1.0": each source's own version, read from its descriptor. */
void ws_source_versions(const char *dir, const char *sources, char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = 0;
	for (const char *p = sources; p && *p && n < len;) {
		const char *e = strchr(p, ',');
		int nlen = e ? (int)(e - p) : (int)strlen(p);
		char name[64], err[256];
		struct ws_loaded l;

		snprintf(name, sizeof(name), "%.*s", nlen, p);
		/* the session holds it open already: this only reads its descriptor again */
		if (!ws_source_load(dir, name, &l, err, sizeof(err))) {
			n += snprintf(buf + n, len - n, "%s%s=%s", n ? "," : "", l.p->name,
				      l.p->version);
			ws_plugin_unload(&l);
		}
		p = e ? e + 1 : NULL;
	}
}

/*
 * The names sources set since the last call (ws_host.name_set): written before
 * the next record, so a replay knows them by the time a source decodes it.
 */
static void write_new_names(struct ws_trace_job *j, struct ws_session *s)
{
	struct ws_name names[16];
	size_t n;

	while ((n = ws_session_names(s, j->nnames_written, names, ARRAY_SIZE(names)))) {
		for (size_t i = 0; i < n; i++)
			ws_trace_write_name(&j->w, names[i].plugin, names[i].key, names[i].name);
		j->nnames_written += n;
	}
	/* threads' cgroups, read as their first record was handled: before the next one */
	while ((n = ws_session_cgroups(s, j->ncgroups_written, names, ARRAY_SIZE(names)))) {
		for (size_t i = 0; i < n; i++)
			ws_trace_write_name(&j->w, names[i].plugin, names[i].key, names[i].name);
		j->ncgroups_written += n;
	}
}

void ws_trace_write_threads(struct ws_trace_writer *w, uint32_t pid, uint64_t ts)
{
	char path[64];
	struct dirent *e;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%u/task", pid);
	d = opendir(path);
	while (d && (e = readdir(d))) {
		struct ws_trace_thread t = { .ts = ts, .pid = pid };

		t.tid = strtoul(e->d_name, NULL, 10);
		if (t.tid && !ws_procsnap_comm(pid, t.tid, t.comm, sizeof(t.comm)))
			ws_trace_write_thread(w, &t);
	}
	if (d)
		closedir(d);
}

static void tap(void *ctx, const struct ws_rec_hdr *rec)
{
	struct ws_trace_job *j = ctx;

	/* a name a source set while decoding the previous record: before it is needed */
	if (ws_session_nnames(j->s) != j->nnames_written ||
	    ws_session_ncgroups(j->s) != j->ncgroups_written)
		write_new_names(j, j->s);
	ws_trace_write_event(&j->w, rec);
	/*
	 * at most about a second of records is lost if whyslow is killed (fsync: at the end);
	 * compressed, the flush closes a block, so these are also what a cut file decodes up to
	 */
	if (!(j->w.events & 1023) && ws_clock_mono_now() - j->flushed_at > 1000000000ULL) {
		ws_trace_flush(&j->w);
		j->flushed_at = ws_clock_mono_now();
	}
}

static bool perfetto_sink(void *ctx, const struct ws_chain *c)
{
	struct ws_trace_job *j = ctx;
	int err = ws_perfetto_chain(j->pf, c);

	if (err && !j->err)
		j->err = err;
	return true;
}

static void perfetto_ival(void *ctx, const struct ws_thread *t, const struct ws_ival *iv,
			  const struct ws_claim *claim)
{
	struct ws_trace_job *j = ctx;
	int err = ws_perfetto_ival(j->pf, t, iv, claim);

	if (err && !j->err)
		j->err = err;
}

static void perfetto_request(void *ctx, const struct ws_request *q)
{
	struct ws_trace_job *j = ctx;
	int err = ws_perfetto_request(j->pf, q);

	if (err && !j->err)
		j->err = err;
}

/* The kernel's random boot id: tells two boots of one host (or two hosts of one name) apart. */
static void read_boot_id(char *buf, size_t len)
{
	FILE *f = fopen("/proc/sys/kernel/random/boot_id", "re");

	buf[0] = 0;
	if (!f)
		return;
	if (!fgets(buf, (int)len, f))
		buf[0] = 0;
	buf[strcspn(buf, "\n")] = 0;
	fclose(f);
}

void ws_trace_meta_fill(struct ws_trace_meta *m, struct ws_session *s, const struct ws_config *cfg,
			const char *plugin_dir, const uint32_t *pids, int npids)
{
	struct utsname u;

	snprintf(m->version, sizeof(m->version), "%s", WS_VERSION);
	if (!uname(&u))
		snprintf(m->kernel, sizeof(m->kernel), "%s %s %s", u.sysname, u.release, u.machine);
	gethostname(m->hostname, sizeof(m->hostname) - 1);
	read_boot_id(m->boot_id, sizeof(m->boot_id));
	snprintf(m->sources, sizeof(m->sources), "%s", ws_session_sources(s));
	ws_source_versions(plugin_dir, m->sources, m->versions, sizeof(m->versions));
	m->clock = *ws_session_clock(s);
	/* the defaults live in ws_core_keys */
	ws_config_u64(cfg, "core", ws_core_keys, "min_block", &m->min_block_ns);
	ws_config_u64(cfg, "core", ws_core_keys, "max_window", &m->max_window_ns);
	ws_config_u64(cfg, "core", ws_core_keys, "max_history", &m->max_history);
	m->resolution_ns = ws_resolution_ns(cfg);
	m->ncpus = ws_session_ncpus(s);
	m->stack_min_ns = ws_stack_capture_ns(cfg);
	m->has_stack_min = true;
	for (int i = 0; i < npids && m->npids < WS_TRACE_MAX_PIDS; i++)
		m->pids[m->npids++] = pids[i];
}

static int record_start(struct ws_trace_job *j, struct ws_session *s, const uint32_t *pids,
			int npids)
{
	struct ws_trace_meta *m = calloc(1, sizeof(*m));
	size_t n = 0;
	int err;

	if (!m)
		return -ENOMEM;
	if (ws_outfile_open(&j->out, j->record_path)) {
		free(m);
		return -EIO;
	}
	j->f = j->out.f;
	setvbuf(j->f, NULL, _IOFBF, 1 << 18);
	ws_trace_meta_fill(m, s, j->cfg, j->plugin_dir, pids, npids);
	if (j->host)
		snprintf(m->hostname, sizeof(m->hostname), "%s", j->host);
	m->clock.wall_ns += j->clock_shift_ns;
	if (j->attach)
		n += snprintf(m->command, sizeof(m->command), "attach");
	/*
	 * The program only: its arguments may hold secrets (passwords, tokens)
	 * and the recording is meant to be passed around.
	 */
	if (j->argv && j->argv[0])
		snprintf(m->command + n, sizeof(m->command) - n, "%s%s%s", n ? " " : "", j->argv[0],
			 j->argv[1] ? " (arguments not stored)" : "");

	ws_trace_write_begin(&j->w, j->f, j->compress);
	ws_trace_write_meta(&j->w, m);
	free(m);
	write_new_names(j, s); /* what the sources learned at start (e.g. blkio's disks) */
	for (int i = 0; j->attach && i < npids; i++)
		ws_trace_write_threads(&j->w, pids[i], ws_clock_mono_now());
	/* a recording killed from here on is readable up to its last complete record */
	ws_trace_flush(&j->w);
	j->flushed_at = ws_clock_mono_now();
	if ((err = j->w.err)) {
		ws_log(WS_LOG_ERROR, "cannot write %s: %s", j->record_path, strerror(-err));
		ws_trace_writer_free(&j->w);
		ws_outfile_close(&j->out, false);
		j->f = NULL;
		return err;
	}
	j->s = s;
	ws_session_set_tap(s, tap, j);
	return 0;
}

int ws_trace_job_start(void *ctx, struct ws_session *s, const uint32_t *pids, int npids)
{
	struct ws_trace_job *j = ctx;
	int err;

	if (j->perfetto_path) {
		/* before the command runs: a path that cannot be written is said now, not after */
		if (ws_outfile_open(&j->pf_out, j->perfetto_path))
			return -EIO;
		j->pf = ws_perfetto_new();
		if (!j->pf) {
			err = -errno;
			ws_log(WS_LOG_ERROR, "cannot spool the Perfetto trace: %s", strerror(-err));
			ws_outfile_close(&j->pf_out, false);
			return err;
		}
		ws_perfetto_set_stacks(j->pf, ws_session_stacks(s));
		ws_perfetto_set_cgroups(j->pf, ws_session_cgroup_of, s);
		ws_session_set_chain_sink(s, perfetto_sink, j);
		ws_session_set_ival_sink(s, perfetto_ival, j);
		ws_session_set_request_sink(s, perfetto_request, j);
	}
	if (j->record_path && (err = record_start(j, s, pids, npids))) {
		/* no on_finish follows a failed on_start: leave nothing half-made */
		if (j->pf) {
			ws_session_set_chain_sink(s, NULL, NULL);
			ws_session_set_ival_sink(s, NULL, NULL);
			ws_session_set_request_sink(s, NULL, NULL);
			ws_outfile_close(&j->pf_out, false);
			ws_perfetto_free(j->pf);
			j->pf = NULL;
		}
		return err;
	}
	return 0;
}

void ws_trace_job_open_waits(void *ctx, const struct ws_stuck *open)
{
	struct ws_trace_job *j = ctx;
	int err;

	if (!j->f || j->open_waits)
		return;
	err = ws_stuck_encode(open, &j->open_waits, &j->open_waits_len);
	if (err)
		ws_log(WS_LOG_ERROR, "note: the waits still open at the end are not in %s (%s)",
		       j->record_path,
		       err == -E2BIG ? "too many blocked threads for one record" : strerror(-err));
}

static int record_finish(struct ws_trace_job *j, struct ws_session *s, bool complete)
{
	struct ws_summary sum;
	struct ws_trace_summary ts;
	char *lost_text;
	char dur[32];
	int err;

	ws_session_set_tap(s, NULL, NULL);
	if (complete && j->open_waits)
		ws_trace_write_rec(&j->w, WS_TR_OPEN_WAITS, j->open_waits, j->open_waits_len);
	free(j->open_waits);
	j->open_waits = NULL;
	if (!complete) {
		ws_trace_writer_free(&j->w);
		ws_outfile_close(&j->out, false);
		ws_log(WS_LOG_ERROR, "the recording did not complete; %s not written",
		       j->record_path);
		return -EIO;
	}
	ws_session_summary(s, &sum);
	write_new_names(j, s);
	ts = (struct ws_trace_summary){ .records = sum.records,
					.lost = sum.lost,
					.lost_recursion = sum.lost_recursion,
					.duration_ns = sum.duration_ns };
	/* the recording keeps the losses as the JSON summary prints them (docs/trace-format.md) */
	lost_text = ws_losses_text(sum.losses);
	ws_trace_write_summary(&j->w, &ts, lost_text);
	free(lost_text);
	err = ws_trace_write_end(&j->w);
	if (err) {
		/* the file's own errno (stdio forgets it after a failed write) */
		err = ws_outfile_error(&j->out) ?: err;
		ws_log(WS_LOG_ERROR, "cannot write %s: %s", j->record_path, strerror(-err));
		ws_outfile_close(&j->out, false);
		return err;
	}
	if ((err = ws_outfile_close(&j->out, true)))
		return err;
	ws_format_duration(sum.duration_ns, dur, sizeof(dur));
	ws_log(WS_LOG_INFO,
	       "recorded %" PRIu64 " records over %s (%" PRIu64
	       " lost) to %s; analyse with: whyslow report %s",
	       j->w.events, dur, sum.lost + sum.lost_recursion, j->record_path, j->record_path);
	return 0;
}

static int perfetto_finish(struct ws_trace_job *j, struct ws_session *s, bool complete)
{
	int err;

	if (!complete) {
		ws_outfile_close(&j->pf_out, false);
		return 0;
	}
	ws_session_flush_timelines(s);
	if (j->err) {
		ws_log(WS_LOG_ERROR, "the Perfetto trace is incomplete: %s; %s not written",
		       strerror(-j->err), j->perfetto_path);
		ws_outfile_close(&j->pf_out, false);
		return j->err;
	}
	err = ws_perfetto_write(j->pf, j->pf_out.f, ws_session_clock(s));
	if (err && !ws_outfile_error(&j->pf_out)) {
		ws_log(WS_LOG_ERROR, "cannot read back the Perfetto spool: %s; %s not written",
		       strerror(-err), j->perfetto_path);
		ws_outfile_close(&j->pf_out, false);
		return err;
	}
	/* a write error is the file's own: the close says it, with its errno, and keeps nothing */
	return ws_outfile_close(&j->pf_out, true);
}

int ws_trace_job_finish(void *ctx, struct ws_session *s, bool complete)
{
	struct ws_trace_job *j = ctx;
	int err = 0, e;

	if (j->f) {
		err = record_finish(j, s, complete);
		j->f = NULL;
	}
	if (j->pf) {
		ws_session_set_chain_sink(s, NULL, NULL);
		ws_session_set_request_sink(s, NULL, NULL);
		if ((e = perfetto_finish(j, s, complete)) && !err)
			err = e;
		ws_perfetto_free(j->pf);
		j->pf = NULL;
	}
	return err;
}
