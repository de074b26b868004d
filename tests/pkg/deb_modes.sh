#!/bin/bash
# deb_modes.sh SRC_ROOT — the packages do not depend on the builder's umask (issue 36 item 6):
# tools/package run under umask 000 (into a temporary directory, not build-deb/), then every
# entry `dpkg-deb -c` lists in both .debs must be writable by its owner only: no group- or
# world-writable file or directory (changelog.Debian.gz and the lintian overrides were 0666).
# Exit 0 pass, 1 fail, 77 skipped (no dpkg-dev; CI=true turns a skip into a failure).
set -u
src=$(realpath "$1")
t0=$(date +%s)
skip() {
	[ "${CI:-}" = true ] && { echo "FAIL: $* (CI=true: not skipping)"; exit 1; }
	echo "SKIP: $*"; exit 77
}
for t in dpkg-deb dpkg-shlibdeps dpkg-gencontrol dpkg-parsechangelog meson ninja; do
	command -v "$t" >/dev/null || skip "needs $t (apt-get install dpkg-dev meson ninja-build)"
done
work=$(mktemp -d /tmp/whyslow-deb-modes.XXXXXX)
trap 'rm -rf "$work"; echo "deb_modes: took $(($(date +%s) - t0))s"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

(umask 000 && WHYSLOW_DEB_DIR=$work "$src/tools/package") >"$work/package.log" 2>&1 ||
	{ tail -20 "$work/package.log"; fail "tools/package under umask 000"; }
for deb in "$work"/out/whyslow_*.deb "$work"/out/whyslow-dev_*.deb; do
	[ -f "$deb" ] || fail "tools/package made no $(basename "$deb")"
	# mode owner/group size date time path: the mode's 6th and 9th characters are g+w and o+w
	bad=$(dpkg-deb -c "$deb" | awk 'substr($1, 6, 1) == "w" || substr($1, 9, 1) == "w"')
	[ -z "$bad" ] || { echo "$bad" | sed 's/^/    /'; fail "$(basename "$deb"): group- or world-writable entries (above)"; }
	# the control members too (control, conffiles, md5sums), as stored
	bad=$(dpkg-deb --ctrl-tarfile "$deb" | tar -tvf - | awk 'substr($1, 6, 1) == "w" || substr($1, 9, 1) == "w"')
	[ -z "$bad" ] || { echo "$bad" | sed 's/^/    /'; fail "$(basename "$deb"): group- or world-writable control members (above)"; }
	echo "ok - $(basename "$deb"): $(dpkg-deb -c "$deb" | wc -l) entries, none writable by group or others"
done
echo "PASS: both packages built under umask 000 have no group- or world-writable entry"
