#!/bin/bash
# Cost of the net source (issue 16): pipe ping-pong (no sockets) and TCP loopback ping-pong,
# untraced, traced without net (sched,futex,blkio), with it but without its programs on socket
# calls ([net] requests = false: what requests cost, issue 30) and with it (sched,futex,blkio,net);
# medians of ROUNDS (order rotated each round), then each net program's mean ns per run from
# kernel.bpf_stats_enabled over one traced run of each workload.
#   ROUNDS=5 PIPE_LOOPS=100000 TCP_LOOPS=50000 bench/net.sh
#   WHYSLOW_BEFORE=/path/to/other/build/core/whyslow bench/net.sh   # adds that build, with
#       net, to the rotation (its plugins: ../plugins next to its core/): before/after in one run
. "$(dirname "$0")/lib.sh"
need_root
ROUNDS=${ROUNDS:-5}
PIPE_LOOPS=${PIPE_LOOPS:-100000}
TCP_LOOPS=${TCP_LOOPS:-50000}
work=$(mktemp -d "${TMPDIR:-/tmp}/whyslow-bench-net.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
cc -O2 -pthread -o "$work/tcp_pingpong" "$BENCH_DIR/tcp_pingpong.c" || exit 1

declare -A W=(
	[pipe]="taskset -c 0 perf bench sched pipe -l $PIPE_LOOPS"
	[tcp]="taskset -c 0 $work/tcp_pingpong $TCP_LOOPS"
)
CONFIGS=(none without_net with_net_no_requests with_net)
# the net source without its programs on socket calls ([net] requests = false): what requests cost
printf '[net]\nrequests = false\n' >"$work/no_requests.ini"
[ -n "${WHYSLOW_BEFORE:-}" ] && CONFIGS+=(before_with_net)

# usecs/op of workload $1 under configuration $2
run_one() {
	local cmd=${W[$1]} out
	case $2 in
	none) out=$(bash -c "$cmd" 2>&1) ;;
	without_net) out=$("$WHYSLOW" run --as-root --sources sched,futex,blkio -o /dev/null -- bash -c "$cmd" 2>&1) ;;
	with_net) out=$("$WHYSLOW" run --as-root --sources sched,futex,blkio,net -o /dev/null -- bash -c "$cmd" 2>&1) ;;
	with_net_no_requests) out=$("$WHYSLOW" -c "$work/no_requests.ini" run --as-root --sources sched,futex,blkio,net -o /dev/null -- bash -c "$cmd" 2>&1) ;;
	before_with_net) out=$(WHYSLOW_PLUGIN_DIR=$(plugins_of "$WHYSLOW_BEFORE") \
		"$WHYSLOW_BEFORE" run --as-root --sources sched,futex,blkio,net -o /dev/null -- bash -c "$cmd" 2>&1) ;;
	esac
	# perf prints "4.5 usecs/op", tcp_pingpong "usecs/op: 4.5"
	grep -oE '[0-9.]+ usecs/op|usecs/op: [0-9.]+' <<<"$out" | grep -oE '[0-9]+\.[0-9]+' | head -1
}

machine_line
echo "# load: $(cut -d' ' -f1-3 /proc/loadavg)"
for w in pipe tcp; do
	for ((r = 0; r < ROUNDS; r++)); do
		for ((i = 0; i < ${#CONFIGS[@]}; i++)); do
			c=${CONFIGS[$(((i + r) % ${#CONFIGS[@]}))]}
			echo "$(run_one "$w" "$c")" >>"$work/$w.$c"
		done
	done
done
echo
echo "| workload | untraced µs/op | sched,futex,blkio | + net, [net] requests = false | + net | net's share | requests' share |"
echo "|---|---|---|---|---|---|---|"
for w in pipe tcp; do
	n=$(median <"$work/$w.none") a=$(median <"$work/$w.without_net") b=$(median <"$work/$w.with_net")
	q=$(median <"$work/$w.with_net_no_requests")
	echo "| $w | $n | $a ($(awk -v a="$a" -v n="$n" 'BEGIN{printf "%+.1f%%", (a/n-1)*100}')) | $q ($(awk -v q="$q" -v n="$n" 'BEGIN{printf "%+.1f%%", (q/n-1)*100}')) | $b ($(awk -v b="$b" -v n="$n" 'BEGIN{printf "%+.1f%%", (b/n-1)*100}')) | $(awk -v a="$a" -v b="$b" 'BEGIN{printf "%+.1f%%", (b/a-1)*100}') | $(awk -v q="$q" -v b="$b" 'BEGIN{printf "%+.1f%%", (b/q-1)*100}') |"
done
if [ -n "${WHYSLOW_BEFORE:-}" ]; then
	echo
	echo "| workload | + net, $WHYSLOW_BEFORE | + net, this build |"
	echo "|---|---|---|"
	for w in pipe tcp; do
		n=$(median <"$work/$w.none") o=$(median <"$work/$w.before_with_net") b=$(median <"$work/$w.with_net")
		echo "| $w | $o ($(awk -v o="$o" -v n="$n" 'BEGIN{printf "%+.1f%%", (o/n-1)*100}')) | $b ($(awk -v b="$b" -v n="$n" 'BEGIN{printf "%+.1f%%", (b/n-1)*100}')) |"
	done
fi

# Per-program cost: bpf_stats over one traced run of each workload, programs ws_net_*.
echo
echo "| workload | program | runs | mean ns/run |"
echo "|---|---|---|---|"
old=$(sysctl -n kernel.bpf_stats_enabled)
sysctl -qw kernel.bpf_stats_enabled=1
for w in pipe tcp; do
	"$WHYSLOW" run --as-root --sources sched,futex,blkio,net -o /dev/null -- bash -c "${W[$w]}; /usr/sbin/bpftool prog show > $work/progs.$w" >/dev/null 2>&1
	awk -v w="$w" '/ name ws_net_/ {name=$4; for (i=1;i<=NF;i++) {if ($i=="run_time_ns") ns=$(i+1); if ($i=="run_cnt") cnt=$(i+1)} printf "| %s | %s | %d | %.0f |\n", w, name, cnt, cnt ? ns/cnt : 0}' "$work/progs.$w"
done
sysctl -qw kernel.bpf_stats_enabled="$old"
