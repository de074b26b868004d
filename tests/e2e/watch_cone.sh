#!/bin/bash
# A triggered dump of `whyslow watch` keeps its trigger's causal cone, not the whole window (issue
# 31 item 2): a watch on two watch_victim processes, one with a slow round (the victim waits
# 400 ms on a mutex whose holder sleeps with it) and one of four pairs that are never slow (the
# noise), --trigger 200ms; right after the triggered dump, `whyslow dump` writes the whole window.
#
# Checked: the triggered dump's sidecar names its cone (the victim and the holder among its
# threads, none of the noise's), the requested one's says none; `whyslow report` of both prints
# the same chain of the slow wait (every field); the cone keeps the victim's process, not the noise's,
# holds fewer records than the whole window, and its report no chain of a noise thread.
# Then a wait still open at a dump, begun before the window (a `sleep 60` watched with --keep 1s,
# dumped 3 s in): `report` of the dump prints it as an open wait of at least 2 s.
#
#   watch_cone.sh WHYSLOW WATCH_VICTIM   (exit 0 pass, 1 fail, 77 skip: not root)
. "$(dirname "$0")/watch_lib.sh" || exit 1

WHYSLOW=$1 VICTIM=$2
[ -x "$WHYSLOW" ] && [ -x "$VICTIM" ] || watch_die "usage: watch_cone.sh WHYSLOW WATCH_VICTIM"
watch_setup watch_cone
echo "work directory $WORK"

SPOOL=$WORK/spool
"$VICTIM" --go "$WORK/go" --truth "$WORK/truth" --rounds 250 --slow-round 15 &
VPID=$!
WATCH_PIDS+=($VPID)
# never slow (a round past the last): only fast waits, of 4 pairs of other threads
"$VICTIM" --go "$WORK/go" --truth "$WORK/noise" --pairs 4 --rounds 250 --slow-round 1000 &
NPID=$!
WATCH_PIDS+=($NPID)
"$WHYSLOW" watch --trigger 200ms --min-interval 60s --spool "$SPOOL" -p $VPID,$NPID \
	>"$WORK/watch.out" 2>"$WORK/watch.err" &
WPID=$!
WATCH_PIDS+=($WPID)
wait_watching $WPID || { cat "$WORK/watch.err" >&2; watch_die "the watch did not start"; }
touch "$WORK/go"
for _ in $(seq 100); do
	ls "$SPOOL"/whyslow-*.data >/dev/null 2>&1 && break
	sleep 0.1
done
CONE=$(ls "$SPOOL"/whyslow-*.data 2>/dev/null)
[ "$(echo "$CONE" | grep -c .)" -eq 1 ] || watch_die "no triggered dump (or more than one): $CONE"
"$WHYSLOW" dump >"$WORK/dump.out" 2>"$WORK/dump.err" || watch_fail "whyslow dump failed: $(cat "$WORK/dump.err")"
WHOLE=$(cat "$WORK/dump.out")
wait $VPID || watch_fail "watch_victim failed"
wait $NPID || watch_fail "watch_victim (the noise) failed"
kill -TERM $WPID
wait $WPID
rc=$?
echo "--- watch stderr (exit $rc)"
cat "$WORK/watch.err"
[ $rc -eq 0 ] || watch_fail "watch exit status $rc after SIGTERM"
[ -f "$WHOLE" ] || watch_die "the requested dump is not there: '$WHOLE'"
for d in "$CONE" "$WHOLE"; do
	"$WHYSLOW" report --format json "$d" >"$d.jsonl" 2>"$d.err" ||
		watch_fail "whyslow report $d: $(cat "$d.err")"
done
ls -l "$CONE" "$WHOLE"
python3 - "$WORK/truth" "$WORK/noise" "$CONE" "$WHOLE" $VPID $NPID <<'PY' || watch_fail "the cone dump"
import json, sys
truth = open(sys.argv[1]).read().split()
victim, holder = int(truth[1]), int(truth[3])
noise = set()
for line in open(sys.argv[2]):
    w = line.split()
    if w[0] == "victim":
        noise |= {int(w[1]), int(w[3])}
cone, whole = sys.argv[3], sys.argv[4]
vpid, npid = int(sys.argv[5]), int(sys.argv[6])
bad = []
side = json.load(open(cone + ".json"))
c = side.get("cone")
if not c:
    bad.append("the triggered dump's sidecar names no cone: %r" % side)
