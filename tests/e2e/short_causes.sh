#!/bin/bash
# Issue 37.2: waits shorter than the resolution, summed in the kernel, keep their cause. Two
# threads hand a turn back and forth through one futex word 20000 times (short_futex), each
# wait far below the default resolution (min_block/64 = 156us): live (run) and in a recording
# (record at its default resolution, then report), each thread's short_waits line names its
# summarised waits "futex <the word's address>" (those not woken as they left the CPU, which are
# the runqueue's), woken by the other thread, no other cause before it, in JSON
# by_resource ("summarised":true) and in the text report.
#   short_causes.sh WHYSLOW PROGRAM      (exit 0 pass, 1 fail, 77 skip)
set -u
WHYSLOW=$1
PROG=$2
. "$(dirname "${BASH_SOURCE[0]}")/skip.sh"
fail() { echo "FAIL: $*"; exit 1; }
[ "$(id -u)" = 0 ] || skip "needs root"
work=$(mktemp -d /tmp/whyslow-short-causes.XXXXXX) || exit 1
trap 'rm -rf "$work"' EXIT

"$WHYSLOW" run --format json -o "$work/live.jsonl" -- "$PROG" 20000 >"$work/live.out" ||
	fail "whyslow run exit $?"
"$WHYSLOW" record -o "$work/rec.data" -- "$PROG" 20000 >"$work/rec.out" 2>"$work/rec.err" ||
	{ cat "$work/rec.err"; fail "whyslow record exit $?"; }
"$WHYSLOW" report "$work/rec.data" --format json >"$work/rec.jsonl" || fail "whyslow report json exit $?"
"$WHYSLOW" report "$work/rec.data" >"$work/rec.txt" || fail "whyslow report text exit $?"

python3 - "$work" <<'PY'
import json, sys
work = sys.argv[1]
bad = []

def check(name, out, jsonl, txt=None):
    addr, t1, t2 = open(out).read().split()[:3]
    tids = {int(t1): int(t2), int(t2): int(t1)}
    want = "futex " + addr
    lines = [json.loads(l) for l in open(jsonl) if l.strip()]
    sw = {o["tid"]: o for o in lines if o.get("type") == "short_waits"}
    for tid, other in tids.items():
        o = sw.get(tid)
        if not o:
            bad.append(f"{name}: no short_waits line for tid {tid}")
            continue
        n = o["summarised_waits"]
        named = [r for r in o["by_resource"] if r.get("summarised") and r["resource"] == want]
        got = sum(r["waits"] for r in named)
        print(f"{name}: tid {tid}: {n} summarised waits, {got} named {want}: {named}")
        if n < 500:
            bad.append(f"{name}: tid {tid}: only {n} waits summarised (20000 rounds)")
        # the rest are mostly futex waits woken as they left the CPU: runnable throughout,
        # the runqueue's (about half of them on a busy 2-CPU machine)
        if got * 4 < n:
            bad.append(f"{name}: tid {tid}: {got} of {n} summarised waits named {want}")
        others = [r for r in o["by_resource"] if r.get("summarised") and r["resource"]
                  not in (want, "the runqueue (preempted)")]
        if any(r["waits"] > got for r in others):
            bad.append(f"{name}: tid {tid}: a cause other than {want} outnumbers it: {others}")
        if named and named[0].get("woken_by") != other:
            bad.append(f"{name}: tid {tid}: {want} woken by {named[0].get('woken_by')}, not tid {other}")
    if txt:
        text = open(txt).read()
        if f"summarised in the kernel = " not in text or f" on {want} (woken by tid " not in text:
            bad.append(f"{name}: the text report does not name {want} among the summarised waits")

check("run", work + "/live.out", work + "/live.jsonl")
check("record+report", work + "/rec.out", work + "/rec.jsonl", work + "/rec.txt")
for b in bad:
    print("FAIL:", b)
sys.exit(1 if bad else 0)
PY
rc=$?
[ $rc = 0 ] || { cat "$work/rec.txt"; exit 1; }
echo PASS
