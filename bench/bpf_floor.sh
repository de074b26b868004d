#!/bin/bash
# What one operation costs inside a BPF program here: an empty program, a clock read, a task
# storage lookup (an entry found, or none), a hash lookup, a per-CPU lookup, an atomic add, a
# ring reservation, the wakee's fields — each first on a wakeup (its memory not yet touched on
# that wakeup) and again. bench/bpf_floor.bpf.c's programs on tp_btf/sched_waking, measured by
# kernel.bpf_stats_enabled while `taskset -c 0 perf bench sched pipe` runs; whyslow itself is not
# involved. Explains the floor under bench/bpf_cost.sh's per-program figures. Run as root:
#
#   bench/bpf_floor.sh            # ROUNDS=5 PIPE_LOOPS=100000
#
# ns per call include the stats' own cost; "added" is the program's cost minus fl_empty's (an
# empty program that is not the first one run on the wakeup).
set -u
. "$(dirname "$0")/lib.sh"
need_root
command -v bpftool >/dev/null || PATH=$PATH:/usr/sbin
ROUNDS=${ROUNDS:-5}
PIPE_LOOPS=${PIPE_LOOPS:-100000}
bpf_stats_begin bpffloor
for v in hit none; do
	def=; [ $v = hit ] && def=-DFLOOR_CREATE
	bench_bpf bpf_floor.bpf.c "$OUT/floor-$v.bpf.o" $def || exit $?
done
bench_bpf_loader || exit 1

stats() { # name run_time_ns run_cnt of the fl_* programs
	bpftool prog show --json | python3 -c '
import json, sys
for p in json.load(sys.stdin):
    if p.get("name", "").startswith("fl_"):
        print(p["name"], p.get("run_time_ns", 0), p.get("run_cnt", 0))'
}

machine_line
echo "# rounds: $ROUNDS per variant, alternating; taskset -c 0 perf bench sched pipe -l $PIPE_LOOPS"
for ((r = 0; r < ROUNDS; r++)); do
	for v in hit none; do
		"$OUT/bpf_floor" "$OUT/floor-$v.bpf.o" >"$OUT/loader.log" 2>&1 &
		TOOL_PID=$!
		for _ in $(seq 50); do grep -q ready "$OUT/loader.log" && break; sleep 0.1; done
		grep -q ready "$OUT/loader.log" || { cat "$OUT/loader.log" >&2; exit 1; }
		stats | sort >"$OUT/s0"
		us=$(taskset -c 0 perf bench sched pipe -l "$PIPE_LOOPS" | awk '/usecs\/op/ {print $1}')
		stats | sort >"$OUT/s1"
		kill -INT "$TOOL_PID"; wait "$TOOL_PID"; TOOL_PID=
		echo "$v _pipe $us" >>"$RAW"
		join "$OUT/s0" "$OUT/s1" | awk -v v=$v '$5 > $3 {printf "%s %s %.1f\n", v, $1, ($4 - $2) / ($5 - $3)}' >>"$RAW"
	done
done
for v in hit none; do
	echo
	what="an entry for every woken task (created on first sight)"
	[ $v = none ] && what="no entry for any task"
	echo "## task storage: $what; pipe $(awk -v v=$v '$1 == v && $2 == "_pipe" {print $3}' "$RAW" | median) µs/op (median)"
	echo "| program | ns per call (median) | added to an empty program |"
	echo "|---|---|---|"
	floor=$(awk -v v=$v '$1 == v && $2 == "fl_empty" {print $3}' "$RAW" | median)
	for p in fl_empty1 fl_empty fl_ktime fl_ktime2 fl_storage fl_storage2 fl_hash fl_hash2 \
		fl_percpu fl_atomic fl_ring fl_fields; do
		ns=$(awk -v v=$v -v p=$p '$1 == v && $2 == p {print $3}' "$RAW" | median)
		awk -v p=$p -v ns="$ns" -v f="$floor" 'BEGIN {printf "| %s | %.1f | %+.1f |\n", p, ns, ns - f}'
	done
done
