#!/bin/bash
# whyslow on PostgreSQL 15 under pgbench, with fsync on and a slow disk (issue 15's "done when").
#
#   sudo bench/pgbench.sh                        # every mode below; reports kept in a temp dir
#   sudo MODES="run tcp" DURATION=10 bench/pgbench.sh
#
# What it builds, all of it removed on exit (Ctrl-C included):
#   - a file on /tmp, a loop device over it in direct-I/O mode, an ext4 file system on it, mounted
#     in a temp dir;
#   - a fresh cgroup-v1 blkio group that throttles writes to that loop device to $WRITE_IOPS per
#     second (reads to $READ_IOPS): each WAL fdatasync of a commit waits on it;
#   - a private cluster made by initdb (owner: the postgres user; if there is none, a system user
#     created for the run and deleted after), on port $PORT, unix socket in the temp dir, fsync on,
#     synchronous_commit on. The system's clusters are never touched.
# Modes (MODES, default "run attach tcp waits overhead"):
#   run       whyslow run -- sh -c 'start postgres; pgbench -c $CLIENTS -T $DURATION; stop':
#             the postmaster, backends, WAL writer and pgbench are all traced (unix socket)
#   attach    postgres already running; whyslow record attach of the postmaster (its new
#             backends are followed), pgbench untraced; then whyslow report, text and JSON
#   waits     untraced: pg_stat_activity's wait events sampled every 0.5 s (waits.wait_events),
#             PostgreSQL's own account to check whyslow's against
#   tcp       as run, pgbench over TCP 127.0.0.1 (the net source chains the loopback hop)
#   overhead  tps untraced vs traced (whyslow attach of the postmaster) vs traced with
#             [core] stacks = false (and, with WHYSLOW_BEFORE=another build's whyslow, traced
#             by that build), the order rotating each round, $ROUNDS rounds of $OVH_T seconds
#             each; medians, each round's slowdown against its own untraced run (its median,
#             range and 95% CI; PAIRED_FLOOR=X leaves out rounds where a run gave < X tps: the
#             throttled disk stalls every configuration now and then), the load average and
#             whyslow's own CPU seconds
#   breakdown where a traced round's loss goes (issue 37): tps, context switches, idle CPU,
#             whyslow's CPU and its BPF run time per round, configurations BREAKDOWN_CONFIGS
#             (default "untraced traced"; also nostacks, norequests, nice19, schedidle, win2s,
#             res1ms, discard, before, and the floors empty_bpf and minimal_bpf; see breakdown())
#             rotating each round (each BPF program's runs and time in $OUT/programs.tsv); then the reader's profile
#             over one more traced round ($OUT/reader.perf, reader.perf.txt). LATE_S=S (< OVH_T)
#             also measures the last S seconds of each round alone ($OUT/late.tsv): tps, the
#             reader's CPU and BPF time once its history has filled ($OUT/reader_cpu.tsv: its CPU
#             while pgbench ran, its peak RSS and its minor page faults). RSS_EVERY=S samples the
#             reader's RSS every S seconds of each round ($OUT/rss.tsv). KEEP_DATA=1 keeps
#             attach's recording in $OUT; ATTACH_ARGS="-c my.ini" gives mode attach options.
# Needs: PostgreSQL 15 from Debian (apt-get install -y postgresql postgresql-contrib; the script
# installs it when missing and says so). Output: $OUT (default a new /tmp/whyslow-pgbench-out.*),
# one NAME.txt / NAME.json per mode, pgbench's own output in NAME.pgbench.
set -u
. "$(dirname "$0")/lib.sh"
need_root

MODES=${MODES:-"run attach tcp waits overhead"}
CLIENTS=${CLIENTS:-8} DURATION=${DURATION:-20} SCALE=${SCALE:-10}
WRITE_IOPS=${WRITE_IOPS:-100} READ_IOPS=${READ_IOPS:-400}
PORT=${PORT:-54331} ROUNDS=${ROUNDS:-3} OVH_T=${OVH_T:-10} LATE_S=${LATE_S:-0} RSS_EVERY=${RSS_EVERY:-0}
WORK= TRACER_PID= OUT=${OUT:-}

die() { echo "pgbench.sh: $*" >&2; exit 1; }

