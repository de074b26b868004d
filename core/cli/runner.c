// SPDX-License-Identifier: MIT
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runner.h"
#include "status.h"
#include "access/invoker.h"
#include "access/outfile.h"
#include "base/clock.h"
#include "base/log.h"
#include "base/util.h"
#include "hang/stuck.h"
#include "stacks/stacks.h"

#define POLL_MS 100
/* the open waits at the end: a thread that did not run between two samples this far apart */
#define OPEN_SAMPLE_GAP_NS 100000000ULL
/* run --duration: how long the command has to end after SIGTERM before SIGKILL */
#define KILL_GRACE_MS 1000
/* --metrics: how often the session's counts (records, losses: a map read per CPU) are copied */
#define METRICS_EVERY_NS 1000000000ULL

static volatile sig_atomic_t stop_requests;
static volatile sig_atomic_t forward_sig;

static void on_stop(int sig)
{
	(void)sig;
	/* a second Ctrl-C means "now": the kernel detaches everything when we exit */
	if (stop_requests++)
		_exit(130);
}

static void on_forward(int sig)
{
	forward_sig = sig;
}

static volatile pid_t run_child;

/*
 * run: the terminal's Ctrl-C reaches the command directly (same process
 * group), and it is the command's to handle while it runs. Once it has
 * exited, even if the loop has not reaped it yet, only what it left behind
 * is traced and nothing else takes the Ctrl-C: it stops the tracing. A
 * zombie (WNOWAIT leaves it for the loop) or one already reaped (ECHILD)
 * has exited. One that SIGINT killed died of this same Ctrl-C (the terminal
 * signals both of us at once, and it may die before this handler runs): that
 * one was the command's.
 */
static void on_interrupt(int sig)
{
	siginfo_t si = { 0 };
	int saved_errno = errno;

	if (waitid(P_PID, run_child, &si, WEXITED | WNOHANG | WNOWAIT))
		on_stop(sig);
	else if (si.si_pid == run_child && !(si.si_code == CLD_KILLED && si.si_status == SIGINT))
		on_stop(sig);
	errno = saved_errno;
}

/* ---- privilege ----------------------------------------------------------------------------- */

static uint64_t cap_eff(void)
{
	FILE *f = fopen("/proc/self/status", "re");
	char line[256];
	unsigned long long v = 0;

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "CapEff: %llx", &v) == 1)
			break;
	if (f)
		fclose(f);
	return v;
}

int ws_check_privilege(void)
{
	uint64_t caps = cap_eff();
	const uint64_t bpf = 1ULL << 39, perfmon = 1ULL << 38, admin = 1ULL << 21;

	if (geteuid() == 0 || (caps & admin) || ((caps & bpf) && (caps & perfmon)))
		return 0;
	ws_log(WS_LOG_ERROR,
	       "loading BPF programs needs root or CAP_BPF and CAP_PERFMON (this process has %s%s); run it with sudo",
	       caps & bpf ? "CAP_BPF but not CAP_PERFMON" : "neither",
	       caps & bpf ? "" : (caps & perfmon ? "; it has CAP_PERFMON only" : ""));
	return -EPERM;
}

/* ---- the loop ------------------------------------------------------------------------------ */

/*
 * The command exited but left processes behind (a daemon, a stray child):
 * say which, and how long they are still traced. The deadline (0: none).
 */
static uint64_t left_behind(struct ws_session *s, const struct ws_run_opts *o)
{
	uint32_t pids[8];
	size_t n = ws_session_traced_pids(s, pids, ARRAY_SIZE(pids));
	char grace[32], until[96], list[ARRAY_SIZE(pids) * 48] = "";
	size_t len = 0;

	if (!n)
		return 0;
	ws_format_duration(WS_RUN_GRACE_NS, grace, sizeof(grace));
	ws_status_clear();
	for (size_t i = 0; i < n; i++) {
		char comm[32] = "?";

		ws_procsnap_comm(pids[i], 0, comm, sizeof(comm));
		/* " PID (comm)" fits its 48 bytes: 10 digits, 31 of comm */
		len += snprintf(list + len, sizeof(list) - len, " %u (%s)", pids[i], comm);
	}
	if (o->wait)
		snprintf(until, sizeof(until), "until they exit (--wait) or Ctrl-C");
	else
		snprintf(until, sizeof(until), "stopping in %s (--wait: until they exit)", grace);
	ws_log(WS_LOG_INFO, "%s exited; still tracing what it left behind:%s; %s", o->argv[0], list,
	       until);
	return o->wait ? 0 : ws_clock_mono_now() + WS_RUN_GRACE_NS;
}

