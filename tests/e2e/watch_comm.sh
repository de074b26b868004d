#!/bin/bash
# watch --comm (issue 31's live filter by command name): copies of watch_victim named wsmatch (the
# name followed) and wsother (not), one of each started before the watch and after it, and a
# shell named wsmatchsh (followed too) that execs into wsother.
#
# Checked: `whyslow report` of a dump holds chains of both wsmatch processes (the one found in
# /proc at the start, the one that took the name by exec later) and nothing of the wsother ones
# that never had the name; of the shell that exec'd into wsother, nothing after its exec (no chain,
# none of the threads it made). Bad input (--comm with a PID, a name longer than the kernel keeps) is said in one
# line, exit status 1.
#
#   watch_comm.sh WHYSLOW WATCH_VICTIM   (exit 0 pass, 1 fail, 77 skip: not root)
. "$(dirname "$0")/watch_lib.sh" || exit 1

WHYSLOW=$1 VICTIM=$2
[ -x "$WHYSLOW" ] && [ -x "$VICTIM" ] || watch_die "usage: watch_comm.sh WHYSLOW WATCH_VICTIM"
watch_setup watch_comm
echo "work directory $WORK"

watch_bad "--comm with a PID" --comm wsmatch -p $$ --spool "$WORK/s0"
watch_bad "a name of 16 characters" --comm abcdefghijklmnop --spool "$WORK/s0"

cp "$VICTIM" "$WORK/wsmatch" && cp "$VICTIM" "$WORK/wsother" && cp /bin/sh "$WORK/wsmatchsh" ||
	watch_die "cannot copy the programs"
ROUNDS=(--rounds 60 --slow-round 1000)
"$WORK/wsmatch" --go "$WORK/go" --truth "$WORK/m1" "${ROUNDS[@]}" &
M1=$!
"$WORK/wsother" --go "$WORK/go" --truth "$WORK/o1" "${ROUNDS[@]}" &
O1=$!
WATCH_PIDS+=($M1 $O1)
SPOOL=$WORK/spool
"$WHYSLOW" watch --comm wsmatch,wsmatchsh --spool "$SPOOL" >"$WORK/watch.out" 2>"$WORK/watch.err" &
WPID=$!
WATCH_PIDS+=($WPID)
wait_watching $WPID || { cat "$WORK/watch.err" >&2; watch_die "the watch did not start"; }
"$WORK/wsmatch" --go "$WORK/go" --truth "$WORK/m2" "${ROUNDS[@]}" &
M2=$!
"$WORK/wsother" --go "$WORK/go" --truth "$WORK/o2" "${ROUNDS[@]}" &
O2=$!
"$WORK/wsmatchsh" -c "exec '$WORK/wsother' --go '$WORK/go' --truth '$WORK/o3' --rounds 60 --slow-round 1000" &
O3=$!
WATCH_PIDS+=($M2 $O2 $O3)
sleep 0.5 # the shell's exec done before the rounds begin
touch "$WORK/go"
for p in $M1 $O1 $M2 $O2 $O3; do wait $p || watch_fail "watch_victim $p failed"; done
"$WHYSLOW" dump >"$WORK/dump.out" 2>"$WORK/dump.err" || watch_fail "whyslow dump failed: $(cat "$WORK/dump.err")"
DUMP=$(cat "$WORK/dump.out")
kill -TERM $WPID
wait $WPID
rc=$?
echo "--- watch stderr (exit $rc)"
cat "$WORK/watch.err"
[ $rc -eq 0 ] || watch_fail "watch exit status $rc after SIGTERM"
[ -f "$DUMP" ] || watch_die "no dump: '$DUMP'"
"$WHYSLOW" report --format json "$DUMP" >"$WORK/report.jsonl" 2>"$WORK/report.err" ||
	watch_fail "whyslow report of the dump: $(cat "$WORK/report.err")"
python3 - "$WORK" $M1 $M2 $O1 $O2 $O3 <<'PY' || watch_fail "the processes of the dump"
import json, sys
work = sys.argv[1]
m1, m2, o1, o2, o3 = map(int, sys.argv[2:])
def tids(name):
    w = open("%s/%s" % (work, name)).read().split()
    return {int(w[1]), int(w[3])}
def named(o, out):
    """every thread the report analysed or linked: not who merely held a CPU (ran)"""
    if isinstance(o, dict):
        for k, v in o.items():
            if k in ("tid", "pid", "woken_by") and isinstance(v, int):
                out.add(v)
            elif k != "ran":
                named(v, out)
    elif isinstance(o, list):
        for v in o:
            named(v, out)
bad = []
chains, seen, shell = {}, set(), []
for line in open(work + "/report.jsonl"):
    o = json.loads(line)
    named(o, seen)
    if o.get("type") == "chain":
        chains.setdefault(o["pid"], set()).add(o["tid"])
        if o["pid"] == o3:
            shell.append(o["comm"])
print("chains by process:", {p: sorted(t) for p, t in chains.items()})
for pid, what in ((m1, "found at the start"), (m2, "started later")):
    if not chains.get(pid):
        bad.append("no chain of the wsmatch %s (pid %d)" % (what, pid))
# never named wsmatch*: nothing of them
for pid, name in ((o1, "o1"), (o2, "o2")):
    if ({pid} | tids(name)) & seen:
        bad.append("threads %r of wsother pid %d in the report"
                   % (sorted(({pid} | tids(name)) & seen), pid))
# the shell, traced until it exec'd into wsother: its waits before (as wsmatchsh), none after
# (its rounds, as wsother), none of the thread it made after
if "wsother" in shell:
    bad.append("a chain of the shell %d after it exec'd into wsother" % o3)
if (tids("o3") - {o3}) & seen:
    bad.append("thread %r, made after the shell exec'd into wsother, in the report"
               % sorted((tids("o3") - {o3}) & seen))
for b in bad:
    print("  " + b, file=sys.stderr)
sys.exit(1 if bad else 0)
PY
watch_end
