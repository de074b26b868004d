# Shared helpers for bench/*.sh (sourced).
BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$BENCH_DIR/.." && pwd)
WHYSLOW=${WHYSLOW:-$ROOT/build/core/whyslow}
export WHYSLOW_PLUGIN_DIR=${WHYSLOW_PLUGIN_DIR:-$ROOT/build/plugins}

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