# the slow disk, the cluster and its user: bench/lib.sh
cleanup() {
	trap - EXIT INT TERM
	[ -n "$TRACER_PID" ] && kill -INT "$TRACER_PID" 2>/dev/null && wait "$TRACER_PID" 2>/dev/null
	pg_stop
	slowdisk_remove
	pg_user_remove
	[ -n "$WORK" ] && rm -rf "$WORK"
}
trap cleanup EXIT
trap 'echo "pgbench.sh: interrupted, cleaning up" >&2; exit 130' INT TERM

pg_installed || die "apt-get install postgresql postgresql-contrib failed"
[ -x "$WHYSLOW" ] || die "no whyslow at $WHYSLOW: build first (ninja -C build) or set WHYSLOW"
[ -d "$BLKIO" ] || die "no cgroup-v1 blkio hierarchy at $BLKIO"
ss -ltn 2>/dev/null | grep -q ":$PORT " && die "port $PORT is in use; set PORT"
pg_user_make || die "useradd failed"

WORK=$(mktemp -d /tmp/whyslow-pgbench.XXXXXX) || die "mktemp failed"
chmod 711 "$WORK"
[ -n "$OUT" ] || OUT=$(mktemp -d /tmp/whyslow-pgbench-out.XXXXXX) || die "mktemp failed"
mkdir -p "$OUT" && chmod 755 "$OUT"
# KEEP_DATA=1 keeps attach's recording in $OUT (it is large), else it goes with the temp dir
DATA=$WORK
[ "${KEEP_DATA:-0}" = 1 ] && DATA=$OUT
SOCK=$WORK/sock
# the slow disk: ext4 on a direct-I/O loop device; its writes throttled in our own group
slowdisk_make 768M || exit 1
pg_cluster_make || exit 1

PGARGS=(-U postgres -p "$PORT")
pg_start || exit 1
pg_as pgbench -h "$SOCK" "${PGARGS[@]}" -i -s "$SCALE" -q postgres >"$WORK/init.log" 2>&1 ||
	die "pgbench -i failed: $(tail -3 "$WORK/init.log")"
pg_stop

# Every process started from here on (postgres, pgbench, whyslow) is in the throttled group;
# the initial load above was not (it would take minutes).
slowdisk_join || die "cannot join $CG"

machine_line | tee "$OUT/machine.txt"
echo "# slow disk: $LOOP ($MM), ext4, writes $WRITE_IOPS/s, reads $READ_IOPS/s; pgbench -c $CLIENTS -T $DURATION -s $SCALE" |
	tee -a "$OUT/machine.txt"

# mode run / tcp: everything under whyslow run, as the postgres user
traced_run() { # NAME HOST
	local name=$1 host=$2
	chown "$PGUSER_NAME" "$OUT"
	# record --live prints what `run` prints (text) and keeps the events for the JSON report
	"$WHYSLOW" record -u "$PGUSER_NAME" -o "$WORK/$name.data" --live "$OUT/$name.txt" -- \
		sh -c "$PGBIN/pg_ctl -D '$MNT/data' -l '$SOCK/pg.log' -w start >/dev/null &&
		pgbench -h '$host' ${PGARGS[*]} -c $CLIENTS -T $DURATION postgres >'$OUT/$name.pgbench' 2>&1;
		$PGBIN/pg_ctl -D '$MNT/data' -m fast -w stop >/dev/null" 2>"$OUT/$name.stderr"
	"$WHYSLOW" report "$WORK/$name.data" --format json -o "$OUT/$name.json"
	echo "== $name: $(grep -E '^tps' "$OUT/$name.pgbench" | head -1)"
}

# mode attach: record the running postmaster, pgbench outside, report afterwards
attached_run() {
	pg_start || exit 1
	# shellcheck disable=SC2086 # ATTACH_ARGS: options for the recording, e.g. "-c my.ini"
	"$WHYSLOW" record ${ATTACH_ARGS:-} -o "$DATA/attach.data" attach "$(postmaster_pid)" 2>"$OUT/attach.stderr" &
	TRACER_PID=$!
	sleep 3 # attach finishes loading before the load starts
	pg_as pgbench -h "$SOCK" "${PGARGS[@]}" -c "$CLIENTS" -T "$DURATION" postgres >"$OUT/attach.pgbench" 2>&1
	kill -INT "$TRACER_PID"
	wait "$TRACER_PID"
	TRACER_PID=
	pg_stop
	"$WHYSLOW" report "$DATA/attach.data" -o "$OUT/attach.txt"
	"$WHYSLOW" report "$DATA/attach.data" --format json -o "$OUT/attach.json"
	echo "== attach: $(grep -E '^tps' "$OUT/attach.pgbench" | head -1)"
}

