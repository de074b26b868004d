#!/bin/bash
# A wait ended by a signal names the signal and its sender; the signal is its cause only where
# the thread waited for it (issue 10 item 7, issue 34 item 1: ending is not causing):
#  1. `whyslow run -- sleep` interrupted by SIGINT from this (untraced) shell: the sleep's chain
#     is one "sleep" link (what it waited for, the root), "interrupted by" SIGINT and this shell,
#     which is not followed;
#  2. a traced shell sends SIGUSR1 to its own sleeping child: the same, the sender not followed
#     (it ended the sleep, it did not cause it);
#  3. a traced Python waits for SIGUSR1 in sigwait and the traced shell sends it: that wait is
#     a "signal" link, and the chain goes on into the sender.
#   signal_wake.sh WHYSLOW     (exit 77 = skipped when not root, unless CI=true)
set -u
WHYSLOW=$1
if [ "$(id -u)" != 0 ]; then
	[ "${CI:-}" = true ] && { echo "FAIL: needs root (CI=true: not skipping)"; exit 1; }
	echo "SKIP: needs root"; exit 77
fi
work=$(mktemp -d /tmp/whyslow-signal.XXXXXX)
trap 'rm -rf "$work"' EXIT

# 1. SIGINT from outside, as Ctrl-C would be (there the tty's kworker sends it)
"$WHYSLOW" run --format json -o "$work/int.jsonl" -- \
	sh -c "echo \$\$ >'$work/pid'; exec sleep 5" 2>"$work/int.err" &
wpid=$!
for _ in $(seq 100); do [ -s "$work/pid" ] && break; sleep 0.05; done
[ -s "$work/pid" ] || { echo "FAIL: the traced shell never started"; cat "$work/int.err"; exit 1; }
sleep 0.4 # the exec'd sleep is asleep by now
kill -INT "$(cat "$work/pid")"
wait $wpid
rc=$?
[ $rc -eq 130 ] || { echo "FAIL: whyslow run exited $rc, want 130 (the child died of SIGINT)"; cat "$work/int.err"; exit 1; }

# 2. SIGUSR1 from a traced sender
"$WHYSLOW" run --format json -o "$work/usr1.jsonl" -- \
	sh -c "sleep 5 & p=\$!; echo \$p >'$work/child'; sleep 0.4; kill -USR1 \$p; wait" \
	2>"$work/usr1.err" ||
	{ echo "FAIL: whyslow run (SIGUSR1) exited $?"; cat "$work/usr1.err"; exit 1; }

# 3. a wait for the signal (rt_sigtimedwait), sent by the traced shell
"$WHYSLOW" run --format json -o "$work/wait.jsonl" -- \
	sh -c "/usr/bin/python3 -c 'import os, signal, sys
signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGUSR1])
open(sys.argv[1], \"w\").write(str(os.getpid()))
signal.sigwait([signal.SIGUSR1])' '$work/waiter' & p=\$!
		while [ ! -s '$work/waiter' ]; do sleep 0.02; done; sleep 0.4; kill -USR1 \$p; wait" \
	2>"$work/wait.err" ||
	{ echo "FAIL: whyslow run (sigwait) exited $?"; cat "$work/wait.err"; exit 1; }

# roots agree with their segments in every output (issue 34.4)
python3 "$(dirname "$0")/check_roots.py" "$work/int.jsonl" "$work/usr1.jsonl" "$work/wait.jsonl" ||
	{ echo "FAIL: check_roots.py"; exit 1; }
python3 - "$work/int.jsonl" "$(cat "$work/pid")" $$ "$work/usr1.jsonl" "$(cat "$work/child")" \
	"$work/wait.jsonl" "$(cat "$work/waiter")" <<'PY' || exit 1
import json, sys

def chains(path):
    return [json.loads(l) for l in open(path) if '"type":"chain"' in l]

int_path, victim, me, usr1_path = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
child = int(sys.argv[5])
c = [c for c in chains(int_path) if c["tid"] == victim and c["blocked_ns"] > 200_000_000]
assert c, "no chain for the sleep (tid %d) of more than 200ms: %s" % (victim, open(int_path).read())
l = c[0]["links"][0]
assert l["kind"] == "sleep", "the sleep's wait is not named for what it waited for: %s" % (
    json.dumps(c[0]["links"]))
assert l.get("ended_by") == "signal" and l.get("ended_signal") == "SIGINT", l
assert l.get("ended_signo") == 2 and l.get("ended_sender") == me, "sender %r, want %d" % (l, me)
assert l["woken_by"] is None and len(c[0]["links"]) == 1, "the sender is not followed: %s" % (
    c[0]["links"])
assert "signal" not in c[0]["root"].lower(), "rooted at the signal: %s" % c[0]["root"]
print("ok   sleep interrupted by SIGINT from pid %d, root %r" % (me, c[0]["root"]))

c = [c for c in chains(usr1_path) if c["tid"] == child and c["blocked_ns"] > 200_000_000]
assert c, "no chain for the sleep (tid %d) of more than 200ms: %s" % (child, open(usr1_path).read())
links = c[0]["links"]
assert links[0]["kind"] == "sleep" and links[0].get("ended_signal") == "SIGUSR1", links
assert links[0].get("ended_sender_comm") == "sh", links[0]
assert len(links) == 1, "the traced sender ended the sleep, it did not cause it: %s" % links
print("ok   sleep interrupted by SIGUSR1 from the traced sh (tid %d), not followed"
      % links[0]["ended_sender"])

wait_path, waiter = sys.argv[6], int(sys.argv[7])
c = [c for c in chains(wait_path) if c["tid"] == waiter and c["blocked_ns"] > 200_000_000]
assert c, "no chain for the sigwait (tid %d) of more than 200ms: %s" % (waiter, open(wait_path).read())
links = c[0]["links"]
assert links[0]["kind"] == "signal" and links[0]["signal"] == "SIGUSR1", links
assert links[0]["syscall"]["name"] == "rt_sigtimedwait", links[0]["syscall"]
assert links[0]["sender_comm"] == "sh", links[0]
assert len(links) >= 2 and links[1]["tid"] == links[0]["woken_by"] == links[0]["sender"], \
    "a traced sender of a signal waited for is followed: %s" % links
print("ok   sigwait for SIGUSR1 from the traced sh (tid %d), followed into it: %s"
      % (links[0]["sender"], links[1]["kind"]))
PY
echo "PASS signal_wake"
