#!/bin/bash
# End-to-end ground truths for waits that never end (issue 14), with tests/programs/gt_stuck:
#   deadlock  two threads deadlocked on two mutexes: `attach --duration`, `run --duration` and
#             `stuck` all report the deadlock (both threads, both addresses) and exit 3; and
#             killed by Ctrl-C under `run`: the waits at the kill, the deadlock, exit 3
#   pshared   the same across two processes on process-shared mutexes (attach names one of them)
#   sleep     a process stuck in `sleep`: an open wait in clock_nanosleep, at least as long as
#             the tracing and no longer than the truth
#   disk      a victim already blocked on a mutex when whyslow attaches, its holder in slow disk
#             reads: the open wait's chain goes victim -> holder (mutex word) -> block I/O
#   gt_stuck.sh WHYSLOW GT_STUCK CHECK_STUCK      (exit 0 pass, 1 fail, 77 skip)
. "$(dirname "$0")/gt_lib.sh" || exit 1

WHYSLOW=$1 GT=$2 CHECK=$3
PYTHON=${PYTHON:-python3}
gt_own_setup stuck
[ -x "$WHYSLOW" ] && [ -x "$GT" ] && [ -r "$CHECK" ] || gt_fail "usage: gt_stuck.sh WHYSLOW GT_STUCK CHECK_STUCK"

now_ns() { date +%s%N; }

# start_gt NAME ARGS...: run gt_stuck in the background, wait for its truth line; sets GT_PID
start_gt() {
	local name=$1
	shift
	"$GT" "$@" >"$GT_WORK/$name.truth" 2>"$GT_WORK/$name.stderr" &
	GT_PID=$!
	PIDS+=("$GT_PID")
	for _ in $(seq 200); do
		[ -s "$GT_WORK/$name.truth" ] && return 0
		kill -0 "$GT_PID" 2>/dev/null || break
		sleep 0.05
	done
	cat "$GT_WORK/$name.stderr" >&2
	gt_fail "$name: gt_stuck gave no truth line"
}