# mode waits: no tracing; PostgreSQL's own account of what its backends wait for, to check
# whyslow's against (psql's connections would show in a trace, so this run is untraced)
pg_waits() {
	pg_start || exit 1
	# PostgreSQL's own account, to check whyslow's against: what each backend waits for,
	# sampled every 0.5 s (wait_event_type/wait_event: Lock/transactionid, LWLock/WALWrite,
	# IO/WALSync, Client/ClientRead, ...)
	(
		for ((i = 0; i < DURATION * 2; i++)); do
			pg_as psql -h "$SOCK" "${PGARGS[@]}" -XAtc "select coalesce(wait_event_type, 'CPU'), coalesce(wait_event, '-') from pg_stat_activity where backend_type = 'client backend' and pid <> pg_backend_pid()" postgres 2>/dev/null
			sleep 0.5
		done | sort | uniq -c | sort -rn >"$OUT/waits.wait_events"
	) &
	pg_as pgbench -h "$SOCK" "${PGARGS[@]}" -c "$CLIENTS" -T "$DURATION" postgres >"$OUT/waits.pgbench" 2>&1
	wait
	pg_stop
	echo "== waits (untraced): $(grep -E '^tps' "$OUT/waits.pgbench" | head -1)"
}

# tracer WHYSLOW PLUGIN_DIR [OPTION...]: that whyslow attaches to the postmaster in the
# background ($TRACER_PID), given 3 s to finish loading before the load starts
tracer() {
	local bin=$1 plugins=$2
	shift 2
	WHYSLOW_PLUGIN_DIR=$plugins ${TRACER_PREFIX:-} nice -n "${TRACER_NICE:-0}" "$bin" attach "$@" --format json \
		-o /dev/null "$(postmaster_pid)" 2>/dev/null &
	TRACER_PID=$!
	sleep 3
}

# mode overhead: tps untraced, traced, and traced without stacks ([core] stacks = false),
# in an order that rotates each round
overhead() {
	local r c i tps cpu order=(untraced traced nostacks)
	[ -n "${WHYSLOW_BEFORE:-}" ] && order+=(before)
	local n=${#order[@]}
	: >"$OUT/overhead.tsv"
	printf '[core]\nstacks = false\n' >"$OUT/nostacks.ini"
	pg_start || exit 1
	for ((r = 0; r < ROUNDS; r++)); do
		for ((i = 0; i < n; i++)); do
			c=${order[(i + r) % n]} cpu=-
			case $c in
			nostacks) tracer "$WHYSLOW" "$WHYSLOW_PLUGIN_DIR" -c "$OUT/nostacks.ini" ;;
			traced) tracer "$WHYSLOW" "$WHYSLOW_PLUGIN_DIR" ;;
			before) tracer "$WHYSLOW_BEFORE" "$(plugins_of "$WHYSLOW_BEFORE")" ;;
			esac
			tps=$(pg_as pgbench -h "$SOCK" "${PGARGS[@]}" -c "$CLIENTS" -T "$OVH_T" postgres 2>&1 |
				awk '/^tps/ {print $3; exit}')
			if [ -n "$TRACER_PID" ]; then
				cpu=$(cpu_secs "$TRACER_PID")
				kill -INT "$TRACER_PID"; wait "$TRACER_PID"; TRACER_PID=
			fi
			# a round without a result must not become a median's input (the server died)
			if [ -z "$tps" ]; then
				cp "$SOCK/pg.log" "$OUT/server.log" 2>/dev/null
				die "overhead: round $r ($c) gave no tps: is the server down? its log: $OUT/server.log; rounds so far: $OUT/overhead.tsv"
			fi
			printf '%s\t%s\t%s\t%s\t%s\n' "$c" "$tps" "$(cut -d' ' -f1 /proc/loadavg)" "$cpu" "$r" |
				tee -a "$OUT/overhead.tsv"
		done
	done
	pg_stop
	local u t
	u=$(awk '$1=="untraced" {print $2}' "$OUT/overhead.tsv" | median)
	echo "overhead, $ROUNDS rounds of ${OVH_T}s (medians; whyslow's CPU seconds from attach to stop, 3 s before the load included):" |
		tee "$OUT/overhead.txt"
	for c in "${order[@]}"; do
		t=$(awk -v c="$c" '$1==c {print $2}' "$OUT/overhead.tsv" | median)
		printf '  %-9s %8.1f tps %+6.1f%%' "$c" "$t" "$(awk -v u="$u" -v t="$t" 'BEGIN{print (t/u-1)*100}')"
		[ "$c" = untraced ] && { echo; continue; }
		# each round against that round's own untraced run: steadier on a drifting VM
		printf '  slowdown per round %s' "$(python3 "$BENCH_DIR/paired.py" "$OUT/overhead.tsv" - "$c" \
			--higher-is-better ${PAIRED_FLOOR:+--floor "$PAIRED_FLOOR"})"
		echo "  whyslow CPU $(awk -v c="$c" '$1==c {print $4}' "$OUT/overhead.tsv" | median) s"
	done | tee -a "$OUT/overhead.txt"
	echo "  load $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$OUT/overhead.txt"
}

