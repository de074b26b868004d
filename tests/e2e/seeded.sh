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
IFS=. read -r major minor _ < <(uname -r)
if [ "$major" -lt 6 ] || { [ "$major" = 6 ] && [ "$minor" -lt 2 ]; }; then
	echo "SKIP: sched seeds only from Linux 6.2 on (this is $(uname -r))"; exit 77
fi
work=$(mktemp -d /tmp/whyslow-seeded.XXXXXX)
target=
trap 'kill $target 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT

sleep 30 &
target=$!
"$WHYSLOW" attach --duration 3s -o "$work/out.txt" "$target" 2>"$work/err" &
tool=$!
# the map exists from the object's load on, before the walk: wait for the walk's end
state=
for _ in $(seq 100); do
	state=$(bpftool -j map dump name .data.seed 2>/dev/null | python3 -c '
import json, sys
for m in json.load(sys.stdin):
    v = m.get("formatted", m)["value"][".data.seed"]
    for f in v:
        if "seed_state" in f:
            print(f["seed_state"])
' 2>/dev/null)
	[ -n "$state" ] && [ "$state" != 0 ] && break
	sleep 0.1
done
wait $tool || { echo "FAIL: whyslow attach exited $?"; cat "$work/err"; exit 1; }
case $state in
1) echo "seeded: ok (seed_state 1)" ;;
"") echo "FAIL: no .data.seed map seen while whyslow was attached"; cat "$work/err"; exit 1 ;;
0) echo "FAIL: the walk did not end (seed_state 0 after 10 s)"; exit 1 ;;
*) echo "FAIL: an entry could not be made (seed_state $state)"; exit 1 ;;
esac
