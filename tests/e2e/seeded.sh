#!/bin/bash
# The core walks the sched source's task iterator once after attaching (ABI 2.4), and the walk
# gives every thread of the traced processes its task-storage entry: sched's `states_seeded`
# must then read 1 (a task without an entry is untraced, no ws_tgids lookup). A walk that did
# not run, or did not reach its end, leaves it 0: whyslow stays right but pays a filter lookup
# per event of every untraced task. That the walk gives each thread its entry is tested by
# gt_stuck ("the wait begun before attach gets its chain").
#   seeded.sh WHYSLOW     (exit 77 = skipped when not root, unless CI=true)
set -u
WHYSLOW=$1
if [ "$(id -u)" != 0 ]; then
	[ "${CI:-}" = true ] && { echo "FAIL: needs root (CI=true: not skipping)"; exit 1; }
	echo "SKIP: needs root"; exit 77
fi
command -v bpftool >/dev/null || PATH=$PATH:/usr/sbin
work=$(mktemp -d /tmp/whyslow-seeded.XXXXXX)
target=
trap 'kill $target 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT

sleep 30 &
target=$!
"$WHYSLOW" attach --duration 2s -o "$work/out.txt" "$target" 2>"$work/err" &
tool=$!
# the tool is attached once its programs show; then give the walk a moment
for _ in $(seq 50); do
	bpftool -j map dump name .data.seed >"$work/seed.json" 2>/dev/null && break
	sleep 0.1
done
sleep 0.3
bpftool -j map dump name .data.seed >"$work/seed.json" 2>"$work/bpftool.err" ||
	{ echo "FAIL: no .data.seed map while whyslow is attached"; cat "$work/bpftool.err" "$work/err"; exit 1; }
wait $tool || { echo "FAIL: whyslow attach exited $?"; cat "$work/err"; exit 1; }
python3 - "$work/seed.json" <<'PY'
import json, sys

maps = json.load(open(sys.argv[1]))
vals = {}
for m in maps:
    for field in m["formatted"]["value"][".data.seed"] if "formatted" in m else m["value"][".data.seed"]:
        vals.update(field)
assert vals.get("states_seeded") == 1, "the walk did not end: %s" % vals
assert vals.get("seed_failed") == 0, "an entry could not be made: %s" % vals
print("seeded: ok", vals)
PY
