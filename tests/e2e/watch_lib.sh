#!/bin/bash
# watch_lib.sh — shared helpers of the `whyslow watch` tests (sourced by watch_*.sh).
# Exit 0 pass, 1 fail, 77 skip (not root, no bpftool); with CI=true a skip is a failure.

WATCH_FAILS=0

watch_skip() {
	if [ "${CI:-}" = true ]; then
		echo "FAIL (CI=true, not skipping): $*" >&2
		exit 1
	fi
	echo "SKIP: $*" >&2
	exit 77
}

watch_fail() {
	echo "FAIL: $*" >&2
	WATCH_FAILS=$((WATCH_FAILS + 1))
}

watch_die() {
	echo "FAIL: $*" >&2
	exit 1
}

# watch_setup NAME: root, bpftool, a work directory of our own (kept after a failure)
watch_bad() { # watch_bad WHAT ARGS...: `whyslow watch ARGS` refused in one line, exit status 1
	local what=$1 out rc
	shift
	out=$("$WHYSLOW" watch "$@" 2>&1)
	rc=$?
	[ $rc -eq 1 ] || watch_fail "$what: exit status $rc, not 1"
	[ "$(printf '%s\n' "$out" | wc -l)" -eq 1 ] || watch_fail "$what: not one line: $out"
	echo "  $what: $out"
}

watch_setup() {
	[ "$(id -u)" = 0 ] || watch_skip "needs root (BPF)"
	command -v bpftool >/dev/null || watch_skip "bpftool not installed"
	command -v python3 >/dev/null || watch_skip "python3 not installed"
	WORK=$(mktemp -d "/tmp/whyslow-$1.XXXXXX") || watch_die "mktemp"
	WATCH_PIDS=()
	trap watch_cleanup EXIT
	trap 'exit 1' INT TERM HUP
}

# only the processes this test started, by pid
watch_cleanup() {
	local rc=$?
	for p in "${WATCH_PIDS[@]}"; do kill -KILL "$p" 2>/dev/null; done
	[ -n "${WATCH_CLEANUP_MORE:-}" ] && "$WATCH_CLEANUP_MORE"
	if [ $rc -eq 0 ] && [ "${WATCH_KEEP:-}" != 1 ]; then
		rm -rf "$WORK"
	else
		echo "work directory kept: $WORK" >&2
	fi
}

# the BPF program ids process $1 holds (by fd, directly or through a link)
progs_of() {
	grep -hs '^prog_id:' /proc/"$1"/fdinfo/* 2>/dev/null | awk '{print $2}' | sort -u
}

# wait up to $2 seconds for file $1 to exist; 0 when it does
wait_for_file() {
	local i
	for i in $(seq $(($2 * 10))); do
		[ -e "$1" ] && return 0
		sleep 0.1
	done
	return 1
}

# the watch at pid $1 has said it runs (its pid file names it), within 30 s
wait_watching() {
	local i
	for i in $(seq 300); do
		[ "$(head -n 1 /run/whyslow/watch.pid 2>/dev/null)" = "$1" ] && return 0
		kill -0 "$1" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}

# after the watch at pid $1 (its program ids in $2) ended: none of them is still loaded, within
# 3 s (the kernel frees a program after an RCU grace period, not at the close of its last fd)
check_detached() {
	local left=() id
	for _ in $(seq 30); do
		left=()
		for id in $2; do
			bpftool prog show id "$id" >/dev/null 2>&1 && left+=("$id")
		done
		[ ${#left[@]} -eq 0 ] && break
		sleep 0.1
	done
	[ ${#left[@]} -eq 0 ] || watch_fail "BPF programs of the watch still loaded 3 s after it ended: ${left[*]}"
	[ -n "$2" ] || watch_fail "the watch held no BPF program while it ran (the check proves nothing)"
}

watch_end() {
	if [ "$WATCH_FAILS" -gt 0 ]; then
		echo "FAIL: $WATCH_FAILS check(s) failed"
		exit 1
	fi
	echo "PASS"
	exit 0
}
