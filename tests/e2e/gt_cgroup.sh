#!/bin/bash
# gt_cgroup.sh — ground truth for a noisy neighbour named by its cgroup (issue 32, item 4). Two
# cpu cgroups made here: A holds a latency-sensitive reader (on CPU 0, woken every 10ms, 200 times, by a
# writer on CPU 1 that stays in whyslow's own cgroup), B a CPU hog pinned to CPU 0, untraced.
# Each line costs the reader 1ms of CPU, and A weighs a tenth of B (cpu.shares 100 on v1,
# cpu.weight 10 on v2), so the hog preempts it and it waits for CPU 0 behind the hog: its
# runqueue waits there are mostly the hog's doing. Recorded, then
# reported:
#   - some runqueue wait of A's reader on CPU 0 names B's path (JSON ran[].cgroup) for at least
#     half of it, and the hog is never named with another path; the text says "held by ... of /B";
#   - every chain carries its victim's cgroup, and each of the victim's own links the same one;
#     the reader's, once it has exec'd after moving itself into A (its cgroup is read again when
#     it takes a new name), is A's path;
#   - report --cgroup-match keeps exactly the chains of A's path, and none for a path nobody has.
# The paths are the cpu controller's hierarchy's on v1 (/sys/fs/cgroup/cpu), the unified one
# on v2, relative to its root: "/<name>".
#   gt_cgroup.sh WHYSLOW   (exit 77 = skipped when not root or no cpu controller, a failure
#                           under CI=true)
set -u
WHYSLOW=$1
. "$(dirname "${BASH_SOURCE[0]}")/skip.sh"
[ "$(id -u)" = 0 ] || skip "needs root (cgroups, BPF)"
[ "$(nproc)" -ge 2 ] || skip "needs CPUs 0 and 1"
a=whyslow-test-cg-a-$$-$RANDOM
b=whyslow-test-cg-b-$$-$RANDOM
if [ -f /sys/fs/cgroup/cpu/cpu.shares ]; then
	root=/sys/fs/cgroup/cpu # cgroup v1
elif [ -f /sys/fs/cgroup/cgroup.controllers ] && grep -qw cpu /sys/fs/cgroup/cgroup.controllers; then
	root=/sys/fs/cgroup # cgroup v2
else
	skip "no cpu cgroup controller (v1 /sys/fs/cgroup/cpu or v2 /sys/fs/cgroup)"
