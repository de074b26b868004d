#!/bin/bash
# whyslow's requests (README "Requests") on real servers, against the clients' own latencies.
#
#   sudo bench/requests_real.sh                          # modes pg pg_tcp redis
#   sudo MODES=redis DURATION=10 bench/requests_real.sh
#   sudo WHYSLOW=build-x/core/whyslow WHYSLOW_PLUGIN_DIR=build-x/plugins bench/requests_real.sh
#
# What it builds, all of it removed on every exit (Ctrl-C included), as bench/pgbench.sh does and
# with its pieces (bench/lib.sh): a file in a temp dir, a direct-I/O loop device over it, ext4
# on it, a fresh cgroup-v1 blkio group throttling that device's writes to $WRITE_IOPS/s; the
# script joins the group after loading the data, so every server, client and whyslow it starts
# then writes through the throttle. The system's clusters and services are never touched.
# Modes (MODES, default "pg pg_tcp redis"):
#   pg      a private PostgreSQL 15 cluster (initdb; port $PORT, socket in the temp dir, fsync on,
#           synchronous_commit on, pgbench -i -s $SCALE); two workloads of one statement per
#           transaction, each $DURATION s with $CLIENTS clients over the unix socket, pgbench -n
#           -M simple --log (every transaction's latency):
#             read   pgbench -S (SELECT abalance FROM pgbench_accounts WHERE aid = :aid)
#             write  a one-statement script: UPDATE pgbench_accounts SET abalance = abalance +
#                    :delta WHERE aid = :aid (autocommit: each one a commit, a WAL fdatasync)
#           each under `whyslow record -u postgres -- sh -c 'pg_ctl start; pgbench; pg_ctl
#           stop'` (postmaster, backends, WAL writer, checkpointer and pgbench all traced), then
#           `whyslow report` in text and JSON
#   pg_tcp  the same over TCP 127.0.0.1:$PORT (PGSSLMODE=disable: no SSLRequest round trip)
#   redis   a private redis-server (port $RPORT, dir on the slow disk, appendonly yes,
#           appendfsync always, no RDB saves) started by the traced shell, redis-benchmark -t set
#           -n $REDIS_N -c $CLIENTS, the server shut down; redis-benchmark's percentiles
#           (--precision 3) against whyslow's
# For each: whyslow's request count and p50/p90/p99 (nearest rank, as whyslow computes them)
# next to the client's, the requests whyslow saw on the workload's endpoint, and whyslow's top
# reasons (printed; judged by reading: reason 1 should be the WAL flush / AOF fdatasync for
# writes, and no idle wait should be ranked).
# Output: $OUT (default a new /tmp/whyslow-requests-out.*): NAME.txt (whyslow's text report),
# NAME.json, NAME.client (pgbench's / redis-benchmark's output), NAME.cmp (the comparison).
# Needs: PostgreSQL 15 (apt-get install -y postgresql postgresql-contrib), redis-server and
# redis-tools (apt-get install -y redis-server redis-tools; its system service is not used).
set -u
. "$(dirname "$0")/lib.sh"
need_root

MODES=${MODES:-"pg pg_tcp redis"}
CLIENTS=${CLIENTS:-8} DURATION=${DURATION:-15} SCALE=${SCALE:-1} REDIS_N=${REDIS_N:-3000}
WRITE_IOPS=${WRITE_IOPS:-100} READ_IOPS=${READ_IOPS:-400}
PORT=${PORT:-54331} RPORT=${RPORT:-63791}
WORK= OUT=${OUT:-} REDIS_PID_FILE=
SELF=requests_real.sh

die() { echo "$SELF: $*" >&2; exit 1; }

redis_stop() {
	local pid
	[ -n "$REDIS_PID_FILE" ] && [ -f "$REDIS_PID_FILE" ] || return 0
	pid=$(cat "$REDIS_PID_FILE")
	# only our own server: its pid file, its command line naming our config
	if grep -q "$WORK" "/proc/$pid/cmdline" 2>/dev/null || grep -q "$RPORT" "/proc/$pid/cmdline" 2>/dev/null; then
		kill -TERM "$pid" 2>/dev/null
		for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
		kill -KILL "$pid" 2>/dev/null
	fi
	rm -f "$REDIS_PID_FILE"
}

cleanup() {
	trap - EXIT INT TERM
	pg_stop
	redis_stop
	slowdisk_remove
	pg_user_remove
	[ -n "$WORK" ] && rm -rf "$WORK"
}
trap cleanup EXIT
trap 'echo "$SELF: interrupted, cleaning up" >&2; exit 130' INT TERM

