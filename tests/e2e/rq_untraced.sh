#!/bin/bash
# A traced thread waiting for a CPU held by untraced threads names them, with their time
# (sched's cpu_current): two untraced busy loops share CPU 0, switching between themselves
# while no traced thread waits (those switches are not written and read no clock), and a
# traced shell on CPU 0 reads lines a traced shell on CPU 1 writes every 10ms, waiting for
# CPU 0 behind the loops each time. The reader runs at nice 19 so that its wakeups wait behind
# the loops rather than preempting them (at nice 0, 1 to 5 of 60 wakeups waited 2ms or more here,
# and none in one CI run), and it reads 150 lines. Each runqueue wait on CPU 0
# must name who ran meanwhile: the loops, for most of it, each for its turns, and never more
# time than the wait. The reader's wakeups come from CPU 1, so no record on CPU 0 names the
# loop that held it when a wait began.
#   rq_untraced.sh WHYSLOW     (exit 77 = skipped when not root, unless CI=true)
set -u
WHYSLOW=$1
if [ "$(id -u)" != 0 ]; then
	[ "${CI:-}" = true ] && { echo "FAIL: needs root (CI=true: not skipping)"; exit 1; }
	echo "SKIP: needs root"; exit 77
fi
[ "$(nproc)" -ge 2 ] || { echo "SKIP: needs CPUs 0 and 1"; exit 77; }
work=$(mktemp -d /tmp/whyslow-rq.XXXXXX)
hogs=()
trap 'kill "${hogs[@]}" 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT

for name in rq-hog-a rq-hog-b; do
	taskset -c 0 perl -e "\$0 = '$name'; 1 while 1" &
	hogs+=($!)
done
sleep 0.3 # both loops running, switching between themselves
"$WHYSLOW" run --min-block 2ms --format json -o "$work/out.jsonl" -- \
	sh -c 'taskset -c 1 sh -c "for i in \$(seq 150); do sleep 0.01; echo; done" |
		taskset -c 0 nice -n 19 sh -c "while read l; do :; done"' 2>"$work/err" ||
	{ echo "FAIL: whyslow run exited $?"; cat "$work/err"; exit 1; }

python3 "$(dirname "$0")/check_roots.py" "$work/out.jsonl" || { echo "FAIL: check_roots.py"; exit 1; }
python3 - "$work/out.jsonl" "${hogs[@]}" <<'PY' || exit 1
import json, sys

path, hogs = sys.argv[1], {int(h) for h in sys.argv[2:]}
waits = [l for line in open(path) if '"type":"chain"' in line
         for l in json.loads(line)["links"] if l["kind"] == "runqueue" and l.get("cpu") == 0]
assert waits, "no runqueue wait on CPU 0 reported: %s" % open(path).read()
named = 0
for w in waits:
    ran = w.get("ran", [])
    more = w.get("ran_more", {"threads": 0, "ns": 0})
    total = sum(r["ns"] for r in ran) + more["ns"]
    by_hogs = sum(r["ns"] for r in ran if r["tid"] in hogs)
    # the wait may merge several (w["waits"]); what ran is counted within them only
    assert total <= w["duration_ns"] * 1.01 + 10000, "more time named than waited: %s" % w
    if by_hogs >= 0.5 * w["duration_ns"]:
        named += 1
    # the loops take turns (a few ms each): one named for 10ms alone would be a switch
    # between them that was lost, its time given to the one after
    # (unless the list was cut: under other load the second loop may be among ran_more)
    if by_hogs >= 10_000_000 and not more["threads"]:
        assert hogs <= {r["tid"] for r in ran}, "only one loop named for %.1fms: %s" % (
            by_hogs / 1e6, w)
    others = ", ".join("%s %.2fms" % (r["comm"], r["ns"] / 1e6) for r in ran if r["tid"] not in hogs)
    if more["threads"]:
        others += "%s%d more %.2fms" % (", " if others else "", more["threads"], more["ns"] / 1e6)
    print("wait %.2fms (%d merged): loops %.2fms; others: %s" %
          (w["duration_ns"] / 1e6, w.get("waits", 1), by_hogs / 1e6, others or "none"))
assert named, "no runqueue wait names the untraced loops %s for half of it" % sorted(hogs)
print("ok   %d of %d runqueue waits on CPU 0 name the untraced loops for most of the wait"
      % (named, len(waits)))
PY
