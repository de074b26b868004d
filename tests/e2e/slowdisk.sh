#!/bin/bash
# slowdisk.sh — a block device whose reads take a known, long time (for ground-truth tests).
#
#   slowdisk.sh setup              create a 64 MiB file and a direct-I/O loop device over it;
#                                  prints DEV=/dev/loopN and MAJMIN=7:N
#   slowdisk.sh cgroup DEV IOPS    create a FRESH cgroup-v1 blkio group whyslow-test-<random>,
#                                  throttle reads of DEV's I/O to IOPS per second, print its dir
#   slowdisk.sh teardown           remove the whyslow-test-* groups that `cgroup` created with this
#                                  state (moving tasks out first) and detach the loop devices (and
#                                  files) that setup created; another run's groups are left alone
#
# How the delay is made (see docs in PLATFORM.md, "A disk read of known, long latency"): the loop
# device runs in direct-I/O mode, so its request is issued in the reader's context and completes
# only when the I/O it sends to the backing disk completes.  That backing I/O is charged to the
# reader's blkio group, and the group's read_iops throttle on the *backing* disk holds it for
# ~1000/IOPS ms.  A throttle on the loop device itself (7:N) also delays the read, but holds the bio
# *before* the loop device's request exists: the request is then issued ~1000/IOPS ms later by a
# kworker and takes ~0 ms, so the block layer shows nothing slow.  SLOWDISK_THROTTLE picks the
# device the rule is written for: "backing" (default), "loop", or "both".
#
# One group per slow read: a group that already let a read through may let the next one through
# at once.  The reading thread must be moved into the group (its tid written to DIR/tasks) before
# the timed read; the move itself sleeps 10-20 ms.
#
# State (loop devices and backing files created) lives in $SLOWDISK_STATE
# (default ${XDG_RUNTIME_DIR:-/tmp}/whyslow-slowdisk).  Every command is safe to run twice.
set -u

BLKIO=${SLOWDISK_BLKIO:-/sys/fs/cgroup/blkio}
STATE=${SLOWDISK_STATE:-${XDG_RUNTIME_DIR:-/tmp}/whyslow-slowdisk}
THROTTLE=${SLOWDISK_THROTTLE:-backing}
SIZE_MB=64

die() { echo "slowdisk.sh: $*" >&2; exit 1; }

# MAJ:MIN of a block device node.
majmin_of_node() {
	local n
	n=$(stat -L -c '%t:%T' "$1" 2>/dev/null) || return 1
	printf '%d:%d\n' "0x${n%%:*}" "0x${n##*:}"
}

# MAJ:MIN of the whole disk that holds the file system FILE lives on (throttle rules must name a
# whole disk, not a partition).
disk_majmin_of_file() {
	local mm
	mm=$(stat -c '%Hd:%Ld' "$1" 2>/dev/null) || return 1
	if [ -e "/sys/dev/block/$mm/partition" ]; then
		mm=$(cat "/sys/dev/block/$mm/../dev") || return 1
	fi
	[ -e "/sys/dev/block/$mm" ] || return 1
	echo "$mm"
}

