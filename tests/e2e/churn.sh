#!/bin/bash
# A traced program that churns threads (issue 36 #4.2): tests/programs/churn creates N threads,
# 16 alive at a time, while one thread waits for the whole run. whyslow's own CPU must grow
# linearly with N (it grew quadratically: every interval of every thread searched a list of all
# the threads that ever lived), its memory must stay bounded (exited threads beyond a cap are
# dropped, and counted in the summary), and the per-thread short-wait lines are bounded too.
#   churn.sh WHYSLOW CHURN
# Root and BPF (exit 77 = skipped otherwise; with CI=true that is a failure).
set -u
. "$(dirname "$0")/gt_lib.sh"
WHYSLOW=$1 CHURN=$2
SMALL=20000 BIG=80000
[ "$(id -u)" = 0 ] || gt_skip "churn needs root (BPF)"
[ -x "$WHYSLOW" ] && [ -x "$CHURN" ] || gt_fail "whyslow or churn not executable"
# meson test sets it: every malloc and free then writes its block, so RSS says how much was ever
# allocated (address space reserved ahead included), not what is held
unset MALLOC_PERTURB_
# likewise ASan's quarantine (256 MB of freed blocks by default) in a sanitized build
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=8"
W=$(mktemp -d) || exit 1
trap 'rm -rf "$W"' EXIT

# run N: whyslow's own CPU seconds and max RSS (KB) for `run -- churn N`. Its rusage includes
# its command's, which churn prints of itself: the difference is whyslow's.
run() {
	python3 - "$WHYSLOW" "$CHURN" "$1" "$W/$1.jsonl" <<'EOF'
import os, re, sys
wh, churn, n, out = sys.argv[1:]
r, w = os.pipe()
pid = os.fork()
if pid == 0:
    os.dup2(w, 1)
    os.execv(wh, [wh, "run", "--as-root", "--format", "json", "-o", out, "--", churn, n])
os.close(w)
text = b""
while True:
    b = os.read(r, 65536)
    if not b:
        break
    text += b
_, status, ru = os.wait4(pid, 0)
m = re.search(rb"^(\d+) threads cpu_us (\d+)", text, re.M)
if status or not m or m.group(1) != n.encode():
    sys.exit("whyslow run -- churn %s: status %d, churn said %r" % (n, status, text))
print("%.3f %d" % (ru.ru_utime + ru.ru_stime - int(m.group(2)) / 1e6, ru.ru_maxrss))
EOF
}
# summary N: the counts checked, from the JSON report
summary() {
	python3 - "$W/$1.jsonl" <<'EOF'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
s = lines[-1]
print(s["threads"], s.get("exited_threads_dropped", -1), s.get("short_waits_threads_dropped", -1),
      sum(1 for l in lines if l.get("type") == "short_waits"))
EOF
}

read -r cpu_s rss_s < <(run $SMALL) || gt_fail "the $SMALL-thread run"
read -r cpu_b rss_b < <(run $BIG) || gt_fail "the $BIG-thread run"
read -r threads dead_dropped short_dropped short_lines < <(summary $BIG) || gt_fail "no summary"
echo "whyslow CPU: ${cpu_s}s for $SMALL threads, ${cpu_b}s for $BIG; max RSS ${rss_s} KB, ${rss_b} KB"
echo "$BIG threads: summary threads $threads, exited threads dropped $dead_dropped, short_waits lines $short_lines (+ $short_dropped dropped)"
[ "$threads" -gt $BIG ] || gt_fail "the summary counts $threads threads, not all $BIG"
[ "$dead_dropped" -gt 0 ] || gt_fail "no exited thread was dropped: the graph kept them all"
# kept: 2 x 4096 gone threads at most, and those of the (at most 2 x 4096) exited ones the graph keeps
[ "$short_dropped" -gt 0 ] && [ "$short_lines" -lt 20000 ] ||
	gt_fail "$short_lines per-thread short_waits lines ($short_dropped dropped): not bounded"
# 4x the threads: linear is 4x (less: startup is a constant), quadratic 16x; the old code took 8x
python3 -c "import sys; sys.exit(not float(sys.argv[2]) < 6 * max(float(sys.argv[1]), 0.2))" "$cpu_s" "$cpu_b" ||
	gt_fail "whyslow's CPU grew more than 6x for 4x the threads: ${cpu_s}s -> ${cpu_b}s"
# bounded: the old code's grew 1.7x (130 to 225 MB), with the caps it is at most 1.3x
[ "$rss_b" -lt $((rss_s + rss_s / 2)) ] || gt_fail "max RSS grew from ${rss_s} KB to ${rss_b} KB"
echo PASS
