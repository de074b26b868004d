#!/bin/bash
# `whyslow stuck` prints each blocked thread's user stack (issue 34 item 6), run by an
# unprivileged user on its own process, without ptrace: tests/programs/gt_stuck waits has three
# threads blocked for good, each in a function of its own — on a mutex the main thread holds, on
# a condition variable, in a read() of an empty pipe. Each one's stack (JSON and text) names its
# function, innermost first; the condvar wait says it is one and looks for no lock holder. The
# same user on a process of root's gets no stack, and says why. Then `attach` to the program:
# the mutex wait in progress when tracing begins, ended during it, has the same stack in its
# chain. A CPython threading.Lock deadlock: each lock waiter says its lock is a semaphore, which
# names no owner. The user is made by this test and removed, its processes killed first.
#   stuck_stacks.sh WHYSLOW GT_STUCK CHECK_STUCK   (exit 77 = skipped when not root, unless CI=true)
set -u
WHYSLOW=$1 GT=$2 CHECK=$3
PYTHON=${PYTHON:-python3}
. "$(dirname "${BASH_SOURCE[0]}")/skip.sh"
fail() {
	echo "FAIL: $*"
	for f in "$work"/*; do [ -s "$f" ] && { echo "--- $f"; head -n 60 "$f"; }; done
	exit 1
}
[ "$(id -u)" = 0 ] || skip "needs root (to make a user to run as)"
for t in useradd userdel setpriv; do
	command -v $t >/dev/null || skip "$t not installed"
done
WHYSLOW=$(readlink -f "$WHYSLOW")
GT=$(readlink -f "$GT")
work=$(mktemp -d /tmp/whyslow-stuck-stacks.XXXXXX) || { echo "FAIL: mktemp"; exit 1; }
[ -n "${WHYSLOW_PLUGIN_DIR:-}" ] || fail "WHYSLOW_PLUGIN_DIR not set to the built plugins"
export WHYSLOW_PLUGIN_DIR

USER_NAME=wsstk$$
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null; done
	# userdel refuses a user with processes: every one of its is this test's
	pkill -KILL -u "$USER_NAME" 2>/dev/null
	sleep 0.2
	userdel "$USER_NAME" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP
useradd -M -r -s /usr/sbin/nologin "$USER_NAME" || fail "cannot make user $USER_NAME"
U_UID=$(id -u "$USER_NAME")
U_GID=$(id -g "$USER_NAME")
as_user() { setpriv --reuid "$U_UID" --regid "$U_GID" --clear-groups --inh-caps=-all "$@"; }

as_user "$GT" waits >"$work/truth" 2>"$work/gt.stderr" &
gt=$!
pids+=("$gt")
for _ in $(seq 200); do
	[ -s "$work/truth" ] && break
	kill -0 "$gt" 2>/dev/null || break
	sleep 0.05
done
[ -s "$work/truth" ] || fail "gt_stuck waits gave no truth line"
gt=$("$PYTHON" -c 'import json,sys; print(json.loads(open(sys.argv[1]).read())["pid"])' "$work/truth")
pids+=("$gt")
[ "$(stat -c %U "/proc/$gt")" = "$USER_NAME" ] || fail "gt_stuck does not run as $USER_NAME"

as_user timeout -s KILL 20 "$WHYSLOW" stuck --format json --min-block 1ms "$gt" \
	>"$work/stuck.jsonl" 2>"$work/stuck.stderr"
rc=$?
# the main thread holds the mutex and joins the thread that waits for it: a deadlock (exit 3),
# found through the join (the joined thread's tid word names the thread it waits for)
[ $rc = 3 ] || fail "stuck --format json exited $rc, want 3 (main holds the mutex and joins its waiter)"
as_user timeout -s KILL 20 "$WHYSLOW" stuck --min-block 1ms "$gt" >"$work/stuck.txt" 2>>"$work/stuck.stderr"
rc=$?
[ $rc = 3 ] || fail "stuck exited $rc, want 3"
cat "$work/stuck.txt"
mtid=$("$PYTHON" -c 'import json,sys; print(json.loads(open(sys.argv[1]).read())["mutex"]["tid"])' "$work/truth")
grep -Eq "^DEADLOCK: tid $gt \(gt_stuck\) waits for the exit of tid $mtid \(gt-mutex\) \(thread join 0x[0-9a-f]+\), which waits for mutex 0x[0-9a-f]+ held by tid $gt \(gt_stuck\)$" \
	"$work/stuck.txt" || fail "no DEADLOCK line through the join and the mutex"
"$PYTHON" "$CHECK" --truth "$work/truth" --json "$work/stuck.jsonl" --text "$work/stuck.txt" \
	--case stacks || fail "wrong stacks"

# a process of root's: the user may not read its registers or memory, and is told so
sleep 30 &
rootp=$!
pids+=("$rootp")
sleep 0.2
as_user timeout -s KILL 20 "$WHYSLOW" stuck --min-block 1ms "$rootp" >"$work/root.txt" 2>"$work/root.stderr"
rc=$?
cat "$work/root.txt"
[ $rc = 0 ] || fail "stuck on a process of root's exited $rc"
grep -q "no user stack: its registers are not readable (needs ptrace access)" "$work/root.txt" ||
	fail "stuck on a process of root's does not say why there is no stack"
grep -q '^    [^ (]' "$work/root.txt" && fail "a frame of root's process was printed to the user"
# attach (root, BPF) to the user's program: the mutex wait in progress then gets the same stack
# once it ends, though no BPF program saw it begin (its chain ends in the main thread's wait for
# a signal from outside, an idle one: --include-idle reports it)
GT_STUCK_UNTIL_USR1=1 as_user "$GT" waits >"$work/truth2" 2>"$work/gt2.stderr" &
for _ in $(seq 200); do
	[ -s "$work/truth2" ] && break
	sleep 0.05
done
[ -s "$work/truth2" ] || fail "gt_stuck waits (until SIGUSR1) gave no truth line"
gt2=$("$PYTHON" -c 'import json,sys; print(json.loads(open(sys.argv[1]).read())["pid"])' "$work/truth2")
pids+=("$gt2")
"$WHYSLOW" attach --include-idle --duration 30s --format json -o "$work/attach.jsonl" "$gt2" 2>"$work/attach.stderr" &
ws=$!
pids+=("$ws")
# once its BPF links exist it reads the waits in progress at once; then the mutex may go
for _ in $(seq 600); do
	ls -l "/proc/$ws/fd" 2>/dev/null | grep -q bpf_link && break
	kill -0 "$ws" 2>/dev/null || break
	sleep 0.05
done
sleep 1.5
kill -USR1 "$gt2"
wait "$ws"
rc=$?
[ $rc = 0 ] || fail "attach exited $rc"
"$PYTHON" "$CHECK" --truth "$work/truth2" --json "$work/attach.jsonl" --case attach_stack ||
	fail "wrong stack for the wait in progress at attach"
# A CPython threading.Lock deadlock, the user's own: each Lock is a semaphore, whose word names
# no owner. Each blocked thread says so, not a reason from reading it as a mutex.
cat >"$work/pydl.py" <<'PY'
import os, threading, time
a, b = threading.Lock(), threading.Lock()
def one(x, y):
    with x:
        time.sleep(0.3)
        with y:
            pass
t = [threading.Thread(target=one, args=p) for p in ((a, b), (b, a))]
[x.start() for x in t]
time.sleep(1)
print("ready", os.getpid(), flush=True)
[x.join() for x in t]
PY
chmod 644 "$work/pydl.py"
chmod 755 "$work"
as_user /usr/bin/python3 "$work/pydl.py" >"$work/pydl.out" 2>&1 &
py=$!
pids+=("$py")
for _ in $(seq 200); do
	grep -q ready "$work/pydl.out" 2>/dev/null && break
	sleep 0.05
done
grep -q ready "$work/pydl.out" || fail "the Python deadlock did not start"
py=$(awk '$1 == "ready" { print $2 }' "$work/pydl.out")
pids+=("$py")
as_user timeout -s KILL 20 "$WHYSLOW" stuck --format json --min-block 1ms "$py" \
	>"$work/pydl.jsonl" 2>"$work/pydl.stderr"
"$PYTHON" - "$work/pydl.jsonl" <<'PY' || fail "the Python Lock waits do not say they are semaphores"
import json, sys
waits = [json.loads(l) for l in open(sys.argv[1]) if '"open_wait"' in l]
sem = [w for w in waits if "semaphore" in (w.get("owner_unknown") or "")]
# the two workers (and the main thread's join, a semaphore too)
assert len(sem) >= 2, [(w["tid"], w.get("owner_unknown")) for w in waits]
assert not any("mutex" in (w.get("owner_unknown") or "") for w in sem), waits
print("python Lock waits:", [(w["tid"], w["owner_unknown"]) for w in sem])
PY
echo "PASS stuck_stacks"