fi
work=$(mktemp -d /tmp/whyslow-cg.XXXXXX)
hog=
cleanup() {
	[ -n "$hog" ] && kill "$hog" 2>/dev/null
	wait 2>/dev/null
	for cg in "$root/$a" "$root/$b"; do
		[ -d "$cg" ] || continue
		# move anything left in the group out before removing it
		while read -r p; do echo "$p" >"$root/cgroup.procs" 2>/dev/null; done <"$cg/cgroup.procs"
		rmdir "$cg" || echo "gt_cgroup.sh: could not remove $cg" >&2
	done
	[ -n "${KEEP:-}" ] && echo "kept $work" || rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP
mkdir "$root/$a" "$root/$b" || skip "cannot create cgroups under $root"
if [ -f "$root/$a/cpu.shares" ]; then
	echo 100 >"$root/$a/cpu.shares"
else
	echo 10 >"$root/$a/cpu.weight"
fi || { echo "FAIL: cannot set the weight of $root/$a"; exit 1; }

# the hog moves itself into B, then becomes a busy loop on CPU 0
sh -c 'echo $$ >"$1/cgroup.procs" && exec taskset -c 0 perl -e "\$0 = q(cg-hog); 1 while 1"' \
	sh "$root/$b" &
hog=$!
sleep 0.3
grep -q "$b" "/proc/$hog/cgroup" || { echo "FAIL: the hog is not in $b"; exit 1; }

# the writer stays where whyslow runs; the reader's shell moves itself into A, then becomes it
cat >"$work/writer" <<'SH'
#!/bin/sh
exec taskset -c 1 perl -e '$| = 1; for (1..200) { select(undef, undef, undef, 0.01); print "\n" }'
SH
cat >"$work/reader" <<'SH'
#!/bin/sh
echo $$ >"$2" && echo $$ >"$1/cgroup.procs" && exec taskset -c 0 perl -MTime::HiRes=time -e '$0 = "cg-victim";
	while (<STDIN>) { my $t = time + 0.001; 1 while time < $t }'
SH
chmod +x "$work/writer" "$work/reader"
"$WHYSLOW" record -o "$work/rec.data" --min-block 2ms -- \
	sh -c '"$1" | "$2" "$3" "$4"' sh "$work/writer" "$work/reader" "$root/$a" "$work/reader.pid" >"$work/rec.out" 2>&1 ||
	{ echo "FAIL: whyslow record exited $?"; cat "$work/rec.out"; exit 1; }
"$WHYSLOW" report "$work/rec.data" --format json >"$work/out.jsonl" 2>"$work/err" ||
	{ echo "FAIL: report --format json exited $?"; cat "$work/err"; exit 1; }
"$WHYSLOW" report "$work/rec.data" >"$work/out.txt" 2>"$work/err" ||
	{ echo "FAIL: report exited $?"; cat "$work/err"; exit 1; }

python3 "$(dirname "$0")/check_roots.py" "$work/out.jsonl" || { echo "FAIL: check_roots.py"; exit 1; }
# Perfetto: processes grouped by cgroup (check_perfetto.py), the reader's under A, apart from the
# writer's (whyslow's own cgroup)
"$WHYSLOW" report "$work/rec.data" --format perfetto >"$work/trace.json" 2>"$work/err" ||
	{ echo "FAIL: report --format perfetto exited $?"; cat "$work/err"; exit 1; }
python3 "$(dirname "$0")/check_perfetto.py" "$work/trace.json" || { echo "FAIL: check_perfetto.py"; exit 1; }
python3 - "$work/trace.json" "/$a" "$(cat "$work/reader.pid")" <<'PY' || { echo "FAIL: see above"; exit 1; }
import json, sys

evs = json.load(open(sys.argv[1]))["traceEvents"]
cga, reader = sys.argv[2], int(sys.argv[3])
meta = {(e["name"], e["pid"]): e["args"] for e in evs if e.get("ph") == "M" and e["pid"] == e["tid"]}
label = meta.get(("process_labels", reader), {}).get("labels")
assert label == cga, "the reader's process is labelled %r, want %r" % (label, cga)
idx = meta[("process_sort_index", reader)]["sort_index"]
others = {a["labels"]: meta[("process_sort_index", pid)]["sort_index"]
          for (name, pid), a in meta.items() if name == "process_labels" and a["labels"] != cga}
assert others, "no process of another cgroup has a label"
assert idx not in others.values(), "A shares its sort index with %r" % others
print("Perfetto: the reader's process is under %s (sort index %d), apart from %s" % (cga, idx, others))
PY
python3 - "$work/out.jsonl" "/$a" "/$b" "$hog" "$(cat "$work/reader.pid")" <<'PY' || { echo "FAIL: see above"; exit 1; }
import json, sys

path, cga, cgb, hog, reader = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
chains = [json.loads(l) for l in open(path) if '"type":"chain"' in l]
assert chains, "no chain reported"
bad = []
for c in chains:
    assert "cgroup" in c, "a chain has no cgroup key: %s" % c
    for l in c["links"]:
        assert "cgroup" in l, "a link has no cgroup key: %s" % l
        if l["tid"] == c["tid"] and l["cgroup"] != c["cgroup"]:
            bad.append("the victim's %s link has cgroup %r, its chain %r" % (l["kind"], l["cgroup"], c["cgroup"]))
# the reader's shell moved itself into A, then exec'd: the names after it are A's
victims = [c for c in chains if c["pid"] == reader and c["comm"] in ("perl", "cg-victim")]
assert victims, "no chain of the reader (pid %d) after its exec" % reader
for c in victims:
    if c["cgroup"] != cga:
        bad.append("a chain of the reader has cgroup %r, want %r" % (c["cgroup"], cga))
waits = [l for c in chains for l in c["links"]
         if l["kind"] == "runqueue" and l.get("cpu") == 0 and l["cgroup"] == cga]
assert waits, "no runqueue wait of A's threads on CPU 0 reported"
named = 0
for w in waits:
    by_b = sum(r["ns"] for r in w.get("ran", []) if r.get("cgroup") == cgb)
    wrong = [r for r in w.get("ran", []) if r["tid"] == hog and r.get("cgroup") != cgb]
    if wrong:
        bad.append("the hog is named with cgroup %r, want %r" % (wrong[0].get("cgroup"), cgb))
    if by_b >= 0.5 * w["duration_ns"]:
        named += 1
print("%d of %d runqueue waits on CPU 0 name %s for at least half of the wait" % (named, len(waits), cgb))
if not named:
    bad.append("no runqueue wait names the hog's cgroup %s for half of it" % cgb)
for b in bad[:10]:
    print("FAIL: " + b)
sys.exit(1 if bad else 0)
PY
grep -q "held by .*thread.* of /$b (" "$work/out.txt" ||
	{ echo "FAIL: the text report names no holder's cgroup /$b"; cat "$work/out.txt"; exit 1; }
grep -m1 "held by .* of /$b" "$work/out.txt"

# --cgroup-match: A's chains are kept, and none is kept for a path no thread had
heads() { # the cgroup of each chain's victim, one a line
	python3 -c 'import json, sys
for l in sys.stdin:
    if "\"type\":\"chain\"" in l:
        print(json.loads(l)["cgroup"])'
}
n_all=$(heads <"$work/out.jsonl" | grep -cx "/$a")
"$WHYSLOW" report "$work/rec.data" --format json --cgroup-match "^/$a\$" >"$work/a.jsonl" ||
	{ echo "FAIL: report --cgroup-match exited $?"; exit 1; }
n_a=$(heads <"$work/a.jsonl" | grep -cx "/$a")
n_other=$(heads <"$work/a.jsonl" | grep -cvx "/$a")
n_none=$("$WHYSLOW" report "$work/rec.data" --format json --cgroup-match 'no-such-group' | heads | wc -l)
echo "chains: $n_all of A; with --cgroup-match ^/$a\$ $n_a of A and $n_other others; $n_none with no-such-group"
[ "$n_a" = "$n_all" ] && [ "$n_other" = 0 ] && [ "$n_none" = 0 ] || { echo "FAIL: --cgroup-match"; exit 1; }
"$WHYSLOW" report "$work/rec.data" --cgroup-match '(' >/dev/null 2>"$work/err"
rc=$?
[ "$rc" = 2 ] && [ "$(wc -l <"$work/err")" = 1 ] ||
	{ echo "FAIL: a bad --cgroup-match exited $rc, want 2 and one line:"; cat "$work/err"; exit 1; }

# Perfetto: the reader's thread track names its cgroup
"$WHYSLOW" report "$work/rec.data" --format perfetto -o "$work/trace.json" 2>"$work/err" ||
	{ echo "FAIL: report --format perfetto exited $?"; cat "$work/err"; exit 1; }
python3 - "$work/trace.json" "/$a" "$(cat "$work/reader.pid")" <<'PY' || { echo "FAIL: the Perfetto tracks' cgroup"; exit 1; }
import json, sys

events = json.load(open(sys.argv[1]))["traceEvents"]
tracks = [e for e in events if e.get("ph") == "M" and e.get("name") == "thread_name"
          and e["tid"] == int(sys.argv[3])]
assert tracks, "no thread track of the reader"
assert all(t["args"].get("cgroup") == sys.argv[2] for t in tracks), tracks
print("the Perfetto track of the reader has cgroup %s" % sys.argv[2])
PY

echo "PASS: gt_cgroup"
