#!/bin/bash
# whyslow's cost on CPU-bound services no one here wrote (issue 37): paired rounds, each traced
# round against its own untraced neighbour, the order alternating.
#
#   sudo bench/services.sh                          # WORKLOADS="redis gil mariadb" ROUNDS=5
#   sudo WORKLOADS=redis ROUNDS=9 bench/services.sh
#
# Workloads (each installs what it needs from Debian's packages when missing, and says so):
#   redis    a private redis-server (port $RPORT, no persistence, its own temp dir), traced by
#            `whyslow attach`; redis-benchmark -t set,get -n $REDIS_N -c 50 on 127.0.0.1: the
#            requests per second of SET and GET, summed
#   gil      Debian's python3.11: three threads each summing $GIL_N squares and one appending
#            64 KiB and fsync'ing 200 times in a temp dir, `whyslow run`; its own wall time, from
#            its threads' start to their end
#   mariadb  a private mariadbd (datadir in a temp dir, port $MPORT, a unix socket there,
#            innodb_flush_log_at_trx_commit=0: the disk is not the bound), traced by `whyslow
#            attach`; sysbench oltp_write_only, 4 tables of 10,000 rows, 8 threads, $OVH_T s: tps
# Whatever it starts is stopped and removed on exit (Ctrl-C included); the system's own services
# are never touched. Output: $OUT (default a new /tmp/whyslow-services.*): services.tsv
# ("workload config round value", value a throughput, or seconds for gil), whyslow's CPU per
# traced round in cpu.tsv, and per workload the median and bench/paired.py's per-round slowdown.
# WHYSLOW_BEFORE=<another build's whyslow> adds a third configuration, "before", traced by it
# (its plugins beside it, as bench/overhead.sh takes them); the order rotates each round.
set -u
. "$(dirname "$0")/lib.sh"
need_root

WORKLOADS=${WORKLOADS:-"redis gil mariadb"}
ROUNDS=${ROUNDS:-5} OVH_T=${OVH_T:-10}
RPORT=${RPORT:-6391} MPORT=${MPORT:-33071}
REDIS_N=${REDIS_N:-200000} GIL_N=${GIL_N:-6000000}
WORK= OUT=${OUT:-} SERVER_PID= TRACER_PID=

die() { echo "services.sh: $*" >&2; exit 1; }

cleanup() {
	trap - EXIT INT TERM
	[ -n "$TRACER_PID" ] && kill -INT "$TRACER_PID" 2>/dev/null && wait "$TRACER_PID" 2>/dev/null
	[ -n "$SERVER_PID" ] && kill "$SERVER_PID" 2>/dev/null && wait "$SERVER_PID" 2>/dev/null
	[ -n "$WORK" ] && rm -rf "$WORK"
}
trap cleanup EXIT
trap 'echo "services.sh: interrupted, cleaning up" >&2; exit 130' INT TERM

[ -x "$WHYSLOW" ] || die "no whyslow at $WHYSLOW: build first (ninja -C build) or set WHYSLOW"
need_pkgs() { # PACKAGE...: installed from Debian's archive when missing
	local p missing=
	for p in "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
			missing="$missing $p"
	done
	[ -z "$missing" ] && return 0
	echo "services.sh: installing$missing" >&2
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q $missing >/dev/null ||
		die "apt-get install$missing failed"
	# a package may start its own service: this script never uses it
	for p in $missing; do systemctl stop "${p%-server}" 2>/dev/null; done
	return 0
}

WORK=$(mktemp -d /tmp/whyslow-services.XXXXXX) || die "mktemp failed"
chmod 755 "$WORK"
[ -n "$OUT" ] || OUT=$(mktemp -d /tmp/whyslow-services-out.XXXXXX) || die "mktemp failed"
mkdir -p "$OUT"
: >"$OUT/services.tsv"
: >"$OUT/cpu.tsv"
machine_line | tee "$OUT/machine.txt"

