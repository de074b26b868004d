#!/bin/bash
# Overhead of whyslow and its peers on the traced program, as ratios to an untraced
# baseline. Run as root from anywhere:
#
#   bench/overhead.sh                      # all workloads, 5 rounds
#   ROUNDS=7 WORKLOADS="pipe mutex" bench/overhead.sh
#   PG_T=20 WORKLOADS=pgbench bench/overhead.sh
#
# Workloads: pipe    taskset -c 0 perf bench sched pipe -l $PIPE_LOOPS   (usecs/op)
#            mutex   bench/mutex_bench 2 $MUTEX_OPS  (mutex+condvar ping-pong; ns/op)
#            pgbench PostgreSQL 15 (temp cluster on 127.0.0.1, fsync on), pgbench -s $PG_SCALE
#                    -c $PG_CLIENTS -T $PG_T (tps)
# Configurations (CONFIGS): baseline whyslow perf_sched bcc_offwaketime offcputime
#            wakeuptime bpftrace. Each round runs every configuration once, in an order
#            rotated by one each round, so machine drift spreads over all of them; the
#            table shows medians over ROUNDS rounds and the ratio to the baseline median,
#            and each round's own ratio to that round's baseline (median, range, 95% CI of
#            the median; bench/paired.py): on a VM whose speed drifts by tens of percent
#            within minutes, two runs seconds apart compare better than two medians.
# Every tool is started before the benchmark and given time to attach; the benchmark
# waits on a fifo until then, so no tool start-up is inside the measurement.
#   whyslow      whyslow attach --format json -o F PID   (follows the target's forks)
#   whyslow_sched    the same with --sources sched (no futex/blkio: isolates their cost)
#   whyslow_record   whyslow record -o F attach PID  (kernel side + drain to a file, no analysis)
#   whyslow_before   $WHYSLOW_BEFORE attach ... (another build, e.g. main's, for before/after
#                    in one run: WHYSLOW_BEFORE=/path/build/core/whyslow CONFIGS="baseline
#                    whyslow_before whyslow" WORKLOADS=pipe bench/overhead.sh)
#   perf_sched   perf sched record -o F                  (system-wide, as perf sched is)
#   whyslow_watch    whyslow watch -a --trigger 1s (always on, the whole system: its flight
#                    recorder and dumps, as whyslow.service runs it)
#   perf_overwrite   perf record --overwrite -a -e sched:sched_switch (perf's flight recorder)
#   bcc          offwaketime-bpfcc -p PID                (tried once; reported if it fails)
#   offcputime   offcputime (libbpf-tools, system-wide: targets span several processes)
#   wakeuptime   wakeuptime (libbpf-tools, system-wide)
#   bpftrace     bpftrace bench/whyslow_like.bt PID      (whyslow's tracepoints, follows forks)
#   empty_bpf    bench/empty_tracer.bpf.c: programs that return at once on sched_switch and
#                sched_waking, the floor of any tracer of those events (needs build/vmlinux.h)
#   minimal_bpf  bench/minimal_tracer.bpf.c: the least a tracer with per-thread task storage
#                does per event (lookups, one clock read, stamps), for PID and its children
set -u
. "$(dirname "$0")/lib.sh"
need_root

ROUNDS=${ROUNDS:-5}
WORKLOADS=${WORKLOADS:-"pipe mutex pgbench"}
CONFIGS=${CONFIGS:-"baseline whyslow perf_sched bcc_offwaketime offcputime wakeuptime bpftrace"}
PIPE_LOOPS=${PIPE_LOOPS:-100000}
MUTEX_OPS=${MUTEX_OPS:-200000}
PG_SCALE=${PG_SCALE:-10} PG_CLIENTS=${PG_CLIENTS:-4} PG_T=${PG_T:-20} PG_PORT=${PG_PORT:-54329}
ATTACH_WAIT=${ATTACH_WAIT:-2}
OUT=${OUT:-$(mktemp -d /tmp/whyslow-overhead.XXXXXX)}
mkdir -p "$OUT"; chmod 755 "$OUT"
RAW=$OUT/raw.tsv
[ -n "${TABLE_ONLY:-}" ] || : > "$RAW"   # TABLE_ONLY=1 OUT=DIR: only print the tables of DIR/raw.tsv
TOOL_PID= PG_DATA=