# mode breakdown (issue 37.1): where a traced CPU-bound round's loss goes. Rounds alternate
# untraced / traced (attach, default options); each round records the machine's context switches
# and migrations (perf stat -a, software events: this VM has no hardware counters), the machine's
# idle CPU seconds (/proc/stat), whyslow's own CPU, and the BPF programs' run time (kernel.bpf_stats_enabled, bpftool deltas). One more
# traced round under `perf record -g` of whyslow alone leaves $OUT/reader.perf.txt.
idle_secs() { awk -v hz="$(getconf CLK_TCK)" '/^cpu / {printf "%.2f", ($5+$6)/hz}' /proc/stat; } # the machine's idle+iowait
bpf_ns() { prog_stats | awk '{t+=$3} END {printf "%.3f", t/1e9}'; }
breakdown() {
	local r c i tps cpu pg0 pg1 b0 b1 st c0 c1 mid_pid hwm f0 f1
	local order=(${BREAKDOWN_CONFIGS:-untraced traced}) old n
	old=$(sysctl -n kernel.bpf_stats_enabled)
	n=${#order[@]}
	printf '[core]\nstacks = false\n' >"$OUT/nostacks.ini"
	printf '[core]\nresolution = 1ms\n' >"$OUT/res1ms.ini"
	printf '[core]\nmax_window = 2s\n' >"$OUT/win2s.ini"
	if [[ " ${order[*]} " == *_bpf* ]]; then
		local o=$OUT
		OUT=$WORK # bench_bpf_loader builds into $OUT
		bench_bpf empty_tracer.bpf.c "$WORK/empty_tracer.bpf.o" &&
			bench_bpf minimal_tracer.bpf.c "$WORK/minimal_tracer.bpf.o" && bench_bpf_loader ||
			die "breakdown: cannot build the floor tracers"
		OUT=$o
	fi
	sysctl -qw kernel.bpf_stats_enabled=1
	printf 'config\ttps\tload\twhyslow_cpu\tround\tidle_s\tbpf_s\tcs\tmigrations\n' >"$OUT/breakdown.tsv"
	printf 'config\tround\tprogram\truns\tseconds\tns_per_run\n' >"$OUT/programs.tsv"
	printf 'config\tround\tcpu_at_start\tcpu_at_end\tpeak_rss_kb\tminor_faults\n' >"$OUT/reader_cpu.tsv"
	[ "$RSS_EVERY" -gt 0 ] && printf 'config\tround\tsecond\trss_kb\n' >"$OUT/rss.tsv"
	[ "$LATE_S" -gt 0 ] && printf 'config\ttps_late\t-\twhyslow_cpu_late\tround\tbpf_s_late\tprogress_lines\tminor_faults_late\n' >"$OUT/late.tsv"
	pg_start || exit 1
	for ((r = 0; r < ROUNDS; r++)); do
		for ((i = 0; i < n; i++)); do
			c=${order[(i + r) % n]} cpu=- b0=0 b1=0
			case $c in
			traced) tracer "$WHYSLOW" "$WHYSLOW_PLUGIN_DIR" ;;
			# the reader at the lowest priority: does its preempting the backends cost more
			# than its CPU time?
			nice19) TRACER_NICE=19 tracer "$WHYSLOW" "$WHYSLOW_PLUGIN_DIR" ;;
			nostacks) tracer "$WHYSLOW" "$WHYSLOW_PLUGIN_DIR" -c "$OUT/nostacks.ini" ;;
			norequests) tracer "$WHYSLOW" "$WHYSLOW_PLUGIN_DIR" --no-requests ;;
			# the reader runs only when a CPU has nothing else to run: is it its competing
			# with the backends for the CPUs, or its work?
			schedidle) TRACER_PREFIX="chrt --idle 0" tracer "$WHYSLOW" "$WHYSLOW_PLUGIN_DIR" ;;
			# a fifth of the kept history (max_window 2s): is it the reader's memory?
			win2s) tracer "$WHYSLOW" "$WHYSLOW_PLUGIN_DIR" -c "$OUT/win2s.ini" ;;
			# every record read off the ring and dropped: the kernel side and the ring alone
			discard) WHYSLOW_BENCH_DISCARD=1 tracer "$WHYSLOW" "$WHYSLOW_PLUGIN_DIR" ;;
			# fewer records: periods under 1 ms summarised in the kernel (the default: 156us)
			res1ms) tracer "$WHYSLOW" "$WHYSLOW_PLUGIN_DIR" -c "$OUT/res1ms.ini" ;;
			before) tracer "$WHYSLOW_BEFORE" "$(plugins_of "$WHYSLOW_BEFORE")" ;;
			# what any tracer of this shape pays here (bench/overhead.sh's floors): programs
			# that return at once, and the least per-thread design; no reader
			empty_bpf | minimal_bpf)
				# (the minimal one follows the postmaster's tgid and the tasks it makes)
				"$WORK/bpf_floor" "$WORK/${c%_bpf}_tracer.bpf.o" $([ $c = minimal_bpf ] && postmaster_pid) \
					>/dev/null 2>&1 &
				TRACER_PID=$!
				sleep 3 ;;
			esac
			[ -n "$TRACER_PID" ] && b0=$(bpf_ns) && prog_stats >"$WORK/progs0"
			pg0=$(idle_secs)
			c0=- c1=- hwm=- f0=0 f1=0
			[ -n "$TRACER_PID" ] && c0=$(cpu_secs "$TRACER_PID") && f0=$(minor_faults "$TRACER_PID")
			# the last $LATE_S seconds of the run alone: past the reader's first fill of its
			# history, as an always-on tracer runs (pgbench -P prints each 5 s's tps)
			if [ "$LATE_S" -gt 0 ]; then
				( sleep $((OVH_T - LATE_S)); { date +%s.%N; [ -n "$TRACER_PID" ] && cpu_secs "$TRACER_PID" && echo && bpf_ns && echo && minor_faults "$TRACER_PID"; } >"$WORK/mid" ) &
				mid_pid=$!
			fi
			# the reader's RSS every $RSS_EVERY seconds of the round: does it level off?
			if [ "$RSS_EVERY" -gt 0 ] && [ -n "$TRACER_PID" ]; then
				( t0=$(date +%s); while kill -0 "$TRACER_PID" 2>/dev/null; do
					printf '%s\t%s\t%s\t%s\n' "$c" "$r" $(($(date +%s) - t0)) \
						"$(awk '/^VmRSS/ {print $2}' "/proc/$TRACER_PID/status" 2>/dev/null)"
					sleep "$RSS_EVERY"; done >>"$OUT/rss.tsv" ) &
			fi
			perf stat -a -x, -e context-switches,cpu-migrations -o "$WORK/stat.csv" -- \
				runuser -u "$PGUSER_NAME" -- pgbench -h "$SOCK" "${PGARGS[@]}" -c "$CLIENTS" -T "$OVH_T" $([ "$LATE_S" -gt 0 ] && echo -P 5) postgres >"$WORK/pgb.out" 2>&1
			tps=$(awk '/^tps/ {print $3; exit}' "$WORK/pgb.out")
			pg1=$(idle_secs)
			if [ -n "$TRACER_PID" ]; then
				b1=$(bpf_ns)
				# each program's share: run count and ns per run over the round
				prog_stats | awk -v c="$c" -v r="$r" 'NR == FNR {t[$1] = $3; n[$1] = $4; next}
					{dn = $4 - n[$1]; if (dn > 0) printf "%s\t%s\t%s\t%d\t%.3f\t%.0f\n", c, r, $2, dn, ($3 - t[$1]) / 1e9, ($3 - t[$1]) / dn}' \
					"$WORK/progs0" - >>"$OUT/programs.tsv"
				cpu=$(cpu_secs "$TRACER_PID")
				c1=$cpu
				hwm=$(awk '/^VmHWM/ {print $2}' "/proc/$TRACER_PID/status")
				f1=$(minor_faults "$TRACER_PID")
				kill -INT "$TRACER_PID"; wait "$TRACER_PID"; TRACER_PID=
			fi
			[ -n "$tps" ] || die "breakdown: round $r ($c) gave no tps"
			st=$(awk -F, '$3=="context-switches" {cs=$1} $3=="cpu-migrations" {m=$1} END {print cs "\t" m}' "$WORK/stat.csv")
			printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$c" "$tps" "$(cut -d' ' -f1 /proc/loadavg)" "$cpu" "$r" \
				"$(awk -v a="$pg0" -v b="$pg1" 'BEGIN {printf "%.2f", b-a}')" \
				"$(awk -v a="$b0" -v b="$b1" 'BEGIN {printf "%.3f", b-a}')" "$st" | tee -a "$OUT/breakdown.tsv"
			# whyslow's CPU while pgbench ran: its start-up left out
			printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$c" "$r" "$c0" "$c1" "$hwm" $((f1 - f0)) >>"$OUT/reader_cpu.tsv"
			if [ "$LATE_S" -gt 0 ]; then
				wait "$mid_pid"
				# tps of the progress lines past OVH_T - LATE_S; the reader's CPU and BPF time then
				awk -v c="$c" -v r="$r" -v from=$((OVH_T - LATE_S)) -v c1="$c1" -v b1="$b1" -v f1="$f1" '
					FILENAME ~ /mid$/ {m[FNR] = $1; next}
					/^progress:/ && $2 + 0 > from {t += $4; n++}
					END {printf "%s\t%.1f\t-\t%s\t%s\t%s\t%d\t%s\n", c, n ? t / n : 0,
						(m[2] == "" ? "-" : sprintf("%.2f", c1 - m[2])), r,
						(m[3] == "" ? "-" : sprintf("%.3f", b1 - m[3])), n,
						(m[4] == "" ? "-" : f1 - m[4])}' \
					"$WORK/mid" "$WORK/pgb.out" >>"$OUT/late.tsv"
			fi
		done
	done
	# the reader's profile over one more traced round
	tracer "$WHYSLOW" "$WHYSLOW_PLUGIN_DIR"
	perf record -q --call-graph dwarf,16384 -p "$TRACER_PID" -o "$OUT/reader.perf" -- sleep "$OVH_T" >/dev/null 2>&1 &
	local perf_pid=$!
	pg_as pgbench -h "$SOCK" "${PGARGS[@]}" -c "$CLIENTS" -T "$OVH_T" postgres >/dev/null 2>&1
	wait "$perf_pid"
	kill -INT "$TRACER_PID"; wait "$TRACER_PID"; TRACER_PID=
	perf report -i "$OUT/reader.perf" --no-children --stdio -g none --sort dso,sym 2>/dev/null |
		grep -v '^$' | head -80 >"$OUT/reader.perf.txt"
	pg_stop
	sysctl -qw kernel.bpf_stats_enabled="$old"
	echo "breakdown: $OUT/breakdown.tsv, reader profile $OUT/reader.perf.txt"
}

for m in $MODES; do
	case $m in
	run) traced_run run "$SOCK" ;;
	tcp) traced_run tcp 127.0.0.1 ;;
	attach) attached_run ;;
	waits) pg_waits ;;
	overhead) overhead ;;
	breakdown) breakdown ;;
	*) die "unknown mode $m (run, attach, tcp, waits, overhead, breakdown)" ;;
	esac
done
echo "reports in $OUT"
