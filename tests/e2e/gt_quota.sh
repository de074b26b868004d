#!/bin/bash
# gt_quota.sh — ground truth for CPU quota throttling (issue 32, item 1). A CPU-bound program
# (tests/programs/gt_quota) runs in a fresh cpu cgroup of its own with a 10% quota
# (cfs_quota_us 10000 per cfs_period_us 100000 on cgroup v1; cpu.max "10000 100000" on v2), so
# it spends about 90% of its time throttled by CFS bandwidth control, off the CPU for no other
# reason. The critical path of the run must say so: of its time not on CPU, at least 90% has the
# root "CPU quota of /<that cgroup> ...", and no more than 5% of it is "wakeup latency"
# (what it was called before: the throttled thread looks runnable on an idle CPU).
#   gt_quota.sh WHYSLOW GT_QUOTA   (exit 77 = skipped when not root or no cpu controller,
#                                   a failure under CI=true)
set -u
WHYSLOW=$1
PROG=$2
. "$(dirname "${BASH_SOURCE[0]}")/skip.sh"
[ "$(id -u)" = 0 ] || skip "needs root (cgroups, BPF)"
name=whyslow-test-quota-$$-$RANDOM
if [ -f /sys/fs/cgroup/cpu/cpu.cfs_quota_us ]; then
	cg=/sys/fs/cgroup/cpu/$name # cgroup v1
elif [ -f /sys/fs/cgroup/cgroup.controllers ] && grep -qw cpu /sys/fs/cgroup/cgroup.controllers; then
	cg=/sys/fs/cgroup/$name # cgroup v2
else
	skip "no cpu cgroup controller (v1 /sys/fs/cgroup/cpu or v2 /sys/fs/cgroup)"
fi
work=$(mktemp -d /tmp/whyslow-quota.XXXXXX)
cleanup() {
	# move anything left in the group out before removing it
	if [ -d "$cg" ]; then
		while read -r p; do echo "$p" >"$(dirname "$cg")/cgroup.procs" 2>/dev/null; done \
			<"$cg/cgroup.procs"
		rmdir "$cg" || echo "gt_quota.sh: could not remove $cg" >&2
	fi
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP
mkdir "$cg" || skip "cannot create $cg"
if [ -f "$cg/cpu.cfs_quota_us" ]; then
	echo 100000 >"$cg/cpu.cfs_period_us" && echo 10000 >"$cg/cpu.cfs_quota_us"
else
	echo "10000 100000" >"$cg/cpu.max"
fi || { echo "FAIL: cannot set the quota of $cg"; exit 1; }

# the shell moves itself into the group, then becomes the program: one thread, the critical path's
"$WHYSLOW" run --format json -o "$work/out.jsonl" -- \
	sh -c 'echo $$ >"$1/cgroup.procs" && exec nice -n -10 "$2" 1.5' sh "$cg" "$PROG" 2>"$work/err" ||
	{ echo "FAIL: whyslow run exited $?"; cat "$work/err"; exit 1; }
throttled=$(awk '$1 == "nr_throttled" { print $2 }' "$cg/cpu.stat")
echo "the group's cpu.stat: nr_throttled $throttled"
[ "${throttled:-0}" -ge 5 ] || { echo "FAIL: the program was throttled ${throttled:-0} times, not a test of anything"; exit 1; }

dir=$(dirname "$0")
python3 "$dir/check_roots.py" "$work/out.jsonl" || { echo "FAIL: check_roots.py"; exit 1; }
python3 "$dir/check_critpath.py" "$work/out.jsonl" || { echo "FAIL: check_critpath.py"; exit 1; }
python3 - "$work/out.jsonl" "/$name" <<'PY' || exit 1
import json, sys

path, group = sys.argv[1], sys.argv[2]
objs = [json.loads(l) for l in open(path) if l.strip()]
cp = [o for o in objs if o.get("type") == "critical_path"][0]
wall = cp["wall_ns"]
for p in cp["parts"]:
    print("  %5.1f%%  %s" % (100 * p["ns"] / wall, p["what"]))
running = sum(p["ns"] for p in cp["parts"] if p["what"].startswith("CPU work"))
quota = sum(p["ns"] for p in cp["parts"] if p["what"].startswith("CPU quota of " + group + " "))
latency = sum(p["ns"] for p in cp["parts"] if "wakeup latency" in p["what"])
off = wall - running
bad = []
if off <= 0 or quota < 0.9 * off:
    bad.append("the quota of %s is the root of %.1f%% of the %d ns off CPU, want >= 90%%"
               % (group, 100 * quota / max(off, 1), off))
if latency > 0.05 * wall:
    bad.append("wakeup latency is %.1f%% of the critical path, want <= 5%%" % (100 * latency / wall))
for b in bad:
    print("FAIL: " + b)
sys.exit(1 if bad else 0)
PY
echo "PASS: gt_quota"
