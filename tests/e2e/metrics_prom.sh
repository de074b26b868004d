#!/bin/bash
# --metrics end to end (issue 31 item 3): `whyslow attach --metrics 127.0.0.1:PORT` on
# tests/programs/gt_metrics_io (one thread, six reads from a throttled loop device; the summed
# latency of those of at least min_block its truth), scraped by curl and by a real Prometheus (Debian's `prometheus`, its own
# config and storage in the work directory, scrape_interval 1s), whose HTTP API answers a PromQL
# query with the process's block I/O time.
#
# Checked: the response's status and content type; 404 for another path; a client that never
# ends its request dropped after 2 s, and one too large answered 431; an address that cannot be
# served (a bad port, one in use, a v6 address without brackets) said in one line
# with exit status 1 before anything is traced; the block I/O time of
# the ground truth's process on its device, from curl and from Prometheus, against the truth
# (no more than it plus 2 ms: the reads' own CPU time is in the truth, not off CPU; at least 90%
# of it: the victim's queueing for a CPU after each read is runqueue, not block I/O) and equal to
# the report's root cause "block I/O on DEV" for that process (within 1 ms); the target up in
# Prometheus (it parsed every line); the per-device series summing to cause="block_io".
#
#   metrics_prom.sh WHYSLOW GT_METRICS_IO   (exit 0 pass, 1 fail, 77 skip: not root, no blkio
#                                            cgroup-v1, no loop devices, no prometheus or curl;
#                                            with CI=true a skip is a failure)
. "$(dirname "$0")/gt_lib.sh" || exit 1

WHYSLOW=$1 GT=$2
PYTHON=${PYTHON:-python3}
IOPS=10
gt_own_setup metrics_prom
[ -x "$WHYSLOW" ] && [ -x "$GT" ] || gt_fail "usage: metrics_prom.sh WHYSLOW GT_METRICS_IO"
command -v curl >/dev/null || gt_skip "curl not installed (tools/deps.sh installs it)"
PROMETHEUS=$(command -v prometheus) || gt_skip "prometheus not installed (tools/deps.sh installs it)"

