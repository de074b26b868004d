// SPDX-License-Identifier: MIT
/* The kernel side: shared maps, loading and attaching (reading the ring: session_ring.c). */
#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core_bpf.skel.h"
#include "task_work_probe.skel.h"
#include "cgroup.h"
#include "comm.h"
#include "stacks/capture.h"
#include "session_impl.h"

/* Change the read-only global @name in @obj's .rodata image before load. */
int ws_bpf_set_rodata(struct bpf_object *obj, const char *name, const void *val, size_t size)
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

/* A program that closes a bracket its object opens elsewhere: an interrupt's or a timer's exit. */
static bool closes_bracket(const struct bpf_program *p)
{
	const char *sec = bpf_program__section_name(p);
	size_t n = strlen(sec);

	return n > 5 && !strcmp(sec + n - 5, "_exit");
}

static bool is_iterator(const struct bpf_program *p)
{
	return bpf_program__expected_attach_type(p) == BPF_TRACE_ITER;
}

static int walk(struct bpf_link *l)
{
	char buf[512];
	ssize_t n;
	int fd = bpf_iter_create(bpf_link__fd(l)), err = 0;

	if (fd < 0)
		return -errno;
	/* EAGAIN: the kernel pauses a walk that printed nothing for a long stretch; go on */
	while ((n = read(fd, buf, sizeof(buf))) > 0 || (n < 0 && errno == EAGAIN))
		;
	if (n < 0)
		err = -errno;
	close(fd);
	return err;
}

/*
 * Walk an iterator to its end twice, an RCU grace period apart (ABI 2.4): a source seeds its
 * per-task state with it (sched gives each thread of the traced processes its entry) and says
 * so at the end of the second walk. Every program that started before the grace period has
 * returned by its end, so one that sees what the second walk says also sees everything the
 * first made, even on a CPU that reorders loads. The output is not used. It runs after the
 * object's other programs are attached, so what changes meanwhile (a new task) is seen by them.
 */
static int run_iterator(struct bpf_link *l)
{
	int err = walk(l);

	if (err)
		return err;
	/* a grace period (synchronize_rcu); refused only with nohz_full CPUs */
	if (syscall(SYS_membarrier, MEMBARRIER_CMD_GLOBAL, 0, 0))
		return -errno;
	return walk(l);
}

static int attach_one(struct ws_session *s, struct bpf_program *p, const char *who)
{
	struct bpf_link *l = bpf_program__attach(p);

	/* a source stays right without its walk (PLUGINS.md): say so, go on */
	if (!l && is_iterator(p)) {
		ws_log(WS_LOG_WARN, "%s: cannot attach %s (%s); tracing goes on without it", who,
		       bpf_program__section_name(p), strerror(errno));
		return 0;
	}
	if (!l) {
		int err = -errno;

		ws_log(WS_LOG_ERROR, "%s: cannot attach %s: %s", who, bpf_program__section_name(p),
		       strerror(errno));
		return err;
	}
	if (ws_grow((void **)&s->links, &s->links_cap, s->nlinks + 1, sizeof(*s->links)) ||
	    ws_grow((void **)&s->prog_fds, &s->progs_cap, s->nprogs + 1, sizeof(int))) {
		bpf_link__destroy(l);
		return -ENOMEM;
	}
	s->links[s->nlinks++] = l;
	s->prog_fds[s->nprogs++] = bpf_program__fd(p);
	if (is_iterator(p)) {
		int err = run_iterator(l);

		if (err)
			ws_log(WS_LOG_WARN, "%s: %s did not run (%s); tracing goes on without it",
			       who, bpf_program__section_name(p), strerror(-err));
	}
	return 0;
}

/*
 * Exits first: an interrupt or timer callback running while its entry program is attached
 * but not yet its exit would leave its CPU's bracket open, and a CPU that does not switch
 * tasks for a while (a busy thread, a kworker) would then have every later record said to be
 * inside that interrupt or timer (a read's wakeup taken for a timer's: "sleep"). An exit
 * without its entry is ignored.
 */
