#!/bin/sh
# install.sh — build whyslow from a release tarball (`meson dist`) and install it, on distributions
# without its .deb (Debian and Ubuntu: see tools/package).
#
#   ./install.sh [--prefix DIR] [--deps] [TARBALL]
#   ./install.sh [--prefix DIR] --uninstall
#
#   TARBALL     whyslow-VERSION.tar.xz (default: the tree this script is in, e.g. an unpacked one)
#   --prefix    where to install (default /usr/local); a prefix you own needs no root
#   --deps      first install the build dependencies with the distribution's package manager
#               (apt-get, dnf, zypper or pacman; needs root)
#   --uninstall remove what an install under that prefix put there, from the list it kept
#               (PREFIX/share/whyslow/install-manifest); nothing else is touched
#
# Building needs a C compiler, clang and llvm (BPF), bpftool, libbpf >= 1.0, libelf, zlib, zstd, inih,
# meson, ninja, pkg-config and python3. Running needs root (or CAP_BPF + CAP_PERFMON) and a kernel
# with BTF (/sys/kernel/btf/vmlinux).
set -eu
prefix=/usr/local deps=0 tarball= uninstall=0
while [ $# -gt 0 ]; do
	case $1 in
	--prefix) [ $# -ge 2 ] || { echo "install.sh: --prefix needs a directory" >&2; exit 2; }; prefix=$2; shift ;;
	--prefix=*) prefix=${1#--prefix=} ;;
	--deps) deps=1 ;;
	--uninstall) uninstall=1 ;;
	-h | --help) sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	-*) echo "install.sh: unknown option '$1'; see install.sh --help" >&2; exit 2 ;;
	*) tarball=$1 ;;
	esac
	shift
