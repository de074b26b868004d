#!/bin/bash
# `whyslow watch` under a storm of slow waits (issue 31 item 2): 16 pairs of
# tests/programs/watch_victim threads in a cgroup made for them (watch --cgroup), every round slow (a 250 ms sleep holding the mutex, the
# victim waiting for it: about 120 waits of 200 ms or more a second for 5 s), watched with
# --trigger 200ms --min-interval 2s --spool-mb 1 --keep-mb 1, in a spool that already holds two
# old dumps of 520 kB each (made here, named as watch names its dumps): 1 MiB less 8 kB.
#
# Checked: the triggered dumps are no more than the rate limit allows (one per 2 s, and one at the
# end); the triggers their sidecars stand for add up to the triggers the watch counted, at least
# the victims' slow waits, and some dump stands for more than one; the spool holds no more than
# its quota at the end, the oldest dumps removed first (the oldest old one is gone, every dump of
# this watch stays); the flight recorder held no more than --keep-mb and said what it dropped;
# every dump reads with whyslow report.
#
#   watch_storm.sh WHYSLOW WATCH_VICTIM   (exit 0 pass, 1 fail, 77 skip: not root, no cgroup)
. "$(dirname "$0")/watch_lib.sh" || exit 1

WHYSLOW=$1 VICTIM=$2
[ -x "$WHYSLOW" ] && [ -x "$VICTIM" ] || watch_die "usage: watch_storm.sh WHYSLOW WATCH_VICTIM"
watch_setup watch_storm
echo "work directory $WORK"

SPOOL=$WORK/spool
PAIRS=16 ROUNDS=20
mkdir -m 0700 "$SPOOL"
for old in whyslow-20000101T000000Z-1-0000.data whyslow-20000101T000001Z-1-0001.data; do
	head -c 520000 /dev/zero >"$SPOOL/$old"
	touch -d '2000-01-01' "$SPOOL/$old"
done
# the victim in a cgroup of its own, watched by --cgroup
name=whyslow-watch-storm-$$-$RANDOM
if [ -d /sys/fs/cgroup/cpu ] && [ -f /sys/fs/cgroup/cpu/cgroup.procs ]; then
	CG=/sys/fs/cgroup/cpu/$name # cgroup v1
elif [ -f /sys/fs/cgroup/cgroup.controllers ]; then
	CG=/sys/fs/cgroup/$name # cgroup v2
else
	watch_skip "no cgroup hierarchy to make a group in"
fi
remove_cg() { # ours: made below; whatever is left in it goes back to its parent first
	[ -d "$CG" ] || return 0
	while read -r p; do echo "$p" >"$(dirname "$CG")/cgroup.procs" 2>/dev/null; done <"$CG/cgroup.procs"
	rmdir "$CG" 2>/dev/null || { sleep 0.5; rmdir "$CG"; } || echo "could not remove $CG" >&2
}
mkdir "$CG" || watch_skip "cannot create $CG"
WATCH_CLEANUP_MORE=remove_cg
sh -c "echo \$\$ >'$CG/cgroup.procs' && exec '$VICTIM' --go '$WORK/go' --truth '$WORK/truth' \
	--pairs $PAIRS --rounds $ROUNDS --slow-round -1 --slow-ms 250" &
VPID=$!
WATCH_PIDS+=($VPID)
for _ in $(seq 50); do grep -qx "$VPID" "$CG/cgroup.procs" && break; sleep 0.1; done
grep -qx "$VPID" "$CG/cgroup.procs" || watch_die "the victim did not join $CG"
"$WHYSLOW" watch --trigger 200ms --min-interval 2s --spool-mb 1 --keep-mb 1 --spool "$SPOOL" \
	--cgroup "$CG" >"$WORK/watch.out" 2>"$WORK/watch.err" &
WPID=$!
WATCH_PIDS+=($WPID)
wait_watching $WPID || { cat "$WORK/watch.err" >&2; watch_die "the watch did not start"; }
PROGS=$(progs_of $WPID)
START=$(date +%s.%N)
touch "$WORK/go"
wait $VPID || watch_fail "watch_victim failed"
for _ in $(seq 300); do kill -0 $WPID 2>/dev/null || break; sleep 0.1; done
wait $WPID
rc=$?
END=$(date +%s.%N)
echo "--- watch stderr (exit $rc)"
cat "$WORK/watch.err"
[ $rc -eq 0 ] || watch_fail "watch exit status $rc"
check_detached $WPID "$PROGS"
ls -l "$SPOOL"

python3 - "$SPOOL" "$WORK/truth" "$WORK/watch.err" "$START" "$END" <<'PY' || watch_fail "the storm's dumps"
import glob, json, math, os, re, sys
spool, truth, err, start, end = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4]), float(sys.argv[5])
bad = []
slow = int(open(truth).read().split("slow_rounds")[1])
seen = int(re.search(r"(\d+) triggers? seen", open(err).read()).group(1))
dumps = sorted(glob.glob(spool + "/whyslow-*.data"))
names = [os.path.basename(d) for d in dumps]
sides = [json.load(open(d + ".json")) for d in dumps if os.path.exists(d + ".json")]
made = len(re.findall(r"dump on trigger", open(err).read()))
limit = math.ceil((end - start) / 2.0) + 1
print("slow waits %d, triggers seen %d, dumps made %d (at most %d), kept %s"
      % (slow, seen, made, limit, names))
if seen < slow:
    bad.append("the watch saw %d triggers, fewer than the %d slow waits" % (seen, slow))
if not 1 <= made <= limit:
    bad.append("%d dumps made in %.1f s with --min-interval 2s (at most %d)" % (made, end - start, limit))
if "whyslow-20000101T000000Z-1-0000.data" in names:
    bad.append("the oldest dump outlived the quota: %s" % names)
if len([n for n in names if not n.startswith("whyslow-2000")]) != made:
    bad.append("a dump of this watch was removed while an older one stayed: %s" % names)
total = sum(os.path.getsize(f) for f in glob.glob(spool + "/*"))
if total > 1 << 20:
    bad.append("the spool holds %d bytes, over --spool-mb 1" % total)
if not dumps:
    bad.append("no dump is left")
for s in sides:
    if s["window"]["bytes"] > s["window"]["keep_bytes"]:
        bad.append("the flight recorder held %d bytes, over --keep-mb" % s["window"]["bytes"])
    if s["reason"] != "trigger":
        bad.append("reason %r" % s["reason"])
# the kept dumps are the newest: their counts end at the total, the earlier ones were removed
stands = [s["triggers"] for s in sides]
print("triggers per kept dump:", stands, "dropped:", [s["dropped"] for s in sides])
if not any(t > 1 for t in stands):
    bad.append("no dump stands for more than one trigger: %s" % stands)
for b in bad:
    print("  " + b, file=sys.stderr)
sys.exit(1 if bad else 0)
PY
# every trigger is in a dump's count: the removed dumps' counts are in the watch's log
total=$(sed -n 's/.*dump on trigger (\([0-9]*\) triggers\{0,1\}).*/\1/p' "$WORK/watch.err" | paste -sd+ | bc)
seen=$(sed -n 's/.* \([0-9]*\) triggers\{0,1\} seen.*/\1/p' "$WORK/watch.err")
[ "$total" = "$seen" ] || watch_fail "the dumps stand for $total triggers, the watch saw $seen"
for d in "$SPOOL"/whyslow-2???????T??????Z-$WPID-*.data; do
	"$WHYSLOW" report "$d" >/dev/null 2>"$WORK/report.err" ||
		watch_fail "whyslow report $d: $(cat "$WORK/report.err")"
done
watch_end
