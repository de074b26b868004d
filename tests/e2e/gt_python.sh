#!/bin/bash
# Ground truth "python" (issue 33): tests/programs/gt_python.py blocks thread py-victim in
# Worker.wait_for_lock() on a threading.Lock that py-holder holds in hold_lock() across a 300 ms
# sleep. whyslow's chain must name, with file and line as the interpreter itself wrote them in
# the truth file: the victim's Python frames at its wait (Worker.wait_for_lock <- run_victim),
# the holder's at the wakeup (its release) and at its own wait (its sleep) — in JSON (live and
# from a recording), text, folded stacks and Perfetto (tests/e2e/check_python.py). Then the
# holder reads a throttled disk instead (a chain from Python to the device), and
# `whyslow stuck` on a Python deadlock (Debian's 3.11): each thread's stack, read from /proc and
# the process's memory, names its Python function at the line of the lock it waits for; and on a
# GIL kept across a blocking C call: the other threads wait for the GIL, held by that thread.
# Debian's /usr/bin/python3.11 always (CI fails without it); pyenv's 3.11.7 (libpython), 3.12.1
# and 3.13.0 when present (said when not).
#   gt_python.sh WHYSLOW PROGRAM CHECK      (exit 0 pass, 1 fail, 77 skip)
set -u
WHYSLOW=$1 PROG=$2 CHECK=$3
. "$(dirname "${BASH_SOURCE[0]}")/skip.sh"
[ "$(id -u)" = 0 ] || skip "needs root"
[ -x /usr/bin/python3.11 ] || skip "no /usr/bin/python3.11 (Debian 12's python3.11)"
work=$(mktemp -d /tmp/whyslow-python.XXXXXX) || exit 1
SLOWDISK=$(dirname "$0")/slowdisk.sh
export SLOWDISK_STATE=$work/slowdisk
trap '"$SLOWDISK" teardown >/dev/null; rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

# one run, retried once when the program says its scenario did not happen (a loaded machine)
one() { # PY TAG
	local py=$1 d=$work/$2 st
	mkdir -p "$d"
	for try in 1 2; do
		"$WHYSLOW" run --format json -o "$d/live.jsonl" --perfetto "$d/trace.json" -- \
			"$py" "$PROG" "$d/truth.json"
		st=$?
		[ $st = 2 ] && continue
		[ $st = 0 ] || fail "$2: whyslow run exit $st"
		break
	done
	[ $st = 0 ] || fail "$2: the scenario did not happen twice"
	"$WHYSLOW" record -o "$d/rec.data" -- "$py" "$PROG" "$d/truth-rec.json" >/dev/null 2>&1 ||
		fail "$2: whyslow record exit $?"
	"$WHYSLOW" report "$d/rec.data" --format json >"$d/rec.jsonl" || fail "$2: report exit $?"
	"$WHYSLOW" report "$d/rec.data" --format folded >"$d/folded.txt" || fail "$2: folded exit $?"
	# the victim's own waits in text (the main thread's join is as long as its wait)
	tid=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["victim"]["tid"])' \
		"$d/truth-rec.json") || fail "$2: no truth file"
	"$WHYSLOW" report "$d/rec.data" --tid "$tid" >"$d/report.txt" || fail "$2: report exit $?"
	python3 "$CHECK" "$d" || fail "$2: see above"
}

