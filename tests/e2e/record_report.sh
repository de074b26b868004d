#!/bin/bash
# record_report.sh — `whyslow record` + `whyslow report` round trip on the ground truth mutex_disk.
#
#   record_report.sh WHYSLOW PROGRAM CHECK_CHAIN CHECK_PERFETTO     (exit 0 pass, 1 fail, 77 skip)
#
# One recording of tests/programs/gt_mutex_disk over a slow loop device (slowdisk.sh). `record
# --live` also writes the chains the live analysis found while recording, so both sides describe
# the SAME execution:
#   1. report --format json (run as an unprivileged user when one exists) gives exactly the live
#      chain lines, and the same summary apart from "events_late" (a replay is already in order);
#   2. check_chain.py finds the right chain (futex link, then block_io with the recorded sector);
#   3. report --format perfetto passes check_perfetto.py with the chains' hops as flows;
#   4. a recording cut short is refused with an offset; text report works.
# It does not compare against a second, separate `run` (the program cannot run twice identically).
# Set RECORD_SAVE=DIR to keep the recording and its truth file (how tests/data/ was made).
. "$(dirname "$0")/gt_lib.sh" || exit 1

WHYSLOW=${1:-${WHYSLOW:-}}
GT_PROGRAM=${2:-${GT_PROGRAM:-}}
CHECK_CHAIN=${3:-${CHECK_CHAIN:-$GT_DIR/check_chain.py}}
CHECK_PERFETTO=${4:-${CHECK_PERFETTO:-$GT_DIR/check_perfetto.py}}
PYTHON=${PYTHON:-python3}

[ "$(id -u)" = 0 ] || gt_skip "record_report needs root (loop devices, blkio cgroups, BPF)"
[ -x "$WHYSLOW" ] || gt_fail "whyslow binary not given or not executable: '$WHYSLOW'"
[ -x "$GT_PROGRAM" ] || gt_fail "ground-truth program not executable: '$GT_PROGRAM'"
[ -d /sys/fs/cgroup/blkio ] || gt_skip "no cgroup-v1 blkio hierarchy at /sys/fs/cgroup/blkio"
command -v losetup >/dev/null || gt_skip "losetup not installed"

GT_WORK=$(mktemp -d "${TMPDIR:-/tmp}/whyslow-e2e-record.XXXXXX") || gt_fail "mktemp failed"
chmod 755 "$GT_WORK"
export SLOWDISK_STATE="$GT_WORK/slowdisk"
GT_OK=0
trap gt_cleanup EXIT
trap 'exit 1' INT TERM HUP

setup=$("$SLOWDISK" setup) || gt_fail "slowdisk.sh setup failed"
dev=$(sed -n 's/^DEV=//p' <<<"$setup")
cg=$("$SLOWDISK" cgroup "$dev" 3) || gt_fail "slowdisk.sh cgroup failed"
data="$GT_WORK/t.data" live="$GT_WORK/live.jsonl" truth="$GT_WORK/truth.json"

# a copy of the program, deleted before `report`: the recording must carry resolved stacks
mkdir "$GT_WORK/bin" && cp "$GT_PROGRAM" "$GT_WORK/bin/gt_mutex_disk" || gt_fail "cannot copy the program"
echo "+ whyslow record -o $data --live $live -- gt_mutex_disk --dev $dev"
timeout -k 5 100 "$WHYSLOW" record --as-root --format json --live "$live" -o "$data" -- \
	"$GT_WORK/bin/gt_mutex_disk" --dev "$dev" --cgroup "$cg" --truth "$truth" \
	>"$GT_WORK/record.out" 2>"$GT_WORK/record.err"
rc=$?
cat "$GT_WORK/record.err"
[ $rc -eq 0 ] || gt_fail "whyslow record exited $rc"
[ -s "$data" ] || gt_fail "no recording at $data"
ls "$GT_WORK"/t.data.tmp.* >/dev/null 2>&1 && gt_fail "a temporary file was left behind"
[ -s "$GT_WORK/record.out" ] && gt_fail "record printed chains on stdout"

# report needs no privilege: run it as nobody when setpriv can drop to it
as_user=()
if command -v setpriv >/dev/null && id nobody >/dev/null 2>&1; then
	as_user=(setpriv --reuid=nobody --regid="$(id -g nobody)" --clear-groups --inh-caps=-all)
	chmod 644 "$data"