[ -x "$WHYSLOW" ] || die "no whyslow at $WHYSLOW: build first (ninja -C build) or set WHYSLOW"
case " $MODES " in *" pg"*)
	pg_installed || die "apt-get install postgresql postgresql-contrib failed"
	ss -ltn 2>/dev/null | grep -q ":$PORT " && die "port $PORT is in use; set PORT"
	pg_user_make || die "useradd failed" ;;
esac
case " $MODES " in *" redis "*)
	command -v redis-server >/dev/null && command -v redis-benchmark >/dev/null ||
		die "redis missing: apt-get install -y redis-server redis-tools"
	ss -ltn 2>/dev/null | grep -q ":$RPORT " && die "port $RPORT is in use; set RPORT" ;;
esac

WORK=$(mktemp -d /tmp/whyslow-requests.XXXXXX) || die "mktemp failed"
chmod 711 "$WORK"
[ -n "$OUT" ] || OUT=$(mktemp -d /tmp/whyslow-requests-out.XXXXXX) || die "mktemp failed"
mkdir -p "$OUT" && chmod 755 "$OUT"
SOCK=$WORK/sock
slowdisk_make 768M || exit 1

case " $MODES " in *" pg"*)
	pg_cluster_make || exit 1
	pg_start || exit 1
	pg_as pgbench -h "$SOCK" -U postgres -p "$PORT" -i -s "$SCALE" -q postgres >"$WORK/init.log" 2>&1 ||
		die "pgbench -i failed: $(tail -3 "$WORK/init.log")"
	pg_stop
	# one statement, one commit: one WAL flush per request
	cat >"$SOCK/write.sql" <<'EOF'
\set aid random(1, 100000 * :scale)
\set delta random(-5000, 5000)
UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid;
EOF
	chown "$PGUSER_NAME" "$SOCK/write.sql" ;;
esac

# from here on every process this script starts writes through the throttle
slowdisk_join || die "cannot join $CG"
machine_line | tee "$OUT/machine.txt"
echo "# slow disk: $LOOP ($MM), ext4, writes $WRITE_IOPS/s, reads $READ_IOPS/s; $CLIENTS clients, $DURATION s (pg), $REDIS_N requests (redis)" |
	tee -a "$OUT/machine.txt"

