#!/bin/bash
# gt_swapin.sh — ground truth for a swap-in under a page fault (issue 32, item 3).
# The test makes a swap area of its own: a slow loop device (slowdisk.sh: direct I/O, its reads
# held to 20 a second by a blkio group's limit on the backing disk) with mkswap, turned on with
# the lowest priority a user can give (0). python3, in a fresh v1 memory cgroup limited to
# 16 MiB and in that blkio group, fills 48 MiB of its own memory, so most of it is swapped out to
# that device, then touches the first 2 MiB again: each touch of a swapped page is a page fault
# that reads the swap area. The report must name them so: a chain's block_io link has
# "fault":"swap_in" and "swap_area" the device, and the critical path has the root
# "swap-in from /dev/loopN" for at least 20% of the run; a swap-in after the group reclaimed at
# its limit in the same run on CPU names the group and its limit ("memory_cgroup",
# "limit_bytes"), and some do. Before, the same waits read as
# "block I/O on loopN". swapoff, the loop device and both cgroups are undone on every exit.
#   gt_swapin.sh WHYSLOW   (exit 77 = skipped when not root, without loop devices, v1 memory and
#                           blkio cgroups or mkswap; a failure under CI=true)
. "$(dirname "$0")/gt_lib.sh" || exit 1
WHYSLOW=${1:-}
[ -x "$WHYSLOW" ] || gt_fail "whyslow binary not given or not executable: '$WHYSLOW'"
MEMCG_ROOT=/sys/fs/cgroup/memory
[ "$(id -u)" = 0 ] && { [ -f "$MEMCG_ROOT/memory.limit_in_bytes" ] || gt_skip "no cgroup-v1 memory hierarchy at $MEMCG_ROOT"; }
command -v mkswap >/dev/null && command -v swapon >/dev/null || gt_skip "mkswap or swapon not installed"
gt_own_setup swapin
memcg= swapdev=
swap_cleanup() {
	local rc=$?
	if [ -n "$swapdev" ] && grep -q "^$swapdev " /proc/swaps; then
		swapoff "$swapdev" || echo "gt_swapin.sh: could not swapoff $swapdev" >&2
	fi
	if [ -n "$memcg" ] && [ -d "$memcg" ]; then
		while read -r p; do echo "$p" >"$MEMCG_ROOT/cgroup.procs" 2>/dev/null; done <"$memcg/cgroup.procs"
		rmdir "$memcg" || echo "gt_swapin.sh: could not remove $memcg" >&2
	fi
	(exit $rc)
	gt_own_cleanup
}
trap swap_cleanup EXIT

setup=$("$SLOWDISK" setup) || gt_fail "slowdisk.sh setup failed"
dev=$(sed -n 's/^DEV=//p' <<<"$setup")
[ -b "$dev" ] || gt_fail "slowdisk.sh setup gave no device: $setup"
blkcg=$("$SLOWDISK" cgroup "$dev" 20) || gt_fail "slowdisk.sh cgroup failed"
mkswap "$dev" >/dev/null || gt_fail "mkswap $dev failed"
swapdev=$dev
swapon -p 0 "$dev" || gt_fail "swapon $dev failed"
memcg=$MEMCG_ROOT/whyslow-test-swapin-$$-$RANDOM
mkdir "$memcg" || gt_fail "cannot create $memcg"
echo $((16 << 20)) >"$memcg/memory.limit_in_bytes" || gt_fail "cannot set the limit of $memcg"
echo "gt_swapin: swap on $dev, blkio group $blkcg, memory group $memcg, work dir $GT_WORK"

cat >"$GT_WORK/swapin.py" <<'PY'
import os, sys, time
memcg, blkcg = sys.argv[1], sys.argv[2]
for g in (memcg, blkcg):  # the moves sleep: before the timed part
    with open(g + "/tasks", "w") as f:
        f.write(str(os.getpid()))
b = bytearray(48 << 20)
for i in range(0, len(b), 4096):  # fill it: past the limit, the oldest pages go to swap
    b[i] = 1
before = open("/proc/self/status").read()
t = time.monotonic()
n = sum(b[i] for i in range(0, 2 << 20, 4096))  # back from swap: page faults reading it
print("touched %d pages again in %.0f ms" % (n, (time.monotonic() - t) * 1000), file=sys.stderr)
sys.stderr.flush()
os._exit(0)  # no teardown: freeing the buffer would read all of it back from swap first
PY
out=$GT_WORK/out.jsonl
# the workload without meson's MALLOC_PERTURB_: glibc would fill the buffer as it is freed, and
# every swapped page would be read back at 20 a second (85 s instead of 10)
timeout -k 5 100 "$WHYSLOW" run --as-root --format json -o "$out" --perfetto "$GT_WORK/trace.json" -- \
	env -u MALLOC_PERTURB_ /usr/bin/python3 "$GT_WORK/swapin.py" "$memcg" "$blkcg" 2>"$GT_WORK/err"
rc=$?
tail -n 20 "$GT_WORK/err"
[ $rc -eq 0 ] || gt_fail "whyslow run exited $rc"
swapped=$(awk '$1 == "pgmajfault" { print $2 }' "$memcg/memory.stat")
echo "major faults in the group: ${swapped:-0}"
[ "${swapped:-0}" -ge 8 ] || gt_fail "only ${swapped:-0} major faults in the group: the run proves nothing"
python3 "$GT_DIR/check_roots.py" "$out" || gt_fail "check_roots.py"
python3 "$GT_DIR/check_perfetto.py" "$GT_WORK/trace.json" --chains "$out" || gt_fail "check_perfetto.py"
python3 - "$out" "$dev" "/${memcg##*/}" <<'PY' || gt_fail "the swap-ins are not named (see above)"
import json, sys

path, dev, memcg = sys.argv[1], sys.argv[2], sys.argv[3]
label = "swap-in from " + dev
objs = [json.loads(l) for l in open(path) if l.strip()]
cp = [o for o in objs if o.get("type") == "critical_path"][0]
wall = cp["wall_ns"]
for p in cp["parts"][:12]:
    print("  %5.1f%%  %s" % (100 * p["ns"] / wall, p["what"]))
swapin = sum(p["ns"] for p in cp["parts"] if p["what"] == label)
links = [l for o in objs if o.get("type") == "chain" for l in o.get("links", [])
         if l.get("kind") == "block_io" and l.get("fault") == "swap_in"]
bad = []
if swapin < 0.2 * wall:
    bad.append("%r is %.1f%% of the critical path, want >= 20%%" % (label, 100 * swapin / wall))
if not links or any(l.get("swap_area") != dev for l in links):
    bad.append("swap-in links: %s, want some, each of swap_area %s" %
               ([l.get("swap_area") for l in links], dev))
# a swap-in after its group reclaimed at its limit in the same run on CPU names the group
named = [l for l in links if l.get("memory_cgroup") == memcg]
print("%d of %d swap-ins name the memory cgroup at its limit" % (len(named), len(links)))
if not named or any(l.get("limit_bytes") != 16 << 20 for l in named):
    bad.append("swap-ins naming %s: %s, want some, each with limit_bytes %d" %
               (memcg, [l.get("limit_bytes") for l in named], 16 << 20))
if any(l.get("memory_cgroup") not in (None, memcg) for l in links):
    bad.append("a swap-in names another memory cgroup")
for b in bad:
    print("FAIL: " + b)
sys.exit(1 if bad else 0)
PY
GT_OK=1
echo "PASS: gt_swapin"
