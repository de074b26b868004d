#!/bin/bash
# `whyslow watch` end to end (issue 31 items 1 and 2): a watch on tests/programs/watch_victim,
# whose one slow round (the victim waits 400 ms on a mutex whose holder sleeps with it) sits
# among 150 rounds of 20 ms, with --trigger 200ms.
#
# Checked: exactly one dump appears, while the victim still runs (the trigger, not the end of
# tracing, wrote it), 0600 in a 0700 spool, with its sidecar saying reason "trigger" and the
# triggers it stands for; `whyslow report DUMP --format json` holds the slow wait's whole chain
# (the victim blocked on a futex about 400 ms, woken by the holder, which was blocked on a sleep);
# `whyslow dump` on a running watch writes a second dump (reason "request"); a second watch is
# refused while one runs; after SIGTERM none of the watch's BPF programs (by id) is loaded and
# its pid file is gone; watch -a follows a process started after it, and the dump SIGUSR1 asks
# for holds that process's chain. Bad input (a spool that is a symbolic link or that others can write, a
# trigger without a unit, -a with a PID) is said in one line, exit status 1, nothing written.
#
#   watch_trigger.sh WHYSLOW WATCH_VICTIM   (exit 0 pass, 1 fail, 77 skip: not root)
. "$(dirname "$0")/watch_lib.sh" || exit 1

WHYSLOW=$1 VICTIM=$2
[ -x "$WHYSLOW" ] && [ -x "$VICTIM" ] || watch_die "usage: watch_trigger.sh WHYSLOW WATCH_VICTIM"
watch_setup watch_trigger
echo "work directory $WORK"

# check_chain TRUTH REPORT.jsonl [SIDECAR]: the slow wait's whole chain is in the report (and the
# sidecar of a triggered dump says so)
check_chain() {
	python3 - "$1" "$2" "${3:-}" <<'PY'
import json, sys
truth = open(sys.argv[1]).read().split()
victim, holder = int(truth[1]), int(truth[3])
bad = []
if sys.argv[3]:
    side = json.load(open(sys.argv[3]))
    if side["reason"] != "trigger":
        bad.append("sidecar reason %r, not trigger" % side["reason"])
    if not 1 <= side["triggers"] <= 2:  # the victim's wait, and the holder's own sleep
        bad.append("sidecar stands for %d triggers, not 1 or 2" % side["triggers"])
    if side["longest"]["wait_ns"] < 350e6:
        bad.append("the longest trigger waited %d ns, not about 400 ms" % side["longest"]["wait_ns"])
found = None
for line in open(sys.argv[2]):
    o = json.loads(line)
    if o.get("type") != "chain" or o["tid"] != victim or o["blocked_ns"] < 350e6:
        continue
    found = o
if not found:
    bad.append("no chain of victim %d blocked at least 350 ms" % victim)
else:
    l = found["links"]
    print("chain:", [(k["kind"], k["tid"], k.get("woken_by")) for k in l])
    if l[0]["kind"] != "futex" or l[0].get("woken_by") != holder:
        bad.append("link 0 is %s woken by %r, not a futex woken by the holder %d"
                   % (l[0]["kind"], l[0].get("woken_by"), holder))
    if len(l) < 2 or l[1]["kind"] != "sleep" or l[1]["tid"] != holder:
        bad.append("link 1 is not the holder's sleep: %r" % (l[1:2],))
    elif l[1]["duration_ns"] < 350e6:
        bad.append("the holder's sleep lasted %r" % l[1])
    # the victim is this test's child, in its cgroup (v1: the cpu controller's path, else v2's)
    want = None
    for g in open("/proc/self/cgroup"):
        _, ctrls, path = g.strip().split(":", 2)
        if "cpu" in ctrls.split(","):
            want = path
        elif not ctrls and want is None:
            want = path
    if found.get("cgroup") != want:
        bad.append("the dump names the victim's cgroup %r, not %r" % (found.get("cgroup"), want))
for b in bad:
    print("  " + b, file=sys.stderr)
sys.exit(1 if bad else 0)
PY
}

