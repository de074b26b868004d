#!/bin/bash
# Bounded work on crafted input (issue 11 #6): a ~5.5 MB recording whose sched switches include one
# on CPU 65535 per copy is analysed in about the time of the same file on CPU 1 (it took 40x as
# long when every eviction walked 65,536 CPU slots).  Needs no root.
#   report_bounded.sh WHYSLOW DATA_DIR
set -u
WHYSLOW=$1 DATA=$2/gt_mutex_disk.data
HERE=$(cd "$(dirname "$0")" && pwd)
W=$(mktemp -d) || exit 1
trap 'rm -rf "$W"' EXIT
python3 "$HERE/craft_bigcpu.py" "$DATA" "$W/cpu65535.data" 1000 65535 1000000001 || exit 1
python3 "$HERE/craft_bigcpu.py" "$DATA" "$W/cpu1.data" 1000 1 1000000001 || exit 1
ms() { local t0=$(date +%s%N); "$WHYSLOW" report "$1" >/dev/null 2>"$W/err" || { cat "$W/err"; echo "FAIL: report $1"; exit 1; }; echo $((($(date +%s%N) - t0) / 1000000)); }
base=$(ms "$W/cpu1.data") || { echo "$base"; exit 1; }
big=$(ms "$W/cpu65535.data") || { echo "$big"; exit 1; }
echo "cpu 1: ${base}ms, cpu 65535: ${big}ms ($(stat -c %s "$W/cpu65535.data") bytes)"
if [ "$big" -gt $((base * 3 + 2000)) ]; then
	echo "FAIL: cpu 65535 took more than 3x (+2s) the time of cpu 1"
	exit 1
fi
# A recording's loss detail is copied into the JSON summary: one that is not whyslow's own shape
# (here it closes the object and adds a key, with a raw ESC) is left out, never pasted in.
python3 - "$DATA" "$W/inject.data" <<'PY' || exit 1
import struct, sys
data = open(sys.argv[1], "rb").read()
off = struct.unpack_from("<I", data, 8)[0]
out = bytearray(data[:off])
while off + 8 <= len(data):
    size, typ = struct.unpack_from("<IH", data, off)
    payload = data[off + 8:off + size]
    if typ == 5:
        payload = payload[:32] + b'{"cpu0":{}},"injected":1,"x":{"\x1b":1}\0'
        payload += b"\0" * (-len(payload) % 8)
    out += struct.pack("<IHH", len(payload) + 8, typ, 0) + payload
    off += size
open(sys.argv[2], "wb").write(out)
PY
"$WHYSLOW" report --format json "$W/inject.data" >"$W/inject.json" 2>"$W/err" || { cat "$W/err"; echo "FAIL: report of the injected recording"; exit 1; }
python3 - "$W/inject.json" <<'PY' || { echo "FAIL: a recording's loss detail reached the JSON summary as it was"; exit 1; }
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
summary = [l for l in lines if l.get("type") == "summary"][-1]
assert "injected" not in summary, summary.keys()
assert summary["lost_by_cpu_kind"] == {}, summary["lost_by_cpu_kind"]
PY
echo PASS
