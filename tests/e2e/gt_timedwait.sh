#!/bin/bash
# Ground truth "timedwait" (issue 10.4): three CPU-bound threads pass a lock with 5 ms timed
# condvar waits (tests/programs/gt_timedwait.c); nobody sleeps. The chains must name those waits
# as futex timeouts, never "sleep", and each such link says which syscall it waited in.
#   gt_timedwait.sh WHYSLOW PROGRAM      (exit 0 pass, 1 fail, 77 skip)
set -u
WHYSLOW=$1 PROG=$2
if [ "$(id -u)" != 0 ]; then
	[ "${CI:-}" = true ] && { echo "FAIL: needs root (CI=true: not skipping)"; exit 1; }
	echo "SKIP: needs root"; exit 77
fi
work=$(mktemp -d /tmp/whyslow-timedwait.XXXXXX) || exit 1
trap 'rm -rf "$work"' EXIT
"$WHYSLOW" run --min-block 3ms --format json -o "$work/out.jsonl" -- "$PROG" --ms 600 ||
	{ echo "FAIL: whyslow run exit $?"; exit 1; }
python3 - "$work/out.jsonl" <<'PY'
import json, sys
objs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
chains = [o for o in objs if o["type"] == "chain"]
summary = objs[-1]
assert summary["type"] == "summary", "no final summary"
pieces = [l for c in chains for l in c["links"]] + [s for c in chains for s in c["segments"]]
sleeps = [p for p in pieces if p["kind"] == "sleep"]
assert not sleeps, "a timed futex wait was called a sleep: %s" % json.dumps(sleeps[0])
roots = [r["root"] for r in summary["root_causes"]]
assert not any("sleep" in r for r in roots), "summary names a sleep: %s" % roots
timeouts = [p for p in pieces if p["kind"] == "timeout"]
assert timeouts, "no timeout at all in %d chains" % len(chains)
def futex_of(p):
    """one wait names its futex in addr; a link of several waits names it as its resource"""
    if p.get("addr", "").startswith("0x"):
        return p["addr"]
    r = p.get("resource", "")
    return r.split(" ", 1)[1] if r.startswith("futex 0x") else None
# a merged segment ("mix": short pieces of several kinds) names no single wait
for t in (t for t in timeouts if "mix" not in t):
    assert futex_of(t), "timeout without its futex: %s" % json.dumps(t)
links = [l for c in chains for l in c["links"] if l["kind"] == "timeout"]
for l in links:
    sc = l.get("syscall")
    assert sc and sc["name"] == "futex" and sc["args"]["uaddr"] == futex_of(l), \
        "timeout link without its futex syscall: %s" % json.dumps(l)
    assert sc["args"]["timeout"] is True, json.dumps(l)
print("PASS: %d chains, %d timeout pieces (%d links), no sleep" % (len(chains), len(timeouts), len(links)))
PY