# ---- bad input: one line, exit 1, nothing made
mkdir "$WORK/elsewhere"
ln -s "$WORK/elsewhere" "$WORK/link"
watch_bad "spool a symbolic link" -p $$ --spool "$WORK/link"
[ -z "$(ls -A "$WORK/elsewhere")" ] || watch_fail "a dump went through the spool's symbolic link"
mkdir -m 0777 "$WORK/open"
watch_bad "spool others can write" -p $$ --spool "$WORK/open"
watch_bad "trigger without a unit" -p $$ --spool "$WORK/s0" --trigger 200
watch_bad "-a with a PID" -a -p $$ --spool "$WORK/s0"
[ ! -e "$WORK/s0" ] || watch_fail "a refused command line made the spool"

# ---- the trigger
SPOOL=$WORK/spool
"$VICTIM" --go "$WORK/go" --truth "$WORK/truth" --rounds 150 --slow-round 15 &
VPID=$!
WATCH_PIDS+=($VPID)
"$WHYSLOW" watch --trigger 200ms --min-interval 60s --spool "$SPOOL" -p $VPID \
	>"$WORK/watch.out" 2>"$WORK/watch.err" &
WPID=$!
WATCH_PIDS+=($WPID)
wait_watching $WPID || { cat "$WORK/watch.err" >&2; watch_die "the watch did not start"; }
PROGS=$(progs_of $WPID)
echo "watch $WPID holds BPF programs: $(echo $PROGS)"
touch "$WORK/go"
# the slow round ends about 0.7 s in, the victim 3 s later: the dump comes before its end
for _ in $(seq 100); do
	ls "$SPOOL"/whyslow-*.data >/dev/null 2>&1 && break
	sleep 0.1
done
kill -0 $VPID 2>/dev/null || watch_fail "no dump while the victim ran: the trigger did not write one"
wait $VPID || watch_fail "watch_victim failed"
# tracing ends with the victim: no other dump is due
for _ in $(seq 300); do kill -0 $WPID 2>/dev/null || break; sleep 0.1; done
kill -0 $WPID 2>/dev/null && watch_fail "the watch did not end when its one process exited"
wait $WPID
rc=$?
echo "--- watch stderr (exit $rc)"
cat "$WORK/watch.err"
[ $rc -eq 0 ] || watch_fail "watch exit status $rc"
check_detached $WPID "$PROGS"
[ ! -e /run/whyslow/watch.pid ] || watch_fail "the pid file is still there after the watch ended"

