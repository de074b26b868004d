#!/bin/bash
# Capacity: the record rate whyslow sustains with zero loss, and what happens past it.
# Drives known loads of pipe ping-pong threads (every operation: two switches, two
# wakeups) under `whyslow run --format json`, and reads the final summary:
# events, events_lost (+ events_lost_recursion), duration_ns. The offered record rate is
# events / the workload's own wall time (whyslow keeps analysing after the command
# exits, so duration_ns can be longer). Also: whyslow's exit status (must be the
# command's, 0), wall and CPU time, peak RSS, and whether the summary was written.
# The last rows shrink the ring to force losses: they must be counted, nothing else breaks.
# "scheduler events/s" is what the load offers the kernel side (3 per pipe operation: two
# switches and one sched_waking, as bench/bpf_cost.sh counts them), whether or not they are written: `run` summarises periods shorter
# than min_block/64 in the kernel, so records/s is far below it.
# Run as root:  bench/capacity.sh      (LOOPS=200000 per pair)
set -u
. "$(dirname "$0")/lib.sh"
need_root
LOOPS=${LOOPS:-200000}
OUT=${OUT:-$(mktemp -d /tmp/whyslow-capacity.XXXXXX)}
mkdir -p "$OUT"
printf '[core]\nring_size = 64K\n' > "$OUT/small.ini"; chmod 600 "$OUT/small.ini"
machine_line
declare -A LOAD=(
	[1pinned]="taskset -c 0 perf bench sched pipe -l $LOOPS"
	[1threads]="perf bench sched pipe -T -l $LOOPS"
	[2pinned]="taskset -c 0 perf bench sched pipe -l $LOOPS & taskset -c 1 perf bench sched pipe -l $LOOPS & wait"
	[4threads]="for i in 1 2 3 4; do perf bench sched pipe -T -l $LOOPS & done; wait"
)
declare -A PAIRS=([1pinned]=1 [1threads]=1 [2pinned]=2 [4threads]=4)
ORDER=${ORDER:-"1pinned 1threads 2pinned 4threads 2pinned/ring64K 4threads/ring64K"}
echo
echo "| load | ring | scheduler events/s | offered records/s | events | lost (ring + kernel-skipped) | workload wall s | whyslow wall s | CPU s (whyslow + command) | peak RSS MB (largest of whyslow, command) | exit | summary |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
for spec in $ORDER; do
	load=${spec%%/*} ring=16M cfg=()
	[[ $spec == */ring64K ]] && { ring=64K; cfg=(-c "$OUT/small.ini"); }
	j=$OUT/$load.$ring.json
	rm -f "$j"
	/usr/bin/time -f '%e %U %S %M' -o "$OUT/time" "$WHYSLOW" "${cfg[@]}" run --as-root --format json -o "$j" -- \
		sh -c 's=$(date +%s%N); '"${LOAD[$load]}"' >/dev/null; e=$(date +%s%N); echo WALL $((e - s))' > "$OUT/out" 2> "$OUT/err"
	rc=$?
	wall=$(awk '/^WALL/{printf "%.2f", $2/1e9}' "$OUT/out")
	read -r twall tu ts rss < "$OUT/time"
	if [ -s "$j" ] && tail -1 "$j" | grep -q '"type":"summary"'; then
		s=$(tail -1 "$j"); sum=yes
		ev=$(json_num events <<< "$s"); lo=$(json_num events_lost <<< "$s"); lr=$(json_num events_lost_recursion <<< "$s")
		rate=$(awk -v e="$ev" -v w="$wall" 'BEGIN{printf "%.0f", e/w}')
	else sum=no ev=- lo=- lr=- rate=-; fi
	sched=$(awk -v p="${PAIRS[$load]}" -v l="$LOOPS" -v w="$wall" 'BEGIN{printf "%.0f", p*l*3/w}')
	echo "| $load: ${LOAD[$load]} | $ring | $sched | $rate | $ev | $lo + $lr | $wall | $twall | $(awk -v a="$tu" -v b="$ts" 'BEGIN{print a+b}') | $((rss / 1024)) | $rc | $sum |"
done
echo "(JSON summaries: $OUT/*.json)"
