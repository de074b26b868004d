#!/bin/bash
# deb_modes.sh SRC_ROOT — the packages do not depend on the builder's umask (issue 36 item 6):
# tools/package run under umask 000 (into a temporary directory, not build-deb/), then every
# entry `dpkg-deb -c` lists in the .debs must be writable by its owner only: no group- or
# world-writable file or directory (changelog.Debian.gz and the lintian overrides were 0666).
# And what they hold (issue 35 item 7): md5sums that match, the klock plugin in a package of its
# own, whyslow-flamegraph (run on a folded line), the documents, and Debian's hardening on every
# ELF file (bind now, relro, fortified calls); lintian -I --pedantic says nothing.
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
for deb in "$work"/out/whyslow_*.deb "$work"/out/whyslow-dev_*.deb "$work"/out/whyslow-plugin-klock_*.deb; do
	[ -f "$deb" ] || fail "tools/package made no $(basename "$deb")"
	# mode owner/group size date time path: the mode's 6th and 9th characters are g+w and o+w
	bad=$(dpkg-deb -c "$deb" | awk 'substr($1, 6, 1) == "w" || substr($1, 9, 1) == "w"')
	[ -z "$bad" ] || { echo "$bad" | sed 's/^/    /'; fail "$(basename "$deb"): group- or world-writable entries (above)"; }
	# the control members too (control, conffiles, md5sums), as stored
	bad=$(dpkg-deb --ctrl-tarfile "$deb" | tar -tvf - | awk 'substr($1, 6, 1) == "w" || substr($1, 9, 1) == "w"')
	[ -z "$bad" ] || { echo "$bad" | sed 's/^/    /'; fail "$(basename "$deb"): group- or world-writable control members (above)"; }
	echo "ok - $(basename "$deb"): $(dpkg-deb -c "$deb" | wc -l) entries, none writable by group or others"
done
for deb in "$work"/out/*.deb; do
	x=$work/x-$(basename "$deb" .deb)
	dpkg-deb -x "$deb" "$x" && dpkg-deb -e "$deb" "$x/DEBIAN" || fail "cannot unpack $(basename "$deb")"
	[ -s "$x/DEBIAN/md5sums" ] || fail "$(basename "$deb"): no md5sums"
	(cd "$x" && md5sum -c --quiet DEBIAN/md5sums) || fail "$(basename "$deb"): md5sums do not match"
	n=$(cd "$x" && find . -path ./DEBIAN -prune -o -type f -print | wc -l)
	[ "$n" = "$(wc -l <"$x/DEBIAN/md5sums")" ] || fail "$(basename "$deb"): md5sums lists not every file"
	while IFS= read -r elf; do
		readelf -d "$elf" | grep -q "BIND_NOW" || fail "$elf: not linked with -z now"
		readelf -lW "$elf" | grep -q GNU_RELRO || fail "$elf: no RELRO"
	done < <(find "$x/usr" -type f -exec sh -c 'head -c4 "$1" | grep -q ELF' _ {} \; -print)
done
x=$work/x-$(basename "$work"/out/whyslow_*.deb .deb)
nm -D "$x/usr/bin/whyslow" | grep -q "__[a-z_]*_chk" || fail "whyslow: no fortified calls (_FORTIFY_SOURCE)"
for f in usr/bin/whyslow-flamegraph usr/share/doc/whyslow/README.md.gz usr/share/doc/whyslow/trace-format.md.gz; do
	[ -s "$x/$f" ] || fail "whyslow: no /$f"
done
[ "$(head -1 "$x/usr/bin/whyslow-flamegraph")" = "#!/usr/bin/python3" ] || fail "whyslow-flamegraph: not Debian's python3"
printf 'main;work 10\nmain;wait 5\n' | "$x/usr/bin/whyslow-flamegraph" >"$work/fg.svg" 2>&1 &&
	grep -q "<svg" "$work/fg.svg" || fail "whyslow-flamegraph made no SVG: $(head -3 "$work/fg.svg")"
k=$work/x-$(basename "$work"/out/whyslow-plugin-klock_*.deb .deb)
[ -f "$k/usr/lib/$(dpkg-architecture -qDEB_HOST_MULTIARCH)/whyslow/plugins/klock.so" ] ||
	fail "whyslow-plugin-klock: no klock.so in the plugin directory"
dpkg-deb -f "$work"/out/whyslow-plugin-klock_*.deb Depends | grep -q "whyslow (= " ||
	fail "whyslow-plugin-klock does not depend on the same whyslow"
echo "ok - md5sums, hardening on every ELF file, whyslow-flamegraph, documents, klock in its own package"
# lintian (issue 35 item 7): no tag at all at -I --pedantic, but those debian/lintian-overrides
# overrides (each with its reason; debian/README says what was fixed)
command -v lintian >/dev/null || skip "needs lintian (apt-get install lintian)"
lintian -I --pedantic "$work"/out/*.deb >"$work/lintian.out" 2>&1
grep -E '^[EWIPX]: ' "$work/lintian.out" >"$work/tags"
[ ! -s "$work/tags" ] || { sed 's/^/    /' "$work/tags"; fail "lintian -I --pedantic: the tags above"; }
echo "ok - lintian -I --pedantic: no tag"
echo "PASS: the packages built under umask 000 have no group- or world-writable entry, and hold what they should"
