#!/bin/bash
# gt_memcg.sh — ground truth for memory reclaim under a cgroup's memory limit (issue 32, item 3).
# dd writes 512 MiB into a file of its own (page cache on a disk, never tmpfs: without swap,
# memory that cannot be written back past the limit means the OOM killer) from a fresh memory
# cgroup limited to 64 MiB (memory.limit_in_bytes on cgroup v1, memory.max on v2). Every page it
# dirties past the limit must first be reclaimed by dd itself, in the kernel's direct reclaim,
# which waits for the writeback of the pages it frees. The group's failure count proves the limit
# was hit. The report must say so: at least 15% of the run's critical path has the root "memory
# reclaim for the memory limit of /<that cgroup> (64 MB)", a reclaim link is in the chains, dd's
# time on CPU inside the reclaim is the reclaim's in its timeline (Perfetto: at least 2 ms of
# "running: memory_reclaim"), and no more than 5% of it is called a sleep or a timer (the
# throttle inside reclaim is a timed sleep, woken by a timer or the writeback). Before, that time
# read as CPU work, block I/O and waits for kworkers.
#   gt_memcg.sh WHYSLOW   (exit 77 = skipped when not root, no memory controller or no disk-backed
#                          temporary directory; a failure under CI=true)
set -u
WHYSLOW=$1
. "$(dirname "${BASH_SOURCE[0]}")/skip.sh"
[ "$(id -u)" = 0 ] || skip "needs root (cgroups, BPF)"
name=whyslow-test-memcg-$$-$RANDOM
if [ -f /sys/fs/cgroup/memory/memory.limit_in_bytes ]; then
	cg=/sys/fs/cgroup/memory/$name # cgroup v1
elif [ -f /sys/fs/cgroup/cgroup.controllers ] && grep -qw memory /sys/fs/cgroup/cgroup.controllers; then
	cg=/sys/fs/cgroup/$name # cgroup v2
else
	skip "no memory cgroup controller (v1 /sys/fs/cgroup/memory or v2 /sys/fs/cgroup)"
fi
# page cache that can be written back: a disk's file system, not tmpfs or ramfs
tmp=${WHYSLOW_TEST_DISK_TMP:-/var/tmp}
case "$(stat -f -c %T "$tmp" 2>/dev/null)" in
tmpfs | ramfs | "") skip "$tmp is not on a disk (set WHYSLOW_TEST_DISK_TMP)" ;;
esac
work=$(mktemp -d "$tmp/whyslow-memcg.XXXXXX") || skip "cannot make a directory in $tmp"
cleanup() {
	# move anything left in the group out before removing it
	if [ -d "$cg" ]; then
		while read -r p; do echo "$p" >"$(dirname "$cg")/cgroup.procs" 2>/dev/null; done \
			<"$cg/cgroup.procs"
		rmdir "$cg" || echo "gt_memcg.sh: could not remove $cg" >&2
	fi
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP
mkdir "$cg" || skip "cannot create $cg"
limit=$((64 * 1024 * 1024))
if [ -f "$cg/memory.limit_in_bytes" ]; then
	echo $limit >"$cg/memory.limit_in_bytes"
else
	echo $limit >"$cg/memory.max"
fi || { echo "FAIL: cannot set the memory limit of $cg"; exit 1; }

# the shell moves itself into the group, then becomes dd: one thread, the critical path's.
# --min-block 1ms: the waits inside reclaim (reclaim_throttle's sleeps) are mostly a few ms, and
# at the default 10 ms none of them made a chain in half the runs here
"$WHYSLOW" run --min-block 1ms --format json -o "$work/out.jsonl" --perfetto "$work/trace.json" -- \
	sh -c 'echo $$ >"$1/cgroup.procs" && exec dd if=/dev/zero of="$2/file" bs=1M count=512 status=none' \
	sh "$cg" "$work" 2>"$work/err" ||
	{ echo "FAIL: whyslow run exited $?"; cat "$work/err"; exit 1; }
if [ -f "$cg/memory.failcnt" ]; then
	hits=$(cat "$cg/memory.failcnt")
else
	hits=$(awk '$1 == "max" { print $2 }' "$cg/memory.events")
fi
echo "the group's limit was hit ${hits:-0} times"
[ "${hits:-0}" -ge 5 ] || { echo "FAIL: the limit was hit ${hits:-0} times, not a test of anything"; exit 1; }

dir=$(dirname "$0")
python3 "$dir/check_roots.py" "$work/out.jsonl" || { echo "FAIL: check_roots.py"; exit 1; }
python3 "$dir/check_critpath.py" "$work/out.jsonl" || { echo "FAIL: check_critpath.py"; exit 1; }
python3 - "$work/out.jsonl" "/$name" "$work/trace.json" <<'PY' || exit 1
import json, sys

path, group, trace = sys.argv[1], sys.argv[2], sys.argv[3]
label = "memory reclaim for the memory limit of %s (64 MB)" % group
objs = [json.loads(l) for l in open(path) if l.strip()]
cp = [o for o in objs if o.get("type") == "critical_path"][0]
wall = cp["wall_ns"]
for p in cp["parts"]:
    print("  %5.1f%%  %s" % (100 * p["ns"] / wall, p["what"]))
reclaim = sum(p["ns"] for p in cp["parts"] if p["what"] == label)
sleep = sum(p["ns"] for p in cp["parts"] if "sleep" in p["what"] or "timer" in p["what"])
links = [l for o in objs if o.get("type") == "chain" for l in o.get("links", [])
         if l.get("kind") == "memory_reclaim"]
bad = []
if reclaim < 0.15 * wall:
    bad.append("%r is %.1f%% of the critical path, want >= 15%%" % (label, 100 * reclaim / wall))
if sleep > 0.05 * wall:
    bad.append("a sleep or timer is %.1f%% of the critical path, want <= 5%%" % (100 * sleep / wall))
if not links:
    bad.append("no chain has a memory_reclaim link")
# dd's time on CPU inside the reclaim brackets is the reclaim's, not its own work (the timeline)
events = json.load(open(trace))
events = events["traceEvents"] if isinstance(events, dict) else events
on_cpu = sum(e.get("dur", 0) for e in events
             if e.get("ph") == "X" and e.get("name") == "running: memory_reclaim") / 1000
print("  dd on CPU inside reclaim: %.1f ms" % on_cpu)
if on_cpu < 2:
    bad.append("%.1f ms of the timeline is running: memory_reclaim, want >= 2 ms" % on_cpu)
for b in bad:
    print("FAIL: " + b)
sys.exit(1 if bad else 0)
PY
echo "PASS: gt_memcg"