else:
    print("cone:", c)
    if victim not in c["threads"] or holder not in c["threads"]:
        bad.append("the cone's threads %r miss the victim %d or the holder %d"
                   % (c["threads"], victim, holder))
    if noise & set(c["threads"]):
        bad.append("noise threads in the cone: %r" % sorted(noise & set(c["threads"])))
    if vpid not in c["processes"] or npid in c["processes"]:
        bad.append("the cone keeps processes %r: not the victim's %d alone of the two"
                   % (c["processes"], vpid))
wside = json.load(open(whole + ".json"))
if wside.get("cone", 1) is not None:
    bad.append("the requested dump's sidecar says cone %r, not null" % wside.get("cone"))

def report(path):
    chain, tids, summary = None, set(), None
    for line in open(path + ".jsonl"):
        o = json.loads(line)
        if o.get("type") == "chain":
            tids.add(o["tid"])
            if o["tid"] == victim and o["blocked_ns"] >= 350e6:
                chain = o
        if o.get("type") == "summary":
            summary = o
    return chain, tids, summary

cchain, ctids, csum = report(cone)
wchain, wtids, wsum = report(whole)
if not cchain or not wchain:
    bad.append("the slow wait's chain is missing: cone %s, whole window %s"
               % (bool(cchain), bool(wchain)))
else:
    print("chain:", [(k["kind"], k["tid"], k.get("woken_by")) for k in cchain["links"]])
    for key in sorted(set(cchain) | set(wchain)):
        if cchain.get(key) != wchain.get(key):
            bad.append("the chains differ in %s: cone %r, whole window %r"
                       % (key, cchain.get(key), wchain.get(key)))
    if cchain["links"][0]["kind"] != "futex" or len(cchain["links"]) < 2:
        bad.append("not the known chain (a futex woken by the holder): %r" % cchain["links"])
if ctids & noise:
    bad.append("the cone dump's report has chains of noise threads %r" % sorted(ctids & noise))
if not wtids & noise:
    bad.append("the whole window has no chain of the noise: the test proves nothing")
cn, wn = c and c.get("records"), wside.get("records")
print("records: cone %r, whole window %r" % (cn, wn))
if not cn or not wn or cn >= wn:
    bad.append("the cone dump holds %r records, not fewer than the window's %r" % (cn, wn))
for b in bad:
    print("  " + b, file=sys.stderr)
sys.exit(1 if bad else 0)
PY

# ---- a wait still open at the dump, begun before the window (a hang): the dump says it open
sleep 60 &
SPID=$!
WATCH_PIDS+=($SPID)
"$WHYSLOW" watch --keep 1s --spool "$WORK/spool-open" -p $SPID >"$WORK/watch2.out" 2>"$WORK/watch2.err" &
WPID=$!
WATCH_PIDS+=($WPID)
wait_watching $WPID || { cat "$WORK/watch2.err" >&2; watch_die "the second watch did not start"; }
sleep 3 # the sleep's start is older than the window
"$WHYSLOW" dump >"$WORK/dump2.out" 2>"$WORK/dump2.err" || watch_fail "whyslow dump failed: $(cat "$WORK/dump2.err")"
OPEN=$(cat "$WORK/dump2.out")
kill -TERM $WPID
wait $WPID || watch_fail "the second watch's exit status $?"
kill $SPID
[ -f "$OPEN" ] || watch_die "no dump of the open wait: '$OPEN'"
"$WHYSLOW" report --format json "$OPEN" >"$OPEN.jsonl" 2>"$OPEN.err" ||
	watch_fail "whyslow report $OPEN: $(cat "$OPEN.err")"
python3 - "$OPEN" $SPID <<'PY' || watch_fail "the open wait in the dump"
import json, sys
path, spid = sys.argv[1], int(sys.argv[2])
bad = []
side = json.load(open(path + ".json"))
if not side.get("open_waits_sampled"):
    bad.append("the sidecar counts no open wait: %r" % side)
found = [o for o in map(json.loads, open(path + ".jsonl"))
         if o.get("type") == "open_wait" and o["tid"] == spid]
if not found:
    bad.append("no open wait of the sleep %d in the report" % spid)
else:
    o = found[0]
    print("open wait:", o["comm"], o.get("syscall"), o["blocked_at_least_ns"])
    # 3 s blocked, from /proc: more than the 1 s window holds
    if not o.get("open") or o["blocked_at_least_ns"] < 2e9:
        bad.append("the open wait is not the 3 s sleep: %r" % o)
for b in bad:
    print("  " + b, file=sys.stderr)
sys.exit(1 if bad else 0)
PY
watch_end
