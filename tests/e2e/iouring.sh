#!/bin/bash
# Threads a traced process gets from io_uring are traced: an io-wq worker (iou-wrk-TID) is
# made by copy_process without sched_process_fork, and once sched has seeded its per-task
# state a thread with no entry is untraced, so the entry must come from task_newtask. The
# worker waits ~200 ms for a pipe a writer thread fills; its wait must be reported as a wait
# of the traced process.
#   iouring.sh WHYSLOW IOU_WORKER     (exit 77 = skipped when not root, unless CI=true)
set -u
WHYSLOW=$1 IOU=$2
if [ "$(id -u)" != 0 ]; then
	[ "${CI:-}" = true ] && { echo "FAIL: needs root (CI=true: not skipping)"; exit 1; }
	echo "SKIP: needs root"; exit 77
fi
if [ "$(cat /proc/sys/kernel/io_uring_disabled 2>/dev/null || echo 0)" != 0 ]; then
	echo "SKIP: io_uring is disabled here (kernel.io_uring_disabled)"; exit 77
fi
work=$(mktemp -d /tmp/whyslow-iou.XXXXXX)
trap 'rm -rf "$work"' EXIT

"$WHYSLOW" run --min-block 50ms --format json -o "$work/out.jsonl" -- "$IOU" >"$work/truth" 2>"$work/err" ||
	{ echo "FAIL: whyslow run exited $?"; cat "$work/err"; exit 1; }
read -r _ main _ writer <"$work/truth" || { echo "FAIL: no truth line"; cat "$work/err"; exit 1; }
python3 - "$work/out.jsonl" "$main" <<'PY'
import json, sys

path, main = sys.argv[1], int(sys.argv[2])
chains = [json.loads(l) for l in open(path) if '"type":"chain"' in l]
workers = [c for c in chains if c["comm"].startswith("iou-wrk") and c["pid"] == main]
assert workers, "no wait of an io_uring worker of pid %d reported: %s" % (
    main, [(c["tid"], c["comm"]) for c in chains])
w = max(workers, key=lambda c: c["blocked_ns"])
assert w["blocked_ns"] >= 150e6, "the worker's wait is %d ns, not ~200 ms" % w["blocked_ns"]
print("iouring: worker tid %d (%s) blocked %.0f ms: ok" % (w["tid"], w["comm"], w["blocked_ns"] / 1e6))
PY
