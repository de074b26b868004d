#!/bin/bash
# End-to-end ground truth "pshared": run tests/programs/gt_pshared under `whyslow run` over a slow
# loop device and check the victim's chain across two processes (see tests/programs/gt_pshared.c).
#   gt_pshared.sh WHYSLOW PROGRAM CHECK_CHAIN      (exit 0 pass, 1 fail, 77 skip)
. "$(dirname "$0")/gt_lib.sh" || exit 1
gt_main pshared 3 -- "$@"
