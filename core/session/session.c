// SPDX-License-Identifier: MIT
#include <fcntl.h>

#include "core_bpf.skel.h"
#include "session_impl.h"
#include "access/trust.h"

void session_chain(struct ws_session *s, const struct ws_wait_done *d)
{
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
	return session_pid_traced(ctx, pid);
}

static void on_ival(void *ctx, const struct ws_thread *t, const struct ws_ival *iv,
		    const struct ws_claim *claim)
{
	struct ws_session *s = ctx;

	ws_report_ival(s->rep, t, iv, claim);
	if (s->ival_sink)
		s->ival_sink(s->ival_sink_ctx, t, iv, claim);
}

static void on_gone(void *ctx, const struct ws_thread *t)
{
	struct ws_session *s = ctx;

	session_held_gone(s, t);
	ws_report_gone(s->rep, t);
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
	session_cgroup_seen(s, rec->tid, rec->pid, rec->ts, false);
	ws_graph_open_wait(s->g, rec->tid, rec->pid, comm, w->since_ns, w->off_state);
}

static void dispatch(void *ctx, const struct ws_rec_hdr *rec)
{
	struct ws_session *s = ctx;
	int8_t o = s->owner[rec->kind >> 8];

	if (rec->kind == SESSION_KIND_STACK_TAP && s->stackcap) {
		/*
		 * Kept and counted on arrival (stack_arrived()): only the recording's copy. The
		 * record is the reorder buffer's own, gone after this call: its kind is set back in
		 * place rather than copying up to 64 KiB.
		 */
		((struct ws_rec_hdr *)rec)->kind = WS_KIND_STACK;
		if (s->tap)
			s->tap(s->tap_ctx, rec);
		return;
	}
	s->records++;
	if (s->tap)
		s->tap(s->tap_ctx, rec);
	if (!s->first_ts)
		s->first_ts = rec->ts;
	s->last_ts = rec->ts;
	if (rec->kind == WS_KIND_LOST) {
		/* its window was noted when it arrived: see session_note_loss() */
	} else if (rec->kind == WS_KIND_PROC_EXIT) {
		/* --comm: one that execs into another name is not traced from its exec on: no
		 * grace, its records go on, of a process no longer followed */
		if (rec->flags & WS_PROC_EXIT_EXEC)
			session_pid_left(s, rec->pid, rec->ts);
		else
			session_pid_gone(s, rec->pid, rec->ts);
		/* a CPython process leaves ws_py_procs: its pid may come back as another program */
		if (s->stackcap && ws_stackcap_forget(s->stackcap, rec->pid))
			session_py_forget(s, rec->pid);
	} else if (rec->kind == WS_KIND_PROC_NEW) {
		/* only --comm's (recorded: 1.14): traced from its exec, no fork record says so;
		 * live, it was as it arrived (session_ring.c) */
		if ((rec->flags & WS_PROC_NEW_EXEC) && !session_pid_traced(s, rec->pid)) {
			session_pid_reborn(s, rec->pid);
			session_pid_add(s, rec->pid);
		}
	} else if (rec->kind == WS_KIND_OPEN_WAIT) {
		open_wait(s, rec);
	} else if (rec->kind == WS_KIND_STACK) {
		if (ws_stacks_add(s->stacks, rec) == -EINVAL)
			s->bad_records++;
	} else if (rec->kind == WS_KIND_STACK_RAW) {
		/* resolved on arrival (see stack_arrived()); one that reaches here is not used */
	} else if (o >= 0 && s->plugins[o].core) {
		s->by_plugin[o]++;
		session_sched_record(s, rec);
	} else if (o >= 0) {
		s->by_plugin[o]++;
		if (s->plugins[o].p->decode && s->plugins[o].p->decode(&s->ctxs[o].pub, rec) < 0)
			s->bad_records++;
	}
	if (rec->ts - s->last_evict > EVICT_EVERY_NS) {
		session_pids_expire(s, rec->ts);
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
void session_note_loss(struct ws_session *s, const struct ws_rec_hdr *rec)
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
	if (rec->cpu >= s->ncpus) {
		s->cpu_refused++;
		return;
	}
	session_note_loss(s, rec);
	if (ws_reorder_push(s->ro, rec))
		s->err = -ENOMEM;
	/* stream: hold only the reorder window, whatever the recording's length */
	ws_reorder_flush(s->ro, 0);
}

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

	enum ws_format f;

	if (fmt && ws_format_parse(fmt, WS_FORMATS_LIVE, &f)) {
		char names[64];

		ws_format_list(WS_FORMATS_LIVE, ", ", names, sizeof(names));
		snprintf(err, sizeof(err), "%s: [core] format: '%s' is not %s",
			 s->cfg->path ? s->cfg->path : "command line", fmt, names);
		goto fail;
	}
	const char *req = ws_config_get(s->cfg, "core", "requests");
	enum ws_requests_mode m;

	if (req && ws_requests_mode_parse(req, &m)) {
		snprintf(err, sizeof(err), "%s: [core] requests: '%s' is not auto, on or off",
			 s->cfg->path ? s->cfg->path : "command line", req);
		goto fail;
	}
	for (size_t i = 0; i < n; i++) {
		bool known = !strcmp(secs[i], "core");

		for (int k = 0; k < nfound; k++)
			known |= !strcmp(secs[i], found[k]);
		if (!known) {
			snprintf(
				err, sizeof(err),
				"%s:%d: unknown section [%s]; sections are [core] and one per installed source",
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

/*
 * A plugin of the core's own source left by an older whyslow: say it is not used. Nothing is
 * read from a directory others could change, not even its names.
 */
static int warn_core_plugins(const char *plugin_dir)
{
	char err[768];
	int fd = ws_trusted_open(plugin_dir, WS_TRUST_DIR, err, sizeof(err));

	if (fd < 0 && fd != -ENOENT) {
		ws_log(WS_LOG_ERROR, "%s", err);
		return fd;
	}
	for (int i = 0; fd >= 0 && ws_core_source_at(i); i++) {
		char so[64];

		snprintf(so, sizeof(so), "%s.so", ws_core_source_at(i)->name);
		if (!faccessat(fd, so, F_OK, AT_SYMLINK_NOFOLLOW))
			ws_log(WS_LOG_WARN,
			       "%s/%s: not loaded: %s is part of whyslow itself since plugin ABI 3.0; remove this file (left by an older whyslow)",
			       plugin_dir, so, ws_core_source_at(i)->name);
	}
	if (fd >= 0)
		close(fd);
	return 0;
}

/* Load source @name as the session's next plugin, refused if it is not what it claims. */
static int load_source(struct ws_session *s, const char *plugin_dir, const char *name)
{
	struct ws_loaded *l = &s->plugins[s->nplugins];
	char err[768];
	int rc;

	rc = ws_source_load(plugin_dir, name, l, err, sizeof(err));
	if (rc) {
		ws_log(WS_LOG_ERROR, "%s", err);
		return rc;
	}
	if (strcmp(l->p->name, name)) {
		ws_log(WS_LOG_ERROR,
		       "%s: refused: it calls itself '%s'; the file must be named %s.so", l->path,
		       l->p->name, l->p->name);
		ws_plugin_unload(l);
		return -EINVAL;
	}
	if (s->owner[l->p->kind_base >> 8] >= 0) {
		ws_log(WS_LOG_ERROR, "%s: refused: record kinds 0x%x.. already belong to %s",
		       l->path, l->p->kind_base,
		       s->plugins[s->owner[l->p->kind_base >> 8]].p->name);
		ws_plugin_unload(l);
		return -EEXIST;
	}
	/* "enabled" is every source's key, checked above */
	if ((rc = ws_config_check_section_but(s->cfg, name, l->p->config_keys, "enabled", err,
					      sizeof(err)))) {
		ws_log(WS_LOG_ERROR, "%s", err);
		ws_plugin_unload(l);
		return rc;
	}
	s->owner[l->p->kind_base >> 8] = s->nplugins;
	snprintf(s->sources + strlen(s->sources), sizeof(s->sources) - strlen(s->sources), "%s%s",
		 s->nplugins ? "," : "", l->p->name);
	s->nplugins++;
	return 0;
}

/* The sources --sources names, or else those the config does not disable. */
static int load_enabled_sources(struct ws_session *s, const struct ws_session_opts *o, char **found,
				int nfound)
{
	int rc;

	for (int i = 0; i < nfound; i++) {
		bool on;

		if ((rc = enabled_in_config(s, found[i], &on)))
			return rc;
		if (o->sources ? !wanted(o->sources, found[i]) : !on)
			continue;
		if (s->nplugins == WS_MAX_PLUGINS) {
			ws_log(WS_LOG_ERROR, "more than %d sources enabled", WS_MAX_PLUGINS);
			return -E2BIG;
		}
		if ((rc = load_source(s, o->plugin_dir, found[i])))
			return rc;
	}
	if (!s->nplugins) {
		ws_log(WS_LOG_ERROR, "every source is disabled; enable one with --sources");
		return -ENOENT;
	}
	return 0;
}

int ws_session_open(struct ws_session **out, const struct ws_session_opts *o, struct ws_config *cfg)
{
	struct ws_session *s = calloc(1, sizeof(*s));
	char **found = NULL;
	int nfound, rc = 0;

	if (!s)
		return -ENOMEM;
	s->cfg = cfg;
	s->verbose = o->verbose;
	s->ring_fd = s->tgids_fd = s->cpu_fd = s->lost_fd = -1;
	memset(s->owner, -1, sizeof(s->owner));
	ws_table_init(&s->pids, 0);
	ws_table_init(&s->cg_threads, sizeof(uint32_t));
	*out = s;

	if ((rc = warn_core_plugins(o->plugin_dir)))
		return rc;
	nfound = ws_source_names(o->plugin_dir, &found);
	if (nfound < 0) {
		ws_log(WS_LOG_ERROR, "cannot read plugin directory %s: %s; set --plugin-dir",
		       o->plugin_dir, strerror(-nfound));
		return nfound;
	}
	if (nfound == ws_core_sources()) {
		ws_log(WS_LOG_ERROR, "no plugins (*.so) in %s; set --plugin-dir", o->plugin_dir);
		rc = -ENOENT;
		goto out;
	}
	if (!(rc = check_sources(o->sources, found, nfound)) &&
	    !(rc = check_config(s, found, nfound)))
		rc = load_enabled_sources(s, o, found, nfound);
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

void ws_session_warn_blind(struct ws_session *s)
{
	const struct ws_plugin *p;

	for (int i = 0; (p = ws_core_source_at(i)); i++) {
		bool on = false;

		for (int k = 0; k < s->nplugins; k++)
			on |= s->plugins[k].p == p;
		if (!on)
			ws_log(WS_LOG_WARN,
			       "sources %s without %s see no wait, so no chain can be reported; add %s to --sources",
			       *s->sources ? s->sources : "(none)", p->name, p->name);
	}
}

void ws_session_untrace_pid(struct ws_session *s, uint32_t pid)
{
	if (s->tgids_fd >= 0)
		bpf_map_delete_elem(s->tgids_fd, &pid);
}

int ws_session_start(struct ws_session *s, FILE *out)
{
	const char *fmt = ws_config_str(s->cfg, "core", ws_core_keys, "format");
	/* every one of these keys has its default in ws_core_keys; that is the only copy */
	uint64_t min_block = 0, window = 0, max_window = 0, max_history = 0, top = 0;
	struct ws_graph_ops ops = {
		.infer = session_infer_all,
		.on_wait = session_wait_done,
		.pid_traced = graph_pid_traced,
		.on_ival = on_ival,
		.on_gone = on_gone,
		.resource = session_resource,
		.root_label = session_root_label,
		.quota_name = session_quota_name,
		.reclaim_name = session_reclaim_name,
		.ctx = s,
	};
	struct ws_report_opts ro = {
		.out = out,
		.clock = &s->clock,
		.describe = session_describe,
		.describe_ctx = s,
		.cgroup_of = ws_session_cgroup_of,
	};

	ws_config_u64(s->cfg, "core", ws_core_keys, "min_block", &min_block);
	ws_config_u64(s->cfg, "core", ws_core_keys, "reorder_window", &window);
	ws_config_u64(s->cfg, "core", ws_core_keys, "max_window", &max_window);
	ws_config_u64(s->cfg, "core", ws_core_keys, "max_history", &max_history);
	ws_config_u64(s->cfg, "core", ws_core_keys, "top", &top);
	int err = session_plugins_init(s);

	if (err)
		return err;
	/* checked when the session opened (check_config) */
	if (ws_format_parse(fmt, WS_FORMATS_LIVE, &ro.format))
		ro.format = WS_FORMAT_TEXT;
	ro.top = top;
	ro.min_block_ns = min_block;
	ws_config_bool(s->cfg, "core", ws_core_keys, "include_idle", &ro.include_idle);
	const char *req = ws_config_str(s->cfg, "core", ws_core_keys, "requests");

	/* checked when the session opened (check_config) */
	if (!req || ws_requests_mode_parse(req, &ro.requests))
		ro.requests = WS_REQUESTS_AUTO;
	uint64_t port = 0;

	ws_config_u64(s->cfg, "core", ws_core_keys, "request_min_latency",
		      &ro.request_min_latency_ns);
	ws_config_u64(s->cfg, "core", ws_core_keys, "request_port", &port);
	ro.request_port = (uint32_t)port;
	/* a quiet connection's request ends well before the history it is read from goes */
	ro.requests_idle_ns = max_window / 4 < 2000000000ull ? max_window / 4 : 2000000000ull;
	if (!s->replay)
		ws_clock_anchor(&s->clock);
	s->start_mono = ws_clock_mono_now();
	s->last_poll_ns = s->start_mono;
	s->g = ws_graph_new(&ops, min_block, max_window, max_history);
	if (!s->ncpus)
		s->ncpus = s->replay ? WS_MAX_CPUS : session_possible_cpus();
	if (s->g && (err = ws_graph_set_ncpus(s->g, s->ncpus)))
		return err;
	s->ro = ws_reorder_new(window, dispatch, s);
	s->rep = s->g ? ws_report_new(&ro, s->g) : NULL;
	s->stacks = ws_stacks_new();
	s->max_window = max_window;
	if (!s->g || !s->ro || !s->rep || !s->stacks)
		return -ENOMEM;
	ws_config_u64(s->cfg, "core", ws_core_keys, "stack_depth", &top);
	ws_report_set_stacks(s->rep, s->stacks, top);
	/* a replay's: the recording's (ws_session_set_stack_capture()) */
	if (!s->replay)
		ws_stacks_set_capture(s->stacks, ws_stack_capture_ns(s->cfg));
	return 0;
}

int ws_session_drain(struct ws_session *s)
{
	if (s->rb) {
		ring_buffer__consume(s->rb);
		session_stacks_resolve(s);
		s->recursion_misses = session_recursion_misses(s);
	}
	ws_reorder_drain(s->ro);
	if (s->lost_fd >= 0) {
		ws_losses_free(&s->losses);
		session_read_losses(s, &s->losses, &s->lost_total);
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
	sum->losses = &s->losses;
	sum->threads = st.threads;
	sum->waits_unexplained = st.waits_unexplained;
	sum->switch_ins_unseen = st.switch_ins_unseen;
	sum->wake_races = st.races;
	sum->history_trims = st.history_trims;
	sum->out_of_memory = st.oom;
	sum->dead_dropped = st.dead_dropped;
	sum->ncpus = s->ncpus;
	sum->cpu_refused = s->cpu_refused + st.cpu_refused;
	sum->shortest_history_ns = st.shortest_history_ns;
	sum->bad_records = s->bad_records;
	sum->symbols_refused = s->stackcap ? ws_stackcap_refused(s->stackcap) : NULL;
	for (int i = 0; i < s->nplugins; i++)
		s->by_source[i] = (struct ws_source_count){ .name = s->plugins[i].p->name,
							    .events = s->by_plugin[i] };
	sum->by_source = s->by_source;
	sum->nsources = s->nplugins;
}

int ws_session_set_summary_counts(struct ws_session *s, uint64_t lost, uint64_t lost_recursion,
				  uint64_t duration_ns, const struct ws_losses *losses)
{
	s->lost_total = lost;
	s->recursion_misses = lost_recursion;
	s->end_mono = duration_ns;
	ws_losses_free(&s->losses);
	return ws_losses_copy(&s->losses, losses);
}

int ws_session_finish(struct ws_session *s)
{
	struct ws_summary sum;
	int err = ws_session_drain(s);

	/* every record is in: no exit is still to come for a wait a signal ended */
	session_held_flush(s);
	/* the waits that never ended end the timelines */
	session_open_at_end(s);
	/* requests still open end at their last send, read off the timelines before they go */
	ws_report_requests_end(s->rep);
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

void ws_session_set_sock_io_sink(struct ws_session *s, ws_sock_io_sink_fn fn, void *ctx)
{
	s->sock_io_sink = fn;
	s->sock_io_sink_ctx = ctx;
}

void ws_session_set_request_sink(struct ws_session *s, ws_request_sink_fn fn, void *ctx)
{
	if (s->rep)
		ws_report_set_request_sink(s->rep, fn, ctx);
}

void ws_session_set_wait_sink(struct ws_session *s, const struct ws_wait_sink *sink)
{
	if (s->rep)
		ws_report_set_wait_sink(s->rep, sink);
}

void ws_session_flush_timelines(struct ws_session *s)
{
	if (s->rep)
		ws_report_requests_end(s->rep);
	if (s->g)
		ws_graph_flush(s->g);
	s->ival_sink = NULL;
}

void ws_session_set_replay(struct ws_session *s, const struct ws_clock *clock)
{
	s->replay = true;
	s->clock = *clock;
}

int ws_session_set_ncpus(struct ws_session *s, uint32_t ncpus)
{
	if (!ncpus || ncpus > WS_MAX_CPUS)
		return -EINVAL;
	s->ncpus = ncpus;
	return 0;
}

uint32_t ws_session_ncpus(const struct ws_session *s)
{
	return s->ncpus;
}

const struct ws_stacks *ws_session_stacks(struct ws_session *s)
{
	return s->stacks;
}

uint64_t ws_stack_capture_ns(const struct ws_config *cfg)
{
	uint64_t min_ns = 0;
	bool on = false; /* set from [core] stacks, whose default is ws_core_keys' */

	/* as the BPF side learns it (session_bpf.c, stack_rodata()) */
	ws_config_bool(cfg, "core", ws_core_keys, "stacks", &on);
	ws_config_u64(cfg, "core", ws_core_keys, "min_block", &min_ns);
	return !on ? 0 : min_ns ? min_ns : 1;
}

void ws_session_set_stack_capture(struct ws_session *s, uint64_t min_ns)
{
	if (s->stacks)
		ws_stacks_set_capture(s->stacks, min_ns);
}

const struct ws_clock *ws_session_clock(struct ws_session *s)
{
	return &s->clock;
}

void ws_session_free(struct ws_session *s)
{
	if (!s)
		return;
	/* first: its watcher thread writes to the BPF objects' maps (the Python processes) */
	ws_stackcap_free(s->stackcap);
	s->stackcap = NULL;
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
	ws_killed_free(&s->killed);
	ws_report_free(s->rep);
	ws_reorder_free(s->ro);
	ws_graph_free(s->g);
	for (size_t i = 0; i < s->nstacks_later; i++)
		free(s->stacks_later[i]);
	ws_stacks_free(s->stacks);
	ws_table_free(&s->pids);
	session_cgroups_free(s);
	free(s->gone);
	free(s->names);
	ws_losses_free(&s->losses);
	free(s->quotas);
	free(s->memcgs);
	free(s);
}