cleanup() {
	[ -n "$TOOL_PID" ] && kill -INT "$TOOL_PID" 2>/dev/null
	if [ -n "$PG_DATA" ] && [ -f "$PG_DATA/postmaster.pid" ]; then
		su postgres -c "/usr/lib/postgresql/15/bin/pg_ctl -D $PG_DATA -m fast -w stop" >/dev/null 2>&1
	fi
	[ -n "$PG_DATA" ] && rm -rf "$(dirname "$PG_DATA")"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

cc -O2 -pthread -o "$OUT/mutex_bench" "$BENCH_DIR/mutex_bench.c" || exit 1
if [[ " $CONFIGS " == *_bpf\ * ]] && [ -z "${TABLE_ONLY:-}" ]; then
	for t in empty minimal; do
		bench_bpf "${t}_tracer.bpf.c" "$OUT/${t}_tracer.bpf.o" || exit $?
	done
	bench_bpf_loader || exit 1
fi
if [ -n "${TABLE_ONLY:-}" ]; then
	CONFIGS=$(awk -F'\t' '{print $2}' "$RAW" | awk '!s[$0]++' | tr '\n' ' ')
	[ -f "$OUT/bcc.log" ] && CONFIGS="$CONFIGS bcc_offwaketime"
fi

# --- bcc: try once ---------------------------------------------------------
BCC_ERR=
if [[ " $CONFIGS " == *" bcc_offwaketime "* ]]; then
	if ! command -v offwaketime-bpfcc >/dev/null; then
		BCC_ERR="offwaketime-bpfcc not installed (apt-get install bpfcc-tools)"
	else
		[ -n "${TABLE_ONLY:-}" ] || timeout -s INT 20 offwaketime-bpfcc -p $$ 1 > "$OUT/bcc.log" 2>&1
		if grep -qE 'Exception|Error|error' "$OUT/bcc.log"; then
			BCC_ERR="does not run here: $(grep -m1 -E 'Unable to find kernel headers|Exception' "$OUT/bcc.log")"
		fi
	fi
	[ -n "$BCC_ERR" ] && echo "# bcc offwaketime-bpfcc: $BCC_ERR" >&2
fi

# --- tools -------------------------------------------------------------------
# start_tool CONFIG TARGET_PID TAG: start the tool, wait until it is attached
start_tool() {
	local cfg=$1 pid=$2 tag=$3 log=$OUT/$3.log
	TOOL_PID=
	case $cfg in
	baseline) return 0 ;;
	whyslow) "$WHYSLOW" attach --format json -o "$OUT/$tag.json" "$pid" > "$log" 2>&1 & ;;
	whyslow_sched) "$WHYSLOW" attach --sources sched --format json -o "$OUT/$tag.json" "$pid" > "$log" 2>&1 & ;;
	whyslow_record) "$WHYSLOW" record -o "$OUT/$tag.data" attach "$pid" > "$log" 2>&1 & ;;
	whyslow_before)
		[ -x "${WHYSLOW_BEFORE:-}" ] || { echo "whyslow_before: set WHYSLOW_BEFORE to a whyslow binary" >&2; return 1; }
		WHYSLOW_PLUGIN_DIR=$(plugins_of "$WHYSLOW_BEFORE") \
			"$WHYSLOW_BEFORE" attach --format json -o "$OUT/$tag.json" "$pid" > "$log" 2>&1 & ;;
	perf_sched) perf sched record -o "$OUT/$tag.perf.data" > "$log" 2>&1 & ;;
	whyslow_watch) "$WHYSLOW" watch -a --trigger 1s --spool "$OUT/spool.$tag" > "$log" 2>&1 & ;;
	perf_overwrite) perf record --overwrite -a -e sched:sched_switch -o "$OUT/$tag.perf.data" > "$log" 2>&1 & ;;
	bcc_offwaketime) offwaketime-bpfcc -p "$pid" > "$log" 2>&1 & ;;
	offcputime) offcputime > "$log" 2>&1 & ;;
	wakeuptime) wakeuptime > "$log" 2>&1 & ;;
	bpftrace) bpftrace "$BENCH_DIR/whyslow_like.bt" "$pid" > "$log" 2>&1 & ;;
	empty_bpf) "$OUT/bpf_floor" "$OUT/empty_tracer.bpf.o" > "$log" 2>&1 & ;;
	minimal_bpf) "$OUT/bpf_floor" "$OUT/minimal_tracer.bpf.o" "$pid" > "$log" 2>&1 & ;;
	*) echo "unknown config $cfg" >&2; exit 1 ;;
	esac
	TOOL_PID=$!
	if [ "$cfg" = bpftrace ]; then
		for _ in $(seq 100); do grep -q READY "$log" && break; sleep 0.1; done
	fi
	sleep "$ATTACH_WAIT"
	kill -0 "$TOOL_PID" 2>/dev/null || { echo "# $cfg exited early: $(tail -1 "$log")" >&2; TOOL_PID=; return 1; }
}

