#!/bin/sh
# Install what whyslow needs to build and test, from Debian's packages.
set -e
pkgs="meson ninja-build pkg-config gcc clang llvm libbpf-dev bpftool libelf-dev libdw-dev zlib1g-dev
      libzstd-dev zstd libinih-dev libcriterion-dev libclang-rt-14-dev g++ make python3 util-linux mount kmod jq
      dpkg-dev debootstrap apt-utils lintian python3-venv python3-wheel patchelf golang-go nodejs curl prometheus
      systemd"
missing=""
for p in $pkgs; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
	echo "whyslow: missing packages:$missing; run as root (sudo) to install them" >&2
	exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends $missing >/dev/null
