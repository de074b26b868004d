#!/bin/bash
# Issue 19.5: one ground-truth workload (gt_chain3: a futex held by a thread blocked on a slow
# disk read, behind another futex) run at resolution 0 (every switch recorded) and at the
# default (min_block/64, short periods summarised in the kernel) gives the same victim chain.
#   resolution_same.sh WHYSLOW PROGRAM CHECK_CHAIN      (exit 0 pass, 1 fail, 77 skip)
DIR=$(cd "$(dirname "$0")" && pwd)
W=$(mktemp -d "${TMPDIR:-/tmp}/whyslow-res.XXXXXX") || exit 1
trap 'rm -rf "$W"' EXIT
mkdir "$W/full" "$W/summ"
printf '[core]\nresolution = 0\n' >"$W/full.ini"
GT_CONFIG="$W/full.ini" GT_SAVE="$W/full" "$DIR/gt_chain3.sh" "$@" >"$W/full.log" 2>&1
rc=$?
[ $rc = 0 ] || { cat "$W/full.log"; echo "FAIL: the run at resolution 0 failed (exit $rc)"; exit $rc; }
printf '[core]\nresolution = 156250ns\n' >"$W/summ.ini"
GT_CONFIG="$W/summ.ini" GT_SAVE="$W/summ" "$DIR/gt_chain3.sh" "$@" >"$W/summ.log" 2>&1
rc=$?
[ $rc = 0 ] || { cat "$W/summ.log"; echo "FAIL: the run at the default resolution failed (exit $rc)"; exit $rc; }
# min_block (10ms) / 64
${PYTHON:-python3} "$DIR/compare_resolution.py" chain3 156250 "$W/full" "$W/summ"
