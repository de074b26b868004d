#!/bin/bash
# End-to-end ground truth "mutex_disk": run tests/programs/gt_mutex_disk under `whyslow run` over a slow
# loop device and check the victim's chain (see tests/programs/gt_mutex_disk.c for the scenario).
#   gt_mutex_disk.sh WHYSLOW PROGRAM CHECK_CHAIN      (exit 0 pass, 1 fail, 77 skip)
. "$(dirname "$0")/gt_lib.sh" || exit 1
# and the stacks of both waits, unwound without frame pointers (tests/e2e/check_stacks.py)
GT_CHECK_STACKS=${GT_CHECK_STACKS:-1} gt_main mutex_disk 3 -- "$@"
