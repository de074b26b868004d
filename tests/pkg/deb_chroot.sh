#!/bin/bash
# deb_chroot.sh SRC_ROOT GT_PROGRAM — the packages on a clean system (issue 17):
#   1. tools/package --apt: whyslow and whyslow-dev .debs and a local APT repository;
#   2. a fresh Debian 12 root made by debootstrap from the mirror apt uses here (the downloaded
#      packages and the bootstrapped root are cached under build-deb/cache, so a re-run neither
#      downloads nor bootstraps: it unpacks a fresh copy);
#   3. inside it (chroot, with /proc, /sys, /dev mounted and unmounted afterwards):
#      apt-get install whyslow whyslow-dev from the local repository, whyslow --version,
#      `whyslow run -- true` with real BPF, man whyslow, bash completion, the gt_mutex_disk ground
#      truth (its program and scripts copied in: they are tests, not part of the package), and
#      pkg-config --cflags whyslow-plugin + building the SDK template against the installed SDK.
# Exit 0 pass, 1 fail, 77 skipped (not root, or no debootstrap; CI=true turns a skip into a fail).
set -u
src=$(realpath "$1") gt_program=$(realpath "$2")
t0=$(date +%s)
skip() {
	[ "${CI:-}" = true ] && { echo "FAIL: $* (CI=true: not skipping)"; exit 1; }
	echo "SKIP: $*"; exit 77
}
[ "$(id -u)" = 0 ] || skip "needs root (chroot, mounts, BPF)"
command -v debootstrap >/dev/null || skip "needs debootstrap (apt-get install debootstrap)"
command -v apt-ftparchive >/dev/null || skip "needs apt-ftparchive (apt-get install apt-utils)"