/* --metrics: the session's counts, at most every METRICS_EVERY_NS unless @now_anyway. */
static void metrics_tick(struct ws_session *s, const struct ws_run_opts *o, bool now_anyway)
{
	static uint64_t last;
	struct ws_progress p;
	uint64_t now = ws_clock_mono_now();

	if (!o->metrics || (!now_anyway && now - last < METRICS_EVERY_NS))
		return;
	last = now;
	ws_session_progress(s, &p);
	ws_metrics_progress(o->metrics, p.records, p.lost, p.threads);
}

/* Analysis started: every reported wait goes to the metrics too. */
static void metrics_start(struct ws_session *s, const struct ws_run_opts *o)
{
	struct ws_wait_sink sink = { .wait = ws_metrics_wait_sink,
				     .short_waits = ws_metrics_short_sink,
				     .gone = ws_metrics_gone,
				     .ctx = o->metrics };

	if (o->metrics)
		ws_session_set_wait_sink(s, &sink);
}

/* Poll until @done says so or a stop is requested; then drain and report. */
static int loop(struct ws_session *s, pid_t child, int *child_status, uint64_t deadline,
		const struct ws_run_opts *o)
{
	bool child_done = child <= 0;
	uint64_t grace;
	int err = 0;

	for (;;) {
		err = ws_session_poll(s, POLL_MS);
		if (err)
			break;
		ws_status_tick(s);
		metrics_tick(s, o, false);
		if (o->on_tick)
			o->on_tick(o->hook_ctx, s);
		/* reap first: a signal forwarded to a command that has exited would be lost */
		if (!child_done && waitpid(child, child_status, WNOHANG) == child) {
			child_done = true;
			/*
			 * Only what the command left behind (a daemon) is traced now:
			 * nothing receives the terminal's signals for us any more, so
			 * Ctrl-C and friends stop the tracing, as in attach.
			 */
			signal(SIGINT, on_stop);
			signal(SIGTERM, on_stop);
			signal(SIGHUP, on_stop);
			if (forward_sig)
				stop_requests++;
			else if (!stop_requests && ws_session_any_traced(s) &&
				 (grace = left_behind(s, o)))
				deadline = deadline && deadline < grace ? deadline : grace;
		}
		if (forward_sig && child > 0 && !child_done) {
			kill(child, forward_sig);
			forward_sig = 0;
		}
		if (stop_requests && child <= 0)
			break;
		if (deadline && ws_clock_mono_now() >= deadline)
			break;
		/* the command is gone: go on while processes it left behind are still traced */
		if (child_done && ((!o->stay && !ws_session_any_traced(s)) || stop_requests))
			break;
		if (child <= 0 && !o->stay && !ws_session_any_traced(s))
			break;
	}
	metrics_tick(s, o, true);
	return err;
}

/*
 * The waits of @pids still open now: two samples of /proc (stuck.c), with
 * @earlier (from attach time) bounding how long they lasted. false when
 * nothing is left to look at.
 */
static bool open_waits(struct ws_session *s, const struct ws_run_opts *o, struct ws_stuck *st,
		       const uint32_t *pids, int npids, const struct ws_stuck *earlier,
		       uint64_t gap_ns, unsigned int flags)
{
	struct ws_open_sources src;

	return (o->open_waits || o->on_open_waits) && npids && !ws_session_open_sources(s, &src) &&
	       !ws_stuck_take_flags(st, pids, npids, gap_ns, earlier, &src, flags);
}

/* Stacks are captured for this run's waits ([core] stacks): those open at attach get theirs. */
static unsigned int open_stack_flags(struct ws_session *s)
{
	const struct ws_stacks *sk = ws_session_stacks(s);
	uint64_t from = sk ? ws_stacks_capture(sk) : 0;

	return from && from != UINT64_MAX ? WS_STUCK_STACKS : 0;
}

/*
 * Those open at the end too, unless they go into a recording (@o->on_open_waits): a recording
 * keeps no user stacks of its open waits, and what `record` says live must be what `report` of
 * it says (a stack tells a join or a condvar from a mutex wait).
 */
static unsigned int end_stack_flags(struct ws_session *s, const struct ws_run_opts *o)
{
	return o->on_open_waits ? 0 : open_stack_flags(s);
}