# stop_tool CONFIG TAG: stop it; sets STOPPED="tool_cpu_s events lost" (events/lost: whyslow only)
stop_tool() {
	local cfg=$1 tag=$2 cpu=- ev=- lost=-
	if [ -n "$TOOL_PID" ]; then
		cpu=$(cpu_secs "$TOOL_PID")
		# its peak resident memory, said beside the round (the daemon's RSS under the load)
		awk -v t="$tag" -v c="$cfg" '/VmHWM/{printf "# %s: %s peak RSS %d MB (VmHWM)\n", t, c, $2/1024}' \
			"/proc/$TOOL_PID/status" 2>/dev/null
		kill -INT "$TOOL_PID" 2>/dev/null
		# re-send SIGINT every 5 s (bpftrace 0.17 sometimes misses the first one and
		# `wait` would then block forever), SIGKILL after 60 s
		local k
		for k in $(seq 600); do
			kill -0 "$TOOL_PID" 2>/dev/null || break
			[ $((k % 50)) = 0 ] && kill -INT "$TOOL_PID" 2>/dev/null
			sleep 0.1
		done
		kill -KILL "$TOOL_PID" 2>/dev/null
		wait "$TOOL_PID" 2>/dev/null
		TOOL_PID=
	fi
	if [[ $cfg == whyslow* ]] && [ -f "$OUT/$tag.json" ]; then
		ev=$(tail -1 "$OUT/$tag.json" | json_num events)
		lost=$(( $(tail -1 "$OUT/$tag.json" | json_num events_lost) + $(tail -1 "$OUT/$tag.json" | json_num events_lost_recursion) ))
	fi
	rm -rf "$OUT/$tag.perf.data" "$OUT/$tag.perf.data.old" "$OUT/$tag.data" "$OUT/spool.$tag"
	STOPPED="$cpu $ev $lost"
}

# gated CMD...: start CMD blocked on a fifo; sets GATE_PID (the pid CMD will have) and GATE
gated() {
	GATE=$OUT/gate.$RANDOM
	rm -f "$GATE"; mkfifo "$GATE"
	sh -c 'read _ < "$0"; exec "$@"' "$GATE" "$@" > "$OUT/bench.out" 2>&1 &
	GATE_PID=$!
}

run_one() { # run_one WORKLOAD CONFIG ROUND -> appends a line to $RAW
	local w=$1 cfg=$2 r=$3 tag=$1.$2.$3 val extra
	if [ "$cfg" = bcc_offwaketime ] && [ -n "$BCC_ERR" ]; then return; fi
	case $w in
	pipe|mutex)
		if [ "$w" = pipe ]; then gated taskset -c 0 perf bench sched pipe -l "$PIPE_LOOPS"
		else gated "$OUT/mutex_bench" 2 "$MUTEX_OPS"; fi
		if ! start_tool "$cfg" "$GATE_PID" "$tag"; then kill "$GATE_PID"; rm -f "$GATE"; return; fi
		echo go > "$GATE"
		wait "$GATE_PID"
		rm -f "$GATE"
		if [ "$w" = pipe ]; then val=$(awk '/usecs\/op/{print $1}' "$OUT/bench.out")
		else val=$(grep -o '[0-9.]* ns/op' "$OUT/bench.out" | cut -d' ' -f1); fi
		;;
	pgbench)
		start_tool "$cfg" "$(head -1 "$PG_DATA/postmaster.pid")" "$tag" || return
		val=$(su postgres -c "pgbench -h 127.0.0.1 -p $PG_PORT -c $PG_CLIENTS -j 2 -T $PG_T -n postgres" 2>&1 |
			awk '/^tps/{print $3; exit}')
		;;
	esac
	stop_tool "$cfg" "$tag"; extra=$STOPPED
	printf '%s\t%s\t%s\t%s\t%s\n' "$w" "$cfg" "$r" "${val:-nan}" "$extra" | tr ' ' '\t' >> "$RAW"
	printf '# %-8s %-16s round %d: %s  (tool cpu s, whyslow events, lost: %s)\n' "$w" "$cfg" "$r" "${val:-nan}" "$extra" >&2
}

pg_setup() {
	local base; base=$(mktemp -d /var/tmp/whyslow-pg.XXXXXX); chown postgres: "$base"
	PG_DATA=$base/data
	local bin=/usr/lib/postgresql/15/bin
	[ -x $bin/initdb ] || { DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql postgresql-contrib >/dev/null || exit 1; }
	su postgres -c "$bin/initdb -D $PG_DATA -A trust" > "$OUT/initdb.log" 2>&1 || { echo "initdb failed" >&2; exit 1; }
	su postgres -c "$bin/pg_ctl -D $PG_DATA -l $base/log -w -o '-c listen_addresses=127.0.0.1 -p $PG_PORT -c unix_socket_directories=$base -c fsync=on -c synchronous_commit=on' start" >/dev/null || exit 1
	su postgres -c "pgbench -h 127.0.0.1 -p $PG_PORT -i -q -s $PG_SCALE postgres" > "$OUT/pginit.log" 2>&1 || { echo "pgbench -i failed" >&2; exit 1; }
}

