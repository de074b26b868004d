#!/bin/bash
# gt_fault_file.sh — ground truth for a page-cache miss read under a page fault (issue 32, item 3).
# A 16 MiB file on an ext4 file system the test makes on a slow loop device (slowdisk.sh: about
# 340 ms a read, from its blkio group's limit on the backing disk); python3 maps it with no
# readahead (MADV_RANDOM), drops the file's pages from the page cache (posix_fadvise DONTNEED,
# that file alone) and touches three pages through the mapping: each touch is a page fault that
# reads the disk, in no syscall. The report must name them so: a chain's block_io link has
# "fault":"file" on that loop device, "file" the file's name and "inode" its inode, and at least
# half of the run's critical path has the root "page fault reading loopN". Before, the same wait
# read as "block I/O on loopN", no fault or file named. The mount and the loop device are undone
# on every exit.
#   gt_fault_file.sh WHYSLOW   (exit 77 = skipped when not root or without loop devices, blkio
#                               cgroups or mkfs.ext4; a failure under CI=true)
. "$(dirname "$0")/gt_lib.sh" || exit 1
WHYSLOW=${1:-}
[ -x "$WHYSLOW" ] || gt_fail "whyslow binary not given or not executable: '$WHYSLOW'"
command -v mkfs.ext4 >/dev/null || gt_skip "mkfs.ext4 not installed"
gt_own_setup fault_file
mnt=
fault_cleanup() {
	local rc=$?
	if [ -n "$mnt" ] && mountpoint -q "$mnt"; then
		umount "$mnt" || echo "gt_fault_file.sh: could not unmount $mnt" >&2
	fi
	(exit $rc)
	gt_own_cleanup
}
trap fault_cleanup EXIT
setup=$("$SLOWDISK" setup) || gt_fail "slowdisk.sh setup failed"
dev=$(sed -n 's/^DEV=//p' <<<"$setup")
[ -b "$dev" ] || gt_fail "slowdisk.sh setup gave no device: $setup"
mkfs.ext4 -q "$dev" || gt_fail "mkfs.ext4 $dev failed"
mnt=$GT_WORK/mnt
mkdir "$mnt" && mount -o noatime "$dev" "$mnt" || gt_fail "cannot mount $dev on $mnt"
dd if=/dev/urandom of="$mnt/mapped.bin" bs=1M count=16 conv=fsync status=none || gt_fail "cannot write $mnt/mapped.bin"
ino=$(stat -c %i "$mnt/mapped.bin")
cg=$("$SLOWDISK" cgroup "$dev" 3) || gt_fail "slowdisk.sh cgroup failed"
echo "gt_fault_file: $mnt/mapped.bin (inode $ino) on $dev, blkio group $cg, work dir $GT_WORK"

cat >"$GT_WORK/fault.py" <<'PY'
import mmap, os, sys, time
path, cg = sys.argv[1], sys.argv[2]
fd = os.open(path, os.O_RDONLY)
m = mmap.mmap(fd, 16 << 20, mmap.MAP_SHARED, mmap.PROT_READ)
m.madvise(mmap.MADV_RANDOM)  # one page a fault: no readahead reads the next touches' pages
os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
with open(cg + "/tasks", "w") as f:  # the move sleeps: before the timed touches
    f.write(str(os.getpid()))
slow = 0
for i in range(3):
    t = time.monotonic()
    m[(2 + 5 * i) << 20]  # a page fault reading the disk
    ms = (time.monotonic() - t) * 1000
    print("touch %d: %.0f ms" % (i, ms), file=sys.stderr)
    slow += ms >= 150
print("slow touches: %d" % slow, file=sys.stderr)
PY
out=$GT_WORK/out.jsonl
timeout -k 5 100 "$WHYSLOW" run --as-root --format json -o "$out" --perfetto "$GT_WORK/trace.json" -- \
	/usr/bin/python3 "$GT_WORK/fault.py" "$mnt/mapped.bin" "$cg" 2>"$GT_WORK/err"
rc=$?
cat "$GT_WORK/err" | tail -n 20
[ $rc -eq 0 ] || gt_fail "whyslow run exited $rc"
grep -q '^slow touches: 3$' "$GT_WORK/err" || gt_fail "not every touch read the slow disk: the run proves nothing"
python3 "$GT_DIR/check_roots.py" "$out" || gt_fail "check_roots.py"
python3 "$GT_DIR/check_perfetto.py" "$GT_WORK/trace.json" --chains "$out" || gt_fail "check_perfetto.py"
python3 - "$out" "${dev#/dev/}" "$ino" <<'PY' || gt_fail "the page faults are not named (see above)"
import json, sys

path, name, ino = sys.argv[1], sys.argv[2], int(sys.argv[3])
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
# the touches' reads; the file system's own reads (its metadata at mount) are none of them
faults = [l for l in links if l.get("fault") == "file"]
if len(faults) < 3:
    bad.append("block_io links on %s: %s, want the 3 touches' \"fault\":\"file\"" %
               (name, [l.get("fault") for l in links]))
wrong = [(l.get("file"), l.get("inode")) for l in faults
         if l.get("file") != "mapped.bin" or l.get("inode") != ino]
if wrong:
    bad.append("faults name the files %s, want mapped.bin, inode %d" % (wrong, ino))
for b in bad:
    print("FAIL: " + b)
sys.exit(1 if bad else 0)
PY
GT_OK=1
echo "PASS: gt_fault_file"
