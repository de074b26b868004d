#!/bin/bash
# Offline analysis speed: `whyslow report` events/s and peak RSS on recordings of
# growing size, against `perf sched timehist -w` on a `perf sched record` of the same
# workload (perf bench sched pipe -T -l LOOPS; ~4-5 whyslow records per loop).
# Recording needs root; `whyslow report` and `perf sched timehist` run on one core
# (taskset -c 1). RSS that stays flat as the recording grows = streaming analysis.
# Run as root:
#   bench/offline.sh                       # LOOPS_LIST="250000 1000000 2500000" (last ≥10M records)
#   LOOPS_LIST="100000 400000" bench/offline.sh
set -u
. "$(dirname "$0")/lib.sh"
need_root
LOOPS_LIST=${LOOPS_LIST:-"250000 1000000 2500000"}
OUT=${OUT:-$(mktemp -d /var/tmp/whyslow-offline.XXXXXX)}
mkdir -p "$OUT"
REPS=${REPS:-3}
machine_line
echo
echo "| loops | tool | records | median s (of $REPS) | records/s | peak RSS MB | file MB |"
echo "|---|---|---|---|---|---|---|"
timeit() { # timeit OUTFILE CMD... -> "elapsed rss_kb" per rep, median elapsed, max rss
	local f=$1; shift
	: > "$OUT/t.all"
	for ((i = 0; i < REPS; i++)); do
		/usr/bin/time -f '%e %M' -o "$OUT/t" taskset -c 1 "$@" > "$f" 2> "$OUT/err" || { echo "failed: $*: $(tail -1 "$OUT/err")" >&2; }
		cat "$OUT/t" >> "$OUT/t.all"
	done
	T=$(awk '{print $1}' "$OUT/t.all" | median); RSS=$(awk '{print $2}' "$OUT/t.all" | sort -g | tail -1)
}
for loops in $LOOPS_LIST; do
	w="perf bench sched pipe -T -l $loops"
	"$WHYSLOW" record --as-root -o "$OUT/w.data" -- $w > /dev/null 2>&1 || { echo "whyslow record failed" >&2; exit 1; }
	perf sched record -o "$OUT/p.data" -- $w > /dev/null 2>&1 || { echo "perf sched record failed" >&2; exit 1; }
	timeit "$OUT/w.json" "$WHYSLOW" report "$OUT/w.data" --format json
	n=$(tail -1 "$OUT/w.json" | json_num events)
	echo "| $loops | whyslow report --format json | $n | $T | $(awk -v n="$n" -v t="$T" 'BEGIN{printf "%.0f", n/t}') | $((RSS / 1024)) | $(( $(stat -c %s "$OUT/w.data") >> 20 )) |"
	pn=$(perf script -i "$OUT/p.data" -F event 2>/dev/null | wc -l)
	timeit "$OUT/p.txt" perf sched timehist -w -i "$OUT/p.data"
	echo "| $loops | perf sched timehist -w | $pn | $T | $(awk -v n="$pn" -v t="$T" 'BEGIN{printf "%.0f", n/t}') | $((RSS / 1024)) | $(( $(stat -c %s "$OUT/p.data") >> 20 )) |"
	rm -f "$OUT/p.data" "$OUT/p.txt" "$OUT/w.data"
done
rm -rf "$OUT"
