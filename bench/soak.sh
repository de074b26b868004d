#!/bin/bash
# bench/soak.sh — attach whyslow to a busy process for a long time and watch its memory.
#
#   sudo bench/soak.sh [DURATION_S [INTERVAL_S]]     (default 3600 s, sampled every 60 s)
#
# Env: WHYSLOW (default build/core/whyslow), WHYSLOW_PLUGIN_DIR (default build/plugins),
# BUSY (the busy program; default build/tests/programs/rel_pingpong, run in an endless loop of
# 20000-round ping-pongs plus a sleeper so waits of every length exist).
# SOAK_LOAD: a command run (untraced) in alternate SOAK_LOAD_PERIOD-second stretches (default
# 300: on 5 minutes, off 5 minutes), to load the machine the way a build or a test run does —
# then the traced threads queue for CPUs and every context switch is recorded; e.g.
#   SOAK_LOAD='perf bench sched messaging -g 4 -l 2000' sudo -E bench/soak.sh
# Prints a table: elapsed s, whyslow RSS (kB), VmHWM (kB), heap-ish anon (kB), fds, load on/off,
# and at the end the RSS growth from the first sample after warm-up (the second) to the last;
# exits 1 if the growth exceeds SOAK_MAX_GROWTH_KB (default 20480) — memory must stay flat.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
DUR=${1:-3600}
INT=${2:-60}
WHYSLOW=${WHYSLOW:-$ROOT/build/core/whyslow}
export WHYSLOW_PLUGIN_DIR=${WHYSLOW_PLUGIN_DIR:-$ROOT/build/plugins}
BUSY=${BUSY:-$ROOT/build/tests/programs/rel_pingpong}
MAXG=${SOAK_MAX_GROWTH_KB:-20480}
LOADCMD=${SOAK_LOAD:-}
LOADP=${SOAK_LOAD_PERIOD:-300}
[ "$(id -u)" = 0 ] || { echo "soak.sh: needs root (BPF)" >&2; exit 77; }
[ -x "$WHYSLOW" ] && [ -x "$BUSY" ] || { echo "soak.sh: build first (ninja -C build)" >&2; exit 1; }

WORK=$(mktemp -d /tmp/whyslow-soak.XXXXXX)
chmod 755 "$WORK"
# the busy process: a shell looping ping-pongs (fresh threads every round: tid churn) + naps
bash -c "while :; do '$BUSY' 20000; sleep 0.05; done" >/dev/null 2>&1 &
BUSYPID=$!
WSPID= LOADPID=
load_on() {
	[ -n "$LOADCMD" ] && [ -z "$LOADPID" ] || return 0
	bash -c "while :; do $LOADCMD; done" >/dev/null 2>&1 &
	LOADPID=$!
}
load_off() {
	[ -n "$LOADPID" ] || return 0
	kill -KILL "$LOADPID" 2>/dev/null # the loop first, so nothing restarts the command
	wait "$LOADPID" 2>/dev/null
	pkill -KILL -f -- "$LOADCMD"
	LOADPID=
}
cleanup() {
	load_off
	[ -n "$WSPID" ] && kill -INT "$WSPID" 2>/dev/null && wait "$WSPID" 2>/dev/null
	pkill -KILL -P "$BUSYPID" 2>/dev/null; kill -KILL "$BUSYPID" 2>/dev/null
	rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

"$WHYSLOW" attach --format json --min-block 1ms -o "$WORK/soak.jsonl" "$BUSYPID" 2>"$WORK/stderr" &
WSPID=$!
sleep 2
kill -0 "$WSPID" 2>/dev/null || { echo "soak.sh: whyslow did not start:" >&2; cat "$WORK/stderr" >&2; exit 1; }

field() { awk -v k="$1:" '$1 == k {print $2}' /proc/"$WSPID"/status; }
printf "%8s %10s %10s %10s %6s %5s\n" elapsed_s rss_kB hwm_kB anon_kB fds load
t0=$(date +%s)
first= last= n=0
while :; do
	now=$(($(date +%s) - t0))
	kill -0 "$WSPID" 2>/dev/null || { echo "soak.sh: whyslow exited early" >&2; cat "$WORK/stderr" >&2; exit 1; }
	rss=$(field VmRSS) hwm=$(field VmHWM) anon=$(field RssAnon)
	fds=$(ls /proc/"$WSPID"/fd | wc -l)
	printf "%8d %10d %10d %10d %6d %5s\n" "$now" "$rss" "$hwm" "$anon" "$fds" "${LOADPID:+on}"
	# the load's stretches: on in odd periods, off in even ones (never during the warm-up)
	if [ -n "$LOADCMD" ] && [ $(((now / LOADP) % 2)) = 1 ]; then load_on; else load_off; fi
	n=$((n + 1))
	[ $n = 2 ] && first=$rss
	last=$rss
	[ "$now" -ge "$DUR" ] && break
	sleep "$INT"
done
load_off
kill -INT "$WSPID"
wait "$WSPID"
rc=$?
WSPID=
lines=$(wc -l <"$WORK/soak.jsonl")
summary=$(tail -n 1 "$WORK/soak.jsonl" | cut -c1-300)
growth=$((last - ${first:-$last}))
echo "whyslow exit $rc; $lines JSON lines; RSS growth after warm-up: ${growth} kB (limit $MAXG kB)"
echo "summary: $summary"
echo "history: $(tail -n 1 "$WORK/soak.jsonl" | grep -o '"history_trimmed":[0-9]*,"shortest_history_ns":[0-9]*')"
[ "$rc" = 0 ] && [ "$growth" -le "$MAXG" ]
