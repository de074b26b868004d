#!/bin/bash
# demo.sh — the bundled demo: gt_mutex_disk under `whyslow run` over a throttled loop device.
#   demo.sh WHYSLOW PLUGIN_DIR PROGRAM [whyslow options...]
# tools/demo runs it with the build tree's paths; tests/e2e/demo_intact.sh runs exactly the same
# command and checks that the machine is intact afterwards (/dev/null once got replaced).
set -eu
whyslow=$1 plugin_dir=$2 program=$3
shift 3
here=$(cd "$(dirname "$0")" && pwd)
state_owned=
if [ -z "${SLOWDISK_STATE:-}" ]; then
	SLOWDISK_STATE=$(mktemp -d /tmp/whyslow-demo.XXXXXX)
	state_owned=1
fi
export SLOWDISK_STATE
trap '"$here/slowdisk.sh" teardown >/dev/null 2>&1; [ -z "$state_owned" ] || rm -rf "$SLOWDISK_STATE"' EXIT
eval "$("$here/slowdisk.sh" setup)"
cgroup=$("$here/slowdisk.sh" cgroup "$DEV" 3)
echo "== sudo whyslow run -- gt_mutex_disk   (the holder reads $DEV at 3 IOPS while the victim waits)"
echo
# --as-root: the demo program joins the cgroup and reads the loop device itself. No --truth: the
# demo keeps no truth file (it once passed /dev/null, which the program renamed a file over).
WHYSLOW_PLUGIN_DIR=$plugin_dir "$whyslow" run --as-root "$@" -- "$program" --dev "$DEV" --cgroup "$cgroup"
