# Shared helpers for bench/*.sh (sourced).
BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$BENCH_DIR/.." && pwd)
WHYSLOW=${WHYSLOW:-$ROOT/build/core/whyslow}
export WHYSLOW_PLUGIN_DIR=${WHYSLOW_PLUGIN_DIR:-$ROOT/build/plugins}

# the plugin directory of the build whose whyslow is $1 (BUILD/core/whyslow -> BUILD/plugins)
plugins_of() { echo "$(dirname "$(dirname "$1")")/plugins"; }

# bench_bpf SRC OBJ [CLANG_FLAGS...]: compile bench/SRC, a BPF program, against the build's
# vmlinux.h into OBJ. 2: no vmlinux.h or no BPF target for this machine; 1: clang failed.
bench_bpf() {
	local src=$1 obj=$2 arch
	shift 2
	case $(uname -m) in
	x86_64) arch=x86 ;;
	aarch64) arch=arm64 ;;
	*) echo "$(basename "$0"): no BPF target arch for $(uname -m)" >&2; return 2 ;;
	esac
	[ -r "$ROOT/build/vmlinux.h" ] || {
		echo "$(basename "$0"): no $ROOT/build/vmlinux.h: build whyslow first (meson setup build && ninja -C build)" >&2
		return 2
	}
	clang -O2 -g -target bpf -D__TARGET_ARCH_$arch "$@" -I"$ROOT/build" -c "$BENCH_DIR/$src" -o "$obj"
}

# bench/bpf_floor.c's loader (loads an object, attaches its programs, waits) as $OUT/bpf_floor
bench_bpf_loader() { cc -O2 -Wall -o "$OUT/bpf_floor" "$BENCH_DIR/bpf_floor.c" -lbpf; }

need_root() { [ "$(id -u)" = 0 ] || { echo "$0: run as root" >&2; exit 1; }; }