# compare NAME KIND ENDPOINT: whyslow's requests ($OUT/NAME.json) against the client's
compare() {
	python3 - "$OUT/$1.json" "$2" "$3" "$OUT/$1.client" "$WORK/$1.log" <<'EOF' | tee "$OUT/$1.cmp"
import glob, json, re, sys
jpath, kind, endpoint, client_out, logprefix = sys.argv[1:]

def pct(v, p):  # nearest rank, as core/report/requests_summary.c
    if not v:
        return 0
    r = (len(v) * p + 99) // 100
    return v[max(r, 1) - 1]

reqs, summ = [], None
for line in open(jpath):
    try:
        o = json.loads(line)
    except ValueError:
        continue
    if o.get("type") == "request":
        reqs.append(o)
    elif o.get("type") == "requests":
        summ = o
if summ is None:
    print("whyslow: no {\"type\":\"requests\"} object (no requests found)")
    summ = {}

mine = sorted(r["duration_ns"] for r in reqs if r["local"] == endpoint or
              r["local"].endswith(":" + endpoint))
conns = {r["conn"] for r in reqs if r["local"] == endpoint or r["local"].endswith(":" + endpoint)}
ends = {}
for r in reqs:
    ends[r["local"] if r["proto"] == "unix" else r["proto"] + " " + r["local"]] = \
        ends.get(r["local"] if r["proto"] == "unix" else r["proto"] + " " + r["local"], 0) + 1

# the client's own latencies, in ns, and its percentiles
if kind == "pgbench":
    lat = []
    for f in glob.glob(logprefix + ".*"):
        for l in open(f):
            p = l.split()
            if len(p) >= 3:
                lat.append(int(p[2]) * 1000)
    lat.sort()
    cl = {"count": len(lat), "p50": pct(lat, 50), "p90": pct(lat, 90), "p99": pct(lat, 99),
          "max": lat[-1] if lat else 0, "mean": sum(lat) / len(lat) if lat else 0}
    txt = open(client_out).read()
    m = re.search(r"latency average = ([\d.]+) ms", txt)
    # pgbench's own average: its run time x clients / transactions, so the time between a
    # client's transactions (pgbench's own work) included, as the gap below includes it
    cl["avg"] = float(m.group(1)) * 1e6 if m else 0
    m = re.search(r"number of clients: (\d+)", txt)
    cl["connections"] = int(m.group(1)) if m else None
else:  # redis-benchmark: its percentile distribution (ms), count from "N requests completed"
    txt = open(client_out).read()
    m = re.search(r"(\d+) requests completed", txt)
    dist = [(float(a), float(b)) for a, b in
            re.findall(r"^\s*([\d.]+)% <= ([\d.]+) milliseconds", txt, re.M)]
    def rp(p):
        for q, ms in dist:
            if q >= p:
                return int(ms * 1e6)
        return int(dist[-1][1] * 1e6) if dist else 0
    cl = {"count": int(m.group(1)) if m else 0, "p50": rp(50), "p90": rp(90), "p99": rp(99),
          "max": int(dist[-1][1] * 1e6) if dist else 0}
    m = re.search(r"avg\s+min.*\n\s*([\d.]+)", txt)
    cl["mean"] = float(m.group(1)) * 1e6 if m else 0
    m = re.search(r"(\d+) parallel clients", txt)
    cl["connections"] = int(m.group(1)) if m else None

def ms(ns):
    return "%.3f" % (ns / 1e6)
print("%-34s %9s %10s %10s %10s %10s" % ("", "requests", "p50 ms", "p90 ms", "p99 ms", "max ms"))
print("%-34s %9d %10s %10s %10s %10s" % ("client (" + kind + ")", cl["count"], ms(cl["p50"]),
      ms(cl["p90"]), ms(cl["p99"]), ms(cl["max"])))
print("%-34s %9d %10s %10s %10s %10s" % ("whyslow, all requests", summ.get("count", 0),
      ms(summ.get("p50_ns", 0)), ms(summ.get("p90_ns", 0)), ms(summ.get("p99_ns", 0)),
      ms(summ.get("max_ns", 0))))
print("%-34s %9d %10s %10s %10s %10s" % ("whyslow, on " + endpoint, len(mine), ms(pct(mine, 50)),
      ms(pct(mine, 90)), ms(pct(mine, 99)), ms(mine[-1] if mine else 0)))
if cl["count"]:
    print("count whyslow(endpoint)/client: %+.2f%% (%+d; %d connections seen, the client made %s)" % (
        (len(mine) / cl["count"] - 1) * 100, len(mine) - cl["count"], len(conns), cl["connections"]))
    for p in (50, 90, 99):
        c = cl["p%d" % p]
        if c:
            print("p%d whyslow/client: %.2f" % (p, pct(mine, p) / c))
# closed loop: a client's latency is the server's request plus the time between that connection's
# requests (the client's own side, the hop, and the data waiting before the server's receive
# returned); so mean request + mean gap should be the client's mean latency
byconn = {}
for r in reqs:
    if r["local"] == endpoint or r["local"].endswith(":" + endpoint):
        byconn.setdefault(r["conn"], []).append(r)
gaps = []
for v in byconn.values():
    v.sort(key=lambda r: r["start_ns"])
    gaps += [b["start_ns"] - a["start_ns"] - a["duration_ns"] for a, b in zip(v, v[1:])]
if mine and gaps and cl.get("mean"):
    mr, mg = sum(mine) / len(mine), sum(gaps) / len(gaps)
    gaps.sort()
    print("mean: whyslow's request %s ms + the gap between a connection's requests %s ms = %s ms; the client's mean %s ms%s"
          % (ms(mr), ms(mg), ms(mr + mg), ms(cl["mean"]),
             " (its log's; pgbench's \"latency average\" %s ms)" % ms(cl["avg"]) if cl.get("avg") else ""))
    print("gap between a connection's requests: p50 %s p90 %s p99 %s ms" % (
        ms(pct(gaps, 50)), ms(pct(gaps, 90)), ms(pct(gaps, 99))))
print("requests by server end:", ", ".join("%s: %d" % kv for kv in sorted(ends.items(), key=lambda kv: -kv[1])))
print("summary: connections %s processes %s unanswered %s client_calls %s unknown_role_calls %s" % (
    summ.get("connections"), summ.get("processes"), summ.get("unanswered"), summ.get("client_calls"),
    summ.get("unknown_role_calls")))
print("top reasons (share of all requests' time; of the slowest tenth's; requests):")
for i, r in enumerate(summ.get("reasons", [])[:6]):
    print("  %d. %5.1f%% %5.1f%% %7d  %s" % (i + 1, r["share"] * 100, r["slowest_share"] * 100,
                                          r["requests"], r["what"]))
EOF
}

