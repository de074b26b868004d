#!/bin/bash
# Threads a traced process gets from io_uring are traced: an io-wq worker (iou-wrk-TID) is
# made by copy_process without sched_process_fork, and once sched has seeded its per-task
# state a thread with no entry is untraced, so the entry must come from task_newtask. The
# worker blocks ~200 ms opening a FIFO until a writer thread opens it (tests/programs/
# iou_worker.c): its wait must be reported, woken by the writer, with no syscall or user frame
# of its maker's (it runs no user code), and the main thread's wait must go on through it.
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
IFS=. read -r major minor _ < <(uname -r)
if [ "$major" -lt 6 ] || { [ "$major" = 6 ] && [ "$minor" -lt 2 ]; }; then
	# no seeding there (sched.bpf.c): a thread with no entry is asked about in the filter
	echo "SKIP: sched seeds only from Linux 6.2 on (this is $(uname -r))"; exit 77
fi
work=$(mktemp -d /tmp/whyslow-iou.XXXXXX)
trap 'rm -rf "$work"' EXIT

"$WHYSLOW" run --min-block 50ms --format json -o "$work/out.jsonl" -- "$IOU" "$work/fifo" >"$work/truth" 2>"$work/err" ||
	{ echo "FAIL: whyslow run exited $?"; cat "$work/err"; exit 1; }
read -r _ main _ writer <"$work/truth" || { echo "FAIL: no truth line"; cat "$work/err"; exit 1; }
python3 - "$work/out.jsonl" "$main" "$writer" <<'PY'
import json, sys

path, main, writer = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
chains = [json.loads(l) for l in open(path) if '"type":"chain"' in l]
seen = [(c["tid"], c["comm"]) for c in chains]
# the worker's own wait: blocked in the FIFO's open until the writer opened it
workers = [c for c in chains if c["comm"].startswith("iou-wrk") and c["pid"] == main]
assert workers, "no wait of an io_uring worker of pid %d reported: %s" % (main, seen)
w = max(workers, key=lambda c: c["blocked_ns"])
assert w["blocked_ns"] >= 150e6, "the worker's wait is %d ns, not ~200 ms" % w["blocked_ns"]
assert w["links"][0]["woken_by"] == writer, "the worker was woken by %s, not the writer %d" % (
    w["links"][0]["woken_by"], writer)
# a worker never runs user code: its saved user registers are its maker's, so no syscall or
# user frame may be named for it (the wait is in the kernel's open of the FIFO)
link = w["links"][0]
assert "syscall" not in link, "the worker is said to be in %s" % link["syscall"]
assert all(f["kernel"] for f in link.get("stack") or []), "user frames named for the worker: %s" % link["stack"]
# the main thread's wait goes on through the worker to the writer
m = [c for c in chains if c["tid"] == main]
assert m and [l["tid"] for l in m[0]["links"]][:2] == [main, w["tid"]], \
    "the main thread's chain does not go through the worker: %s" % (m and m[0]["links"])
print("iouring: worker tid %d (%s) blocked %.0f ms, woken by the writer: ok" % (
    w["tid"], w["comm"], w["blocked_ns"] / 1e6))
PY
