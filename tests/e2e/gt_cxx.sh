#!/bin/bash
# Ground truth "cxx" (issue 34.7): a thread of tests/programs/gt_cxx blocks 300 ms on a
# std::mutex inside ns::Worker<int>::wait_for_lock(). Its stack must name that function
# demangled wherever it is printed: JSON (with the symbol table's name as "mangled"), text,
# folded and Perfetto, live and from a recording; no frame of it keeps a "_ZN" name.
#   gt_cxx.sh WHYSLOW PROGRAM      (exit 0 pass, 1 fail, 77 skip)
set -u
WHYSLOW=$1 PROG=$2
if [ "$(id -u)" != 0 ]; then
	[ "${CI:-}" = true ] && { echo "FAIL: needs root (CI=true: not skipping)"; exit 1; }
	echo "SKIP: needs root"; exit 77
fi
work=$(mktemp -d /tmp/whyslow-cxx.XXXXXX) || exit 1
ok=0
trap '[ $ok = 1 ] && rm -rf "$work" || echo "work directory kept: $work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

"$WHYSLOW" run --format json -o "$work/out.jsonl" --perfetto "$work/trace.json" -- "$PROG" ||
	fail "whyslow run exit $?"
"$WHYSLOW" record -o "$work/rec.data" -- "$PROG" >/dev/null || fail "whyslow record exit $?"
"$WHYSLOW" report "$work/rec.data" >"$work/report.txt" || fail "whyslow report exit $?"
"$WHYSLOW" report "$work/rec.data" --format folded >"$work/folded.txt" ||
	fail "whyslow report --format folded exit $?"
"$WHYSLOW" report "$work/rec.data" --format json >"$work/rec.jsonl" ||
	fail "whyslow report --format json exit $?"

python3 - "$work" <<'PY' || exit 1
import json, sys
work = sys.argv[1]
NAME, MANGLED = "ns::Worker<int>::wait_for_lock()", "_ZN2ns6WorkerIiE13wait_for_lockEv"

def worker_link(path):
    objs = [json.loads(l) for l in open(path) if l.strip()]
    links = [l for o in objs if o["type"] == "chain" for l in o["links"]
             if l["comm"] == "cxx-worker" and l["kind"] == "futex" and "stack" in l]
    assert links, "%s: no futex link of cxx-worker with a stack" % path
    summary = [o for o in objs if o["type"] == "summary"]
    return links[0], summary[0] if summary else {}

for path in (work + "/out.jsonl", work + "/rec.jsonl"):
    link, summary = worker_link(path)
    stack = link["stack"]
    user = [f for f in stack if not f["kernel"]]
    print("  %s: %s" % (path.rsplit("/", 1)[1], " <- ".join(str(f["sym"]) for f in user[:5])))
    mine = [f for f in user if f["sym"] == NAME]
    # what the run said of the missing frames, to tell a loss it reported from a bug
    assert mine, "%s: %s is not in the worker's stack (stack_missing %r; summary %s)" % (
        path, NAME, link.get("stack_missing"),
        {k: v for k, v in summary.items() if "stack" in k or "lost" in k or "unseen" in k})
    assert all(f.get("mangled") == MANGLED for f in mine), "%s: %s" % (path, mine)
    raw = [f["sym"] for f in user if (f["sym"] or "").startswith("_Z")]
    assert not raw, "%s: frames left mangled: %s" % (path, raw)

text = open(work + "/report.txt").read()
assert "in " + NAME in text, "the text report does not name %s:\n%s" % (NAME, text)
assert MANGLED not in text, "the text report prints %s" % MANGLED
folded = open(work + "/folded.txt").read()
assert ";" + NAME in folded, "the folded stacks do not name %s" % NAME
assert MANGLED not in folded, "the folded stacks print %s" % MANGLED
trace = open(work + "/trace.json").read()
assert NAME.replace('"', '\\"') in trace, "the Perfetto export does not name %s" % NAME
print("PASS: %s demangled in JSON (live and recorded), text, folded and Perfetto" % NAME)
PY
ok=1