top=$src/build-deb
root=$top/chroot.$$
cache=$top/cache
suite=bookworm
# the mirror this machine's apt already uses
mirror=$(sed -n 's/^URIs: *\(http[^ ]*debian\)$/\1/p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -1)
[ -n "$mirror" ] || mirror=$(awk '$1 == "deb" && $3 == "bookworm" { print $2; exit }' /etc/apt/sources.list 2>/dev/null)
[ -n "$mirror" ] || mirror=http://deb.debian.org/debian
# what the checks need besides the package's own Depends (which apt-get resolves from the mirror)
include=man-db,bash-completion,python3,mount,kmod,make,gcc,libc6-dev,pkg-config,clang,llvm,bpftool,ca-certificates
tarball=$cache/$suite-minbase-$(echo "$include" | md5sum | cut -c1-8).tgz

mounted=()
cleanup() {
	local rc=$? m left
	for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do
		m=${mounted[i]}
		umount -R "$m" 2>/dev/null || umount -R -l "$m" 2>/dev/null || echo "deb_chroot: could not unmount $m" >&2
	done
	left=$(awk -v r="$root/" 'index($2, r) == 1 { print $2 }' /proc/mounts)
	if [ -n "$left" ]; then
		# never delete through a mount of the host's /dev, /sys or /proc
		echo "deb_chroot: mounts left under $root, not removing it: $left" >&2
		rc=1
	elif [ -d "$root" ]; then
		rm -rf --one-file-system "$root"
	fi
	[ -c /dev/null ] || { echo "FAIL: /dev/null is no longer a device" >&2; rc=1; }
	echo "deb_chroot: took $(($(date +%s) - t0))s"
	exit $rc
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP
fail() { echo "FAIL: $*"; exit 1; }
step() { echo "== $* ($(($(date +%s) - t0))s)"; }
in_root() { chroot "$root" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 "$@"; }

step "tools/package --apt"
"$src/tools/package" --apt || fail "tools/package failed"

mkdir -p "$cache"
if [ ! -s "$tarball" ]; then
	step "debootstrap: downloading $suite from $mirror into $tarball (once)"
	tmp=$(mktemp -d "$cache/dl.XXXXXX")
	debootstrap --variant=minbase --include="$include" --make-tarball="$tarball.tmp" "$suite" "$tmp" "$mirror" \
		>"$cache/make-tarball.log" 2>&1 || { rm -rf "$tmp"; tail -20 "$cache/make-tarball.log"; fail "debootstrap --make-tarball"; }
	rm -rf "$tmp"
	mv "$tarball.tmp" "$tarball"
fi
# debootstrap's second stage (dpkg configuring ~250 packages) takes many minutes here: the first
# run keeps the bootstrapped root, untouched, as a tar; later runs start from a fresh copy of it
rootball=$cache/$suite-root-$(echo "$include" | md5sum | cut -c1-8).tar
if [ -s "$rootball" ]; then
	step "a fresh $suite root in $root (from $rootball)"
	mkdir -p "$root" && tar -xpf "$rootball" -C "$root" || fail "unpacking $rootball"
else
	step "debootstrap: a fresh $suite root in $root"
	debootstrap --variant=minbase --include="$include" --unpack-tarball="$tarball" "$suite" "$root" "$mirror" \
		>"$top/debootstrap.log" 2>&1 || { tail -20 "$top/debootstrap.log"; fail "debootstrap"; }
	[ -z "$(awk -v r="$root/" 'index($2, r) == 1' /proc/mounts)" ] || fail "debootstrap left mounts under $root"
	tar -cpf "$rootball.tmp" -C "$root" . && mv "$rootball.tmp" "$rootball" || fail "caching the root as $rootball"
fi

for d in proc sys dev; do
	mkdir -p "$root/$d"
	if [ $d = proc ]; then
		mount -t proc proc "$root/proc"
	else
		# rbind brings /sys/kernel/btf, /sys/fs/cgroup/blkio, tracefs and /dev/pts; rslave keeps
		# our unmounts from reaching the host's mounts
		mount --rbind "/$d" "$root/$d" && mount --make-rslave "$root/$d"
	fi || fail "mount $root/$d"
	mounted+=("$root/$d")
done
cp /etc/resolv.conf "$root/etc/resolv.conf"

step "apt-get install whyslow whyslow-dev from the local repository"
mkdir -p "$root/srv/whyslow-apt"
cp "$top/apt/"* "$root/srv/whyslow-apt/"
echo "deb [trusted=yes] file:/srv/whyslow-apt ./" >"$root/etc/apt/sources.list.d/whyslow.list"
in_root apt-get -qq update || fail "apt-get update in the chroot"
in_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q whyslow whyslow-dev >"$top/apt-install.log" 2>&1 ||
	{ tail -20 "$top/apt-install.log"; fail "apt-get install whyslow whyslow-dev"; }
grep -E "^(Get|Selecting|Setting up) .*whyslow" "$top/apt-install.log" | head -4

step "whyslow --version"
in_root whyslow --version || fail "whyslow --version"
step "whyslow run -- true (real BPF)"
in_root whyslow run --format json -o /tmp/true.jsonl -- true || fail "whyslow run -- true exited $?"
grep -q '"type":"summary".*"sources":"blkio,futex,sched"' "$root/tmp/true.jsonl" ||
	fail "whyslow run -- true: no summary naming the installed sources: $(tail -c 300 "$root/tmp/true.jsonl")"
echo "ok: $(grep -o '"events":[0-9]*' "$root/tmp/true.jsonl"), sources blkio,futex,sched"
step "man pages"
for page in whyslow whyslow.ini whyslow-plugin; do
	in_root man -P cat "$page" 2>/dev/null | grep -q "^NAME" || fail "man $page shows no page"
done
in_root man -P cat whyslow.ini | grep -q "min_block = 10ms" || fail "whyslow.ini(5) lacks the key tables"
echo "ok: man whyslow, man whyslow.ini, man whyslow-plugin"
step "bash completion"
comp() {
	in_root bash -c '. /usr/share/bash-completion/bash_completion; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _completion_loader whyslow; _whyslow; echo "${COMPREPLY[*]}"' _ "$@"
}
[ "$(comp whyslow r)" = "run record report" ] || fail "completion of 'whyslow r': '$(comp whyslow r)'"
[ "$(comp whyslow --sources f)" = futex ] || fail "completion of --sources f: '$(comp whyslow --sources f)'"
comp whyslow attach --format j | grep -qx json || fail "completion of attach --format j"
echo "ok: whyslow r<TAB> = $(comp whyslow r); --sources f<TAB> = futex"

step "ground truth gt_mutex_disk in the chroot"
mkdir -p "$root/opt/whyslow-test"
cp "$gt_program" "$src"/tests/e2e/{gt_mutex_disk.sh,gt_lib.sh,slowdisk.sh} "$src"/tests/e2e/check_*.py "$root/opt/whyslow-test/"
in_root /opt/whyslow-test/gt_mutex_disk.sh /usr/bin/whyslow /opt/whyslow-test/gt_mutex_disk \
	/opt/whyslow-test/check_chain.py >"$top/gt.log" 2>&1 || { tail -30 "$top/gt.log"; fail "gt_mutex_disk in the chroot"; }
grep -E "^(PASS|ok)" "$top/gt.log" | tail -3

step "the SDK: pkg-config and the template"
in_root pkg-config --cflags whyslow-plugin || fail "pkg-config --cflags whyslow-plugin"
in_root sh -c 'cp -r /usr/share/whyslow/template /tmp/template && make -s -C /tmp/template' >"$top/template.log" 2>&1 ||
	{ tail -20 "$top/template.log"; fail "building the template against the installed SDK"; }
[ -f "$root/tmp/template/template.so" ] || fail "the template build made no template.so"
in_root sh -c 'mkdir -p /tmp/pd && cp /usr/lib/*/whyslow/plugins/futex.so /tmp/template/template.so /tmp/pd/ && chmod 755 /tmp/pd' &&
	in_root whyslow --plugin-dir /tmp/pd --config-help | grep -q '^\[template\]' ||
	fail "the installed whyslow does not load the template built against the installed SDK"
echo "ok: template.so built and loaded by the installed whyslow"
echo "PASS: the packages install and work on a fresh Debian 12 root"
