#!/bin/bash
# gt_fault_file.sh — ground truth for a page-cache miss read under a page fault (issue 32, item 3).
# python3 maps the first 32 MiB of a slow loop device (slowdisk.sh: about 340 ms a read, from its
# blkio group's limit on the backing disk) with no readahead (MADV_RANDOM), drops the device's
# pages from the page cache (posix_fadvise DONTNEED, that device alone), and touches three pages
# through the mapping: each touch is a page fault that reads the disk, in no syscall. The report
# must name them so: a chain's block_io link has "fault":"file" on that loop device, and at least
# half of the run's critical path has the root "page fault reading loopN". Before, the same wait
# read as "block I/O on loopN", no fault named.
#   gt_fault_file.sh WHYSLOW   (exit 77 = skipped when not root or without loop devices or blkio
#                               cgroups; a failure under CI=true)
. "$(dirname "$0")/gt_lib.sh" || exit 1
WHYSLOW=${1:-}
[ -x "$WHYSLOW" ] || gt_fail "whyslow binary not given or not executable: '$WHYSLOW'"
gt_own_setup fault_file
setup=$("$SLOWDISK" setup) || gt_fail "slowdisk.sh setup failed"
dev=$(sed -n 's/^DEV=//p' <<<"$setup")
[ -b "$dev" ] || gt_fail "slowdisk.sh setup gave no device: $setup"
cg=$("$SLOWDISK" cgroup "$dev" 3) || gt_fail "slowdisk.sh cgroup failed"
echo "gt_fault_file: device $dev, blkio group $cg, work dir $GT_WORK"

cat >"$GT_WORK/fault.py" <<'PY'
import mmap, os, sys, time
dev, cg = sys.argv[1], sys.argv[2]
fd = os.open(dev, os.O_RDONLY)
m = mmap.mmap(fd, 32 << 20, mmap.MAP_SHARED, mmap.PROT_READ)
m.madvise(mmap.MADV_RANDOM)  # one page a fault: no readahead reads the next touches' pages
os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
with open(cg + "/tasks", "w") as f:  # the move sleeps: before the timed touches
    f.write(str(os.getpid()))
slow = 0
for i in range(3):
    t = time.monotonic()
    m[(4 + 8 * i) << 20]  # a page fault reading the disk
    ms = (time.monotonic() - t) * 1000
    print("touch %d: %.0f ms" % (i, ms), file=sys.stderr)
    slow += ms >= 150
print("slow touches: %d" % slow, file=sys.stderr)
PY
out=$GT_WORK/out.jsonl
timeout -k 5 100 "$WHYSLOW" run --as-root --format json -o "$out" --perfetto "$GT_WORK/trace.json" -- \
	/usr/bin/python3 "$GT_WORK/fault.py" "$dev" "$cg" 2>"$GT_WORK/err"
rc=$?
cat "$GT_WORK/err" | tail -n 20
[ $rc -eq 0 ] || gt_fail "whyslow run exited $rc"
grep -q '^slow touches: 3$' "$GT_WORK/err" || gt_fail "not every touch read the slow disk: the run proves nothing"
python3 "$GT_DIR/check_roots.py" "$out" || gt_fail "check_roots.py"
python3 "$GT_DIR/check_perfetto.py" "$GT_WORK/trace.json" --chains "$out" || gt_fail "check_perfetto.py"
python3 - "$out" "${dev#/dev/}" <<'PY' || gt_fail "the page faults are not named (see above)"
import json, sys

path, name = sys.argv[1], sys.argv[2]
label = "page fault reading " + name
objs = [json.loads(l) for l in open(path) if l.strip()]
cp = [o for o in objs if o.get("type") == "critical_path"][0]
wall = cp["wall_ns"]
for p in cp["parts"]:
    print("  %5.1f%%  %s" % (100 * p["ns"] / wall, p["what"]))
fault = sum(p["ns"] for p in cp["parts"] if p["what"] == label)
links = [l for o in objs if o.get("type") == "chain" for l in o.get("links", [])
         if l.get("kind") == "block_io" and l.get("dev") == name]
bad = []
if fault < 0.5 * wall:
    bad.append("%r is %.1f%% of the critical path, want >= 50%%" % (label, 100 * fault / wall))
if not links or any(l.get("fault") != "file" for l in links):
    bad.append("block_io links on %s: %s, want each \"fault\":\"file\"" %
               (name, [l.get("fault") for l in links]))
for b in bad:
    print("FAIL: " + b)
sys.exit(1 if bad else 0)
PY
GT_OK=1
echo "PASS: gt_fault_file"