# Issue 33's "Done when": the holder reads a throttled disk while it holds the lock (one 4 KiB
# O_DIRECT read at 3 IOPS from a fresh blkio group: ~330 ms). The chain goes from the victim's
# Python function through the holder's release to its read, each at the line the interpreter
# gives, and its root is that device (check_python.py). A fresh group for each try: a group that
# let a read through may let the next one through at once.
disk() { # PY TAG
	local d=$work/disk-$2 setup dev cg st
	if [ ! -d /sys/fs/cgroup/blkio ]; then
		[ "${CI:-}" = true ] && fail "disk: no cgroup-v1 blkio hierarchy (CI=true: not skipping)"
		echo "  skipped disk: no cgroup-v1 blkio hierarchy"
		return 0
	fi
	mkdir -p "$d"
	if [ -z "${slow_dev:-}" ]; then # one loop device for every interpreter
		setup=$("$SLOWDISK" setup) || fail "disk: slowdisk.sh setup"
		slow_dev=$(sed -n 's/^DEV=//p' <<<"$setup")
	fi
	dev=$slow_dev
	for try in 1 2 3; do
		cg=$("$SLOWDISK" cgroup "$dev" 3) || fail "disk: slowdisk.sh cgroup"
		"$WHYSLOW" run --format json -o "$d/live.jsonl" -- "$1" "$PROG" "$d/truth.json" \
			--dev "$dev" --cgroup "$cg"
		st=$?
		[ $st = 2 ] && continue
		[ $st = 0 ] || fail "disk $2: whyslow run exit $st"
		break
	done
	[ $st = 0 ] || fail "disk $2: the scenario did not happen three times"
	python3 "$CHECK" --json "$d/live.jsonl" "$d/truth.json" || fail "disk $2: see above"
}

# `whyslow stuck` on a Python deadlock: each thread's stack, read from /proc and the process's
# memory (not BPF), names its Python function at the line of the lock it waits for.
stuck() { # PY
	local py=$1 d=$work/stuck pid st
	mkdir -p "$d"
	cat >"$d/dead.py" <<'PYEOF'
import json, sys, threading, time
a, b = threading.Lock(), threading.Lock()
truth = {}
def a_then_b():
    with a:
        time.sleep(0.2)
        truth["a_then_b"] = {"tid": threading.get_native_id(), "line": sys._getframe().f_lineno + 1}
        with b:
            pass
def b_then_a():
    with b:
        time.sleep(0.2)
        truth["b_then_a"] = {"tid": threading.get_native_id(), "line": sys._getframe().f_lineno + 1}
        with a:
            pass
ts = [threading.Thread(target=a_then_b, daemon=True), threading.Thread(target=b_then_a, daemon=True)]
for t in ts: t.start()
time.sleep(0.6)
json.dump(truth, open(sys.argv[1], "w"))
time.sleep(30)
PYEOF
	"$py" "$d/dead.py" "$d/truth.json" & pid=$!
	for _ in $(seq 50); do [ -s "$d/truth.json" ] && break; sleep 0.1; done
	"$WHYSLOW" stuck --format json "$pid" >"$d/stuck.jsonl"; st=$?
	kill "$pid"; wait "$pid" 2>/dev/null
	python3 - "$d" <<'PYEOF' || fail "stuck: see above"
import json, sys
d = sys.argv[1]
truth = json.load(open(d + "/truth.json"))
waits = {o["tid"]: o for o in map(json.loads, open(d + "/stuck.jsonl")) if o.get("type") == "open_wait"}
for fn, t in truth.items():
    py = [f for f in waits.get(t["tid"], {}).get("ustack", []) if f.get("lang") == "python"]
    print("  stuck: tid %d: %s" % (t["tid"], " <- ".join("%s:%s" % (f["function"], f["line"]) for f in py)))
    assert py and (py[0]["function"], py[0]["line"]) == (fn, t["line"]), "want %s:%d" % (fn, t["line"])
PYEOF
}