/*
 * Waits already in progress when tracing began: hand them to the analysis
 * as records (so a recording carries them too); each is reported when it
 * ends, from the moment /proc proves it had begun by.
 */
static void feed_open_waits(struct ws_session *s, const struct ws_stuck *st)
{
	for (size_t i = 0; i < st->n; i++) {
		const struct ws_stuck_thread *t = &st->t[i];
		struct ws_rec_open_wait w = { 0 };
		struct ws_rec_hdr *sr;

		if ((t->s.state != 'S' && t->s.state != 'D') || !ws_stuck_since(t))
			continue;
		w.hdr.size = sizeof(w);
		w.hdr.kind = WS_KIND_OPEN_WAIT;
		w.hdr.tid = t->s.tid;
		w.hdr.pid = t->s.pid;
		w.hdr.ts = t->s.read_mono_ns;
		w.since_ns = ws_stuck_since(t);
		w.off_state = t->s.state == 'D' ? 2 : 1;
		memcpy(w.comm, t->s.comm, sizeof(w.comm));
		ws_session_feed(s, &w.hdr);
		/* its user stack, read from its memory now: no BPF program saw the wait begin */
		if (!ws_stuck_stack_record(t, &sr)) {
			ws_session_feed(s, sr);
			free(sr);
		}
	}
}

/*
 * Report, with the open waits (@open, may be NULL): in JSON before the
 * summary line that ends the stream, in text after the summary. Sets
 * *@deadlock when one was reported. Returns the analysis's error (0 or
 * -errno: the run failed); an output that could not be written (the report,
 * mid-run or at the end, a recording, the Perfetto export) sets *@lost
 * instead, said once: the analysis is whole, and every other output is still
 * written.
 */
static int finish(struct ws_session *s, struct ws_outfile *out, int loop_err,
		  const struct ws_run_opts *o, const struct ws_stuck *open, bool *deadlock,
		  bool *lost)
{
	const struct ws_stuck *shown = open;
	struct ws_stuck killed;
	int err = 0;

	memset(&killed, 0, sizeof(killed));
	ws_status_clear();
	/* the critical path and the time off CPU count them, open */
	ws_session_set_open_waits(s, open);
	if (open && o->on_open_waits)
		o->on_open_waits(o->hook_ctx, open);
	/* a recording's open waits are there for report; the exit status says so here too */
	if (open && !o->open_waits)
		*deadlock = open->ncycles > 0;
	/*
	 * None open because a signal killed the program while it waited (Ctrl-C on a deadlock):
	 * its waits as they were at the kill. They ended, so they are not open waits of the
	 * analysis; a recording rebuilds them from the same exit records.
	 */
	if (!open && o->open_waits) {
		err = ws_session_drain(s);
		if (!err && !ws_session_killed_waits(s, &killed) && killed.n)
			shown = &killed;
	}
	if (!err && shown && o->open_waits && o->json) {
		err = ws_session_drain(s);
		*deadlock = ws_stuck_print(out->f, shown, o->min_block_ns, true, NULL) > 0;
	}
	if (!err)
		err = ws_session_finish(s);
	/* the report's own output failed (a full disk): ws_outfile_close says so below */
	if (err && ws_outfile_error(out))
		err = 0;
	if (!err && shown && o->open_waits && !o->json)
		*deadlock = ws_stuck_print(out->f, shown, o->min_block_ns, false,
					   ws_stuck_heading(shown)) > 0;
	ws_stuck_free(&killed);
	/* a report that could not be written does not make a recording incomplete */
	if (o->on_finish && o->on_finish(o->hook_ctx, s, !err && !loop_err) && !err && !loop_err)
		*lost = true;
	if (loop_err)
		ws_log(WS_LOG_ERROR, "analysis failed: %s", strerror(-loop_err));
	if (!err && loop_err)
		err = loop_err;
	/* lost mid-run: said then, and nothing of it is kept */
	if (ws_outfile_close(out, !ws_session_report_lost(s)) || ws_session_report_lost(s))
		*lost = true;
	return err;
}

/* ---- run ---------------------------------------------------------------------------------- */

