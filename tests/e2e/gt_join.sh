#!/bin/bash
# Ground truth "join" (issue 34, item 3): the critical path covers the waits still open when
# tracing ended. tests/programs/gt_join's main thread waits in pthread_join for good (its thread
# reads a pipe nobody writes to); --duration 2s ends tracing with that wait open.
#  1. `run --format json` (the live resolution: the switch-out into the join is held back, and
#     no record ever ends it): the critical path's largest part is the join's open wait, on its
#     futex, at least 80% of the run, said open; CPU work is not the whole path; its user stack
#     (read at the end) names it a thread join, in main, and the open wait follows the thread
#     it joins (the tid word);
#  2. `record --live` in text (resolution 0: the switch-out is written) says the same, and
#     `report` of that recording (JSON and text) says it again, from the open waits it carries
#     (a recording keeps no user stacks of them: both name the futex only).
#   gt_join.sh WHYSLOW PROGRAM CHECK_CRITPATH      (exit 0 pass, 1 fail, 77 skip)
set -u
WHYSLOW=$1 PROG=$2 CHECK=$3
if [ "$(id -u)" != 0 ]; then
	[ "${CI:-}" = true ] && { echo "FAIL: needs root (CI=true: not skipping)"; exit 1; }
	echo "SKIP: needs root"; exit 77
fi
work=$(mktemp -d /tmp/whyslow-join.XXXXXX) || exit 1
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; for f in "$work"/*.err; do echo "--- $f"; cat "$f"; done; exit 1; }

# the command is still running when --duration ends: run ends it with SIGTERM (143)
"$WHYSLOW" run --as-root --duration 2s --format json -o "$work/run.jsonl" -- "$PROG" \
	>"$work/run.truth" 2>"$work/run.err"
rc=$?
[ $rc -eq 143 ] || fail "whyslow run exited $rc, want 143 (the command ended by SIGTERM)"
python3 "$CHECK" "$work/run.jsonl" --open futex || fail "run: check_critpath.py (see above)"

"$WHYSLOW" record --as-root --duration 2s --format text --live "$work/live.txt" \
	-o "$work/t.data" -- "$PROG" >"$work/rec.truth" 2>"$work/rec.err"
rc=$?
[ $rc -eq 143 ] || fail "whyslow record exited $rc, want 143"
"$WHYSLOW" report --format json -o "$work/rep.jsonl" "$work/t.data" 2>"$work/rep.err" ||
	fail "report --format json exited $?"
python3 "$CHECK" "$work/rep.jsonl" --open futex || fail "report: check_critpath.py (see above)"
# roots agree with their segments in every output (issue 34.4)
python3 "$(dirname "$0")/check_roots.py" "$work/run.jsonl" "$work/rep.jsonl" || fail "check_roots.py"
"$WHYSLOW" report -o "$work/rep.txt" "$work/t.data" 2>"$work/rep.err" ||
	fail "report (text) exited $?"

python3 - "$work" <<'PY' || fail "see above"
import json, re, sys
w = sys.argv[1]

def objs(path):
    return [json.loads(l) for l in open(path) if l.strip()]

def check_json(path, truth, live):
    o = objs(path)
    cp = next(x for x in o if x["type"] == "critical_path")
    summary = o[-1]
    assert cp["tid"] == truth["main_tid"], "%s: the path follows tid %d, not main %d" % (
        path, cp["tid"], truth["main_tid"])
    assert cp["wall_ns"] >= 0.8 * summary["duration_ns"], \
        "%s: the path covers %d ns of %d traced" % (path, cp["wall_ns"], summary["duration_ns"])
    work = sum(p["ns"] for p in cp["parts"] if p["what"].startswith("CPU work"))
    assert work < 0.2 * cp["wall_ns"], "%s: CPU work is %d ns of %d" % (path, work, cp["wall_ns"])
    opens = [p for p in cp["parts"] if p["open"]]
    assert "FUTEX_WAIT_BITSET" in opens[0]["what"], "%s: %r" % (path, opens[0]["what"])
    # the open waits themselves: the reader's is in read, the main thread's on the same futex
    ow = {x["tid"]: x for x in o if x["type"] == "open_wait"}
    assert truth["reader_tid"] in ow and truth["main_tid"] in ow, "%s: open waits %s" % (path, sorted(ow))
    if live:
        # read while it waits, its user stack tells a join: named as one, in the code, and
        # followed into the thread it waits for (the word holds its tid until it exits)
        assert "a thread join" in opens[0]["what"] and "in main (gt_join)" in opens[0]["what"], \
            "%s: the join is not named: %r" % (path, opens[0]["what"])
        m = ow[truth["main_tid"]]
        assert m.get("object") == "join" and m.get("owner") == truth["reader_tid"] and \
            m.get("owner_evidence") == "tid_word", "%s: main's open wait %s" % (
                path, {k: m.get(k) for k in ("object", "owner", "owner_evidence")})
        assert [l["tid"] for l in m["links"]] == [truth["reader_tid"]], "%s: links %s" % (
            path, m["links"])
    print("ok: %s: %.0f%% %s" % (path, 100 * opens[0]["share"], opens[0]["what"]))

def check_text(path, live):
    lines = open(path).read().splitlines()
    i = next(i for i, l in enumerate(lines) if l.startswith("Critical path of the command"))
    # a recording keeps no user stacks of its open waits: report names the futex only
    on = (r"a thread join \(futex 0x[0-9a-f]+, FUTEX_WAIT_BITSET, in \w+\): it waits for a thread to exit, in main \(gt_join\).*"
          if live else r"futex 0x[0-9a-f]+ \(FUTEX_WAIT_BITSET\)$")
    m = re.match(r"\s+([\d.]+)%\s+\S+\s+still blocked when tracing ended, on " + on, lines[i + 1])
    assert m and float(m.group(1)) >= 80, "%s: the path's first part is %r" % (path, lines[i + 1])
    print("ok: %s: %s" % (path, lines[i + 1].strip()))

check_json(w + "/run.jsonl", json.loads(open(w + "/run.truth").readline()), True)
check_json(w + "/rep.jsonl", json.loads(open(w + "/rec.truth").readline()), False)
check_text(w + "/live.txt", False)  # record: no stacks kept, as report
check_text(w + "/rep.txt", False)
PY
echo "PASS gt_join"
