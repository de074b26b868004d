#!/bin/bash
# End-to-end ground truth "sig_holder" (issue 34): Ctrl-C on `whyslow run -- gt_sig_holder`, a
# victim asleep on a mutex whose holder reads a slow disk (tests/programs/gt_sig_holder.c).
# The signal ends the victim's wait, it did not cause it: the chain names the futex wait,
# "interrupted by signal SIGINT", then the holder the mutex word names ("held by", never
# "woken by"), and the holder's block I/O is the root. Once in JSON (checked field by field and
# by check_roots.py), once in text.
#   gt_sig_holder.sh WHYSLOW GT_SIG_HOLDER CHECK_ROOTS      (exit 0 pass, 1 fail, 77 skip)
. "$(dirname "$0")/gt_lib.sh" || exit 1

WHYSLOW=$1 GT=$2 CHECK_ROOTS=$3
PYTHON=${PYTHON:-python3}
# reads of 1000/IOPS ms, and the victim waits this long before the Ctrl-C: several reads
IOPS=4 WAIT_S=1.3
gt_own_setup sig_holder
[ -x "$WHYSLOW" ] && [ -x "$GT" ] && [ -r "$CHECK_ROOTS" ] ||
	gt_fail "usage: gt_sig_holder.sh WHYSLOW GT_SIG_HOLDER CHECK_ROOTS"

setup=$("$SLOWDISK" setup) || gt_fail "slowdisk.sh setup failed"
dev=$(sed -n 's/^DEV=//p' <<<"$setup")
[ -b "$dev" ] || gt_fail "slowdisk.sh setup gave no device: $setup"

# run NAME FORMAT: `whyslow run` of the program, ended as a terminal's Ctrl-C ends it
run() {
	local name=$1 format=$2 cg ws rc
	cg=$("$SLOWDISK" cgroup "$dev" "$IOPS") || gt_fail "slowdisk.sh cgroup failed"
	echo "== $name: device $dev, blkio group $cg ($IOPS read IOPS), Ctrl-C after ${WAIT_S}s"
	# SIGINT to the process group of whyslow and the command. A job started with & in a script
	# ignores SIGINT: perl puts it back to the default, in a group of its own.
	perl -e '$SIG{INT} = "DEFAULT"; setpgrp(0, 0); exec @ARGV or exit 127' \
		"$WHYSLOW" run --as-root --format "$format" -o "$GT_WORK/$name.out" -- \
		"$GT" --dev "$dev" --cgroup "$cg" --truth "$GT_WORK/$name.truth" \
		2>"$GT_WORK/$name.err" &
	ws=$!
	PIDS+=("$ws")
	for _ in $(seq 300); do
		[ -s "$GT_WORK/$name.truth" ] && break
		kill -0 "$ws" 2>/dev/null || break
		sleep 0.05
	done
	[ -s "$GT_WORK/$name.truth" ] || gt_fail "$name: gt_sig_holder wrote no truth: $(cat "$GT_WORK/$name.err")"
	sleep "$WAIT_S"
	kill -INT -- "-$ws"
	wait "$ws"
	rc=$?
	[ $rc -eq 130 ] || { cat "$GT_WORK/$name.err" >&2; gt_fail "$name: whyslow run exited $rc, want 130 (the command died of SIGINT)"; }
	[ -s "$GT_WORK/$name.out" ] || gt_fail "$name: no report in $GT_WORK/$name.out"
}

run json json
"$PYTHON" - "$GT_WORK/json.truth" "$GT_WORK/json.out" <<'PY' || gt_fail "json: wrong chain (see above)"
import json, sys
t = json.load(open(sys.argv[1]))
v, h = t["victim"]["tid"], t["holder"]["tid"]
chains = [json.loads(l) for l in open(sys.argv[2]) if '"type":"chain"' in l]
c = [c for c in chains if c["tid"] == v and c["links"][0]["kind"] == "futex"]
assert c, "no futex chain for the victim tid %d: %s" % (v, [x["links"][0]["kind"] for x in chains])
c = c[-1]
links = c["links"]
w = {k: v for k, v in links[0].items() if not k.endswith("stack")}  # shorter messages
print("victim tid %d: blocked %.0f ms, root %r, links %s" % (
    v, c["blocked_ns"] / 1e6, c["root"], [(l["kind"], l["tid"]) for l in links]))
assert int(w["addr"], 16) == int(t["mutex"], 16), "the futex is not the mutex: %s" % w
assert w.get("ended_by") == "signal" and w.get("ended_signal") == "SIGINT", \
    "the ending is not SIGINT: %s" % w
assert w["woken_by"] is None, "the holder did not wake the victim, nor did the sender: %s" % w
assert w.get("held_by") == h and w.get("owner_evidence") == "mutex_word", \
    "not held by the holder tid %d from the mutex word: %s" % (h, w)
assert len(links) >= 2 and links[1]["tid"] == h, "the holder's timeline is not followed: %s" % links
assert links[1]["kind"] == "block_io" and links[1]["dev"] == t["dev"], \
    "the holder's link is not its block I/O on %s: %s" % (t["dev"], links[1])
assert c["root"] == "block I/O on %s" % t["dev"], "root %r, want the disk" % c["root"]
assert not c["incomplete"], "incomplete: %s" % c.get("why_incomplete")
# most of the wait is the holder's reads (the one still under way at the kill is not observed)
disk = sum(s["duration_ns"] for s in c["segments"] if s["root"] == c["root"])
assert disk * 2 > c["blocked_ns"], "the disk is %d of %d ns" % (disk, c["blocked_ns"])
print("ok   tid %d: futex %s, interrupted by SIGINT, held by tid %d (mutex word), root %r (%.0f%%)"
      % (v, w["addr"], h, c["root"], 100.0 * disk / c["blocked_ns"]))
PY
"$PYTHON" "$CHECK_ROOTS" "$GT_WORK/json.out" || gt_fail "json: a root disagrees with its segments"

run text text
echo "--- the victim's chain, as printed ---"
read -r v h mdev < <("$PYTHON" -c 'import json,sys; t=json.load(open(sys.argv[1])); print(t["victim"]["tid"], t["holder"]["tid"], t["dev"])' "$GT_WORK/text.truth")
grep -A4 -m1 "tid $v (gt-victim) blocked .* on futex" "$GT_WORK/text.out" | tee "$GT_WORK/victim.txt"
grep -q "tid $v (gt-victim) blocked .* on futex 0x[0-9a-f]*, interrupted by signal SIGINT" "$GT_WORK/victim.txt" ||
	gt_fail "text: the victim's futex wait does not say it was interrupted by SIGINT"
grep -q " held by tid $h (gt-holder) (owner from the mutex word)$" "$GT_WORK/victim.txt" ||
	gt_fail "text: no 'held by tid $h (gt-holder) (owner from the mutex word)' after the victim's wait"
grep -q "tid $h (gt-holder) blocked .* block I/O on $mdev" "$GT_WORK/victim.txt" ||
	gt_fail "text: the holder's block I/O on $mdev does not follow"
grep -q "woken by" "$GT_WORK/victim.txt" && gt_fail "text: the victim's chain says 'woken by'"
grep -Eq "in 1 wait of gt-victim: futex .*root: block I/O on $mdev$" "$GT_WORK/text.out" ||
	gt_fail "text: the victim's reason is not rooted at block I/O on $mdev"

GT_OK=1
echo "PASS gt_sig_holder"
