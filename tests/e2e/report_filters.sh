#!/bin/bash
# report's filters (issue 15.4): --tid, --pid, --comm REGEX, --since/--until (a time as the text
# report prints it, or a duration from the start), on one recording of tests/programs/gt_idle
# under load; bad values: one line, exit 2.
#   report_filters.sh WHYSLOW PROGRAM      (exit 0 pass, 1 fail, 77 skip)
set -u
WHYSLOW=$1 PROG=$2
if [ "$(id -u)" != 0 ]; then
	[ "${CI:-}" = true ] && { echo "FAIL: needs root (CI=true: not skipping)"; exit 1; }
	echo "SKIP: needs root"; exit 77
fi
export TZ=UTC # the text report's times and the JSON's ts agree
work=$(mktemp -d /tmp/whyslow-filters.XXXXXX) || exit 1
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
D=$work/load.data
# reported at --min-block 1ms: recorded at its resolution (1ms / 64), not the default's
"$WHYSLOW" record --min-block 1ms -o "$D" -- "$PROG" --mode load --requests 6 >"$work/rec" 2>&1 ||
	{ cat "$work/rec"; fail "whyslow record exit $?"; }

# report [ARGS...] into $work/out.jsonl (all chains, idle ones too, so every thread shows)
rep() { "$WHYSLOW" report "$D" --format json --include-idle --min-block 1ms "$@" -o "$work/out.jsonl"; }
rep || fail "report"
cp "$work/out.jsonl" "$work/all.jsonl"

# a bad value: exit 2, one line on stderr that names the option
bad() {
	local want=$1
	shift
	"$WHYSLOW" report "$D" "$@" >"$work/bad.out" 2>"$work/bad.err"
	local rc=$?
	[ $rc -eq 2 ] || fail "report $*: exit $rc, want 2"
	[ "$(wc -l <"$work/bad.err")" -eq 1 ] && grep -q -- "$want" "$work/bad.err" ||
		fail "report $*: stderr is not one line naming $want: $(cat "$work/bad.err")"
	[ -s "$work/bad.out" ] && fail "report $*: wrote a report"
	echo "ok: report $* -> exit 2: $(cat "$work/bad.err")"
}
bad "--comm" --comm '('
bad "--since" --since 5
bad "--since" --since 25:00
bad "--until" --until yesterday
bad "--tid" --tid 0
bad "--until" --until

python3 - "$work" "$WHYSLOW" "$D" <<'PY' || exit 1
import datetime, json, subprocess, sys
w, whyslow, data = sys.argv[1:4]
def chains(path):
    return [o for o in map(json.loads, open(path)) if o["type"] == "chain"]
def rep(*args):
    r = subprocess.run([whyslow, "report", data, "--format", "json", "--include-idle",
                        "--min-block", "1ms", *args], capture_output=True, text=True)
    assert r.returncode == 0, "report %s: exit %d: %s" % (args, r.returncode, r.stderr)
    return [o for o in map(json.loads, r.stdout.splitlines()) if o["type"] == "chain"]
def key(c):
    return (c["tid"], c["start_ns"])
every = chains(w + "/all.jsonl")
comms = {c["comm"] for c in every}
assert {"gt-worker", "gt-srv"} <= comms, "the recording lacks threads: %s" % comms

# --tid, --pid
worker = next(c["tid"] for c in every if c["comm"] == "gt-worker")
got = rep("--tid", str(worker))
assert got and {c["tid"] for c in got} == {worker}, "--tid %d: %s" % (worker, {c["tid"] for c in got})
assert sorted(map(key, got)) == sorted(key(c) for c in every if c["tid"] == worker)
pid = every[0]["pid"]
got = rep("--pid", str(pid))
assert sorted(map(key, got)) == sorted(key(c) for c in every if c["pid"] == pid)
assert rep("--pid", "4194303") == [], "--pid of no process reported chains"

# --comm: a regex over the whole name
got = rep("--comm", "gt-(worker|srv)")
assert got and {c["comm"] for c in got} == {"gt-worker", "gt-srv"} & comms, {c["comm"] for c in got}
assert rep("--comm", "gt-w") == [], "--comm gt-w matched part of a name"
got = rep("--comm", "gt-worker")
assert got and {c["comm"] for c in got} == {"gt-worker"}
got = rep("--comm", "gt-srv", "--comm", "gt-hog")
assert sorted(map(key, got)) == sorted(key(c) for c in every if c["comm"] in ("gt-srv", "gt-hog"))

# --since/--until as the text report prints a time (ms, local time: TZ=UTC here)
def wall_us(c):
    t = datetime.datetime.strptime(c["ts"], "%Y-%m-%dT%H:%M:%S.%fZ")
    return (t - datetime.datetime(1970, 1, 1)).total_seconds() * 1e6
order = sorted(every, key=wall_us)
assert len(order) >= 4, "too few chains (%d) to cut" % len(order)
a, b = order[len(order) // 4], order[3 * len(order) // 4]
def hms(c):
    return c["ts"][11:23]  # "14:32:07.001", as the text report prints it
cut_a = wall_us(a) // 1000 * 1000  # the text's time is truncated to the millisecond
cut_b = wall_us(b) // 1000 * 1000
got = rep("--since", hms(a), "--until", hms(b))
want = [c for c in every if cut_a <= wall_us(c) < cut_b]
assert sorted(map(key, got)) == sorted(map(key, want)), \
    "--since %s --until %s: %d chains, want %d" % (hms(a), hms(b), len(got), len(want))
assert 0 < len(got) < len(every), "the cut kept %d of %d" % (len(got), len(every))
# durations from the start
assert sorted(map(key, rep("--since", "0", "--until", "10m"))) == sorted(map(key, every))
assert rep("--since", "60m") == [], "--since 60m (after the end) reported chains"
# --until before --since: refused
r = subprocess.run([whyslow, "report", data, "--since", hms(b), "--until", hms(a)],
                   capture_output=True, text=True)
assert r.returncode != 0 and "--until is not after --since" in r.stderr, (r.returncode, r.stderr)
# the text report: every chain printed begins at or after --since
r = subprocess.run([whyslow, "report", data, "--include-idle", "--min-block", "1ms", "--top",
                    "1000", "--since", hms(b)], capture_output=True, text=True)
assert r.returncode == 0, r.stderr
times = [l.split()[0] for l in r.stdout.splitlines() if l[:2].isdigit() and l[2] == ":"]
assert times and all(t >= hms(b) for t in times), "text --since %s printed %s" % (hms(b), times[:3])
# the critical path is the command's wall time: the same whatever the filters choose
def critpath(*args):
    r = subprocess.run([whyslow, "report", data, "--format", "json", *args],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return [o for o in map(json.loads, r.stdout.splitlines()) if o["type"] == "critical_path"]
whole = critpath()
assert whole, "no critical path in the report of a run"
for args in (("--comm", "gt-hog"), ("--since", "60m"), ("--tid", str(worker))):
    assert critpath(*args) == whole, "the critical path changed with %s" % (args,)
print("PASS: --tid/--pid/--comm/--since/--until on %d chains (%d in the cut)" % (len(every), len(got)))
PY
