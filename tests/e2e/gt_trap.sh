#!/bin/bash
# End-to-end ground truth "trap": run tests/programs/gt_trap under `whyslow run` over a slow
# loop device and check the victim's chain (see tests/programs/gt_trap.c for the scenario).
#   gt_trap.sh WHYSLOW PROGRAM CHECK_CHAIN      (exit 0 pass, 1 fail, 77 skip)
. "$(dirname "$0")/gt_lib.sh" || exit 1
gt_main trap 4 --sleep-ms 320 -- "$@"
