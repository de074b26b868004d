#!/bin/bash
# Bounded work on crafted input (issue 36 #4.1): a recording whose every event names another CPU
# (cpu = n % 65536) is analysed with per-CPU state for the CPUs the recording declares (META
# ncpus), the records naming any other CPU refused and counted, in about the time of the same
# recording on CPU 1 (it took 25x as long, and grew quadratically, when every CPU id seen got a
# slot that each eviction pass walked). A recording that declares no CPUs (format 1.3) is read
# with WS_MAX_CPUS (8192). Needs no root.
#   report_cpus.sh WHYSLOW DATA_DIR
set -u
WHYSLOW=$1 DATA=$2/gt_mutex_disk.data
HERE=$(cd "$(dirname "$0")" && pwd)
W=$(mktemp -d) || exit 1
trap 'rm -rf "$W"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
craft() { python3 "$HERE/craft_bigcpu.py" "$DATA" "$W/$1.data" 500 "$2" 1000000001 ${3:+"$3"} || fail "craft $1"; }
craft cpu1 1 4
craft every every 4
craft every_old every
# ms FILE [ARGS]: report FILE to FILE.out, printing how long it took
ms() {
	local f=$1 t0
	shift
	t0=$(date +%s%N)
	"$WHYSLOW" report "$W/$f.data" "$@" >"$W/$f.out" 2>"$W/err" || { cat "$W/err"; fail "report $f"; }
	echo $((($(date +%s%N) - t0) / 1000000))
}
# check FILE CPUS REFUSED: the JSON summary's CPUs and refused records
check() {
	python3 - "$W/$1.out" "$2" "$3" <<'EOF' || fail "$1: the summary's CPU counts"
import json, sys
s = [json.loads(l) for l in open(sys.argv[1]) if l.strip()][-1]
want = (int(sys.argv[2]), int(sys.argv[3]))
got = (s.get("cpus"), s.get("records_cpu_refused"))
print("%s: cpus %s, records refused %s (want %s, %s)" % ((sys.argv[1],) + got + want))
sys.exit(got != want)
EOF
}
# events in a crafted file (the END record's count), and how many name a CPU >= N
events=$(python3 -c 'import struct,sys; d=open(sys.argv[1],"rb").read(); print(struct.unpack_from("<Q", d, len(d) - 8)[0])' "$W/every.data")
past() { echo $(((events / 65536) * (65536 - $1) + (events % 65536 > $1 ? events % 65536 - $1 : 0))); }

base=$(ms cpu1 --format json) || { echo "$base"; exit 1; }
big=$(ms every --format json) || { echo "$big"; exit 1; }
echo "$events events: cpu 1: ${base}ms, every CPU id: ${big}ms"
check cpu1 4 0
check every 4 "$(past 4)"
ms every_old --format json >/dev/null || fail "report every_old"
check every_old 8192 "$(past 8192)"
ms every >/dev/null || fail "report every (text)"
grep -q "REFUSED: $(past 4) records named a CPU" "$W/every.out" || { cat "$W/every.out"; fail "the text report does not say what it refused"; }
# generous: a busy machine slows either; the old engine took 25x
if [ "$big" -gt $((base * 4 + 500)) ]; then
	fail "every CPU id took more than 4x (+0.5s) the time of cpu 1"
fi
echo PASS
