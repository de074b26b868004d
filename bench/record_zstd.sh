#!/bin/bash
# Compressed recordings (format 1.6): bytes per event, and record and report speed, before
# (a build dir of the raw-only writer) and after (this tree's build: --compress=none and zstd).
#   bench/record_zstd.sh BEFORE_BUILD_DIR [RUNS=5] [LOOPS=50000]     (root: it records)
# Each run records `perf bench sched pipe -l LOOPS` three ways, alternating (before, none, zstd);
# whyslow's own CPU is the record's total (it waits for the workload) minus the workload's,
# measured inside by /usr/bin/time. Then `report --format json` of one recording, raw with the
# before build and with this one, compressed with this one (the same records, alternating,
# taskset -c 1). Medians.
set -u
. "$(dirname "$0")/lib.sh"
need_root
BEFORE=${1:?before build dir}
RUNS=${2:-5}
LOOPS=${3:-50000}
[ -x "$BEFORE/core/whyslow" ] || { echo "record_zstd.sh: no $BEFORE/core/whyslow" >&2; exit 2; }
command -v perf >/dev/null || { echo "record_zstd.sh: perf not installed" >&2; exit 2; }
OUT=$(mktemp -d /tmp/whyslow-record-zstd.XXXXXX)
trap 'rm -rf "$OUT"' EXIT

rec() { # rec WHYSLOW TAG [OPTIONS...]: appends "bytes events elapsed whyslow_cpu" to $OUT/TAG
	local w=$1 tag=$2
	shift 2
	WHYSLOW_PLUGIN_DIR=$(plugins_of "$w") /usr/bin/time -o "$OUT/t" -f '%e %U %S' \
		"$w" record --as-root "$@" -o "$OUT/$tag.data" -- \
		/usr/bin/time -o "$OUT/wl" -f '%U %S' perf bench sched pipe -l "$LOOPS" \
		>/dev/null 2>"$OUT/err" || { cat "$OUT/err" >&2; return 1; }
	local n
	n=$(sed -n 's/.*recorded \([0-9]*\) records.*/\1/p' "$OUT/err")
	read -r e u s <"$OUT/t"
	read -r wu ws <"$OUT/wl"
	echo "$(stat -c %s "$OUT/$tag.data") $n $e $(awk -v a="$u" -v b="$s" -v c="$wu" -v d="$ws" 'BEGIN {print a + b - c - d}')" >>"$OUT/$tag"
}
machine_line
echo "# perf bench sched pipe -l $LOOPS under whyslow record, $RUNS runs each, alternating; load $(cut -d' ' -f1-3 /proc/loadavg)"
for ((i = 0; i < RUNS; i++)); do
	rec "$BEFORE/core/whyslow" before
	rec "$WHYSLOW" none --compress=none
	rec "$WHYSLOW" zstd
done
echo "| record | bytes/event | median MB | events (median) | median elapsed s | whyslow CPU s (median) | whyslow CPU µs/event |"
echo "|---|---|---|---|---|---|---|"
for tag in before none zstd; do
	awk '{print $1 / $2}' "$OUT/$tag" | median >"$OUT/bpe"
	b=$(awk '{print $1}' "$OUT/$tag" | median) n=$(awk '{print $2}' "$OUT/$tag" | median)
	e=$(awk '{print $3}' "$OUT/$tag" | median) c=$(awk '{print $4}' "$OUT/$tag" | median)
	awk -v t="$tag" -v bpe="$(cat "$OUT/bpe")" -v b="$b" -v n="$n" -v e="$e" -v c="$c" \
		'BEGIN {printf "| %s | %.1f | %.1f | %d | %.2f | %.2f | %.2f |\n", t, bpe, b / 1e6, n, e, c, c / n * 1e6}'
done

# report: the last zstd recording, and its records raw (header byte 16: the compression)
z=$OUT/zstd.data raw=$OUT/raw.data
{ head -c 16 "$z"; printf '\000'; tail -c +18 "$z" | head -c 7; tail -c +25 "$z" | zstd -q -d -c; } >"$raw"
one() { # one WHYSLOW FILE TAG: appends "elapsed cpu" to $OUT/r_TAG (elapsed: to the µs)
	local t0=$EPOCHREALTIME t1
	WHYSLOW_PLUGIN_DIR=$(plugins_of "$1") /usr/bin/time -o "$OUT/t" -f '%e %U %S' \
		taskset -c 1 "$1" report --format json "$2" >/dev/null 2>&1 || echo "record_zstd.sh: report $2 failed" >&2
	t1=$EPOCHREALTIME
	awk -v e="$(awk -v a="$t0" -v b="$t1" 'BEGIN {print b - a}')" '{printf "%s %.2f\n", e, $2 + $3}' "$OUT/t" >>"$OUT/r_$3"
}
events=$(WHYSLOW_PLUGIN_DIR=$(plugins_of "$WHYSLOW") "$WHYSLOW" report --format json "$z" 2>/dev/null |
	sed -n 's/.*"type":"summary".*"events":\([0-9]*\).*/\1/p' | head -1)
echo
echo "# report --format json of one recording ($events records; raw $(stat -c %s "$raw") bytes, zstd $(stat -c %s "$z")), $((RUNS * 2 + 1)) runs each, alternating, taskset -c 1; load $(cut -d' ' -f1-3 /proc/loadavg)"
for ((i = 0; i < RUNS * 2 + 1; i++)); do
	one "$BEFORE/core/whyslow" "$raw" before_raw
	one "$WHYSLOW" "$raw" after_raw
	one "$WHYSLOW" "$z" after_zstd
done
echo "| report | median s | records/s | median CPU s |"
echo "|---|---|---|---|"
for tag in before_raw after_raw after_zstd; do
	e=$(awk '{print $1}' "$OUT/r_$tag" | median) c=$(awk '{print $2}' "$OUT/r_$tag" | median)
	awk -v t="$tag" -v e="$e" -v c="$c" -v n="$events" \
		'BEGIN {printf "| %s | %.3f | %.2fM | %.2f |\n", t, e, n / e / 1e6, c}'
done