read -ra CFG <<< "$CONFIGS"
[ -n "${TABLE_ONLY:-}" ] && WORKLOADS_RUN= || WORKLOADS_RUN=$WORKLOADS
[ -z "${TABLE_ONLY:-}" ] && { machine_line; echo "# rounds: $ROUNDS; raw results: $RAW"; } | tee "$OUT/header.txt"
for w in $WORKLOADS_RUN; do
	[ "$w" = pgbench ] && pg_setup
	for ((r = 0; r < ROUNDS; r++)); do
		for ((i = 0; i < ${#CFG[@]}; i++)); do
			run_one "$w" "${CFG[(i + r) % ${#CFG[@]}]}" "$r"
		done
	done
	if [ "$w" = pgbench ]; then cleanup; PG_DATA=; fi
done

# --- table -------------------------------------------------------------------
# Each round's slowdown of configuration $2 against that round's baseline (workload $1)
per_round_slowdown() {
	local hib=
	[ "$1" = pgbench ] && hib=--higher-is-better
	python3 "$BENCH_DIR/paired.py" "$RAW" "$1" "$2" $hib
}

for w in $WORKLOADS; do
	case $w in
	pipe) unit="usecs/op"; title="taskset -c 0 perf bench sched pipe -l $PIPE_LOOPS" ;;
	mutex) unit="ns/op"; title="mutex_bench 2 $MUTEX_OPS (mutex+condvar ping-pong)" ;;
	pgbench) unit="tps"; title="pgbench -s $PG_SCALE -c $PG_CLIENTS -j 2 -T $PG_T, fsync on" ;;
	esac
	base=$(awk -F'\t' -v w="$w" '$1==w && $2=="baseline" {print $4}' "$RAW" | median)
	echo
	echo "## $w: $title"
	echo "| configuration | median $unit | slowdown vs baseline | per-round slowdown: median (range; 95% CI) | added $unit | runs | tool CPU s (median) | whyslow events / lost (median) |"
	echo "|---|---|---|---|---|---|---|---|"
	for cfg in $CONFIGS; do
		if [ "$cfg" = bcc_offwaketime ] && [ -n "$BCC_ERR" ]; then
			echo "| bcc offwaketime-bpfcc | — | — | — | — | 0 | — | ${BCC_ERR//|/\\|} |"; continue
		fi
		n=$(awk -F'\t' -v w="$w" -v c="$cfg" '$1==w && $2==c' "$RAW" | wc -l)
		[ "$n" = 0 ] && { echo "| $cfg | — | — | — | — | 0 | — | did not run (see log) |"; continue; }
		m=$(awk -F'\t' -v w="$w" -v c="$cfg" '$1==w && $2==c {print $4}' "$RAW" | median)
		cpu=$(awk -F'\t' -v w="$w" -v c="$cfg" '$1==w && $2==c && $5!="-" {print $5}' "$RAW" | median)
		ev=$(awk -F'\t' -v w="$w" -v c="$cfg" '$1==w && $2==c && $6!="-" {print $6}' "$RAW" | median)
		lo=$(awk -F'\t' -v w="$w" -v c="$cfg" '$1==w && $2==c && $7!="-" {print $7}' "$RAW" | median)
		if [ "$w" = pgbench ]; then ratio=$(awk -v b="$base" -v m="$m" 'BEGIN{printf "%.3f (%+.1f%%)", b/m, (b/m-1)*100}')
		else ratio=$(awk -v b="$base" -v m="$m" 'BEGIN{printf "%.3f (%+.1f%%)", m/b, (m/b-1)*100}'); fi
		added=$(awk -v b="$base" -v m="$m" 'BEGIN{printf "%+.3f", m-b}')
		paired=$(per_round_slowdown "$w" "$cfg")
		[ "$cfg" = baseline ] && { ratio="1 (—)"; cpu="—"; added="—"; paired="—"; }
		[[ $cfg == whyslow* ]] && [ "$ev" != nan ] && evl="$ev / $lo" || evl="—"
		echo "| $cfg | $m | $ratio | $paired | $added | $n | $cpu | $evl |"
	done
done | tee "$OUT/table.md"
