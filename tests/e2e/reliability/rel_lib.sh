#!/bin/bash
# rel_lib.sh — shared helpers of the reliability/security end-to-end tests (sourced by rel_*.sh).
#
#   rel_<case>.sh WHYSLOW [PROGRAMS_DIR [TEST_PLUGINS_DIR]]
#
# WHYSLOW is the whyslow binary (or env WHYSLOW); PROGRAMS_DIR the built tests/programs
# (env REL_PROGRAMS); TEST_PLUGINS_DIR the built tests/ directory holding the test plugins
# (env REL_TEST_PLUGINS).  WHYSLOW_PLUGIN_DIR must name the built plugins (meson sets it).
#
# Exit 0 pass, 1 fail, 77 skip (not root).  With CI=true nothing is skipped: a missing
# prerequisite is a failure.  Each check prints "ok - ..." or "not ok - ..."; the script fails
# if any check failed (it runs them all).  REL_KEEP=1 keeps the work directory.

REL_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REL_FAILS=0
REL_OK=0

rel_skip() {
	if [ "${CI:-}" = true ]; then
		echo "FAIL (CI=true, not skipping): $*" >&2
		exit 1
	fi
	echo "SKIP: $*" >&2
	exit 77
}

rel_fatal() {
	echo "FAIL: $*" >&2
	exit 1
}

ok() { echo "ok - $*"; }
notok() { echo "not ok - $*"; REL_FAILS=$((REL_FAILS + 1)); }
# check DESCRIPTION COMMAND...: ok if the command succeeds
check() {
	local d=$1
	shift
	if "$@"; then ok "$d"; else notok "$d"; fi
}

# rel_init NAME "$@": argument handling, root check, work directory, cleanup.
rel_init() {
	local name=$1
	shift
	WHYSLOW=${1:-${WHYSLOW:-}}
	REL_PROGRAMS=${2:-${REL_PROGRAMS:-}}
	REL_TEST_PLUGINS=${3:-${REL_TEST_PLUGINS:-}}
	[ "$(id -u)" = 0 ] || rel_skip "rel_$name needs root (BPF)"
	[ -n "$WHYSLOW" ] && [ -x "$WHYSLOW" ] || rel_fatal "whyslow binary not given or not executable: '$WHYSLOW'"
	WHYSLOW=$(readlink -f "$WHYSLOW")
	[ -n "${WHYSLOW_PLUGIN_DIR:-}" ] && [ -d "$WHYSLOW_PLUGIN_DIR" ] ||
		rel_fatal "WHYSLOW_PLUGIN_DIR not set to the built plugins: '${WHYSLOW_PLUGIN_DIR:-}'"
	export WHYSLOW_PLUGIN_DIR
	command -v bpftool >/dev/null || rel_skip "bpftool not installed"
	command -v python3 >/dev/null || rel_skip "python3 not installed"
	# a root-owned 0755 work directory, so plugin and config trust checks pass inside it
	REL_WORK=$(mktemp -d "/tmp/whyslow-rel-$name.XXXXXX") || rel_fatal "mktemp failed"
	chmod 755 "$REL_WORK"
	REL_PIDS=()
	trap rel_cleanup EXIT
	trap 'exit 1' INT TERM HUP
	echo "rel_$name: whyslow $WHYSLOW, plugins $WHYSLOW_PLUGIN_DIR, work dir $REL_WORK"
}

rel_cleanup() {
	local rc=$?
	for p in "${REL_PIDS[@]}"; do
		kill -KILL "$p" 2>/dev/null
	done
	if [ "$rc" = 0 ] && [ "${REL_KEEP:-0}" != 1 ]; then
		rm -rf "$REL_WORK"
	else
		# CI keeps only the test's own output: carry whyslow's stderr (a sanitizer report) into it
		for f in "$REL_WORK"/*.stderr; do
			[ -s "$f" ] || continue
			echo "--- $f (first 40 lines)" >&2
			head -n 40 "$f" >&2
		done
		echo "work directory kept: $REL_WORK" >&2
	fi
	exit $rc
}

rel_done() {
	if [ "$REL_FAILS" -gt 0 ]; then
		echo "FAIL: $REL_FAILS check(s) failed"
		exit 1
	fi
	echo "PASS"
	exit 0
}

# BPF program ids named ws_* that no live process holds (by fd, directly or through a link):
# what whyslow would have left behind.  Other whyslow runs going on concurrently hold theirs.
ws_orphan_progs() {
	local held
	held=$(grep -hs '^prog_id:' /proc/[0-9]*/fdinfo/* 2>/dev/null | awk '{print $2}' | sort -u)
	bpftool prog show 2>/dev/null | awk '/^[0-9]+: .* name ws_/ {sub(":", "", $1); print $1}' |
		sort -u | comm -23 - <(echo "$held")
}

# wait up to $1 seconds (default 2) for no orphan ws_* program; 0 if none is left
no_ws_left() {
	local t=${1:-2} left
	for _ in $(seq $((t * 10))); do
		left=$(ws_orphan_progs)
		[ -z "$left" ] && return 0
		sleep 0.1
	done
	echo "  BPF programs left behind: $(echo $left)" >&2
	bpftool prog show | grep -A1 ' name ws_' | head -20 >&2
	return 1
}

# number of non-empty lines in a file
nlines() { grep -c . "$1" 2>/dev/null || true; }

# wait until file $1 has a line matching $2 (up to $3 seconds)
wait_for_line() {
	for _ in $(seq $(( ${3:-10} * 20 ))); do
		grep -q "$2" "$1" 2>/dev/null && return 0
		sleep 0.05
	done
	return 1
}

# true when every line of $1 is a JSON object and exactly one is the summary (last)
json_stream_ok() {
	python3 - "$1" <<'PY'
import json, sys
lines = [l for l in open(sys.argv[1]) if l.strip()]
objs = [json.loads(l) for l in lines]
types = [o.get("type") for o in objs]
assert types and types[-1] == "summary", types[-3:]
assert types.count("summary") == 1
PY
}

# the value of summary field $2 in JSON Lines file $1
summary_field() {
	python3 - "$1" "$2" <<'PY'
import json, sys
for l in open(sys.argv[1]):
    if l.strip():
        o = json.loads(l)
        if o.get("type") == "summary":
            v = o.get(sys.argv[2])
            print(json.dumps(v) if isinstance(v, (dict, list)) else v)
PY
}

# wait until process $1 holds BPF programs (it has attached), then a little longer
wait_attached() {
	for _ in $(seq 100); do
		grep -qs '^prog_id:' /proc/"$1"/fdinfo/* && { sleep 0.5; return 0; }
		kill -0 "$1" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}

# wait for pid $1 (a child of this shell) for at most $2 seconds; sets RC and ELAPSED (ms)
wait_rc() {
	local t0=$(date +%s%N)
	for _ in $(seq $(($2 * 20))); do
		kill -0 "$1" 2>/dev/null || break
		sleep 0.05
	done
	if kill -0 "$1" 2>/dev/null; then
		kill -KILL "$1"
		wait "$1" 2>/dev/null
		RC=timeout
	else
		wait "$1"
		RC=$?
	fi
	ELAPSED=$((($(date +%s%N) - t0) / 1000000))
}
