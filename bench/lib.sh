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

# value of "key": in a one-line JSON object on stdin
json_num() { grep -o "\"$1\":[0-9]*" | head -1 | cut -d: -f2; }

machine_line() {
	echo "# machine: $(nproc) vCPU $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'), $(free -g | awk '/Mem:/{print $2}') GiB, kernel $(uname -r), $(. /etc/os-release; echo "$PRETTY_NAME")"
	echo "# whyslow: $("$WHYSLOW" --version 2>/dev/null) ($(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null)$(git -C "$ROOT" diff --quiet 2>/dev/null || echo +dirty)), $(date -u +%FT%TZ)"
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
