#!/bin/bash
# Start-up latency: time from launching `whyslow run -- CMD` to CMD starting, and to
# whyslow exiting after CMD (the report is written to a file). CMD is startup_probe
# --child, which prints its CLOCK_MONOTONIC start time; startup_probe takes t0 just
# before it forks whyslow. The untraced row launches the probe directly (fork+exec cost).
# Configurations alternate within each of N rounds. Run as root:
#   bench/startup.sh            # N=10
set -u
. "$(dirname "$0")/lib.sh"
need_root
N=${N:-10}
OUT=${OUT:-$(mktemp -d /tmp/whyslow-startup.XXXXXX)}
mkdir -p "$OUT"
P=$OUT/startup_probe
cc -O2 -o "$P" "$BENCH_DIR/startup_probe.c" || exit 1
# stacks off: on a kernel that refuses BPF task work from a tracepoint, stacks on load the
# scheduler object twice (docs/STACKS.md); off, once
printf '[core]\nstacks = false\n' >"$OUT/nostacks.ini"
machine_line
: > "$OUT/raw.tsv"
for ((i = 0; i < N; i++)); do
	echo "direct $("$P" "$P" --child)" >> "$OUT/raw.tsv"
	echo "whyslow_all $("$P" "$WHYSLOW" run --as-root -o "$OUT/r.txt" -- "$P" --child)" >> "$OUT/raw.tsv"
	echo "whyslow_sched $("$P" "$WHYSLOW" run --as-root --sources sched -o "$OUT/r.txt" -- "$P" --child)" >> "$OUT/raw.tsv"
	echo "whyslow_nostacks $("$P" "$WHYSLOW" -c "$OUT/nostacks.ini" run --as-root -o "$OUT/r.txt" -- "$P" --child)" >> "$OUT/raw.tsv"
done
echo
echo "| launch (median of $N) | to command start, ms | to whyslow exit, ms |"
echo "|---|---|---|"
for c in direct whyslow_all whyslow_sched whyslow_nostacks; do
	s=$(awk -v c=$c '$1==c && NF==3 {print $2}' "$OUT/raw.tsv" | median)
	e=$(awk -v c=$c '$1==c && NF==3 {print $3}' "$OUT/raw.tsv" | median)
	case $c in
	direct) d="startup_probe --child (no tracer)" ;;
	whyslow_all) d="whyslow run -- … (all sources)" ;;
	whyslow_sched) d="whyslow run --sources sched -- …" ;;
	whyslow_nostacks) d="whyslow -c stacks=false.ini run -- … (all sources)" ;;
	esac
	echo "| $d | $s | $e |"
done
echo "(max to-start over all whyslow runs: $(awk '$1!="direct" && NF==3 {print $2}' "$OUT/raw.tsv" | sort -g | tail -1) ms; raw: $OUT/raw.tsv)"