/* In the child: become -u USER or the user who ran sudo (@inv), unless --as-root. */
static int drop_privileges(const struct ws_run_opts *o, const struct ws_invoker *inv)
{
	struct passwd *pw = NULL;
	uid_t uid;
	gid_t gid;

	if (o->as_root || geteuid() != 0)
		return 0;
	if (o->user) {
		pw = getpwnam(o->user);
		if (!pw)
			return -ENOENT;
	} else if (!inv->sudo) {
		return 0; /* not under sudo: root asked for root */
	} else if (inv->name[0]) {
		pw = getpwnam(inv->name);
	}
	if (pw) {
		uid = pw->pw_uid;
		gid = o->user ? pw->pw_gid : inv->gid;
		if (initgroups(pw->pw_name, gid))
			return -errno;
		setenv("HOME", pw->pw_dir, 1);
		setenv("USER", pw->pw_name, 1);
		setenv("LOGNAME", pw->pw_name, 1);
	} else {
		/* a uid with no passwd entry: its ids, and no supplementary groups */
		uid = inv->uid;
		gid = inv->gid;
		if (setgroups(0, NULL))
			return -errno;
	}
	if (setgid(gid) || setuid(uid))
		return -errno;
	return 0;
}

static void child_main(int go, int report, const struct ws_run_opts *o,
		       const struct ws_invoker *inv, bool report_on_stdout)
{
	char c;
	int err;

	/* wait until tracing is attached, so nothing the command does is missed */
	if (read(go, &c, 1) != 1)
		_exit(127);
	close(go);
	/* -o -: stdout is the report's, a stream `jq` must parse whatever the command prints; the
	 * command's own output goes where whyslow's messages go */
	if (report_on_stdout && dup2(STDERR_FILENO, STDOUT_FILENO) < 0)
		_exit(127);
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
	signal(SIGQUIT, SIG_DFL);
	err = drop_privileges(o, inv);
	if (!err) {
		execvp(o->argv[0], o->argv);
		err = -errno;
	} else {
		err = -EPERM - 1000; /* a failure to become the user, not to exec */
	}
	if (write(report, &err, sizeof(err)) < 0)
		_exit(127);
	_exit(127);
}

/*
 * run --duration: the command is still running when tracing ends. It is
 * killed (SIGTERM, then SIGKILL after KILL_GRACE_MS): `run` owns the command's
 * life, as Ctrl-C shows; to leave a process running, attach to it instead.
 * Returns its wait status.
 */
