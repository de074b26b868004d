#!/bin/bash
# Offline `whyslow report` speed of two builds on one recording, alternating runs on CPU 1,
# medians (bench/offline.sh makes recordings and compares with perf; this one compares builds).
#   bench/offline_ab.sh BEFORE_BUILD_DIR RECORDING [RUNS=7] [FORMAT=json]
#   e.g. bench/offline_ab.sh /var/tmp/old-build /var/tmp/off.data 21
# A build dir holds core/whyslow and plugins/ (a meson build dir). "after" is this tree's build.
# Prints each build's median elapsed seconds, records/s (the recording's EVENT count / median)
# and the median user+system CPU seconds. No root needed.
set -u
. "$(dirname "$0")/lib.sh"
BEFORE=${1:?before build dir}
REC=${2:?recording}
RUNS=${3:-7}
FMT=${4:-json}
AFTER=$(dirname "$(dirname "$WHYSLOW")")
[ -x "$BEFORE/core/whyslow" ] || { echo "offline_ab.sh: no $BEFORE/core/whyslow" >&2; exit 2; }
[ -r "$REC" ] || { echo "offline_ab.sh: cannot read recording $REC" >&2; exit 2; }
OUT=$(mktemp -d /tmp/whyslow-offline-ab.XXXXXX)
trap 'rm -rf "$OUT"' EXIT
one() { # one BUILD_DIR TAG: appends "elapsed cpu" to $OUT/TAG
	WHYSLOW_PLUGIN_DIR=$1/plugins /usr/bin/time -o "$OUT/t" -f '%e %U %S' \
		taskset -c 1 "$1/core/whyslow" report --format "$FMT" "$REC" >"$OUT/out" 2>/dev/null ||
		echo "offline_ab.sh: $1 failed on $REC" >&2
	awk '{printf "%s %.2f\n", $1, $2 + $3}' "$OUT/t" >>"$OUT/$2"
}
records=$(WHYSLOW_PLUGIN_DIR=$AFTER/plugins "$AFTER/core/whyslow" report --format json "$REC" 2>/dev/null |
	sed -n 's/.*"type":"summary".*"events":\([0-9]*\).*/\1/p' | head -1)
machine_line
echo "# $REC ($records records), --format $FMT, $RUNS runs each, alternating, taskset -c 1; load $(cut -d' ' -f1-3 /proc/loadavg)"
for ((i = 0; i < RUNS; i++)); do
	one "$BEFORE" before
	one "$AFTER" after
done
echo "| build | median s | records/s | median CPU s |"
echo "|---|---|---|---|"
for tag in before after; do
	e=$(awk '{print $1}' "$OUT/$tag" | median) c=$(awk '{print $2}' "$OUT/$tag" | median)
	awk -v t="$tag" -v e="$e" -v c="$c" -v n="$records" \
		'BEGIN {printf "| %s | %.3f | %.2fM | %.2f |\n", t, e, n / e / 1e6, c}'
done