# pg_workload NAME HOST PGBENCH_ARGS...: everything traced; pgbench logs every transaction
pg_workload() {
	local name=$1 host=$2
	shift 2
	rm -f "$WORK/$name.log".*
	"$WHYSLOW" record -u "$PGUSER_NAME" -o "$WORK/$name.data" -- \
		sh -c "$PGBIN/pg_ctl -D '$MNT/data' -l '$SOCK/pg.log' -w start >/dev/null &&
		PGSSLMODE=disable pgbench -h '$host' -U postgres -p $PORT -n -M simple -c $CLIENTS -T $DURATION \
			--log --log-prefix='$SOCK/$name.log' $* postgres >'$SOCK/$name.client' 2>&1;
		$PGBIN/pg_ctl -D '$MNT/data' -m fast -w stop >/dev/null" 2>"$OUT/$name.stderr" ||
		echo "$SELF: whyslow record failed for $name (see $OUT/$name.stderr)" >&2
	mv "$SOCK/$name.log".* "$WORK/" 2>/dev/null
	mv "$SOCK/$name.client" "$OUT/" 2>/dev/null
	"$WHYSLOW" report "$WORK/$name.data" -o "$OUT/$name.txt" 2>>"$OUT/$name.stderr"
	"$WHYSLOW" report "$WORK/$name.data" --format json -o "$OUT/$name.json" 2>>"$OUT/$name.stderr"
	rm -f "$WORK/$name.data"
	echo "== $name: $(grep -E '^(tps|latency average)' "$OUT/$name.client" | tr '\n' ' ')"
	local ep=$PORT
	[ "$host" = "$SOCK" ] && ep=$SOCK/.s.PGSQL.$PORT
	compare "$name" pgbench "$ep"
}

pg_modes() { # NAME_PREFIX HOST
	local lo hi
	read -r lo hi </proc/sys/net/ipv4/ip_local_port_range
	# whyslow's rule for which TCP end answers (plugins/net/net_io.c): the non-ephemeral port when
	# the peer's is ephemeral, else the lower port. $PORT inside ip_local_port_range makes the
	# rule depend on the port the client happened to get (docs/REAL-PROGRAMS.md)
	[ "$2" != "$SOCK" ] && [ "$PORT" -ge "$lo" ] && [ "$PORT" -le "$hi" ] &&
		echo "# note: port $PORT is inside ip_local_port_range ($lo-$hi): pgbench's end is taken for the server whenever its port is lower"
	pg_workload "$1_read" "$2" -S
	pg_workload "$1_write" "$2" -f "$SOCK/write.sql"
}

redis_mode() {
	local d=$MNT/redis name=redis
	mkdir -p "$d" && chown redis:redis "$d" 2>/dev/null || chown nobody "$d"
	local user
	user=$(stat -c %U "$d")
	REDIS_PID_FILE=$d/redis.pid
	cat >"$d/redis.conf" <<EOF
port $RPORT
bind 127.0.0.1
protected-mode yes
daemonize no
pidfile $REDIS_PID_FILE
dir $d
logfile $d/redis.log
save ""
appendonly yes
appendfsync always
EOF
	chown "$user" "$d/redis.conf"
	"$WHYSLOW" record -u "$user" -o "$WORK/$name.data" -- \
		sh -c "redis-server '$d/redis.conf' & s=\$!
		for i in \$(seq 100); do redis-cli -p $RPORT ping >/dev/null 2>&1 && break; sleep 0.1; done
		redis-benchmark -p $RPORT -t set -n $REDIS_N -c $CLIENTS -P 1 --precision 3 >'$d/$name.client' 2>&1
		redis-cli -p $RPORT shutdown nosave >/dev/null 2>&1; wait \$s" 2>"$OUT/$name.stderr" ||
		echo "$SELF: whyslow record failed for $name (see $OUT/$name.stderr)" >&2
	redis_stop
	mv "$d/$name.client" "$OUT/" 2>/dev/null
	"$WHYSLOW" report "$WORK/$name.data" -o "$OUT/$name.txt" 2>>"$OUT/$name.stderr"
	"$WHYSLOW" report "$WORK/$name.data" --format json -o "$OUT/$name.json" 2>>"$OUT/$name.stderr"
	rm -f "$WORK/$name.data"
	# redis-benchmark writes progress with \r; keep its summary
	tr '\r' '\n' <"$OUT/$name.client" >"$OUT/$name.client.tmp" && mv "$OUT/$name.client.tmp" "$OUT/$name.client"
	echo "== $name: $(grep -E 'throughput summary' -A0 "$OUT/$name.client" | head -1) $(grep -E 'requests per second' "$OUT/$name.client" | tail -1)"
	compare "$name" redis "$RPORT"
}

for m in $MODES; do
	case $m in
	pg) pg_modes pg "$SOCK" ;;
	pg_tcp) pg_modes pg_tcp 127.0.0.1 ;;
	redis) redis_mode ;;
	*) die "unknown mode $m (pg, pg_tcp, redis)" ;;
	esac
done
echo "reports in $OUT"