static int end_command(pid_t pid)
{
	int status = 0;

	kill(pid, SIGTERM);
	for (int i = 0; i < KILL_GRACE_MS / 10; i++) {
		if (waitpid(pid, &status, WNOHANG) == pid)
			return status;
		usleep(10000);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	return status;
}

/*
 * Fork the command: it waits on *@go_w until tracing is attached, and *@report_r tells of a
 * failed exec. Says why it could not.
 */
static int fork_command(const struct ws_run_opts *o, const struct ws_invoker *inv,
			const struct ws_outfile *out, int *go_w, int *report_r, pid_t *pid)
{
	int go[2], report[2];

	if (pipe2(go, O_CLOEXEC) || pipe2(report, O_CLOEXEC)) {
		int e = errno;

		ws_log(WS_LOG_ERROR, "pipe: %s", strerror(e));
		return -e;
	}
	*pid = fork();
	if (*pid < 0) {
		int e = errno;

		ws_log(WS_LOG_ERROR, "fork: %s", strerror(e));
		return -e;
	}
	if (*pid == 0) {
		close(go[1]);
		close(report[0]);
		child_main(go[0], report[1], o, inv, out->std && out->f == stdout);
	}
	close(go[0]);
	close(report[1]);
	*go_w = go[1];
	*report_r = report[0];
	return 0;
}

/* Everything is traced before the command runs its first instruction. */
static int trace_command(struct ws_session *s, const struct ws_run_opts *o, pid_t pid, FILE *out)
{
	int err = ws_session_trace_pid(s, pid);

	if (!err)
		err = ws_session_attach(s);
	if (!err)
		err = ws_session_start(s, out);
	if (!err)
		metrics_start(s, o);
	if (!err)
		err = ws_session_follow(s, pid);
	if (!err && o->on_start) {
		uint32_t traced = pid;

		err = o->on_start(o->hook_ctx, s, &traced, 1);
	}
	return err;
}

/*
 * Let the command go, and learn whether its exec succeeded: false with the child's error in
 * *@exec_err (and the child reaped) if not.
 */
static bool release_command(int go, int report, pid_t pid, int *exec_err)
{
	ssize_t n;

	if (write(go, "g", 1) != 1) {
		ws_log(WS_LOG_ERROR, "cannot start the command: %s", strerror(errno));
		kill(pid, SIGKILL);
	}
	close(go);
	n = read(report, exec_err, sizeof(*exec_err));
	close(report);
	if (n == sizeof(*exec_err)) {
		waitpid(pid, NULL, 0);
		return false;
	}
	return true;
}

static void log_exec_failure(const struct ws_run_opts *o, const struct ws_invoker *inv,
			     int exec_err)
{
	if (exec_err == -EPERM - 1000)
		ws_log(WS_LOG_ERROR, "cannot run the command as %s; use --as-root or -u USER",
		       o->user	      ? o->user
		       : inv->name[0] ? inv->name
				      : "the invoking user");
	else
		ws_log(WS_LOG_ERROR, "%s: %s", o->argv[0],
		       exec_err == -ENOENT ? "command not found" : strerror(-exec_err));
}

/*
 * Trace the running command until it ends (or --duration does), then report. Its wait status
 * in *@status; *@deadlock and *@lost as finish() says.
 */
static int trace_to_end(struct ws_session *s, const struct ws_run_opts *o, struct ws_outfile *out,
			pid_t pid, int *status, bool *deadlock, bool *lost)
{
	bool have_open = false, still_running = false;
	struct ws_stuck open;
	int err;

	err = loop(s, pid, status, o->duration_ns ? ws_clock_mono_now() + o->duration_ns : 0, o);
	/* --duration ran out with the command still running: what is it waiting for? */
	if (o->duration_ns && waitpid(pid, status, WNOHANG) == 0) {
		uint32_t traced = pid;

		still_running = true;
		have_open = open_waits(s, o, &open, &traced, 1, NULL, OPEN_SAMPLE_GAP_NS,
				       end_stack_flags(s, o));
	}
	err = finish(s, out, err, o, have_open ? &open : NULL, deadlock, lost);
	if (have_open)
		ws_stuck_free(&open);
	if (still_running)
		*status = end_command(pid);
	return err;
}

/* whyslow's exit status after a traced command: the command's own, unless whyslow failed. */
static int run_exit_status(int status, bool deadlock, bool lost)
{
	/* an output failed, said so: the command's own status still shows, 1 if it succeeded */
	if (lost && WIFEXITED(status))
		return WEXITSTATUS(status) ? WEXITSTATUS(status) : 1;
	if (lost && WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	if (lost)
		return 1;
	if (deadlock)
		return WS_EXIT_DEADLOCK;
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

int ws_run_command(struct ws_session *s, const struct ws_run_opts *o)
{
	int go = -1, report = -1, status = 0, exec_err = 0;
	bool deadlock = false, lost = false;
	struct ws_invoker inv = { 0 };
	struct ws_outfile out;
	pid_t pid = -1;

	if (o->user && !o->as_root && !getpwnam(o->user)) {
		ws_log(WS_LOG_ERROR, "no such user '%s' (-u)", o->user);
		return 1;
	}
	/* a sudo environment that names nobody clearly is refused, never run as root */
	if (!o->as_root && !o->user && ws_invoker_get(&inv))
		return 1;
	if (ws_outfile_open(&out, o->output))
		return 1;
	if (fork_command(o, &inv, &out, &go, &report, &pid)) {
		ws_outfile_close(&out, false);
		return 1;
	}
	run_child = pid;
	signal(SIGINT, on_interrupt);
	signal(SIGQUIT, SIG_IGN);
	signal(SIGTERM, on_forward);
	signal(SIGHUP, on_forward);

	if (trace_command(s, o, pid, out.f)) {
		close(go);
		waitpid(pid, NULL, 0);
		ws_outfile_close(&out, false);
		return 1;
	}
	if (!release_command(go, report, pid, &exec_err)) {
		log_exec_failure(o, &inv, exec_err);
		if (o->on_finish)
			o->on_finish(o->hook_ctx, s, false);
		ws_outfile_close(&out, false);
		return exec_err == -ENOENT ? 127 : 126;
	}
	if (trace_to_end(s, o, &out, pid, &status, &deadlock, &lost))
		return 1;
	return run_exit_status(status, deadlock, lost);
}

/* ---- attach ------------------------------------------------------------------------------- */

static int tgid_of(uint32_t tid, uint32_t *tgid)
{
	char path[64], line[128];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%u/status", tid);
	f = fopen(path, "re");
	if (!f)
		return -ESRCH;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "Tgid: %u", tgid) == 1) {
			fclose(f);
			return 0;
		}
	}
	fclose(f);
	return -ESRCH;
}