fi
rm -r "$GT_WORK/bin"
rep="$GT_WORK/report.jsonl"
"${as_user[@]}" "$WHYSLOW" report --format json "$data" >"$rep" 2>"$GT_WORK/report.err" ||
	{ cat "$GT_WORK/report.err"; gt_fail "whyslow report exited $?"; }

echo "--- 1. live chains vs report chains (same recording) ---"
diff <(grep '"type":"chain"' "$live") <(grep '"type":"chain"' "$rep") ||
	gt_fail "report's chains differ from the live analysis of the same recording"
strip='s/"events_late":[0-9]*,//'
diff <(grep '"type":"summary"' "$live" | sed "$strip") <(grep '"type":"summary"' "$rep" | sed "$strip") ||
	gt_fail "report's summary differs from the live one"
echo "identical: $(grep -c '"type":"chain"' "$rep") chains and the summary"

echo "--- 2. check_chain on report's output ---"
"$PYTHON" "$CHECK_CHAIN" --truth "$truth" --json "$rep" --case mutex_disk ||
	gt_fail "check_chain.py found a mismatch in report's output"

echo "--- 2b. the stacks, resolved at record time (the program is gone now) ---"
"$PYTHON" "$GT_DIR/check_stacks.py" "$rep" "$truth" "$GT_PROGRAM" ||
	gt_fail "check_stacks.py found a problem in report's output"

echo "--- 3. perfetto ---"
mkdir -m 1777 "$GT_WORK/out"
"${as_user[@]}" "$WHYSLOW" report "$data" --format perfetto -o "$GT_WORK/out/trace.json" ||
	gt_fail "report --format perfetto failed"
"$PYTHON" "$CHECK_PERFETTO" "$GT_WORK/out/trace.json" --chains "$rep" || gt_fail "perfetto check failed"

echo "--- 4. truncated recording (as if killed), text report ---"
# issue 11 #7: what is there is read, and the cut is named with its offset
head -c $(($(stat -c %s "$data") - 20)) "$data" >"$GT_WORK/cut.data"
"$WHYSLOW" report "$GT_WORK/cut.data" >/dev/null 2>"$GT_WORK/cut.err" ||
	gt_fail "a truncated recording was refused: $(cat "$GT_WORK/cut.err")"
grep -q 'recording ends early at offset [0-9]* (killed?)' "$GT_WORK/cut.err" ||
	gt_fail "no 'ends early at offset' in: $(cat "$GT_WORK/cut.err")"
cat "$GT_WORK/cut.err"
"$WHYSLOW" report "$data" --top 3 | head -20

echo "--- 5. a --min-block finer than the recording's resolution is refused ---"
# recorded at the default resolution, min_block 10ms / 64: 9ms needs what was not recorded
"$WHYSLOW" report "$data" --min-block 9ms >/dev/null 2>"$GT_WORK/fine.err" &&
	gt_fail "report --min-block 9ms of a recording at the default resolution 156us was accepted"
[ "$(wc -l <"$GT_WORK/fine.err")" = 1 ] &&
	grep -q 'was recorded at resolution 156us: use --min-block 10ms or more' "$GT_WORK/fine.err" ||
	gt_fail "not one line naming the resolution and the least --min-block: $(cat "$GT_WORK/fine.err")"
cat "$GT_WORK/fine.err"
"$WHYSLOW" report "$data" --min-block 20ms >/dev/null || gt_fail "report --min-block 20ms failed"
# resolution 0 (opt-in): every switch recorded, any --min-block
printf '[core]\nresolution = 0\n' >"$GT_WORK/full.ini"
"$WHYSLOW" -c "$GT_WORK/full.ini" record --as-root -o "$GT_WORK/full.data" -- true ||
	gt_fail "whyslow record at resolution 0 failed"
"$WHYSLOW" report "$GT_WORK/full.data" --min-block 9ms >/dev/null ||
	gt_fail "report --min-block 9ms of a recording at resolution 0 was refused"

if [ -n "${RECORD_SAVE:-}" ]; then
	mkdir -p "$RECORD_SAVE" && cp "$data" "$truth" "$RECORD_SAVE/" && echo "saved to $RECORD_SAVE"
fi
GT_OK=1
echo "PASS record_report"
