#!/bin/bash
# A futex word inside a global is named after it (issue 34.7): two CPython threads contend for
# the GIL, whose condition variable and mutex live in the interpreter's global _PyRuntime, so
# their futex links say "addr_symbol":"_PyRuntime+0x…" — the offset checked against the
# symbol's address in the binary — live and in a report of a recording (the name is kept in
# it). Debian's own /usr/bin/python3.11, not a python3 on PATH (pyenv's is another build).
#   futex_names.sh WHYSLOW      (exit 0 pass, 1 fail, 77 skip)
set -u
WHYSLOW=$1
PY=/usr/bin/python3.11
. "$(dirname "${BASH_SOURCE[0]}")/skip.sh"
[ "$(id -u)" = 0 ] || skip "needs root"
[ -x $PY ] || skip "no $PY (Debian 12's python3.11)"
work=$(mktemp -d /tmp/whyslow-futex-names.XXXXXX) || exit 1
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

# each thread waits about the switch interval for the GIL, the holder keeps it that long
cat >"$work/gil.py" <<'EOF'
import sys, threading, time
sys.setswitchinterval(0.02)
def spin():
    end = time.time() + 0.6
    while time.time() < end:
        pass
ts = [threading.Thread(target=spin) for _ in range(2)]
for t in ts: t.start()
for t in ts: t.join()
EOF
"$WHYSLOW" run --format json -o "$work/live.jsonl" -- $PY "$work/gil.py" ||
	fail "whyslow run exit $?"
"$WHYSLOW" record -o "$work/rec.data" -- $PY "$work/gil.py" 2>/dev/null ||
	fail "whyslow record exit $?"
"$WHYSLOW" report "$work/rec.data" --format json >"$work/rec.jsonl" || fail "whyslow report exit $?"
nm -D -S --defined-only $PY | grep -w _PyRuntime >"$work/sym" || fail "no _PyRuntime in $PY"

python3 - "$work" <<'PY'
import json, sys
work = sys.argv[1]
value, size = (int(x, 16) for x in open(work + "/sym").read().split()[:2])

def check(path):
    objs = [json.loads(l) for l in open(path) if l.strip()]
    links = [l for o in objs if o["type"] == "chain" for l in o["links"]
             if l["kind"] in ("futex", "timeout") and "addr" in l]
    named = [l for l in links if l.get("addr_symbol")]
    gil = [l for l in named if l["addr_symbol"].startswith("_PyRuntime+0x")]
    print("  %s: %d futex links, %d named, %d in _PyRuntime: %s" % (
        path.rsplit("/", 1)[1], len(links), len(named), len(gil),
        sorted({(l["addr"], l["addr_symbol"]) for l in named})))
    assert gil, "%s: no futex link names _PyRuntime" % path
    for l in named:
        name, _, off = l["addr_symbol"].partition("+0x")
        assert name == "_PyRuntime", "%s: unexpected name %s" % (path, l["addr_symbol"])
        a = int(l["addr"], 16)
        # the address is inside the object, at the offset the name says
        assert value <= a < value + size and a - value == int(off, 16), \
            "%s: %s is not %s (_PyRuntime at %#x, %d bytes)" % (path, l["addr"], l["addr_symbol"], value, size)
    for l in links:
        a = int(l["addr"], 16)
        if value <= a < value + size:
            assert l.get("addr_symbol"), "%s: %s is in _PyRuntime but not named" % (path, l["addr"])

check(work + "/live.jsonl")
check(work + "/rec.jsonl")
print("PASS: GIL futex words named after _PyRuntime, live and from a recording")
PY
