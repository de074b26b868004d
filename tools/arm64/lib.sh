# Shared steps of tools/cross-arm64 and tools/arm64-test (sourced; needs TOP and DEPS set, root).

arm64_apt_download() {	# PACKAGE[=VERSION]... into $DEPS/debs
	mkdir -p "$DEPS/debs"
	(cd "$DEPS/debs" && apt-get download -qq -o APT::Sandbox::User=root "$@")
}

# pkgconf:arm64 ships /usr/bin/aarch64-linux-gnu-pkg-config, the cross file's pkg-config (a
# fresh machine has only its own architecture's); libffi8 and libgit2 are what the unpacked
# libcriterion3:arm64 links against (arm64_fetch_criterion unpacks only Criterion and nanomsg).
arm64_install_cross_deps() {
	if ! dpkg --print-foreign-architectures | grep -qx arm64; then
		dpkg --add-architecture arm64
		apt-get update -qq
	fi
	local pkgs="gcc-aarch64-linux-gnu libbpf-dev:arm64 libelf-dev:arm64 libdw-dev:arm64 zlib1g-dev:arm64 libzstd-dev:arm64
		    libinih-dev:arm64 libc6-dev:arm64 pkgconf:arm64 libffi8:arm64 libgit2-1.5:arm64
		    qemu-user-static file" missing="" p
	for p in $pkgs; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
	done
	[ -z "$missing" ] && return 0
	apt-cache policy libbpf-dev:arm64 | grep -q 'Candidate: [0-9]' || apt-get update -qq
	apt-get install -y -qq --no-install-recommends $missing >/dev/null
}

# Debian 12's arm64 kernel package, unpacked into $DEPS/kroot; its BTF in $DEPS/vmlinux.btf.
arm64_fetch_kernel() {
	if [ ! -s "$DEPS/vmlinux.btf" ] || [ ! -d "$DEPS/kroot/boot" ]; then
		local pkg
		pkg=$(apt-cache depends linux-image-arm64:arm64 | sed -n 's/^ *Depends: \(linux-image-[0-9][^:]*-arm64\).*/\1/p' | head -n 1)
		[ -n "$pkg" ] || { echo "tools/arm64: cannot find the package behind linux-image-arm64:arm64 (apt-get update?)" >&2; return 1; }
		rm -f "$DEPS"/debs/linux-image-*_arm64.deb
		arm64_apt_download "$pkg:arm64"
		rm -rf "$DEPS/kroot"
		mkdir -p "$DEPS/kroot"
		dpkg-deb -x "$DEPS"/debs/linux-image-*_arm64.deb "$DEPS/kroot"
		python3 "$TOP/tools/arm64/extract-btf.py" "$DEPS"/kroot/boot/vmlinuz-* "$DEPS/vmlinux.btf"
	fi
	KVER=$(basename "$DEPS"/kroot/lib/modules/*)
}

# Criterion and nanomsg for arm64, unpacked (not installed) into $DEPS/crit, with a criterion.pc
# that points there; the headers are the host's (identical across architectures).
arm64_fetch_criterion() {
	[ -f "$DEPS/pkgconfig/criterion.pc" ] && return 0
	local v lib=$DEPS/crit/usr/lib/aarch64-linux-gnu
	# Criterion:arm64 is pinned away from installation on some hosts: ask for the host's version.
	v=$(dpkg-query -W -f='${Version}' libcriterion-dev)
	rm -f "$DEPS"/debs/libcriterion*_arm64.deb "$DEPS"/debs/libnanomsg5_*_arm64.deb
	arm64_apt_download "libcriterion3:arm64=$v" libnanomsg5:arm64
	mkdir -p "$DEPS/crit" "$DEPS/pkgconfig"
	for d in "$DEPS"/debs/libcriterion3_*_arm64.deb "$DEPS"/debs/libnanomsg5_*_arm64.deb; do
		dpkg-deb -x "$d" "$DEPS/crit"
	done
	ln -sf libcriterion.so.3 "$lib/libcriterion.so"
	cat >"$DEPS/pkgconfig/criterion.pc" <<PC
Name: criterion
Description: Criterion $v for arm64, unpacked by tools/cross-arm64
Version: ${v%%-*}
Libs: -L$lib -Wl,-rpath-link,$lib -lcriterion
Cflags: -I/usr/include
PC
}

# Run arm64 executables through qemu-aarch64-static (Criterion re-executes its test binaries).
arm64_binfmt() {
	local bm=/proc/sys/fs/binfmt_misc
	[ -e $bm/register ] || mount -t binfmt_misc binfmt_misc $bm
	[ -e $bm/qemu-aarch64 ] && return 0
	grep -v '^#' /usr/lib/binfmt.d/qemu-aarch64.conf >$bm/register
}

arm64_build() {	# BUILD_DIR
	# the build runs what it built (docs/man/gen-ini-man.sh asks whyslow for its keys)
	arm64_binfmt
	if [ ! -f "$1/build.ninja" ]; then
		meson setup "$1" --cross-file "$TOP/cross/arm64.ini" --buildtype=debugoptimized \
			-Dbtf="$DEPS/vmlinux.btf" -Dpkg_config_path="$DEPS/pkgconfig" >/dev/null
	fi
	ninja -C "$1" >/dev/null
	echo "tools/arm64: built $1/ (whyslow: $(file -b "$1/core/whyslow" | cut -d, -f1-2))"
}

# The unit suite only: the root and sdk suites would attach arm64 BPF to the running x86_64 kernel.
arm64_unit_tests() {	# BUILD_DIR
	arm64_binfmt
	QEMU_SET_ENV=LD_LIBRARY_PATH=$DEPS/crit/usr/lib/aarch64-linux-gnu,WHYSLOW_TEST_EMULATED=1 \
		meson test -C "$1" --suite unit --print-errorlogs
}

# What the guest runs besides whyslow: Debian's arm64 busybox, bash, coreutils and losetup, with
# their libraries, unpacked by tools/arm64/mkinitramfs.sh.
arm64_fetch_userland() {
	[ -f "$DEPS/debs/userland/.done" ] && return 0
	rm -rf "$DEPS/debs/userland"
	mkdir -p "$DEPS/debs/userland"
	(cd "$DEPS/debs/userland" && apt-get download -qq -o APT::Sandbox::User=root \
		busybox-static:arm64 bash:arm64 coreutils:arm64 mount:arm64 libtinfo6:arm64 \
		libacl1:arm64 libattr1:arm64 libgmp10:arm64 libselinux1:arm64 libsmartcols1:arm64 \
		libmount1:arm64 libblkid1:arm64 libpcre2-8-0:arm64)
	touch "$DEPS/debs/userland/.done"
}
