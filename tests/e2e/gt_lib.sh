#!/bin/bash
# gt_lib.sh — shared body of the ground-truth end-to-end tests (sourced by gt_<case>.sh).
#
#   gt_<case>.sh WHYSLOW PROGRAM CHECK_CHAIN
#
# WHYSLOW is the whyslow binary, PROGRAM the ground-truth program (tests/programs/gt_<case>),
# CHECK_CHAIN tests/e2e/check_chain.py.  Each may instead come from the environment variable of
# the same name (WHYSLOW, GT_PROGRAM, CHECK_CHAIN); PYTHON picks the interpreter (python3).
#
# Exit 0 pass, 1 fail, 77 skip (not root / no blkio cgroup-v1 / no loop devices).  With CI=true
# nothing is skipped: a missing prerequisite is a failure.  Set GT_KEEP=1 to keep the work
# directory (truth, whyslow output, logs) after a pass; it is always kept after a failure.

GT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SLOWDISK="$GT_DIR/slowdisk.sh"

gt_skip() {
	if [ "${CI:-}" = true ]; then
		echo "FAIL (CI=true, not skipping): $*" >&2
		exit 1
	fi
	echo "SKIP: $*" >&2
	exit 77
}

gt_fail() {
	echo "FAIL: $*" >&2
	exit 1
}

