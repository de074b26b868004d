#!/bin/bash
# A wait ended by a signal names the signal and its sender (issue 10, item 7):
#  1. `whyslow run -- sleep` interrupted by SIGINT from this (untraced) shell: the sleep's chain
#     is one "signal" link naming SIGINT and this shell's pid, not "woken by <this shell>";
#  2. a traced shell sends SIGUSR1 to its own sleeping child: the link names the signal and the
#     chain goes on into the sender.
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

python3 - "$work/int.jsonl" "$(cat "$work/pid")" $$ "$work/usr1.jsonl" "$(cat "$work/child")" \
	<<'PY' || exit 1
import json, sys

def chains(path):
    return [json.loads(l) for l in open(path) if '"type":"chain"' in l]

int_path, victim, me, usr1_path = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
child = int(sys.argv[5])
c = [c for c in chains(int_path) if c["tid"] == victim and c["blocked_ns"] > 200_000_000]
assert c, "no chain for the sleep (tid %d) of more than 200ms: %s" % (victim, open(int_path).read())
l = c[0]["links"][0]
assert l["kind"] == "signal", "the sleep's wait is not a signal link: %s" % json.dumps(c[0]["links"])
assert l["signal"] == "SIGINT" and l["signo"] == 2, l
assert l["sender"] == me and l["woken_by"] == me, "sender %r, want this shell %d" % (l, me)
assert len(c[0]["links"]) == 1, "an untraced sender is named, not followed: %s" % c[0]["links"]
print("ok   SIGINT from pid %d: %s" % (me, l["evidence"]))

c = [c for c in chains(usr1_path) if c["tid"] == child and c["blocked_ns"] > 200_000_000]
assert c, "no chain for the sleep (tid %d) of more than 200ms: %s" % (child, open(usr1_path).read())
links = c[0]["links"]
assert links[0]["kind"] == "signal" and links[0]["signal"] == "SIGUSR1", links
assert links[0]["sender_comm"] == "sh", links[0]
assert len(links) >= 2 and links[1]["tid"] == links[0]["woken_by"] == links[0]["sender"], \
    "a traced sender is followed: %s" % links
print("ok   SIGUSR1 from the traced sh (tid %d), followed into it: %s"
      % (links[0]["sender"], links[1]["kind"]))
PY
echo "PASS signal_wake"
