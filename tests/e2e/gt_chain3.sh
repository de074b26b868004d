#!/bin/bash
# End-to-end ground truth "chain3": run tests/programs/gt_chain3 under `whyslow run` over a slow
# loop device and check the victim's chain (see tests/programs/gt_chain3.c for the scenario).
#   gt_chain3.sh WHYSLOW PROGRAM CHECK_CHAIN      (exit 0 pass, 1 fail, 77 skip)
. "$(dirname "$0")/gt_lib.sh" || exit 1
gt_main chain3 3 -- "$@"