dumps=("$SPOOL"/whyslow-*.data)
[ ${#dumps[@]} -eq 1 ] && [ -f "${dumps[0]}" ] || watch_die "not exactly one dump: ${dumps[*]}"
DUMP=${dumps[0]}
[ "$(stat -c %a "$SPOOL")" = 700 ] || watch_fail "spool mode $(stat -c %a "$SPOOL"), not 700"
[ "$(stat -c %a "$DUMP")" = 600 ] || watch_fail "dump mode $(stat -c %a "$DUMP"), not 600"
[ -z "$(ls -A "$SPOOL" | grep -v '^whyslow-')" ] || watch_fail "left in the spool: $(ls -A "$SPOOL")"
"$WHYSLOW" report --format json "$DUMP" >"$WORK/report.jsonl" 2>"$WORK/report.err" ||
	watch_fail "whyslow report DUMP failed: $(cat "$WORK/report.err")"
check_chain "$WORK/truth" "$WORK/report.jsonl" "$DUMP.json" || watch_fail "the dump's chain or sidecar"

# ---- on demand: whyslow dump, one watch at a time, SIGTERM
sleep 60 &
SPID=$!
WATCH_PIDS+=($SPID)
"$WHYSLOW" watch --spool "$SPOOL" -p $SPID >"$WORK/watch2.out" 2>"$WORK/watch2.err" &
WPID=$!
WATCH_PIDS+=($WPID)
wait_watching $WPID || { cat "$WORK/watch2.err" >&2; watch_die "the second watch did not start"; }
PROGS=$(progs_of $WPID)
out=$("$WHYSLOW" watch --spool "$WORK/s1" -p $SPID 2>&1)
[ $? -eq 1 ] && grep -q "another whyslow watch runs (pid $WPID" <<<"$out" ||
	watch_fail "a second watch was not refused: $out"
[ ! -e "$WORK/s1" ] || watch_fail "the refused watch made its spool"
sleep 1 # some records to dump: the sleep's start, at least
"$WHYSLOW" dump >"$WORK/dump.out" 2>"$WORK/dump.err" || watch_fail "whyslow dump failed: $(cat "$WORK/dump.err")"
kill -TERM $WPID
wait $WPID
rc=$?
cat "$WORK/watch2.err"
[ $rc -eq 0 ] || watch_fail "watch exit status $rc after SIGTERM"
check_detached $WPID "$PROGS"
[ ! -e /run/whyslow/watch.pid ] || watch_fail "the pid file is still there after SIGTERM"
second=$(ls "$SPOOL"/whyslow-*.data | grep -vxF "$DUMP")
[ "$(echo "$second" | grep -c .)" -eq 1 ] || watch_fail "whyslow dump wrote no dump (or more than one): $second"
[ "$(cat "$WORK/dump.out")" = "$second" ] || watch_fail "whyslow dump printed '$(cat "$WORK/dump.out")', not the dump's path $second"
if [ -n "$second" ]; then
	grep -q '"reason":"request"' "$second.json" || watch_fail "the requested dump's sidecar: $(cat "$second.json")"
	"$WHYSLOW" report "$second" >/dev/null 2>"$WORK/report2.err" ||
		watch_fail "whyslow report of the requested dump: $(cat "$WORK/report2.err")"
fi
out=$("$WHYSLOW" dump 2>&1)
[ $? -eq 1 ] && grep -q "no whyslow watch runs\|no watch has run" <<<"$out" ||
	watch_fail "whyslow dump with no watch running: $out"

# ---- -a: a process started after the watch is followed, and a requested dump holds its chain
SPOOL_A=$WORK/spool-a
"$WHYSLOW" watch -a --spool "$SPOOL_A" >"$WORK/watch3.out" 2>"$WORK/watch3.err" &
WPID=$!
WATCH_PIDS+=($WPID)
wait_watching $WPID || { cat "$WORK/watch3.err" >&2; watch_die "watch -a did not start"; }
PROGS=$(progs_of $WPID)
"$VICTIM" --go "$WORK/go" --truth "$WORK/truth-a" --rounds 30 --slow-round 10 &
VPID=$!
WATCH_PIDS+=($VPID)
wait $VPID || watch_fail "watch_victim failed under watch -a"
sleep 1 # the chain's wait ended some rounds ago; its records are past the reorder window
kill -USR1 $WPID
for _ in $(seq 100); do
	ls "$SPOOL_A"/whyslow-*.data >/dev/null 2>&1 && break
	sleep 0.1
done
kill -TERM $WPID
wait $WPID
rc=$?
cat "$WORK/watch3.err"
[ $rc -eq 0 ] || watch_fail "watch -a exit status $rc after SIGTERM"
check_detached $WPID "$PROGS"
dumps=("$SPOOL_A"/whyslow-*.data)
if [ ${#dumps[@]} -eq 1 ] && [ -f "${dumps[0]}" ]; then
	"$WHYSLOW" report --format json "${dumps[0]}" >"$WORK/report-a.jsonl" 2>"$WORK/report-a.err" ||
		watch_fail "whyslow report of the -a dump: $(cat "$WORK/report-a.err")"
	check_chain "$WORK/truth-a" "$WORK/report-a.jsonl" || watch_fail "the -a dump's chain"
else
	watch_fail "SIGUSR1 to watch -a made not exactly one dump: ${dumps[*]}"
fi
watch_end