cmd_setup() {
	[ "$(id -u)" = 0 ] || die "must run as root"
	[ -d "$BLKIO" ] || die "no cgroup-v1 blkio hierarchy at $BLKIO"
	[ -e /dev/loop-control ] || modprobe loop 2>/dev/null || true
	[ -e /dev/loop-control ] || die "no loop device support (/dev/loop-control missing)"
	mkdir -p "$STATE" || die "cannot create $STATE"
	local img dev
	img=$(mktemp --suffix=.img "$STATE/disk.XXXXXX") || die "mktemp failed"
	# Write real blocks (not a sparse file) so direct I/O really reaches the backing disk.
	if ! dd if=/dev/zero of="$img" bs=1M count=$SIZE_MB conv=fsync status=none; then
		rm -f "$img"; die "cannot write $img"
	fi
	if ! dev=$(losetup --direct-io=on -f --show "$img"); then
		rm -f "$img"; die "losetup failed"
	fi
	echo "$dev $img" >>"$STATE/loops"
	local name=${dev#/dev/}
	if [ "$(cat "/sys/block/$name/loop/dio" 2>/dev/null)" != 1 ]; then
		cmd_teardown >/dev/null 2>&1
		die "$dev is not in direct-I/O mode (backing file system refuses O_DIRECT?)"
	fi
	echo "DEV=$dev"
	echo "MAJMIN=$(majmin_of_node "$dev")"
}

cmd_cgroup() {
	[ $# -eq 2 ] || die "usage: slowdisk.sh cgroup DEV IOPS"
	local dev=$1 iops=$2 name backing targets=() dir t
	[ -b "$dev" ] || die "$dev is not a block device"
	case $iops in ''|*[!0-9]*|0) die "IOPS must be a positive integer";; esac
	[ -d "$BLKIO" ] || die "no cgroup-v1 blkio hierarchy at $BLKIO"
	name=$(basename "$(readlink -f "$dev")")
	backing=$(cat "/sys/block/$name/loop/backing_file" 2>/dev/null)
	case $THROTTLE in
	loop) targets=("$(majmin_of_node "$dev")") ;;
	backing|both)
		[ -n "$backing" ] || die "$dev is not a loop device; use SLOWDISK_THROTTLE=loop"
		t=$(disk_majmin_of_file "$backing") || die "cannot find the disk under $backing"
		targets=("$t")
		[ "$THROTTLE" = both ] && targets+=("$(majmin_of_node "$dev")")
		;;
	*) die "SLOWDISK_THROTTLE must be backing, loop or both" ;;
	esac
	for _ in 1 2 3 4 5 6 7 8; do
		dir="$BLKIO/whyslow-test-$(od -An -N4 -tx4 /dev/urandom | tr -d ' ')"
		mkdir "$dir" 2>/dev/null && break
		dir=
	done
	[ -n "$dir" ] || die "cannot create a cgroup under $BLKIO"
	# teardown removes only the groups this state dir made: other runs may be using theirs
	mkdir -p "$STATE" && echo "$dir" >>"$STATE/groups" || { rmdir "$dir"; die "cannot write $STATE/groups"; }
	for t in "${targets[@]}"; do
		if ! echo "$t $iops" >"$dir/blkio.throttle.read_iops_device"; then
			rmdir "$dir"; die "cannot set read_iops_device '$t $iops' in $dir"
		fi
	done
	echo "$dir"
}

cmd_teardown() {
	local rc=0 d tid dev img
	if [ -f "$STATE/groups" ]; then
		while read -r d; do
			case $d in "$BLKIO"/whyslow-test-*) ;; *) continue ;; esac
			[ -d "$d" ] || continue
			# Move any task still in the group back to the root group, then remove it.
			while read -r tid; do
				echo "$tid" >"$BLKIO/tasks" 2>/dev/null || true
			done <"$d/tasks"
			if ! rmdir "$d" 2>/dev/null; then
				sleep 0.2
				rmdir "$d" 2>/dev/null || { echo "slowdisk.sh: cannot remove $d" >&2; rc=1; }
			fi
		done <"$STATE/groups"
		rm -f "$STATE/groups"
	fi
	if [ -f "$STATE/loops" ]; then
		while read -r dev img; do
			[ -n "$dev" ] || continue
			# Detach only if the device still serves the file we created.
			if [ "$(cat "/sys/block/${dev#/dev/}/loop/backing_file" 2>/dev/null)" = "$img" ]; then
				losetup -d "$dev" 2>/dev/null || { echo "slowdisk.sh: cannot detach $dev" >&2; rc=1; }
			fi
			rm -f "$img"
		done <"$STATE/loops"
		rm -f "$STATE/loops"
	fi
	rmdir "$STATE" 2>/dev/null || true
	return $rc
}

case ${1:-} in
setup) shift; cmd_setup "$@" ;;
cgroup) shift; cmd_cgroup "$@" ;;
teardown) shift; cmd_teardown "$@" ;;
*) echo "usage: slowdisk.sh setup | cgroup DEV IOPS | teardown" >&2; exit 2 ;;
esac