static int attach_object(struct ws_session *s, struct bpf_object *obj, const char *who)
{
	struct bpf_program *p;
	int pass, err;

	/* exits, then the other programs, then iterators (each walked as it is attached) */
	for (pass = 0; pass < 3; pass++) {
		bpf_object__for_each_program(p, obj) {
			int want = is_iterator(p) ? 2 : closes_bracket(p) ? 0 : 1;

			if (!bpf_program__autoload(p) || want != pass)
				continue;
			if ((err = attach_one(s, p, who)))
				return err;
		}
	}
	return 0;
}

/*
 * The scheduler model captures stacks (sched/stack.bpf.h) and learns the threshold from the
 * [core] keys: the report's min_block, so no wait too short to be reported costs a capture
 * (0: stacks off).
 */
/* The page size for the memory reclaim's limits in bytes (sched/sched_reclaim.bpf.h). */
static void page_shift_rodata(struct bpf_object *obj)
{
	long page = sysconf(_SC_PAGESIZE);
	int shift = 12;

	while (page > 0 && (1L << shift) < page && shift < 30)
		shift++;
	ws_bpf_set_rodata(obj, "ws_page_shift", &shift, sizeof(shift));
}

static void stack_rodata(struct ws_session *s, struct bpf_object *obj)
{
	uint64_t min_ns = 0, bytes = 0;
	bool on = false; /* set from [core] stacks, whose default is ws_core_keys' */
	struct bpf_program *sys_exit;
	struct bpf_map *pending;
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
	ws_bpf_set_rodata(obj, "ws_stack_defer", &s->stack_defer, sizeof(s->stack_defer));
	/* every syscall exit of the machine would run it: only when it copies stacks */
	pending = bpf_object__find_map_by_name(obj, "ws_stack_pending");
	if (pending && s->stack_defer != WS_STACK_DEFER_SYSCALL_EXIT)
		bpf_map__set_max_entries(pending, 1); /* unused: no 256 KiB for nothing */
	sys_exit = bpf_object__find_program_by_name(obj, "ws_stack_sys_exit");
	if (sys_exit)
		bpf_program__set_autoload(sys_exit,
					  min_ns && s->stack_defer == WS_STACK_DEFER_SYSCALL_EXIT);
}

/*
 * Whether the verifier accepts BPF task work from a tracepoint program, asked of a tiny object
 * (bpf/task_work_probe.bpf.c) in a thread of its own while the main thread reads the kernel's
 * BTF: asking the scheduler object itself costs a second verification of it (~250 ms here).
 */
struct task_work_probe {
	pthread_t thread;
	bool started, asked, accepted;
};

#define PROBE_LOG_OWNER (WS_MAX_PLUGINS + 1) /* its refusal explains no failure */

static void *task_work_probe_run(void *arg)
{
	struct task_work_probe *p = arg;
	struct task_work_probe_bpf *obj;

	log_owner = PROBE_LOG_OWNER;
	obj = task_work_probe_bpf__open_and_load();
	p->accepted = obj != NULL;
	task_work_probe_bpf__destroy(obj);
	return NULL;
}

static void task_work_probe_start(struct ws_session *s, struct task_work_probe *p)
{
	/* only stacks copy waiters' user stacks */
	if (ws_stack_capture_ns(s->cfg))
		p->started = p->asked =
			pthread_create(&p->thread, NULL, task_work_probe_run, p) == 0;
}

static void task_work_probe_join(struct task_work_probe *p)
{
	if (p->started)
		pthread_join(p->thread, NULL);
	p->started = false;
}

/*
 * How waiters' user stacks are copied: by task work where the kernel has the kfunc and the
 * probe saw it accepted (or could not ask: the scheduler object's load is then the test).
 */
