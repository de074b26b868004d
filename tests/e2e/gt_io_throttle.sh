#!/bin/bash
# gt_io_throttle.sh — ground truth for I/O throttling (issue 32, item 2). tests/programs/gt_mutex_disk
# (a holder does one slow O_DIRECT read of a loop device from inside a fresh blkio group while a
# victim waits for its mutex) runs twice under `whyslow run`, over the slow disk of slowdisk.sh:
#
#   SLOWDISK_THROTTLE=loop     the group's read_iops limit is on the loop device itself, so
#                              blk-throttle holds the bio before the loop request exists (a kworker
#                              issues it ~1000/IOPS ms later, and it takes ~0 ms in the device):
#                              the holder's wait must be "held back by the I/O limit of
#                              /whyslow-test-... (N reads/s on 7:M)" for most of it, and the
#                              chains' root that limit, not "block I/O on loopN";
#   SLOWDISK_THROTTLE=backing  the limit is on the backing disk, so the loop request itself is
#                              slow: its wait must read as today, device time on loopN, no throttle;
#   record, loop mode          `report` of the recording, the group removed, says what the live run said.
#
#   gt_io_throttle.sh WHYSLOW GT_MUTEX_DISK     (exit 0 pass, 1 fail, 77 skip; CI=true: no skip)
. "$(dirname "$0")/gt_lib.sh" || exit 1
WHYSLOW=${1:-${WHYSLOW:-}}
GT_PROGRAM=${2:-${GT_PROGRAM:-}}
PYTHON=${PYTHON:-python3}
IOPS=2 # each slow read waits ~500 ms

gt_own_setup io_throttle
[ -x "$WHYSLOW" ] || gt_fail "whyslow binary not given or not executable: '$WHYSLOW'"
[ -x "$GT_PROGRAM" ] || gt_fail "gt_mutex_disk not given or not executable: '$GT_PROGRAM'"
setup=$("$SLOWDISK" setup) || gt_fail "slowdisk.sh setup failed"
dev=$(sed -n 's/^DEV=//p' <<<"$setup")
majmin=$(sed -n 's/^MAJMIN=//p' <<<"$setup")
[ -b "$dev" ] || gt_fail "slowdisk.sh setup gave no device: $setup"

# run_mode MODE: one traced run with the limit written for MODE's device; its JSON in $GT_WORK/MODE.jsonl
run_mode() {
	local mode=$1 cg rc attempt out="$GT_WORK/$1.jsonl"
	cg=$(SLOWDISK_THROTTLE=$mode "$SLOWDISK" cgroup "$dev" "$IOPS") || gt_fail "slowdisk.sh cgroup ($mode) failed"
	echo "$cg" >"$GT_WORK/$mode.cgroup"
	echo "gt_io_throttle: $mode: device $dev ($majmin), blkio group $cg ($IOPS read IOPS)"
	for attempt in 1 2 3; do
		timeout -k 5 100 "$WHYSLOW" run --as-root --format json -o "$out" \
			--perfetto "$GT_WORK/$mode.trace.json" -- \
			"$GT_PROGRAM" --dev "$dev" --cgroup "$cg" --truth "$GT_WORK/$mode.truth.json" \
			>"$GT_WORK/$mode.stdout" 2>"$GT_WORK/$mode.stderr"
		rc=$?
		# a disturbed experiment (the program's own premise failed) is run again, not judged
		[ $rc -ne 0 ] && grep -Eq '^gt: gt_.*: FAIL: .*(too much slack|the run proves nothing)' \
			"$GT_WORK/$mode.stderr" || break
		# a group that let a read through may let the next one through at once: a fresh one
		cg=$(SLOWDISK_THROTTLE=$mode "$SLOWDISK" cgroup "$dev" "$IOPS") || gt_fail "slowdisk.sh cgroup failed"
		echo "$cg" >"$GT_WORK/$mode.cgroup"
	done
	tail -n 5 "$GT_WORK/$mode.stderr"
	[ $rc -eq 0 ] || gt_fail "whyslow run ($mode) exited $rc"
	[ -s "$out" ] || gt_fail "whyslow wrote no output ($mode)"
}

run_mode loop
run_mode backing
# and recorded: `report` names the group and its limit from the recording, its group gone
cg=$(SLOWDISK_THROTTLE=loop "$SLOWDISK" cgroup "$dev" "$IOPS") || gt_fail "slowdisk.sh cgroup (record) failed"
echo "gt_io_throttle: record: blkio group $cg"
timeout -k 5 100 "$WHYSLOW" record --as-root -o "$GT_WORK/rec.data" -- "$GT_PROGRAM" --dev "$dev" \
	--cgroup "$cg" >"$GT_WORK/rec.stdout" 2>"$GT_WORK/rec.stderr" || gt_fail "whyslow record exited $?"
"$SLOWDISK" teardown >/dev/null || gt_fail "slowdisk.sh teardown failed"
[ -d "$cg" ] && gt_fail "$cg still exists after teardown"
"$WHYSLOW" report "$GT_WORK/rec.data" --format json -o "$GT_WORK/rec.jsonl" 2>"$GT_WORK/rep.stderr" ||
	gt_fail "whyslow report exited $?"
echo "--- check_io_throttle ---"
"$PYTHON" "$GT_DIR/check_io_throttle.py" --loop "$GT_WORK/loop.jsonl" \
	--loop-cgroup "/$(basename "$(cat "$GT_WORK/loop.cgroup")")" \
	--backing "$GT_WORK/backing.jsonl" --majmin "$majmin" --dev "$(basename "$dev")" \
	--iops "$IOPS" || gt_fail "check_io_throttle.py found a mismatch (see above)"
echo "--- check_io_throttle, the recording's report ---"
"$PYTHON" "$GT_DIR/check_io_throttle.py" --loop "$GT_WORK/rec.jsonl" --loop-cgroup "/$(basename "$cg")" \
	--backing "$GT_WORK/backing.jsonl" --majmin "$majmin" --dev "$(basename "$dev")" \
	--iops "$IOPS" || gt_fail "check_io_throttle.py found a mismatch in the recording's report (see above)"
for mode in loop backing; do
	echo "--- $mode: check_roots, check_critpath, check_perfetto ---"
	"$PYTHON" "$GT_DIR/check_roots.py" "$GT_WORK/$mode.jsonl" || gt_fail "check_roots.py ($mode)"
	"$PYTHON" "$GT_DIR/check_critpath.py" "$GT_WORK/$mode.jsonl" || gt_fail "check_critpath.py ($mode)"
	"$PYTHON" "$GT_DIR/check_perfetto.py" "$GT_WORK/$mode.trace.json" --chains "$GT_WORK/$mode.jsonl" ||
		gt_fail "check_perfetto.py ($mode)"
done
GT_OK=1
echo "PASS gt_io_throttle"
