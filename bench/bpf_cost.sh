#!/bin/bash
# What each whyslow BPF program costs per invocation (kernel.bpf_stats_enabled=1 and bpftool
# prog show: run_time_ns / run_cnt) while `taskset -c 0 perf bench sched pipe` runs under
# `whyslow attach`, for this tree and, if given, another build (e.g. main) in alternating
# rounds. Run as root; one command, prints a table:
#
#   bench/bpf_cost.sh
#   WHYSLOW_BEFORE=/path/to/main/build/core/whyslow bench/bpf_cost.sh   # before/after
#   ROUNDS=5 PIPE_LOOPS=100000 bench/bpf_cost.sh
#   WORKLOAD=mutex bench/bpf_cost.sh   # bench/mutex_bench.c, 2 threads pinned to 2 CPUs: futex
#                                      # wakeups that cross CPUs, where shared data bounces
#   WORKLOAD=mutex1 bench/bpf_cost.sh  # the same, both threads on CPU 0
#   WORKLOAD=pipe_untraced bench/bpf_cost.sh  # whyslow traces an idle `sleep`; the pipe runs
#                                      # untraced: what tracing one program costs the others
#   MINIMAL=1 bench/bpf_cost.sh        # adds "minimal": bench/minimal_tracer.bpf.c, the least
#                                      # a tracer with per-thread task storage does per event
#
# The programs counted are those of this script's whyslow, by the program ids its link fds name
# in /proc/PID/fdinfo (bpftool 7.1 shows no owner pids; another whyslow benchmarked on the same
# machine at the same time loads programs of the same names). The stats themselves add ~20 ns to every invocation; the pipe µs/op printed
# here includes that (bench/overhead.sh measures µs/op without stats). Programs that never
# ran during the benchmark are listed with 0 calls.
set -u
. "$(dirname "$0")/lib.sh"
need_root
command -v bpftool >/dev/null || PATH=$PATH:/usr/sbin

ROUNDS=${ROUNDS:-3}
PIPE_LOOPS=${PIPE_LOOPS:-100000}
WORKLOAD=${WORKLOAD:-pipe}
MUTEX_OPS=${MUTEX_OPS:-200000}
ATTACH_WAIT=${ATTACH_WAIT:-2}
WHYSLOW_AFTER=$WHYSLOW
WHYSLOW_BEFORE=${WHYSLOW_BEFORE:-}
bpf_stats_begin bpfcost
if [ -n "${MINIMAL:-}" ]; then
	bench_bpf minimal_tracer.bpf.c "$OUT/minimal_tracer.bpf.o" || exit $?
	bench_bpf_loader || exit 1
fi
case $WORKLOAD in
pipe | pipe_untraced) BENCH=(taskset -c 0 perf bench sched pipe -l "$PIPE_LOOPS")
	UNIT=usecs/op TITLE="taskset -c 0 perf bench sched pipe -l $PIPE_LOOPS: µs/op"
	[ "$WORKLOAD" = pipe_untraced ] && TITLE="$TITLE, untraced (whyslow traces an idle sleep)" ;;
mutex | mutex1) cc -O2 -pthread -o "$OUT/mutex_bench" "$(dirname "$0")/mutex_bench.c" || exit 1
	if [ "$WORKLOAD" = mutex ]; then
		BENCH=("$OUT/mutex_bench" 2 "$MUTEX_OPS" pin) where="one thread per CPU"
	else
		BENCH=(taskset -c 0 "$OUT/mutex_bench" 2 "$MUTEX_OPS") where="both on CPU 0"
	fi
	UNIT=ns/op TITLE="mutex_bench 2 $MUTEX_OPS (mutex+condvar ping-pong, $where): ns/op" ;;
*) echo "bpf_cost.sh: unknown WORKLOAD '$WORKLOAD': use pipe, pipe_untraced, mutex or mutex1" >&2; exit 2 ;;
esac