static uint8_t stack_defer_of(struct ws_session *s, struct task_work_probe *p,
			      const struct btf *vmlinux)
{
	bool have = vmlinux && btf__find_by_name_kind(vmlinux, "bpf_task_work_schedule_resume_impl",
						      BTF_KIND_FUNC) >= 0;

	task_work_probe_join(p);
	if (have && p->asked && !p->accepted && s->verbose)
		ws_log(WS_LOG_INFO,
		       "sched: this kernel refuses BPF task work from a tracepoint; a waiter's user stack is copied when the syscall it slept in returns");
	return have && (p->accepted || !p->asked) ? WS_STACK_DEFER_TASK_WORK
						  : WS_STACK_DEFER_SYSCALL_EXIT;
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
	if (p == &ws_sched_source) {
		const char *comm = ws_config_get(s->cfg, "core", "comm");
		bool untraces = comm && *comm;

		stack_rodata(s, s->objs[i]);
		page_shift_rodata(s->objs[i]);
		/* --comm: a process that execs into another name leaves the model too */
		ws_bpf_set_rodata(s->objs[i], "ws_exec_untraces", &untraces, sizeof(untraces));
	}
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
 * The scheduler model's object was refused while it copies waiters' user stacks by BPF task
 * work: a kernel may have the kfunc yet refuse it from a tracepoint program (6.18.44's verifier:
 * "sleepable callback in a program that is not sleepable"). Open it again to copy them at the
 * exit of the syscall each waiter slept in, and load that. 0, or the load's error.
 */
static int load_sched_without_task_work(struct ws_session *s, int i, const struct btf *vmlinux,
					int err)
{
	unsigned int logged = log_next;

	if (s->plugins[i].p != &ws_sched_source || s->stack_defer != WS_STACK_DEFER_TASK_WORK ||
	    !bpf_object__find_program_by_name(s->objs[i], "ws_stack_sys_exit"))
		return err;
	bpf_object__close(s->objs[i]);
	s->objs[i] = NULL;
	s->stack_defer = WS_STACK_DEFER_SYSCALL_EXIT;
	if ((err = prepare_plugin_object(s, i, vmlinux)))
		return err;
	log_owner = i;
	err = bpf_object__load(s->objs[i]);
	log_owner = -1;
	if (!err) {
		/* the first attempt's log explains nothing that went wrong now */
		log_next = logged;
		if (s->verbose)
			ws_log(WS_LOG_INFO,
			       "sched: this kernel refuses BPF task work from a tracepoint; a waiter's user stack is copied when the syscall it slept in returns");
	}
	return err;
}

/*
 * Load every object at once: each load parses the kernel's BTF for its CO-RE
 * relocations, which is most of whyslow's start-up; in parallel it costs one
 * parse per CPU rather than one per object. Index WS_MAX_PLUGINS is the core.
 */
static int load_all(struct ws_session *s, const struct btf *vmlinux)
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
		if (j->err && i < s->nplugins)
			j->err = load_sched_without_task_work(s, i, vmlinux, j->err);
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
 * Is the scheduler model enabled? Its sched_switch program calls ws_cpu_switch() before
 * anything else: the core's would be a second program on every switch of the machine, and on
 * a VM each call costs ~250 ns more than the program's own work.
 */
static bool sched_closes_brackets(struct ws_session *s)
{
	for (int i = 0; i < s->nplugins; i++)
		if (s->plugins[i].p == &ws_sched_source)
			return true;
	return false;
}

/* attach --cgroup: the kernel side follows the processes that join it (ctx.bpf.c). */
static int follow_cgroup(struct ws_session *s)
{
	const char *path = ws_config_get(s->cfg, "core", "cgroup");
	uint64_t id = 0;
	int err;

	if (!path || !*path)
		return 0;
	if ((err = ws_cgroup_id(path, &id)))
		return err;
	s->core_skel->rodata->follow_cgroup_id = id;
	return 0;
}

/*
 * attach/watch --comm: the kernel side follows the processes that take one of the names by exec,
 * and drops those that take another (ctx.bpf.c ws_follow_exec; its program loaded only then).
 */
static int follow_comm(struct ws_session *s)
{
	const char *list = ws_config_get(s->cfg, "core", "comm");
	char names[WS_COMM_NAMES][WS_COMM_BYTES], why[200];
	int n;

	if (!list || !*list) {
		bpf_program__set_autoload(s->core_skel->progs.ws_follow_exec, false);
		return 0;
	}
	if ((n = ws_comm_parse(list, names, why, sizeof(why))) < 0) {
		ws_log(WS_LOG_ERROR, "--comm: %s", why);
		return n;
	}
	memcpy((void *)s->core_skel->rodata->follow_comm, names, sizeof(names));
	s->core_skel->rodata->follow_ncomm = n;
	return 0;
}

static int session_attach(struct ws_session *s, struct task_work_probe *probe)
{
	/* both have their default in ws_core_keys, the only copy: the lookups always set them */
	uint64_t ring_size = 0, max_procs = 0;
	struct btf *vmlinux;
	int err;

	ws_config_u64(s->cfg, "core", ws_core_keys, "ring_size", &ring_size);
	if (ring_size & (ring_size - 1)) {
		ws_log(WS_LOG_ERROR, "ring_size %" PRIu64 " is not a power of 2 (e.g. 16M)",
		       ring_size);
		return -EINVAL;
	}
	ws_config_u64(s->cfg, "core", ws_core_keys, "max_processes", &max_procs);
	if ((err = session_plugins_init(s)) || (err = create_maps(s, ring_size, max_procs)))
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
	if (!err && (err = follow_cgroup(s)))
		return err;
	if (!err && (err = follow_comm(s)))
		return err;
	/* the scheduler model closes the brackets in its own switch program (ws_cpu_switch) */
	if (!err && sched_closes_brackets(s))
		bpf_program__set_autoload(s->core_skel->progs.ws_ctx_switch, false);
	/* the kernel's symbols are read while the objects load */
	session_stacks_warm(s);
	s->stack_defer = stack_defer_of(s, probe, vmlinux);
	for (int i = 0; !err && i < s->nplugins; i++)
		err = prepare_plugin_object(s, i, vmlinux);
	log_next = 0;
	if (!err)
		err = load_all(s, vmlinux);
	btf__free(vmlinux);
	if (!err)
		session_stacks_watch_python(s);
	/* the core first: records carry its interrupt context from the start */
	if (!err)
		err = attach_object(s, s->core_skel->obj, "core");
	for (int i = 0; !err && i < s->nplugins; i++)
		if (s->objs[i])
			err = attach_object(s, s->objs[i], s->plugins[i].p->name);
	if (err)
		return err;
	s->rb = ring_buffer__new(s->ring_fd, session_ring_record, s, NULL);
	if (!s->rb) {
		err = -errno;
		ws_log(WS_LOG_ERROR, "cannot read the ring buffer: %s", strerror(errno));
		return err;
	}
	return 0;
}

int ws_session_attach(struct ws_session *s)
{
	struct task_work_probe probe = { 0 };
	int err;

	libbpf_verbose = s->verbose;
	libbpf_set_print(libbpf_print);
	task_work_probe_start(s, &probe);
	err = session_attach(s, &probe);
	task_work_probe_join(&probe); /* an attach that failed before it asked */
	return err;
}

int ws_session_trace_pid(struct ws_session *s, uint32_t pid)
{
	__u8 one = 1;

	if (s->tgids_fd >= 0 && bpf_map_update_elem(s->tgids_fd, &pid, &one, BPF_ANY))
		return -errno;
	return session_pid_add(s, pid);
}

bool ws_session_any_traced(struct ws_session *s)
{
	__u32 key;

	return s->tgids_fd >= 0 && bpf_map_get_next_key(s->tgids_fd, NULL, &key) == 0;
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