# expect RC WANT WHAT: check an exit status, showing whyslow's stderr on a mismatch
expect() {
	[ "$1" = "$2" ] && return 0
	cat "$GT_WORK"/*.err >&2 2>/dev/null
	gt_fail "$3 exited $1, expected $2"
}

echo "== deadlock, attach --duration"
start_gt deadlock deadlock
timeout -k 5 60 "$WHYSLOW" attach --duration 1s --format json -o "$GT_WORK/attach.jsonl" "$GT_PID" 2>"$GT_WORK/attach.err"
expect $? 3 "attach --duration on a deadlock"
"$PYTHON" "$CHECK" --truth "$GT_WORK/deadlock.truth" --json "$GT_WORK/attach.jsonl" --case deadlock || gt_fail "attach: wrong deadlock"
tail -n1 "$GT_WORK/attach.jsonl" | grep -q '"type":"summary"' || gt_fail "attach: the JSON stream does not end with the summary"

echo "== deadlock, stuck (text)"
timeout -k 5 20 "$WHYSLOW" stuck "$GT_PID" >"$GT_WORK/stuck.txt" 2>"$GT_WORK/stuck.err"
expect $? 3 "stuck on a deadlock"
cat "$GT_WORK/stuck.txt"
read -r t1 a1 t2 a2 < <("$PYTHON" -c 'import json,sys; t=json.loads(open(sys.argv[1]).read())["threads"]; print(t[0]["tid"], t[0]["waits"], t[1]["tid"], t[1]["waits"])' "$GT_WORK/deadlock.truth")
line=$(grep '^DEADLOCK: ' "$GT_WORK/stuck.txt") || gt_fail "stuck: no DEADLOCK line"
for w in "tid $t1" "tid $t2" "mutex $a1" "mutex $a2"; do
	grep -q "$w" <<<"$line" || gt_fail "stuck: the DEADLOCK line lacks '$w': $line"
done
kill -9 "$GT_PID" 2>/dev/null

echo "== deadlock, run --duration"
timeout -k 5 60 "$WHYSLOW" run --as-root --duration 2s --format json -o "$GT_WORK/run.jsonl" -- "$GT" deadlock >"$GT_WORK/run.truth" 2>"$GT_WORK/run.err"
expect $? 3 "run --duration on a deadlock"
"$PYTHON" "$CHECK" --truth "$GT_WORK/run.truth" --json "$GT_WORK/run.jsonl" --case deadlock || gt_fail "run: wrong deadlock"
rpid=$("$PYTHON" -c 'import json,sys; print(json.loads(open(sys.argv[1]).read())["threads"][0]["pid"])' "$GT_WORK/run.truth")
sleep 0.2
kill -0 "$rpid" 2>/dev/null && gt_fail "run --duration left the command (pid $rpid) running"

echo "== deadlock, record --duration, then report (the open waits are in the recording)"
timeout -k 5 60 "$WHYSLOW" record --as-root --duration 2s --format json --live "$GT_WORK/rec-live.jsonl" -o "$GT_WORK/dl.data" -- "$GT" deadlock >"$GT_WORK/rec.truth" 2>"$GT_WORK/rec.err"
expect $? 3 "record --duration on a deadlock"
"$WHYSLOW" report --format json "$GT_WORK/dl.data" >"$GT_WORK/rep.jsonl" 2>"$GT_WORK/rep.err"
expect $? 3 "report of a recording that ended in a deadlock"
"$PYTHON" "$CHECK" --truth "$GT_WORK/rec.truth" --json "$GT_WORK/rep.jsonl" --case deadlock || gt_fail "report: wrong deadlock"
# the very objects the live analysis printed, in the same place (before the summary line)
diff <(grep -E '"type":"(open_wait|deadlock)"' "$GT_WORK/rec-live.jsonl") <(grep -E '"type":"(open_wait|deadlock)"' "$GT_WORK/rep.jsonl") ||
	gt_fail "report's open waits differ from the live ones of the same recording"
tail -n1 "$GT_WORK/rep.jsonl" | grep -q '"type":"summary"' || gt_fail "report: the JSON stream does not end with the summary"
"$WHYSLOW" report "$GT_WORK/dl.data" >"$GT_WORK/rep.txt" 2>>"$GT_WORK/rep.err"
expect $? 3 "text report of a recording that ended in a deadlock"
grep -q '^DEADLOCK: ' "$GT_WORK/rep.txt" || gt_fail "text report: no DEADLOCK line"
grep -q 'so far on futex .* still waiting' "$GT_WORK/rep.txt" || gt_fail "text report: no open wait"

echo "== deadlock, run, then Ctrl-C: the waits at the kill, the deadlock, no signal root"
# As a terminal's Ctrl-C: SIGINT to the process group of whyslow and the command. A job started
# with & in a script ignores SIGINT: perl puts it back to the default, in a group of its own.
perl -e '$SIG{INT} = "DEFAULT"; setpgrp(0, 0); exec @ARGV or exit 127' \
	"$WHYSLOW" run --as-root --format json -o "$GT_WORK/int.jsonl" -- "$GT" deadlock \
	>"$GT_WORK/int.truth" 2>"$GT_WORK/int.err" &
ws=$!
PIDS+=("$ws")
for _ in $(seq 200); do [ -s "$GT_WORK/int.truth" ] && break; sleep 0.05; done
[ -s "$GT_WORK/int.truth" ] || gt_fail "Ctrl-C: gt_stuck gave no truth line: $(cat "$GT_WORK/int.err")"
sleep 0.3
kill -INT -- "-$ws"
wait "$ws"
expect $? 3 "run on a deadlock ended by SIGINT"
"$PYTHON" "$CHECK" --truth "$GT_WORK/int.truth" --json "$GT_WORK/int.jsonl" --case deadlock --killed SIGINT ||
	gt_fail "Ctrl-C: wrong deadlock"
# each deadlocked thread's wait: the futex it waited for, interrupted by SIGINT, rooted there
"$PYTHON" - "$GT_WORK/int.truth" "$GT_WORK/int.jsonl" <<'PY' || gt_fail "Ctrl-C: wrong chains"
import json, sys
truth = json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])
chains = [json.loads(l) for l in open(sys.argv[2]) if '"type":"chain"' in l]
for t in truth["threads"]:
    # on a loaded machine a thread may then wait for a CPU long enough to be reported (its
    # exit path after the signal): that runqueue wait is another chain, as check_stuck.py says
    c = [c for c in chains if c["tid"] == t["tid"] and c["links"][0]["kind"] != "runqueue"]
    assert c, "no chain for tid %d" % t["tid"]
    l = c[-1]["links"][0]
    assert l["kind"] == "futex" and l["addr"] == t["waits"], "tid %d: %s" % (t["tid"], l)
    assert l.get("ended_by") == "signal" and l.get("ended_signal") == "SIGINT", l
    assert "signal" not in c[-1]["root"].lower(), "rooted at the signal: %s" % c[-1]["root"]
    print("ok   tid %d: futex %s, interrupted by SIGINT, root %r" % (t["tid"], l["addr"], c[-1]["root"]))
PY
rpid=$("$PYTHON" -c 'import json,sys; print(json.loads(open(sys.argv[1]).read())["threads"][0]["pid"])' "$GT_WORK/int.truth")
kill -0 "$rpid" 2>/dev/null && gt_fail "Ctrl-C: the command (pid $rpid) is still running"

echo "== pshared deadlock across processes, attach --duration on one of them"
start_gt pshared pshared
timeout -k 5 60 "$WHYSLOW" attach --duration 1s --format json -o "$GT_WORK/pshared.jsonl" "$GT_PID" 2>"$GT_WORK/pshared.err"
expect $? 3 "attach on a cross-process deadlock"
"$PYTHON" "$CHECK" --truth "$GT_WORK/pshared.truth" --json "$GT_WORK/pshared.jsonl" --case pshared || gt_fail "pshared: wrong deadlock"
child=$("$PYTHON" -c 'import json,sys; print(json.loads(open(sys.argv[1]).read())["threads"][1]["pid"])' "$GT_WORK/pshared.truth")
kill -9 "$child" "$GT_PID" 2>/dev/null

echo "== a process stuck in sleep, attach --duration 1s"
before=$(now_ns)
sleep 30 &
spid=$!
PIDS+=("$spid")
echo "{\"tid\":$spid}" >"$GT_WORK/sleep.truth"
timeout -k 5 60 "$WHYSLOW" attach --duration 1s --format json -o "$GT_WORK/sleep.jsonl" "$spid" 2>"$GT_WORK/sleep.err"
expect $? 0 "attach on a sleep"
after=$(now_ns)
"$PYTHON" "$CHECK" --truth "$GT_WORK/sleep.truth" --json "$GT_WORK/sleep.jsonl" --case sleep --min-ns 1000000000 --max-ns $((after - before)) || gt_fail "sleep: wrong open wait"
kill -9 "$spid" 2>/dev/null

echo "== a victim blocked on a mutex whose holder is in slow reads, attach meanwhile"
setup=$("$SLOWDISK" setup) || gt_fail "slowdisk.sh setup failed"
dev=$(sed -n 's/^DEV=//p' <<<"$setup")
[ -b "$dev" ] || gt_fail "slowdisk.sh setup gave no device: $setup"
# the holder reads on (one throttled group) until told to stop, however long attaching takes
cgs=(--cgroup "$("$SLOWDISK" cgroup "$dev" 1)") || gt_fail "slowdisk.sh cgroup failed"
GT_STUCK_UNTIL_USR1=1 start_gt disk disk --dev "$dev" "${cgs[@]}"
t0=$(now_ns)
timeout -k 5 60 "$WHYSLOW" attach --duration 500ms --format json -o "$GT_WORK/disk.jsonl" "$GT_PID" 2>"$GT_WORK/disk.err"
rc=$?
echo "attach took $(( ($(now_ns) - t0) / 1000000 )) ms after the truth line"
kill -USR1 "$GT_PID"
expect $rc 0 "attach on the mutex held across slow reads"
"$PYTHON" "$CHECK" --truth "$GT_WORK/disk.truth" --json "$GT_WORK/disk.jsonl" --case disk || gt_fail "disk: wrong chain"
wait "$GT_PID" || gt_fail "gt_stuck disk failed: $(cat "$GT_WORK/disk.stderr")"

echo "== the same, traced until the holder lets go: the wait begun before attach gets its chain"
cgs=(--cgroup "$("$SLOWDISK" cgroup "$dev" 2)") || gt_fail "slowdisk.sh cgroup failed"
GT_STUCK_UNTIL_USR1=1 start_gt joined disk --dev "$dev" "${cgs[@]}"
"$WHYSLOW" attach --duration 20s --format json -o "$GT_WORK/joined.jsonl" "$GT_PID" 2>"$GT_WORK/joined.err" &
ws=$!
PIDS+=("$ws")
# once its BPF links exist, whyslow reads the waits in progress at once; then the holder may stop
for _ in $(seq 600); do
	ls -l "/proc/$ws/fd" 2>/dev/null | grep -q bpf_link && break
	kill -0 "$ws" 2>/dev/null || break
	sleep 0.05
done
sleep 2
kill -USR1 "$GT_PID"
wait "$GT_PID" || gt_fail "gt_stuck disk failed: $(cat "$GT_WORK/joined.stderr")"
wait "$ws"
expect $? 0 "attach until the mutex holder is done"
# the victim had been blocked for at least the 2 s before the holder was told to stop
"$PYTHON" "$CHECK" --truth "$GT_WORK/joined.truth" --json "$GT_WORK/joined.jsonl" --case disk_joined --min-ns 2000000000 || gt_fail "joined: wrong chain"

[ -c /dev/null ] || gt_fail "/dev/null is no longer a character device"
GT_OK=1
echo "PASS gt_stuck"