# median of the numbers on stdin
median() { sort -g | awk '{a[NR]=$1} END {if (!NR) {print "nan"; exit} if (NR%2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }

# CPU seconds (user+sys) a live process has used
cpu_secs() {
	local t
	t=$(awk '{print $14+$15}' "/proc/$1/stat" 2>/dev/null) || { echo nan; return; }
	awk -v t="$t" -v hz="$(getconf CLK_TCK)" 'BEGIN {printf "%.2f", t/hz}'
}

# minor page faults a live process has taken so far, all its threads' (each one a trap into the
# kernel, zeroing a page, 4 KiB or 2 MiB)
minor_faults() { awk '{print $10}' "/proc/$1/stat" 2>/dev/null || echo 0; }

# value of "key": in a one-line JSON object on stdin
json_num() { grep -o "\"$1\":[0-9]*" | head -1 | cut -d: -f2; }

machine_line() {
	echo "# machine: $(nproc) vCPU $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'), $(free -g | awk '/Mem:/{print $2}') GiB, kernel $(uname -r), $(. /etc/os-release; echo "$PRETTY_NAME")"
	echo "# whyslow: $("$WHYSLOW" --version 2>/dev/null | head -1) ($(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null)$(git -C "$ROOT" diff --quiet 2>/dev/null || echo +dirty)), $(date -u +%FT%TZ)"
}

# bpf_stats_begin NAME: a work dir $OUT with an empty $RAW, kernel.bpf_stats_enabled on until exit
# (restored then, with the tool in $TOOL_PID stopped and $OUT removed)
bpf_stats_begin() {
	OUT=$(mktemp -d "/tmp/whyslow-$1.XXXXXX")
	RAW=$OUT/raw.tsv
	: >"$RAW"
	BPF_STATS_OLD=$(sysctl -n kernel.bpf_stats_enabled)
	TOOL_PID=
	trap bpf_stats_end EXIT
	trap 'exit 130' INT TERM
	sysctl -qw kernel.bpf_stats_enabled=1
}
bpf_stats_end() {
	[ -n "$TOOL_PID" ] && kill -INT "$TOOL_PID" 2>/dev/null && wait "$TOOL_PID" 2>/dev/null
	sysctl -qw kernel.bpf_stats_enabled="$BPF_STATS_OLD"
	rm -rf "$OUT"
}

# id name run_time_ns run_cnt, one line per loaded ws_* (whyslow) or minimal_* (bench/minimal_tracer.bpf.c) program
prog_stats() {
	bpftool prog show --json | python3 -c '
import json, sys
for p in json.load(sys.stdin):
    if p.get("name", "").startswith(("ws_", "minimal_")):
        print(p["id"], p["name"], p.get("run_time_ns", 0), p.get("run_cnt", 0))'
}

# --- a slow disk and a private PostgreSQL cluster on it (bench/pgbench.sh, bench/requests_real.sh)
# slowdisk_make SIZE: in $WORK (a temp dir the caller made), a file of SIZE, a loop device over it
# in direct-I/O mode ($LOOP, major:minor $MM), ext4 on it mounted at $MNT=$WORK/mnt, and a fresh
# cgroup-v1 blkio group $CG throttling that device's writes to $WRITE_IOPS/s and reads to
# $READ_IOPS/s. Nothing joins the group: slowdisk_join puts this shell (and what it starts from then
# on) in it. slowdisk_remove undoes all of it (safe to call at any point, and more than once).
BLKIO=/sys/fs/cgroup/blkio
LOOP= CG= MNT= MM=
slowdisk_make() {
	local tag
	tag=$(basename "$0" .sh)
	[ -d "$BLKIO" ] || { echo "$tag: no cgroup-v1 blkio hierarchy at $BLKIO" >&2; return 1; }
	MNT=$WORK/mnt
	mkdir -p "$MNT"
	fallocate -l "$1" "$WORK/disk.img" || { echo "$tag: cannot create $WORK/disk.img" >&2; return 1; }
	LOOP=$(losetup --direct-io=on -f --show "$WORK/disk.img") || { LOOP=; echo "$tag: losetup failed" >&2; return 1; }
	mkfs.ext4 -q -F "$LOOP" || { echo "$tag: mkfs.ext4 $LOOP failed" >&2; return 1; }
	mount "$LOOP" "$MNT" || { echo "$tag: mount $LOOP failed" >&2; return 1; }
	CG=$BLKIO/whyslow-$tag-$(od -An -N4 -tx4 /dev/urandom | tr -d ' ')
	mkdir "$CG" || { CG=; echo "$tag: cannot create a blkio group" >&2; return 1; }
	MM=$(printf '%d:%d' "0x$(stat -c %t "$LOOP")" "0x$(stat -c %T "$LOOP")")
	echo "$MM $WRITE_IOPS" >"$CG/blkio.throttle.write_iops_device" || { echo "$tag: cannot throttle writes of $MM" >&2; return 1; }
	echo "$MM $READ_IOPS" >"$CG/blkio.throttle.read_iops_device" || { echo "$tag: cannot throttle reads of $MM" >&2; return 1; }
}
slowdisk_join() { echo $$ >"$CG/tasks"; }
slowdisk_remove() {
	local t tag
	tag=$(basename "$0" .sh)
	if [ -n "$CG" ] && [ -d "$CG" ]; then
		while read -r t; do echo "$t" >"$BLKIO/tasks" 2>/dev/null; done <"$CG/tasks"
		rmdir "$CG" 2>/dev/null || { sleep 0.5; rmdir "$CG" 2>/dev/null; } ||
			echo "$tag: cannot remove $CG" >&2
	fi
	CG=
	if [ -n "$MNT" ] && mountpoint -q "$MNT"; then
		umount "$MNT" 2>/dev/null || { sleep 1; umount "$MNT"; } || echo "$tag: cannot unmount $MNT" >&2
	fi
	# detach only the device that still serves our file
	if [ -n "$LOOP" ] && [ "$(cat "/sys/block/${LOOP#/dev/}/loop/backing_file" 2>/dev/null)" = "$WORK/disk.img" ]; then
		losetup -d "$LOOP" || echo "$tag: cannot detach $LOOP" >&2
	fi
	LOOP=
}

# PostgreSQL 15: a private cluster in $MNT/data owned by $PGUSER_NAME (postgres, or a system user
# made for the run: pg_user_make, then pg_user_remove on exit), port $PORT, unix socket in $SOCK.
PGBIN=/usr/lib/postgresql/15/bin
PGUSER_NAME=postgres MADE_USER=
pg_as() { runuser -u "$PGUSER_NAME" -- "$@"; }
pg_installed() {
	[ -x "$PGBIN/initdb" ] && command -v pgbench >/dev/null && return 0
	echo "$(basename "$0"): PostgreSQL 15 missing: apt-get install -y postgresql postgresql-contrib" >&2
	DEBIAN_FRONTEND=noninteractive apt-get install -y postgresql postgresql-contrib >/dev/null
}
pg_user_make() {
	id -u "$PGUSER_NAME" >/dev/null 2>&1 && return 0
	PGUSER_NAME=whyslow-pg
	useradd --system --no-create-home --shell /usr/sbin/nologin "$PGUSER_NAME" || return 1
	MADE_USER=$PGUSER_NAME
}
pg_user_remove() { [ -n "$MADE_USER" ] && userdel "$MADE_USER" 2>/dev/null; MADE_USER=; }
# pg_cluster_make: initdb and the configuration (fsync and synchronous_commit on)
pg_cluster_make() {
	mkdir -p "$SOCK" && chown "$PGUSER_NAME" "$SOCK" || return 1
	mkdir "$MNT/data" && chown "$PGUSER_NAME" "$MNT/data" && chmod 700 "$MNT/data" || return 1
	pg_as "$PGBIN/initdb" -D "$MNT/data" -U postgres --auth=trust -E UTF8 >"$WORK/initdb.log" 2>&1 || {
		echo "$(basename "$0"): initdb failed (see $WORK/initdb.log)" >&2
		return 1
	}
	# max_wal_size: the disk is 768 MB and WAL may grow to the default 1 GB between checkpoints,
	# which an unthrottled disk (WRITE_IOPS=100000) reaches within minutes: the server then stops
	cat >>"$MNT/data/postgresql.conf" <<EOC
port = $PORT
unix_socket_directories = '$SOCK'
listen_addresses = '127.0.0.1'
fsync = on
synchronous_commit = on
max_wal_size = 256MB
EOC
}
pg_start() {
	pg_as "$PGBIN/pg_ctl" -D "$MNT/data" -l "$SOCK/pg.log" -w -t 60 start >/dev/null || {
		echo "$(basename "$0"): postgres did not start (see the log: $(tail -3 "$SOCK/pg.log"))" >&2
		return 1
	}
}
pg_stop() {
	[ -n "$MNT" ] && [ -f "$MNT/data/postmaster.pid" ] || return 0
	pg_as "$PGBIN/pg_ctl" -D "$MNT/data" -m fast -w -t 30 stop >/dev/null 2>&1 ||
		pg_as "$PGBIN/pg_ctl" -D "$MNT/data" -m immediate -w stop >/dev/null 2>&1
}
postmaster_pid() { head -1 "$MNT/data/postmaster.pid"; }
