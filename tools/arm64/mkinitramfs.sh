#!/bin/bash
# Build the arm64 test guest's initramfs (tools/arm64-test): busybox, bash, coreutils and losetup
# from Debian's arm64 packages, the arm64 whyslow build with its plugins and ground-truth
# programs, the shared libraries they need, and the kernel modules for the disks.
#   mkinitramfs.sh TOP DEPS BUILD KVER OUT.cpio.gz CASES...
set -euo pipefail
TOP=$1 DEPS=$2 BUILD=$3 KVER=$4 OUT=$5
shift 5
ROOT=$DEPS/initramfs
PKGROOT=$DEPS/pkgroot
rm -rf "$ROOT"
mkdir -p "$ROOT"/{bin,sbin,usr/bin,usr/sbin,lib,proc,sys,dev,tmp,etc,ws/bin,ws/plugins,ws/programs,ws/e2e,ws/modules.d}

# Userland from Debian's arm64 packages, unpacked (never installed) into $PKGROOT.
if [ ! -f "$PKGROOT/.done" ]; then
	rm -rf "$PKGROOT"; mkdir -p "$PKGROOT"
	for d in "$DEPS"/debs/userland/*.deb; do dpkg-deb -x "$d" "$PKGROOT"; done
	touch "$PKGROOT/.done"
fi
cp "$PKGROOT/bin/busybox" "$ROOT/bin/busybox"
# Its applet links are made in the guest (/init: busybox --install -s): hundreds of `ln` here
# take minutes on a loaded machine.
ln -s busybox "$ROOT/bin/sh"
# GNU tools first in PATH (slowdisk.sh uses GNU options: stat %Hd, mktemp --suffix, losetup --direct-io).
cp "$PKGROOT/bin/bash" "$ROOT/usr/bin/"
ln -sf /usr/bin/bash "$ROOT/bin/bash"
find "$PKGROOT/bin" "$PKGROOT/usr/bin" -maxdepth 1 -type f ! -name busybox ! -name bash \
	-exec cp -t "$ROOT/usr/bin/" {} +
cp "$PKGROOT/sbin/losetup" "$ROOT/usr/sbin/"

# whyslow, its plugins, the ground truths and the scripts that run them.
cp "$BUILD/core/whyslow" "$ROOT/ws/bin/"
cp "$BUILD"/plugins/*.so "$ROOT/ws/plugins/"
for c in "$@"; do cp "$BUILD/tests/programs/gt_$c" "$ROOT/ws/programs/"; cp "$TOP/tests/e2e/gt_$c.sh" "$ROOT/ws/e2e/"; done
# The checkers only so that gt_lib.sh finds them; they run on the host (tools/arm64/pyshim).
cp "$TOP/tests/e2e/gt_lib.sh" "$TOP/tests/e2e/slowdisk.sh" "$TOP"/tests/e2e/check_*.py "$ROOT/ws/e2e/"
echo "$*" >"$ROOT/ws/cases"
cp "$TOP/tools/arm64/guest-init" "$ROOT/init"
cp "$TOP/tools/arm64/pyshim" "$ROOT/ws/pyshim"
chmod +x "$ROOT/init" "$ROOT/ws/pyshim" "$ROOT"/ws/e2e/*.sh
echo "root:x:0:0:root:/:/bin/sh" >"$ROOT/etc/passwd"
echo "root:x:0:" >"$ROOT/etc/group"

# Shared libraries: the NEEDED closure of every ELF file, from the unpacked packages first, then
# the host's multiarch arm64 libraries.
libdirs=("$PKGROOT/lib/aarch64-linux-gnu" "$PKGROOT/usr/lib/aarch64-linux-gnu"
	 /lib/aarch64-linux-gnu /usr/lib/aarch64-linux-gnu)
mkdir -p "$ROOT/lib/aarch64-linux-gnu"
cp -L /lib/ld-linux-aarch64.so.1 "$ROOT/lib/"
# One readelf over many files per round (process start-up is what costs on a loaded machine).
needed_of() { readelf -d "$@" 2>/dev/null | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | sort -u; }
declare -A seen=([ld-linux-aarch64.so.1]=1)
mapfile -t todo < <(find "$ROOT" -type f ! -name '*.ko' ! -name '*.sh' ! -name '*.py')
while [ ${#todo[@]} -gt 0 ]; do
	new=()
	for lib in $(needed_of "${todo[@]}"); do
		[ -n "${seen[$lib]:-}" ] && continue
		seen[$lib]=1
		found=
		for d in "${libdirs[@]}"; do
			if [ -e "$d/$lib" ]; then found=$d/$lib; break; fi
		done
		[ -n "$found" ] || { echo "mkinitramfs.sh: no arm64 library $lib in ${libdirs[*]}" >&2; exit 1; }
		cp -L "$found" "$ROOT/lib/aarch64-linux-gnu/$lib"
		new+=("$ROOT/lib/aarch64-linux-gnu/$lib")
	done
	todo=("${new[@]}")
done

# Modules, in load order (modules.dep and the ext4/jbd2 soft dependency on crc32c).
MODS="crc16 mbcache crc32c_generic jbd2 ext4 virtio_mmio virtio_blk loop"
for m in $MODS; do
	p=$(find "$DEPS/kroot/lib/modules/$KVER" -name "$m.ko" | head -n 1)
	[ -n "$p" ] || { echo "mkinitramfs.sh: module $m.ko not in the kernel package" >&2; exit 1; }
	cp "$p" "$ROOT/ws/modules.d/"
done
echo "$MODS" >"$ROOT/ws/modules"

(cd "$ROOT" && find . | cpio -o -H newc --quiet) | gzip -1 >"$OUT"
echo "mkinitramfs.sh: $(du -h "$OUT" | cut -f1) initramfs, $(find "$ROOT" -type f | wc -l) files"