run_round() { # run_round CONFIG BINARY ROUND
	local cfg=$1 bin=$2 r=$3 plugins
	plugins=$(plugins_of "$bin")
	local gate=$OUT/gate
	rm -f "$gate"; mkfifo "$gate"
	sh -c 'read _ < "$0"; exec "$@"' "$gate" "${BENCH[@]}" > "$OUT/bench.out" 2>&1 &
	local bench=$!
	prog_stats | awk '{print $1}' | sort > "$OUT/ids.before"
	TOOL_PID=
	local target=$bench idle=
	if [ "$WORKLOAD" = pipe_untraced ]; then
		sleep 3600 &
		idle=$! target=$idle
	fi
	if [ "$cfg" = minimal ]; then
		"$OUT/bpf_floor" "$OUT/minimal_tracer.bpf.o" "$target" > "$OUT/tool.log" 2>&1 &
		TOOL_PID=$!
		sleep "$ATTACH_WAIT"
	elif [ "$cfg" != baseline ]; then
		WHYSLOW_PLUGIN_DIR=$plugins "$bin" attach --format json -o "$OUT/out.json" "$target" \
			> "$OUT/tool.log" 2>&1 &
		TOOL_PID=$!
		sleep "$ATTACH_WAIT"
		kill -0 "$TOOL_PID" 2>/dev/null || echo "# $cfg: whyslow exited early: $(tail -2 "$OUT/tool.log")" >&2
	fi
	# the tool's own programs, by the ids its link fds name: another whyslow running meanwhile
	# (a colleague's benchmark) loads programs of the same names
	grep -h '^prog_id:' /proc/"$TOOL_PID"/fdinfo/* 2>/dev/null | awk '{print $2}' | sort -u \
		> "$OUT/ids.own"
	prog_stats | sort > "$OUT/s0"
	echo go > "$gate"
	wait "$bench"
	prog_stats | sort > "$OUT/s1"
	[ -n "$idle" ] && { kill "$idle"; wait "$idle" 2>/dev/null; }
	# whyslow attach ends by itself when its target exits; stop it if it has not
	if [ -n "$TOOL_PID" ]; then kill -INT "$TOOL_PID" 2>/dev/null; wait "$TOOL_PID" 2>/dev/null; TOOL_PID=; fi
	rm -f "$gate"
	local us; us=$(awk -v u="$UNIT" '{for (i = 2; i <= NF; i++) if ($i == u) print $(i - 1)}' "$OUT/bench.out")
	printf '%s\t%s\t_pipe\t%s\t0\n' "$cfg" "$r" "$us" >> "$RAW"
	[ "$cfg" = baseline ] && return
	# the tool's own programs (else those new since before the attach): delta of time and
	# count over the benchmark
	local own=$OUT/ids.own
	[ -s "$own" ] || own=/dev/null
	join <(sort "$OUT/s0") <(sort "$OUT/s1") |
		awk -v c="$cfg" -v r="$r" -v byown="$([ "$own" = /dev/null ] && echo 0 || echo 1)" '
			FILENAME == "'"$own"'" {mine[$1] = 1; next}
			FILENAME != "-" {old[$1] = 1; next}
			(byown && ($1 in mine)) || (!byown && !($1 in old)) {
				printf "%s\t%s\t%s\t%s\t%s\n", c, r, $2, $6 - $3, $7 - $4}' \
			"$own" "$OUT/ids.before" - >> "$RAW"
}

configs=(baseline after)
[ -n "$WHYSLOW_BEFORE" ] && configs=(baseline before after)
[ -n "${MINIMAL:-}" ] && configs+=(minimal)
machine_line
echo "# rounds: $ROUNDS, alternating ${configs[*]}; bpf_stats on (adds ~20 ns per invocation)"
for ((r = 0; r < ROUNDS; r++)); do
	for ((i = 0; i < ${#configs[@]}; i++)); do
		cfg=${configs[(i + r) % ${#configs[@]}]}
		case $cfg in
		before) run_round before "$WHYSLOW_BEFORE" "$r" ;;
		*) run_round "$cfg" "$WHYSLOW_AFTER" "$r" ;;
		esac
	done
done

base=$(awk -F'\t' '$1=="baseline" && $3=="_pipe" {print $4}' "$RAW" | median)
echo
echo "## $TITLE (median of $ROUNDS, stats on)"
echo "| configuration | ${UNIT%%/op}/op | vs baseline | added per op |"
echo "|---|---|---|---|"
for cfg in "${configs[@]}"; do
	m=$(awk -F'\t' -v c="$cfg" '$1==c && $3=="_pipe" {print $4}' "$RAW" | median)
	awk -v c="$cfg" -v b="$base" -v m="$m" 'BEGIN {printf "| %s | %.3f | %+.1f%% | %+.3f |\n", c, m, (m/b-1)*100, m-b}'
done
for cfg in "${configs[@]}"; do
	[ "$cfg" = baseline ] && continue
	echo
	echo "## BPF programs of '$cfg' during the benchmark (medians of $ROUNDS)"
	echo "| program | calls | ns per call | ms in total |"
	echo "|---|---|---|---|"
	for p in $(awk -F'\t' -v c="$cfg" '$1==c && $3!="_pipe" {print $3}' "$RAW" | sort -u); do
		calls=$(awk -F'\t' -v c="$cfg" -v p="$p" '$1==c && $3==p {print $5}' "$RAW" | median)
		ns=$(awk -F'\t' -v c="$cfg" -v p="$p" '$1==c && $3==p && $5>0 {print $4/$5}' "$RAW" | median)
		tot=$(awk -F'\t' -v c="$cfg" -v p="$p" '$1==c && $3==p {print $4/1e6}' "$RAW" | median)
		printf '| %s | %s | %s | %s |\n' "$p" "$calls" "$ns" "$tot"
	done | sort -t'|' -k5 -gr
done