done
case $prefix in /*) ;; *) prefix=$(pwd)/$prefix ;; esac

say() { echo "install.sh: $*"; }
manifest=$prefix/share/whyslow/install-manifest

if [ $uninstall = 1 ]; then
	[ -f "$manifest" ] || { echo "install.sh: no $manifest: nothing was installed under $prefix by install.sh" >&2; exit 1; }
	# the list says what to delete: it must be ours, and writable by us alone
	[ -O "$manifest" ] && [ -z "$(find "$manifest" -perm /022)" ] ||
		{ echo "install.sh: $manifest is not yours alone (owner, or writable by others): not trusted; remove the files by hand" >&2; exit 1; }
	n=0 skipped=0
	# only what the list names under this prefix, and only files or links: never a directory's
	# contents, never a path with ".." in it, never through a symbolic link (a directory
	# replaced by a link to /etc would have root delete there)
	while IFS= read -r f; do
		case $f in "$prefix"/*) ;; *) continue ;; esac
		case $f in *"/../"* | *"/..") continue ;; esac
		if [ "$(realpath -m "$(dirname "$f")")" != "$(dirname "$f")" ]; then
			skipped=$((skipped + 1))
			continue
		fi
		if [ -f "$f" ] || [ -L "$f" ]; then
			rm -f "$f" && n=$((n + 1))
		fi
		d=$(dirname "$f")
		# the directories it made, once empty (rmdir leaves any that are not)
		while [ "$d" != "$prefix" ] && [ "${d#"$prefix"/}" != "$d" ] && rmdir "$d" 2>/dev/null; do
			d=$(dirname "$d")
		done
	done <"$manifest"
	rm -f "$manifest"
	rmdir "$prefix/share/whyslow" 2>/dev/null || true
	say "removed $n files installed under $prefix"
	[ $skipped = 0 ] || say "left $skipped listed paths that lead through a symbolic link"
	exit 0
fi

if [ $deps = 1 ]; then
	[ "$(id -u)" = 0 ] || { echo "install.sh: --deps installs packages: run it as root" >&2; exit 1; }
	. /etc/os-release
	case " ${ID:-} ${ID_LIKE:-} " in
	*" debian "* | *" ubuntu "*)
		set -- apt-get install -y meson ninja-build pkg-config gcc clang llvm bpftool libbpf-dev libelf-dev zlib1g-dev libzstd-dev libinih-dev python3
		apt-get update -qq ;;
	*" fedora "* | *" rhel "* | *" centos "*)
		set -- dnf install -y meson ninja-build pkgconf-pkg-config gcc clang llvm bpftool libbpf-devel elfutils-libelf-devel zlib-devel libzstd-devel inih-devel python3 ;;
	*" suse "* | *" opensuse "*)
		set -- zypper --non-interactive install meson ninja pkg-config gcc clang llvm bpftool libbpf-devel libelf-devel zlib-devel libzstd-devel libinih-devel python3 ;;
	*" arch "*)
		set -- pacman -S --needed --noconfirm meson ninja pkgconf gcc clang llvm bpf libbpf libelf zlib zstd libinih python ;;
	*) echo "install.sh: do not know the package manager of '${ID:-unknown}'; install the build dependencies listed in install.sh --help yourself" >&2
	   exit 1 ;;
	esac
	say "installing the build dependencies: $*"
	"$@"
fi

for tool in meson ninja clang pkg-config python3; do
	command -v $tool >/dev/null || { echo "install.sh: $tool is missing; install it, or run install.sh --deps as root" >&2; exit 1; }
done
command -v bpftool >/dev/null || [ -x /usr/sbin/bpftool ] ||
	{ echo "install.sh: bpftool is missing; install it, or run install.sh --deps as root" >&2; exit 1; }

work=$(mktemp -d "${TMPDIR:-/tmp}/whyslow-install.XXXXXX")
trap 'rm -rf "$work"' EXIT
if [ -n "$tarball" ]; then
	[ -f "$tarball" ] || { echo "install.sh: no such tarball: $tarball" >&2; exit 1; }
	tar -xf "$tarball" -C "$work"
	src=$(find "$work" -mindepth 1 -maxdepth 1 -type d | head -1)
	[ -f "$src/meson.build" ] || { echo "install.sh: $tarball holds no meson.build at its top" >&2; exit 1; }
	say "unpacked $tarball"
else
	src=$(cd "$(dirname "$0")" && pwd)
fi

say "building $src (meson, into $work/build)"
meson setup "$work/build" "$src" --prefix="$prefix" --buildtype=debugoptimized -Dtests=disabled >"$work/setup.log" 2>&1 ||
	{ tail -20 "$work/setup.log"; echo "install.sh: meson setup failed (above)" >&2; exit 1; }
ninja -C "$work/build" >"$work/build.log" 2>&1 ||
	{ tail -30 "$work/build.log"; echo "install.sh: the build failed (above)" >&2; exit 1; }
meson install -C "$work/build" --no-rebuild >"$work/install.log" 2>&1 ||
	{ tail -20 "$work/install.log"; echo "install.sh: meson install failed (above); a system prefix needs root" >&2; exit 1; }

# the list --uninstall removes (meson's own log of what it installed), itself last
mkdir -p "$(dirname "$manifest")"
{ grep -v '^#' "$work/build/meson-logs/install-log.txt"; echo "$manifest"; } >"$manifest"
version=$("$prefix/bin/whyslow" --version)
say "installed $version under $prefix:"
sed -n 's/^Installing .* to //p' "$work/install.log" | sed "s|^$prefix/||" | awk -F/ '{ print $1 "/" $2 }' | sort -u | sed 's/^/    /'
say "binary:  $prefix/bin/whyslow"
say "plugins: $(find "$prefix" -path '*/whyslow/plugins' -type d | head -1)"
say "config:  $(find "$prefix" "${prefix%/usr}/etc" -name whyslow.ini 2>/dev/null | head -1) (use with -c)"
case ":$PATH:" in *":$prefix/bin:"*) ;; *) say "note: $prefix/bin is not on your PATH" ;; esac
say "try: sudo $prefix/bin/whyslow run -- sleep 0.1;  man -M $prefix/share/man whyslow"