CONFIGS=(untraced traced)
[ -n "${WHYSLOW_BEFORE:-}" ] && CONFIGS+=(before)
# the whyslow of configuration $1 (traced: this tree's; before: $WHYSLOW_BEFORE's)
tracer_of() {
	if [ "$1" = before ]; then
		echo "WHYSLOW_PLUGIN_DIR=$(plugins_of "$WHYSLOW_BEFORE") $WHYSLOW_BEFORE"
	else
		echo "WHYSLOW_PLUGIN_DIR=$WHYSLOW_PLUGIN_DIR $WHYSLOW"
	fi
}
# attach_tracer CONFIG PID: that configuration's whyslow attached in the background
# ($TRACER_PID), 3 s to load
attach_tracer() {
	env $(tracer_of "$1") attach --format json -o /dev/null "$2" 2>/dev/null &
	TRACER_PID=$!
	sleep 3
}
stop_tracer() { # WORKLOAD CONFIG ROUND: its CPU into cpu.tsv
	printf '%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$(cpu_secs "$TRACER_PID")" >>"$OUT/cpu.tsv"
	kill -INT "$TRACER_PID"
	wait "$TRACER_PID"
	TRACER_PID=
}
row() { printf '%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" | tee -a "$OUT/services.tsv"; }

# rounds WORKLOAD: each round runs every configuration (the order rotating) through
# one_WORKLOAD CONFIG ROUND, which leaves the round's value in $WORK/value (not a subshell: the
# tracer it starts stays known to cleanup)
rounds() {
	local w=$1 r c i v n=${#CONFIGS[@]}
	for ((r = 0; r < ROUNDS; r++)); do
		for ((i = 0; i < n; i++)); do
			c=${CONFIGS[(i + r) % n]}
			: >"$WORK/value"
			"one_$w" "$c" "$r" || die "$w: round $r ($c) failed"
			v=$(cat "$WORK/value")
			[ -n "$v" ] || die "$w: round $r ($c) gave no value"
			row "$w" "$c" "$r" "$v"
		done
	done
}

redis_start() {
	need_pkgs redis-server redis-tools
	mkdir -p "$WORK/redis"
	redis-server --port "$RPORT" --bind 127.0.0.1 --dir "$WORK/redis" --save "" \
		--appendonly no --daemonize no >"$WORK/redis/log" 2>&1 &
	SERVER_PID=$!
	for _ in $(seq 50); do redis-cli -p "$RPORT" ping >/dev/null 2>&1 && return 0; sleep 0.1; done
	die "redis-server did not start: $(tail -3 "$WORK/redis/log")"
}
one_redis() {
	local v
	[ "$1" != untraced ] && attach_tracer "$1" "$SERVER_PID"
	v=$(redis-benchmark -p "$RPORT" -t set,get -n "$REDIS_N" -c 50 -q --csv 2>/dev/null |
		awk -F, 'NR > 1 {gsub(/"/, "", $2); s += $2} END {if (s) printf "%.0f", s}')
	[ "$1" != untraced ] && stop_tracer redis "$1" "$2"
	echo "$v" >"$WORK/value"
}

gil_prepare() {
	need_pkgs python3.11
	cat >"$WORK/gil.py" <<'EOF'
import os, sys, threading, time
def spin(n):
    s = 0
    for i in range(n):
        s += i * i
def disk(path):
    with open(path, "ab") as f:
        for _ in range(200):
            f.write(b"x" * 65536)
            f.flush()
            os.fsync(f.fileno())
n = int(sys.argv[2])
t0 = time.monotonic()
ts = [threading.Thread(target=spin, args=(n,)) for _ in range(3)]
ts.append(threading.Thread(target=disk, args=(sys.argv[1],)))
for t in ts: t.start()
for t in ts: t.join()
with open(sys.argv[3], "w") as f:
    f.write("%.3f\n" % (time.monotonic() - t0))
EOF
}
one_gil() { # the program's own time, from its threads' start to their end (whyslow's start-up
	    # and report are not in it)
	local pre=()
	rm -f "$WORK/gil.out"
	[ "$1" != untraced ] && pre=(env $(tracer_of "$1") run --as-root --format json -o /dev/null --)
	"${pre[@]}" /usr/bin/python3.11 "$WORK/gil.py" "$WORK/gil.out" "$GIL_N" "$WORK/value" \
		>/dev/null 2>&1
}

mariadb_start() {
	need_pkgs mariadb-server sysbench
	local d=$WORK/mariadb
	mkdir -p "$d/data" && chown mysql:mysql "$d" "$d/data"
	mariadb-install-db --user=mysql --datadir="$d/data" --auth-root-authentication-method=normal \
		>"$d/install.log" 2>&1 || die "mariadb-install-db failed: $(tail -3 "$d/install.log")"
	runuser -u mysql -- mariadbd --no-defaults --datadir="$d/data" --port="$MPORT" \
		--bind-address=127.0.0.1 --socket="$d/sock" --pid-file="$d/pid" \
		--innodb-flush-log-at-trx-commit=0 --skip-log-bin >"$d/log" 2>&1 &
	SERVER_PID=$!
	for _ in $(seq 100); do mariadb -S "$d/sock" -uroot -e 'select 1' >/dev/null 2>&1 && break; sleep 0.2; done
	mariadb -S "$d/sock" -uroot -e 'create database sbtest' || die "mariadbd did not start: $(tail -3 "$d/log")"
	SB=(sysbench oltp_write_only --db-driver=mysql --mysql-socket="$d/sock" --mysql-user=root
		--tables=4 --table-size=10000 --threads=8)
	"${SB[@]}" prepare >"$d/prepare.log" 2>&1 || die "sysbench prepare failed: $(tail -3 "$d/prepare.log")"
}
one_mariadb() {
	local v
	[ "$1" != untraced ] && attach_tracer "$1" "$SERVER_PID"
	v=$("${SB[@]}" --time="$OVH_T" run 2>/dev/null | awk '/transactions:/ {gsub(/\(/, "", $3); print $3; exit}')
	[ "$1" != untraced ] && stop_tracer mariadb "$1" "$2"
	echo "$v" >"$WORK/value"
}

for w in $WORKLOADS; do
	case $w in
	redis) redis_start ;;
	gil) gil_prepare ;;
	mariadb) mariadb_start ;;
	*) die "unknown workload $w (redis, gil, mariadb)" ;;
	esac
	rounds "$w"
	if [ -n "$SERVER_PID" ]; then
		kill "$SERVER_PID"; wait "$SERVER_PID" 2>/dev/null; SERVER_PID=
	fi
	hib=--higher-is-better
	[ "$w" = gil ] && hib=
	for c in "${CONFIGS[@]}"; do
		printf '%-8s %-9s median %s' "$w" "$c" \
			"$(awk -v w="$w" -v c="$c" '$1==w && $2==c {print $4}' "$OUT/services.tsv" | median)"
		[ "$c" != untraced ] && printf '  slowdown per round %s  whyslow CPU %s s' \
			"$(python3 "$BENCH_DIR/paired.py" "$OUT/services.tsv" "$w" "$c" $hib)" \
			"$(awk -v w="$w" -v c="$c" '$1==w && $2==c {print $4}' "$OUT/cpu.tsv" | median)"
		echo
	done | tee -a "$OUT/summary.txt"
done
echo "results in $OUT"