free_port() {
	"$PYTHON" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# value FILE SELECTOR: the sample of the exposition text in FILE whose name and labels are
# exactly SELECTOR (empty when there is none)
value() {
	awk -v sel="$2" 'substr($0, 1, length(sel) + 1) == sel " " { print $2 }' "$1"
}

# close_to A B TOL: |A - B| <= TOL
close_to() {
	"$PYTHON" -c 'import sys; a, b, t = map(float, sys.argv[1:]); sys.exit(abs(a - b) > t)' "$@"
}

setup=$("$SLOWDISK" setup) || gt_fail "slowdisk.sh setup failed"
dev=$(sed -n 's/^DEV=//p' <<<"$setup")
[ -b "$dev" ] || gt_fail "slowdisk.sh setup gave no device: $setup"
cg=$("$SLOWDISK" cgroup "$dev" "$IOPS") || gt_fail "slowdisk.sh cgroup failed"
devname=$(basename "$(readlink -f "$dev")")
truth="$GT_WORK/truth.json"
wport=$(free_port) && pport=$(free_port) || gt_fail "no free port"
echo "metrics_prom: device $dev, blkio group $cg ($IOPS IOPS), whyslow on :$wport, prometheus on :$pport, work dir $GT_WORK"

# A real Prometheus, started first: it takes seconds to be ready.
cat >"$GT_WORK/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: whyslow
    static_configs:
      - targets: ['127.0.0.1:$wport']
EOF
"$PROMETHEUS" --config.file="$GT_WORK/prometheus.yml" --storage.tsdb.path="$GT_WORK/tsdb" \
	--web.listen-address="127.0.0.1:$pport" >"$GT_WORK/prometheus.log" 2>&1 &
prom_pid=$!
PIDS+=("$prom_pid")

# The ground truth waits for a line on its stdin (a FIFO the test holds open) before reading.
mkfifo "$GT_WORK/go" || gt_fail "mkfifo failed"
"$GT" --dev "$dev" --cgroup "$cg" --truth "$truth" --min-read-ms 0 <"$GT_WORK/go" \
	>"$GT_WORK/gt.stdout" 2>"$GT_WORK/gt.stderr" &
gt_pid=$!
PIDS+=("$gt_pid")
exec 3>"$GT_WORK/go"
# attached once it is the program (exec'd), not the shell that opened the FIFO
for _ in $(seq 100); do
	[ "$(cat "/proc/$gt_pid/comm" 2>/dev/null)" = gt_metrics_io ] && break
	sleep 0.05
done
[ "$(cat "/proc/$gt_pid/comm" 2>/dev/null)" = gt_metrics_io ] || gt_fail "gt_metrics_io did not start: $(cat "$GT_WORK/gt.stderr")"

# (without the FIFO's writing end: the ground truth ends when the test closes it)
"$WHYSLOW" attach -v --metrics "127.0.0.1:$wport" --format json -o "$GT_WORK/report.jsonl" "$gt_pid" \
	2>"$GT_WORK/whyslow.err" 3>&- &
ws_pid=$!
PIDS+=("$ws_pid")
# tracing: with -v, whyslow prints its first progress line once it traces
for _ in $(seq 300); do
	grep -q ' events, ' "$GT_WORK/whyslow.err" && break
	kill -0 "$ws_pid" 2>/dev/null || break
	sleep 0.1
done
grep -q ' events, ' "$GT_WORK/whyslow.err" || gt_fail "whyslow attach was not tracing after 30 s: $(cat "$GT_WORK/whyslow.err")"

echo "== HTTP: status, content type, 404"
curl -sS -D "$GT_WORK/headers" -o "$GT_WORK/first.txt" "http://127.0.0.1:$wport/metrics" || gt_fail "curl /metrics failed"
head -n1 "$GT_WORK/headers" | grep -q '^HTTP/1.1 200 ' || gt_fail "/metrics: $(head -n1 "$GT_WORK/headers")"
grep -qi '^Content-Type: text/plain; version=0.0.4' "$GT_WORK/headers" || gt_fail "/metrics: not the text format 0.0.4: $(cat "$GT_WORK/headers")"
code=$(curl -sS -o /dev/null -w '%{http_code}' "http://127.0.0.1:$wport/other") || gt_fail "curl /other failed"
[ "$code" = 404 ] || gt_fail "/other answered $code, not 404"

echo "== an address that cannot be served: one line, exit 1, nothing traced"
for bad in 70000 "127.0.0.1:$wport" "::1:9464"; do
	"$WHYSLOW" attach --metrics "$bad" "$gt_pid" >"$GT_WORK/bad.out" 2>"$GT_WORK/bad.err" 3>&-
	rc=$?
	[ $rc = 1 ] || gt_fail "--metrics $bad: exit $rc, not 1"
	[ "$(wc -l <"$GT_WORK/bad.err")" = 1 ] && grep -q "^whyslow: --metrics " "$GT_WORK/bad.err" ||
		gt_fail "--metrics $bad: not one line saying so: $(cat "$GT_WORK/bad.err")"
	[ ! -s "$GT_WORK/bad.out" ] || gt_fail "--metrics $bad: a report was written"
	echo "--metrics $bad: $(cat "$GT_WORK/bad.err")"
done

echo "== hostile clients: one that never ends its request, one too large"
# The server answers one connection at a time, each within 2 s: a client that stalls is dropped
# then, and the next one answered; the tracer, on its own thread, never waits for either.
"$PYTHON" - "$wport" <<'EOF' || gt_fail "the server did not deal with hostile clients (see above)"
import socket, sys, time
port = int(sys.argv[1])
stall = socket.create_connection(("127.0.0.1", port))
stall.sendall(b"GET /metrics HTTP/1.1\r\n")  # and never the blank line
time.sleep(0.2)  # accepted first
t0 = time.monotonic()
big = socket.create_connection(("127.0.0.1", port))
big.settimeout(10)
try:
    big.sendall(b"GET /metrics HTTP/1.1\r\nX: " + b"a" * 8192 + b"\r\n\r\n")
except OSError:
    pass  # the server may close before taking it all
answer = b""
while True:
    try:
        chunk = big.recv(4096)
    except OSError:
        break
    if not chunk:
        break
    answer += chunk
waited = time.monotonic() - t0
stall.settimeout(1)
try:
    dropped = stall.recv(1) == b""
except OSError:
    dropped = True
print("large request: %r after %.2f s; the stalled client dropped: %s"
      % (answer.split(b"\r\n")[0], waited, dropped))
if not answer.startswith(b"HTTP/1.1 431 "):
    sys.exit("a request of 8 KiB got %r, not 431" % answer[:80])
if not dropped or not 1.5 <= waited <= 5:
    sys.exit("the stalled client was not dropped after about 2 s (%.2f s)" % waited)
EOF

echo "== the ground truth reads"
echo go >&3
for _ in $(seq 300); do
	[ -s "$truth" ] && break
	kill -0 "$gt_pid" 2>/dev/null || break
	sleep 0.1
done
[ -s "$truth" ] || gt_fail "gt_metrics_io wrote no truth: $(cat "$GT_WORK/gt.stderr")"
cat "$truth"
truth_s=$("$PYTHON" -c 'import json, sys; print(json.load(open(sys.argv[1]))["block_io_ns"] / 1e9)' "$truth")

# The last read's wait is reported once its thread runs again and the records are ordered: the
# value is final when it has stopped changing (two scrapes half a second apart).
sel="whyslow_block_io_seconds_total{pid=\"$gt_pid\",comm=\"gt_metrics_io\",device=\"$devname\"}"
prev=""
for _ in $(seq 40); do
	curl -sS -o "$GT_WORK/scrape.txt" "http://127.0.0.1:$wport/metrics" || gt_fail "curl /metrics failed"
	v=$(value "$GT_WORK/scrape.txt" "$sel")
	[ -n "$v" ] && [ "$v" = "$prev" ] && break
	prev=$v
	sleep 0.5
done
[ -n "$v" ] || gt_fail "no sample $sel in:
$(grep -v '^#' "$GT_WORK/scrape.txt" | grep -v ' 0$' | head -40)"
echo "curl: $sel = $v (truth $truth_s)"
"$PYTHON" -c 'import sys; v, t = map(float, sys.argv[1:]); sys.exit(not (0.9 * t <= v <= t + 0.002))' "$v" "$truth_s" ||
	gt_fail "block I/O time $v s is not the truth's $truth_s s (from 90% of it to 2 ms more)"
cause=$(value "$GT_WORK/scrape.txt" "whyslow_offcpu_seconds_total{pid=\"$gt_pid\",comm=\"gt_metrics_io\",cause=\"block_io\"}")
devsum=$(grep "^whyslow_block_io_seconds_total{pid=\"$gt_pid\",comm=\"gt_metrics_io\"," "$GT_WORK/scrape.txt" | awk '{ s += $2 } END { printf "%.9f", s }')
close_to "$cause" "$devsum" 0.000001 || gt_fail "cause=\"block_io\" ($cause) is not the sum of its devices ($devsum)"
grep -q '^whyslow_records_lost_total [0-9]' "$GT_WORK/scrape.txt" || gt_fail "no whyslow_records_lost_total"
grep -Eq '^whyslow_cpu_seconds_total\{mode="user"\} [0-9.]+$' "$GT_WORK/scrape.txt" || gt_fail "no whyslow_cpu_seconds_total"
rss=$(value "$GT_WORK/scrape.txt" whyslow_resident_memory_bytes)
[ "${rss:-0}" -gt 1000000 ] || gt_fail "whyslow_resident_memory_bytes is '$rss'"
count=$(value "$GT_WORK/scrape.txt" 'whyslow_wait_duration_seconds_count{cause="block_io"}')
slow=$("$PYTHON" -c 'import json, sys; print(json.load(open(sys.argv[1]))["slow_reads"])' "$truth")
[ "${count:-0}" -ge "$slow" ] || gt_fail "the histogram counts ${count:-no} block I/O waits, the truth $slow reads of at least 10 ms"

echo "== Prometheus: the target up, a PromQL query through its HTTP API"
query="sum by (pid) (whyslow_block_io_seconds_total{pid=\"$gt_pid\",device=\"$devname\"})"
got=""
for _ in $(seq 60); do
	got=$(curl -sS -G "http://127.0.0.1:$pport/api/v1/query" --data-urlencode "query=$query" 2>/dev/null |
		"$PYTHON" -c 'import json, sys
r = json.load(sys.stdin)
res = r["data"]["result"] if r.get("status") == "success" else []
print(res[0]["value"][1] if res else "")' 2>/dev/null)
	[ -n "$got" ] && close_to "$got" "$v" 0.000001 && break
	sleep 0.5
done
if [ -z "$got" ] || ! close_to "$got" "$v" 0.000001; then
	tail -n 20 "$GT_WORK/prometheus.log"
	curl -sS "http://127.0.0.1:$pport/api/v1/targets"
	gt_fail "Prometheus answered '$got' to $query, not $v (the endpoint's) after 30 s"
fi
echo "prometheus: $query = $got"
curl -sS "http://127.0.0.1:$pport/api/v1/targets" | "$PYTHON" -c 'import json, sys
t = json.load(sys.stdin)["data"]["activeTargets"]
bad = [x for x in t if x["health"] != "up" or x["lastError"]]
sys.exit("targets not up: %s" % bad if bad or not t else 0)' || gt_fail "Prometheus did not scrape whyslow cleanly"
"$PYTHON" -c 'import sys; v, t = map(float, sys.argv[1:]); sys.exit(not (0.9 * t <= v <= t + 0.002))' "$got" "$truth_s" ||
	gt_fail "Prometheus: $got s is not the truth's $truth_s s"

echo "== the report of the same waits"
exec 3>&-
wait "$gt_pid" || gt_fail "gt_metrics_io exited $?: $(cat "$GT_WORK/gt.stderr")"
for _ in $(seq 300); do
	kill -0 "$ws_pid" 2>/dev/null || break
	sleep 0.1
done
wait "$ws_pid"
rc=$?
[ $rc = 0 ] || gt_fail "whyslow attach exited $rc: $(tail -n 20 "$GT_WORK/whyslow.err")"
rep=$("$PYTHON" -c 'import json, sys
ns = 0
for line in open(sys.argv[1]):
    o = json.loads(line)
    if o.get("type") == "summary":
        ns = sum(r["ns"] for r in o["root_causes"]
                 if r["comm"] == "gt_metrics_io" and r["root"] == "block I/O on " + sys.argv[2])
print(ns / 1e9)' "$GT_WORK/report.jsonl" "$devname") || gt_fail "no summary in the report"
echo "report: root cause block I/O on $devname of gt_metrics_io = $rep s"
close_to "$rep" "$v" 0.001 || gt_fail "the report says $rep s of block I/O, the metrics $v s"
kill "$prom_pid" && wait "$prom_pid"
GT_OK=1
echo "PASS metrics_prom"