/*
 * Has process @pid exited (no such process, or every thread of it a zombie
 * its parent has not reaped yet)? A thread-group leader that called
 * pthread_exit is a zombie while its other threads run: that process lives.
 */
static bool process_gone(uint32_t pid, bool *zombie)
{
	char path[64];
	struct dirent *e;
	bool gone = true;
	DIR *d;

	*zombie = false;
	snprintf(path, sizeof(path), "/proc/%u/task", pid);
	d = opendir(path);
	if (!d)
		return true;
	while (gone && (e = readdir(d))) {
		char spath[PATH_MAX], buf[512], *p;
		FILE *f;

		if (e->d_name[0] == '.')
			continue;
		snprintf(spath, sizeof(spath), "/proc/%u/task/%s/stat", pid, e->d_name);
		f = fopen(spath, "re");
		if (!f)
			continue;
		/* "tid (comm) S ...": the comm may hold spaces and parentheses */
		if (fgets(buf, sizeof(buf), f) && (p = strrchr(buf, ')')) && p[1] == ' ') {
			if (p[2] == 'Z' || p[2] == 'X')
				*zombie = true;
			else
				gone = false;
		}
		fclose(f);
	}
	closedir(d);
	return gone;
}

int ws_attach(struct ws_session *s, struct ws_run_opts *o)
{
	struct ws_stuck start, open;
	bool have_start = false, have_open = false, deadlock = false, lost = false;
	struct ws_outfile out;
	uint64_t deadline = 0;
	int err = 0;

	for (int i = 0; i < o->npids; i++) {
		uint32_t tgid;
		bool zombie;

		/* -a: the list was read from /proc a moment ago; one gone since is no error */
		if (o->all && (tgid_of(o->pids[i], &tgid) || process_gone(tgid, &zombie))) {
			o->pids[i--] = o->pids[--o->npids];
			continue;
		}
		if (tgid_of(o->pids[i], &tgid)) {
			ws_log(WS_LOG_ERROR, "no process or thread with PID %u", o->pids[i]);
			return 1;
		}
		o->pids[i] = tgid; /* any thread id names its process */
		if (process_gone(tgid, &zombie)) {
			ws_log(WS_LOG_ERROR,
			       "process %u has exited%s: there is nothing to attach to", tgid,
			       zombie ? " (a zombie: its parent has not reaped it yet)" : "");
			return 1;
		}
	}
	if (ws_outfile_open(&out, o->output))
		return 1;
	signal(SIGINT, on_stop);
	signal(SIGTERM, on_stop);
	signal(SIGHUP, on_stop);
	for (int i = 0; !err && i < o->npids; i++)
		err = ws_session_trace_pid(s, o->pids[i]);
	if (!err)
		err = ws_session_attach(s);
	if (!err)
		err = ws_session_start(s, out.f);
	if (!err)
		metrics_start(s, o);
	if (!err && o->on_start)
		err = o->on_start(o->hook_ctx, s, o->pids, o->npids);
	if (err) {
		ws_outfile_close(&out, false);
		return 1;
	}
	/*
	 * A target that exited before the exit tracepoint's program was attached
	 * is in the filter for ever: the loop would wait for it without end. From
	 * here on the kernel reports every exit.
	 */
	for (int i = 0; i < o->npids; i++) {
		bool zombie;

		if (process_gone(o->pids[i], &zombie)) {
			ws_status_clear();
			/* -a: the system's short-lived processes come and go, none was named */
			if (!o->all)
				ws_log(WS_LOG_ERROR, "process %u exited while whyslow attached",
				       o->pids[i]);
			ws_session_untrace_pid(s, o->pids[i]);
		}
	}
	/* waits already in progress: the state at attach bounds how long they last */
	have_start = open_waits(s, o, &start, o->pids, o->npids, NULL, 0, open_stack_flags(s));
	if (have_start)
		feed_open_waits(s, &start);
	if (o->duration_ns)
		deadline = ws_clock_mono_now() + o->duration_ns;
	err = loop(s, 0, NULL, deadline, o);
	have_open = open_waits(s, o, &open, o->pids, o->npids, have_start ? &start : NULL,
			       OPEN_SAMPLE_GAP_NS, end_stack_flags(s, o));
	if (have_start)
		ws_stuck_free(&start);
	err = finish(s, &out, err, o, have_open ? &open : NULL, &deadlock, &lost);
	if (have_open)
		ws_stuck_free(&open);
	if (err || lost)
		return 1;
	return deadlock ? WS_EXIT_DEADLOCK : 0;
}
