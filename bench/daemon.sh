#!/bin/bash
# What `whyslow watch -a` (whyslow.service) costs by itself: its CPU time and memory over
# IDLE_S seconds on a machine doing nothing else, then while a CPU-bound load runs beside it
# (LOAD: a shell command, default two `perf bench sched pipe` loops, the worst case for a
# scheduler tracer). Run as root:
#
#   bench/daemon.sh                 # IDLE_S=60 LOAD_S=30
#
# Prints one line per phase: seconds, whyslow's CPU seconds in it (user+sys, /proc/PID/stat),
# its resident memory at the end and its peak (VmRSS, VmHWM), and the flight recorder's bound.
set -u
. "$(dirname "$0")/lib.sh"
need_root
IDLE_S=${IDLE_S:-60} LOAD_S=${LOAD_S:-30}
LOAD=${LOAD:-"while :; do perf bench sched pipe -l 200000 >/dev/null; done"}
OUT=$(mktemp -d /tmp/whyslow-daemon.XXXXXX)
machine_line
"$WHYSLOW" watch -a --trigger 1s --spool "$OUT/spool" >"$OUT/watch.log" 2>&1 &
W=$!
LOADP=
trap '[ -n "$LOADP" ] && kill -- -$LOADP 2>/dev/null; kill -INT $W 2>/dev/null; wait $W 2>/dev/null; rm -rf "$OUT"' EXIT
sleep 5 # started and attached (its start-up is not in the phases)
kill -0 $W 2>/dev/null || { cat "$OUT/watch.log"; exit 1; }
mem() { awk '/VmRSS|VmHWM/{printf "%s %d MB ", $1, $2/1024}' "/proc/$W/status"; }
c0=$(cpu_secs $W)
sleep "$IDLE_S"
c1=$(cpu_secs $W)
echo "idle  ${IDLE_S}s: whyslow CPU $(awk -v a="$c0" -v b="$c1" 'BEGIN{printf "%.2f s (%.2f%% of a core)", b-a, (b-a)*100/'"$IDLE_S"'}'); $(mem)"
setsid bash -c "$LOAD" & LOADP=$! # its own process group: the loop and what it runs
sleep "$LOAD_S"
c2=$(cpu_secs $W)
kill -- -$LOADP; wait $LOADP 2>/dev/null; LOADP=
echo "load  ${LOAD_S}s: whyslow CPU $(awk -v a="$c1" -v b="$c2" 'BEGIN{printf "%.2f s (%.2f%% of a core)", b-a, (b-a)*100/'"$LOAD_S"'}'); $(mem); load: $LOAD"
echo "flight recorder: --keep 30s, --keep-mb 64 (the defaults): its buffer is allocated whole at start"