# gt_main CASE IOPS [PROGRAM-ARGS...] -- "$@"
gt_main() {
	local case=$1 iops=$2
	shift 2
	local extra=()
	while [ $# -gt 0 ] && [ "$1" != -- ]; do extra+=("$1"); shift; done
	[ "${1:-}" = -- ] && shift

	WHYSLOW=${1:-${WHYSLOW:-}}
	GT_PROGRAM=${2:-${GT_PROGRAM:-}}
	CHECK_CHAIN=${3:-${CHECK_CHAIN:-$GT_DIR/check_chain.py}}
	PYTHON=${PYTHON:-python3}

	gt_prerequisites "$case"
	[ -n "$WHYSLOW" ] && [ -x "$WHYSLOW" ] || gt_fail "whyslow binary not given or not executable: '$WHYSLOW'"
	[ -n "$GT_PROGRAM" ] && [ -x "$GT_PROGRAM" ] || gt_fail "ground-truth program not given or not executable: '$GT_PROGRAM'"
	[ -r "$CHECK_CHAIN" ] || gt_fail "checker not found: '$CHECK_CHAIN'"
	gt_workdir "$case"
	trap gt_cleanup EXIT
	trap 'exit 1' INT TERM HUP

	local setup dev cg out="$GT_WORK/whyslow.jsonl" truth="$GT_WORK/truth.json" rc
	setup=$("$SLOWDISK" setup) || gt_fail "slowdisk.sh setup failed"
	dev=$(sed -n 's/^DEV=//p' <<<"$setup")
	[ -b "$dev" ] || gt_fail "slowdisk.sh setup gave no device: $setup"
	cg=$("$SLOWDISK" cgroup "$dev" "$iops") || gt_fail "slowdisk.sh cgroup failed"
	echo "gt_$case: device $dev ($(sed -n 's/^MAJMIN=//p' <<<"$setup")), blkio group $cg ($iops read IOPS), work dir $GT_WORK"

	# An ini file for this run (GT_CONFIG), none by default: the ground truths check what
	# `whyslow run --perfetto` reports as shipped, at its default resolution (min_block 10ms / 64,
	# the same for every command since sched 1.6).
	local conf=()
	if [ -n "${GT_CONFIG:-}" ]; then conf=(-c "$GT_CONFIG"); fi
	local cmd=("$WHYSLOW" "${conf[@]}" run --as-root --format json -o "$out" --perfetto "$GT_WORK/trace.json" --
		   "$GT_PROGRAM" --dev "$dev" --cgroup "$cg" --truth "$truth" "${extra[@]}")
	echo "+ ${cmd[*]}"
	# A busy machine can disturb the scenario until the ground-truth program itself declares the
	# run invalid (its premise did not hold: "too much slack", "the run proves nothing"). That is
	# a disturbed experiment, not a verdict on whyslow: run it again, at most three times in all
	# (as tools/arm64/guest-init does). Any other failure counts at once.
	#
	# So is a run that says the kernel never reported some thread's return to the CPU (its
	# summary's switch_ins_unseen: this VM's agent threads leave their CPU with no sched_switch,
	# README): whyslow marks that thread's timeline not observed there, and a chain through it
	# proves nothing either way. Such a run whose chain does not match is run again too; the
	# third is checked all the same.
	local attempt
	for attempt in 1 2 3; do
		timeout -k 5 100 "${cmd[@]}" >"$GT_WORK/whyslow.stdout" 2>"$GT_WORK/whyslow.stderr"
		rc=$?
		if [ $rc -ne 0 ] && grep -Eq '^gt: gt_.*: FAIL: .*(too much slack|the run proves nothing)' \
			"$GT_WORK/whyslow.stderr"; then
			echo "gt_$case: attempt $attempt invalid, the ground truth says: $(grep -E '^gt: gt_' "$GT_WORK/whyslow.stderr" | tail -n 1)"
			continue
		fi
		if [ $rc -eq 0 ] && [ $attempt -lt 3 ] && [ -s "$truth" ] && [ -s "$out" ] &&
			grep -Eq '"switch_ins_unseen":[1-9]' "$out" &&
			! "$PYTHON" "$CHECK_CHAIN" --truth "$truth" --json "$out" --case "$case" >"$GT_WORK/check_unseen.txt" 2>&1; then
			echo "gt_$case: attempt $attempt: the kernel did not report some returns to the CPU (switch_ins_unseen) and the chain does not match; running again"
			tail -n 5 "$GT_WORK/check_unseen.txt"
			continue
		fi
		break
	done
	echo "--- whyslow stderr (exit $rc, last 40 lines) ---"
	tail -n 40 "$GT_WORK/whyslow.stderr"
	if [ -s "$GT_WORK/whyslow.stdout" ]; then
		echo "--- whyslow stdout (last 20 lines) ---"
		tail -n 20 "$GT_WORK/whyslow.stdout"
	fi
	[ $rc -eq 124 ] && gt_fail "whyslow run timed out"
	[ $rc -eq 0 ] || gt_fail "whyslow run exited $rc"
	[ -s "$truth" ] || gt_fail "the ground-truth program wrote no truth file (see stderr above)"
	[ -s "$out" ] || gt_fail "whyslow wrote no output to $out"

	echo "--- check_chain ---"
	"$PYTHON" "$CHECK_CHAIN" --truth "$truth" --json "$out" --case "$case" || gt_fail "check_chain.py found a mismatch (see above)"
	echo "--- check_perfetto (the same run's Perfetto export) ---"
	"$PYTHON" "$GT_DIR/check_perfetto.py" "$GT_WORK/trace.json" --chains "$out" || gt_fail "check_perfetto.py found a problem in the Perfetto export (see above)"
	echo "--- check_critpath (every moment of the command's main thread accounted for) ---"
	"$PYTHON" "$GT_DIR/check_critpath.py" "$out" || gt_fail "check_critpath.py found a problem (see above)"
	# GT_SAVE=DIR: keep the output and the truth for a caller that compares runs
	[ -n "${GT_SAVE:-}" ] && cp "$out" "$truth" "$GT_SAVE/"
	if [ "${GT_CHECK_STACKS:-0}" = 1 ]; then
		echo "--- check_stacks (where in the code: the links' stacks) ---"
		"$PYTHON" "$GT_DIR/check_stacks.py" "$out" "$truth" "$GT_PROGRAM" || gt_fail "check_stacks.py found a problem (see above)"
	fi
	GT_OK=1
	echo "PASS gt_$case"
}

# gt_prerequisites CASE: root, cgroup-v1 blkio and loop devices, or skip (a failure under CI=true)
gt_prerequisites() {
	[ "$(id -u)" = 0 ] || gt_skip "gt_$1 needs root (loop devices, blkio cgroups, BPF)"
	[ -d /sys/fs/cgroup/blkio ] || gt_skip "no cgroup-v1 blkio hierarchy at /sys/fs/cgroup/blkio"
	command -v losetup >/dev/null || gt_skip "losetup not installed"
	[ -e /dev/loop-control ] || modprobe loop 2>/dev/null || true
	[ -e /dev/loop-control ] || gt_skip "no loop device support"
}

# gt_workdir CASE: GT_WORK, and the slow disk's state in it (our own loop devices only)
gt_workdir() {
	GT_WORK=$(mktemp -d "${TMPDIR:-/tmp}/whyslow-e2e-$1.XXXXXX") || gt_fail "mktemp failed"
	export SLOWDISK_STATE="$GT_WORK/slowdisk"
	GT_OK=0
}

# gt_own_setup CASE: for a script that drives its own runs (gt_stuck.sh, gt_sig_holder.sh): the
# prerequisites, GT_WORK, our own loop devices, and a cleanup that also kills every pid in PIDS.
gt_own_setup() {
	gt_prerequisites "$1"
	gt_workdir "$1"
	PIDS=()
	trap gt_own_cleanup EXIT
	trap 'exit 1' INT TERM HUP
}

gt_own_cleanup() {
	local rc=$?
	for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null; done
	(exit $rc)
	gt_cleanup
}

gt_cleanup() {
	local rc=$?
	"$SLOWDISK" teardown >/dev/null || echo "warning: slowdisk.sh teardown reported a problem" >&2
	if [ "$GT_OK" = 1 ] && [ "${GT_KEEP:-0}" != 1 ]; then
		rm -rf "$GT_WORK"
	else
		echo "work directory kept: $GT_WORK" >&2
	fi
	exit $rc
}
