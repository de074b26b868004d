#!/bin/bash
# The core walks the sched source's task iterator twice after attaching (ABI 2.4), and the walks
# give every thread of the traced processes its task-storage entry: sched's `seed_state` must
# then read 2 (SEED_DONE: a task without an entry is untraced, no ws_tgids lookup). Walks that
# did not run, or did not reach their end, leave it below: whyslow stays right but pays a
# filter lookup per event of every untraced task. That the walks give each thread its entry is
# tested by gt_stuck ("the wait begun before attach gets its chain").
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
# the map exists from the object's load on, before the walks: wait for their end. Only this
# whyslow's map: the one among its file descriptors (another whyslow may be running).
state=
for _ in $(seq 100); do
	now=$(python3 - "$tool" <<'PY'
import json, os, subprocess, sys

pid = sys.argv[1]
for fd in os.listdir("/proc/%s/fd" % pid):
    try:
        if os.readlink("/proc/%s/fd/%s" % (pid, fd)) != "anon_inode:bpf-map":
            continue
        info = open("/proc/%s/fdinfo/%s" % (pid, fd)).read()
    except OSError:
        continue
    ids = [l.split()[1] for l in info.splitlines() if l.startswith("map_id:")]
    if not ids:
        continue
    show = json.loads(subprocess.run(["bpftool", "-j", "map", "show", "id", ids[0]],
                                     capture_output=True, text=True).stdout or "{}")
    if show.get("name") != ".data.seed":
        continue
    dump = json.loads(subprocess.run(["bpftool", "-j", "map", "dump", "id", ids[0]],
                                     capture_output=True, text=True).stdout)
    for f in dump[0].get("formatted", dump[0])["value"][".data.seed"]:
        if "seed_state" in f:
            print(f["seed_state"])
PY
)
	[ -n "$now" ] && state=$now # the last value seen while whyslow held the map
	[ "$state" = 2 ] && break
	kill -0 $tool 2>/dev/null || break
	sleep 0.1
done
wait $tool || { echo "FAIL: whyslow attach exited $?"; cat "$work/err"; exit 1; }
# 2: both walks ended; 0 or 1: they did not (1: only the first); 4 and up: an entry failed
case $state in
2) echo "seeded: ok (seed_state 2)" ;;
"") echo "FAIL: no .data.seed map seen among whyslow's descriptors"; cat "$work/err"; exit 1 ;;
0 | 1) echo "FAIL: the walks did not end (seed_state $state while whyslow ran)"; exit 1 ;;
*) echo "FAIL: an entry could not be made (seed_state $state)"; exit 1 ;;
esac
