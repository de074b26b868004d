#!/bin/bash
# The foundation's acceptance run: `whyslow run -- sh -c 'sleep 0.1; dd ... oflag=direct'` exits 0
# and reports records from all three sources; with --sources sched,futex, no block records or
# block_io links appear and the run still explains what it can.
#   sources.sh WHYSLOW     (exit 77 = skipped when not root, unless CI=true)
set -u
WHYSLOW=$1
if [ "$(id -u)" != 0 ]; then
	[ "${CI:-}" = true ] && { echo "FAIL: needs root (CI=true: not skipping)"; exit 1; }
	echo "SKIP: needs root"; exit 77
fi
work=$(mktemp -d /tmp/whyslow-sources.XXXXXX)
trap 'rm -rf "$work"' EXIT
cmd=(sh -c "sleep 0.1; dd if=/dev/zero of=$work/x bs=1M count=20 oflag=direct status=none")

"$WHYSLOW" run --format json -o "$work/all.jsonl" -- "${cmd[@]}" || { echo "FAIL: exit $?"; exit 1; }
"$WHYSLOW" run --sources sched,futex --format json -o "$work/some.jsonl" -- "${cmd[@]}" ||
	{ echo "FAIL: --sources run exit $?"; exit 1; }

# the ini file alone says what to run and which sources: `whyslow -c FILE`
cat >"$work/w.ini" <<EOF
[core]
format = json
output = $work/ini.jsonl
command = sleep 0.05; dd if=/dev/zero of=$work/y bs=1M count=4 oflag=direct status=none
[blkio]
enabled = no
EOF
chmod 600 "$work/w.ini"
"$WHYSLOW" -c "$work/w.ini" || { echo "FAIL: -c run exit $?"; exit 1; }
grep -q '"sources":"futex,kill,net,sched"' "$work/ini.jsonl" ||
	{ echo "FAIL: -c: [blkio] enabled = no not honoured: $(tail -c 300 "$work/ini.jsonl")"; exit 1; }

python3 - "$work/all.jsonl" "$work/some.jsonl" <<'PY'
import json, sys
def load(p):
    objs = [json.loads(l) for l in open(p) if l.strip()]
    assert objs and objs[-1]["type"] == "summary", f"{p}: no final summary"
    assert sum(o["type"] == "summary" for o in objs) == 1, f"{p}: more than one summary"
    return [o for o in objs if o["type"] == "chain"], objs[-1]
chains, s = load(sys.argv[1])
by = s["events_by_source"]
# the futex source writes no records of its own: it reads the sched source's wakeups
for src in ("sched", "blkio"):
    assert by.get(src, 0) > 0, f"all sources: no {src} records: {by}"
assert "futex" in s["sources"], s["sources"]
chains, s = load(sys.argv[2])
assert "blkio" not in s["events_by_source"], f"blkio records with --sources sched,futex: {s['events_by_source']}"
assert s["sources"] == "futex,sched", s["sources"]
assert not any(l["kind"] == "block_io" for c in chains for l in c["links"]), "block_io link without blkio"
assert chains, "no chains at all without blkio: the others must still explain the waits"
print("PASS: all three sources seen; --sources sched,futex shows no block events")
PY