# `whyslow stuck` on a GIL kept across a blocking C call (an extension's sleep through ctypes'
# PyDLL, which does not release the GIL): the other Python threads wait for the GIL, held by
# that thread, which is asleep. take_gil wakes every 5 ms, so no single futex wait is long: the
# GIL's own state (locked, last_holder, switch_number unchanged between stuck's two samples)
# names the wait and its holder.
stuck_gil() { # PY TAG
	local py=$1 d=$work/stuck-gil-$2 pid
	mkdir -p "$d"
	cat >"$d/gilhang.py" <<'PYEOF'
import ctypes, json, sys, threading, time
truth = {"waiters": []}
def spin():
    truth["waiters"].append(threading.get_native_id())
    while True:
        pass
def hog():
    truth["holder"] = threading.get_native_id()
    json.dump(truth, open(sys.argv[1], "w"))
    ctypes.PyDLL(None).sleep(30)  # a C call that keeps the GIL while it sleeps
threading.Thread(target=spin, daemon=True).start()
time.sleep(0.2)
threading.Thread(target=hog, daemon=True).start()
time.sleep(30)
PYEOF
	"$py" "$d/gilhang.py" "$d/truth.json" & pid=$!
	for _ in $(seq 50); do [ -s "$d/truth.json" ] && break; sleep 0.1; done
	sleep 0.3 # the waiters asleep in take_gil
	# A waiter wakes every 5 ms to ask for the GIL: a sample that finds it awake (runnable, on a
	# busy machine for longer) sees no wait, as a user running stuck again would not. Three tries.
	local try ok=1
	for try in 1 2 3; do
		"$WHYSLOW" stuck --format json "$pid" >"$d/stuck.jsonl"
		"$WHYSLOW" stuck "$pid" >"$d/stuck.txt"
		python3 - "$d" <<'PYEOF' && { ok=0; break; }
import json, sys
d = sys.argv[1]
truth = json.load(open(d + "/truth.json"))
waits = {o["tid"]: o for o in map(json.loads, open(d + "/stuck.jsonl")) if o.get("type") == "open_wait"}
for tid in truth["waiters"]:
    w = waits.get(tid)
    assert w, "the spinning thread %d is not reported: %s" % (tid, sorted(waits))
    print("  stuck gil: tid %d: lock %s (%s), owner %s by %s" % (tid, w.get("lock"), w.get("lock_name"),
                                                            w.get("owner"), w.get("owner_evidence")))
    assert w.get("lock") == "gil" and w.get("lock_name", "").startswith("the GIL (python3."), w
    assert (w.get("owner"), w.get("owner_evidence")) == (truth["holder"], "gil_last_holder"), w
    assert w["links"] and w["links"][0]["tid"] == truth["holder"] and w["links"][0]["kind"] == "sleep", w["links"]
text = open(d + "/stuck.txt").read()
want = "held by tid %d (python3" % truth["holder"]
assert "on the GIL (python3." in text and want in text, text
PYEOF
		echo "  stuck gil ($2): try $try did not see every waiter asleep for the GIL"
	done
	kill "$pid"; wait "$pid" 2>/dev/null
	[ $ok = 0 ] || fail "stuck on the GIL ($2): three tries, see above"
}

# A program that exits 50 ms after its waits: its frames are still named (from its memory, read
# while the capture waited in the ring behind slower ones). A race whyslow can lose on a machine
# too busy to let it run (CI: MALLOC_PERTURB_ and another test beside it), so one of three runs
# must name them; before the names were read early, none of 3 did here even on a quiet machine.
exit_at_once() { # PY
	local d=$work/at-once st
	mkdir -p "$d"
	for attempt in 1 2 3; do
		for try in 1 2; do
			GT_PYTHON_LINGER=0.05 "$WHYSLOW" run --format json -o "$d/live.jsonl" -- \
				"$1" "$PROG" "$d/truth.json"
			st=$?
			[ $st = 2 ] && continue
			break
		done
		[ $st = 0 ] || fail "exit at once: whyslow run exit $st"
		python3 "$CHECK" --json "$d/live.jsonl" "$d/truth.json" && return 0
		echo "  exit at once: attempt $attempt lost the race"
	done
	fail "exit at once: three runs in a row without the victim's Python frames"
}

one /usr/bin/python3.11 debian-3.11
disk /usr/bin/python3.11 debian-3.11
exit_at_once /usr/bin/python3.11
stuck /usr/bin/python3.11
stuck_gil /usr/bin/python3.11 debian-3.11
for v in 3.11.7 3.12.1 3.13.0; do
	py=/root/.pyenv/versions/$v/bin/python3
	if [ -x "$py" ]; then one "$py" "pyenv-$v" && disk "$py" "pyenv-$v" && stuck_gil "$py" "pyenv-$v"; else echo "  skipped pyenv $v: not installed"; fi
done
echo "PASS"
