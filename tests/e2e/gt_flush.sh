#!/bin/bash
# Ground truth "flush" (issue 10, item 5): run tests/programs/gt_flush (20 x write + fdatasync on
# a real disk) under `whyslow run` and check that the device's cache flush is reported as a flush
# ("cache flush" in text, op "flush" in JSON), never as "sector 0, 0 bytes write".
#   gt_flush.sh WHYSLOW PROGRAM     (exit 77 = skipped when not root, unless CI=true)
set -u
WHYSLOW=$1 PROG=$2
if [ "$(id -u)" != 0 ]; then
	[ "${CI:-}" = true ] && { echo "FAIL: needs root (CI=true: not skipping)"; exit 1; }
	echo "SKIP: needs root"; exit 77
fi
# a disk-backed directory: a flush on tmpfs never reaches a device
base=/var/tmp
[ "$(stat -f -c %T "${TMPDIR:-/tmp}" 2>/dev/null)" = tmpfs ] || base=${TMPDIR:-/tmp}
work=$(mktemp -d "$base/whyslow-flush.XXXXXX") || { echo "FAIL: mktemp"; exit 1; }
trap 'rm -rf "$work"' EXIT
[ "$(stat -f -c %T "$work")" != tmpfs ] || { echo "SKIP: no disk-backed directory"; exit 77; }

# One recording, reported twice: the text and the JSON describe the same fdatasync calls (two
# separate runs could differ in whether any flush waited at least --min-block).
# Reported at --min-block 50us: record every switch (resolution 0), not at the default min_block/64.
printf '[core]\nresolution = 0\n' >"$work/full.ini"
"$WHYSLOW" -c "$work/full.ini" record -o "$work/rec.data" -- "$PROG" "$work" "$work/truth.txt" 2>"$work/err" ||
	{ echo "FAIL: whyslow record exited $?"; cat "$work/err"; exit 1; }
"$WHYSLOW" report --min-block 50us --format json -o "$work/out.jsonl" "$work/rec.data" ||
	{ echo "FAIL: whyslow report --format json exited $?"; exit 1; }
"$WHYSLOW" report --min-block 50us --top 100 -o "$work/out.txt" "$work/rec.data" ||
	{ echo "FAIL: whyslow report (text) exited $?"; exit 1; }

python3 - "$work/out.jsonl" "$work/truth.txt" "$work/out.txt" <<'PY' || exit 1
import json, sys

out, truth, text = sys.argv[1:4]
calls = [tuple(map(int, l.split())) for l in open(truth)]
tid = calls[0][0]
flush = zero_write = 0
for l in open(out):
    c = json.loads(l)
    if c["type"] != "chain" or c["tid"] != tid:
        continue
    s = c["links"][0]["start_ns"]
    inside = any(a <= s <= b for _, a, b in calls)
    for k in c["links"]:
        if k["kind"] != "block_io" or k.get("waits", 1) > 1:
            continue
        if k.get("op") == "flush" and inside:
            flush += 1
            assert "sector" not in k, "a flush has no sector: %s" % k
        if k.get("op") == "write" and k.get("bytes") == 0:
            zero_write += 1
assert zero_write == 0, "%d block_io links are 0-byte writes: flushes misnamed" % zero_write
assert flush >= 1, "none of %d fdatasync waits was reported as a cache flush:\n%s" % (
    len(calls), open(out).read()[-3000:])
t = open(text).read()
assert "cache flush" in t, "the text never says 'cache flush':\n" + t[-2000:]
assert "0 bytes write" not in t, "the text still says '0 bytes write':\n" + t[-2000:]
print("ok   %d waits inside fdatasync were cache flushes; no 0-byte writes" % flush)
PY
echo "PASS gt_flush"
