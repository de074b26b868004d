#!/bin/bash
# What stack capture (issue 13.2) costs in the kernel: ns per invocation of every ws_* program
# (kernel.bpf_stats_enabled) and the workload's speed, under `whyslow attach` in three
# configurations, alternating, medians of ROUNDS:
#   off       [core] stacks = false
#   on        stacks on, min_block 10ms (the default): the workload's waits are all shorter,
#             so no stack is captured — this must cost what "off" costs
#   every     stacks on, min_block 1ns: every wait is captured (waiter kernel stack at
#             switch-in, its user stack from a task work, the waker's stacks at the wakeup)
#
#   bench/stack_cost.sh                     # taskset -c 0 perf bench sched pipe -l 50000
#   WORKLOAD=mutex bench/stack_cost.sh      # bench/mutex_bench 2 50000
#   WORKLOAD=syscall bench/stack_cost.sh    # taskset -c 0 perf bench syscall basic: on a kernel
#             that refuses BPF task work, stacks on attach tp_btf/sys_exit (ws_stack_sys_exit):
#             every syscall of the machine takes the slow path and runs it; "off" does not
#   ROUNDS=5 OPS=100000 bench/stack_cost.sh
# The task work's own run time is not in bpf_stats (it is not a program of its own): "every"
# shows it in the workload's µs/op. Run as root.
set -u
. "$(dirname "$0")/lib.sh"
need_root
command -v bpftool >/dev/null || PATH=$PATH:/usr/sbin
ROUNDS=${ROUNDS:-3}
OPS=${OPS:-50000}
WORKLOAD=${WORKLOAD:-pipe}
bpf_stats_begin stackcost
cc -O2 -pthread -o "$OUT/mutex_bench" "$BENCH_DIR/mutex_bench.c" || exit 1
printf '[core]\nstacks = false\n' > "$OUT/off.ini"
printf '[core]\nstacks = true\nmin_block = 10ms\n' > "$OUT/on.ini"
printf '[core]\nstacks = true\nmin_block = 1ns\n' > "$OUT/every.ini"


run_round() { # CONFIG ROUND
	local cfg=$1 r=$2 gate=$OUT/gate bench
	rm -f "$gate"; mkfifo "$gate"
	if [ "$WORKLOAD" = mutex ]; then
		sh -c 'read _ < "$0"; exec "$@"' "$gate" "$OUT/mutex_bench" 2 "$OPS" > "$OUT/bench.out" 2>&1 &
	elif [ "$WORKLOAD" = syscall ]; then
		sh -c 'read _ < "$0"; exec "$@"' "$gate" taskset -c 0 perf bench syscall basic -l "$OPS" \
			> "$OUT/bench.out" 2>&1 &
	else
		sh -c 'read _ < "$0"; exec "$@"' "$gate" taskset -c 0 perf bench sched pipe -l "$OPS" \
			> "$OUT/bench.out" 2>&1 &
	fi
	bench=$!
	prog_stats | awk '{print $1}' | sort > "$OUT/ids.before"
	"$WHYSLOW" attach -c "$OUT/$cfg.ini" --format json -o "$OUT/out.json" "$bench" > "$OUT/tool.log" 2>&1 &
	TOOL_PID=$!
	sleep 2
	prog_stats | sort > "$OUT/s0"
	echo go > "$gate"
	wait "$bench"
	prog_stats | sort > "$OUT/s1"
	kill -INT "$TOOL_PID" 2>/dev/null; wait "$TOOL_PID" 2>/dev/null; TOOL_PID=
	local speed
	if [ "$WORKLOAD" = mutex ]; then speed=$(awk '{for(i=2;i<=NF;i++) if ($i == "ns/op") {print $(i-1)/1000; exit}}' "$OUT/bench.out")
	else speed=$(awk '/usecs\/op/{print $1}' "$OUT/bench.out"); fi
	printf '%s\t%s\t_speed\t%s\t0\n' "$cfg" "$r" "$speed" >> "$RAW"
	printf '%s\t%s\t_chains\t%s\t0\n' "$cfg" "$r" "$(grep -c '"type":"chain"' "$OUT/out.json")" >> "$RAW"
	join <(sort "$OUT/s0") <(sort "$OUT/s1") |
		awk -v c="$cfg" -v r="$r" 'FILENAME != "-" {old[$1] = 1; next}
			!($1 in old) {printf "%s\t%s\t%s\t%s\t%s\n", c, r, $2, $6 - $3, $7 - $4}' \
			"$OUT/ids.before" - >> "$RAW"
}

configs=(off on every)
machine_line
echo "# workload $WORKLOAD ($OPS ops); rounds: $ROUNDS, alternating ${configs[*]}; bpf_stats on; load: $(cut -d' ' -f1-3 /proc/loadavg)"
for ((r = 0; r < ROUNDS; r++)); do
	for ((i = 0; i < 3; i++)); do run_round "${configs[(i + r) % 3]}" "$r"; done
done
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| program | off ns/call | on (min_block 10ms) | every wait captured | calls (every) |"
echo "|---|---|---|---|---|"
for p in $(awk -F'\t' '$3 !~ /^_/ {print $3}' "$RAW" | sort -u); do
	row="| $p"
	for cfg in "${configs[@]}"; do
		row="$row | $(awk -F'\t' -v c="$cfg" -v p="$p" '$1==c && $3==p && $5>0 {print $4/$5}' "$RAW" | median)"
	done
	echo "$row | $(awk -F'\t' -v p="$p" '$1=="every" && $3==p {print $5}' "$RAW" | median) |"
done
for k in _speed _chains; do
	row="| $k"
	for cfg in "${configs[@]}"; do row="$row | $(awk -F'\t' -v c="$cfg" -v k="$k" '$1==c && $3==k {print $4}' "$RAW" | median)"; done
	echo "$row | |"
done
