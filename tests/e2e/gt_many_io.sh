#!/bin/bash
# End-to-end ground truth "many_io": run tests/programs/gt_many_io under `whyslow run` over a slow
# loop device and check the victim's chain (see tests/programs/gt_many_io.c for the scenario):
# the waker's many short reads outweigh its one 20 ms run, and the link counts them.
#   gt_many_io.sh WHYSLOW PROGRAM CHECK_CHAIN      (exit 0 pass, 1 fail, 77 skip)
. "$(dirname "$0")/gt_lib.sh" || exit 1
gt_main many_io 1000000 --min-read-ms 0 -- "$@"
