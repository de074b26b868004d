#!/bin/bash
# install_sh.sh SRC_ROOT BUILD_DIR — install.sh on the release tarball (issue 17): `meson dist`
# makes the tarball, install.sh builds it and installs under a temporary prefix, and the installed
# whyslow must run: --version, --config-help (which loads the installed plugins from the prefix
# it was built for), the man pages and completion in place.
set -u
src=$(realpath "$1") build=$(realpath "$2")
t0=$(date +%s)
work=$(mktemp -d /tmp/whyslow-install-test.XXXXXX)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

# the tarball as a release would have it: what git tracks (uncommitted edits are left out)
meson dist -C "$build" --no-tests --allow-dirty --formats xztar >"$work/dist.log" 2>&1 ||
	{ tail -20 "$work/dist.log"; fail "meson dist"; }
tarball=$(ls "$build"/meson-dist/whyslow-*.tar.xz | head -1)
[ -f "$tarball" ] || fail "meson dist made no tarball"
echo "tarball: $tarball ($(du -k "$tarball" | cut -f1) KiB, $(($(date +%s) - t0))s)"

prefix=$work/prefix
(cd "$work" && "$src/install.sh" --prefix "$prefix" "$tarball") >"$work/install.out" 2>&1 ||
	{ tail -30 "$work/install.out"; fail "install.sh"; }
cat "$work/install.out"
grep -q "install.sh: installed whyslow" "$work/install.out" || fail "install.sh did not say what it installed"
"$prefix/bin/whyslow" --version | grep -q "^whyslow " || fail "the installed whyslow --version"
"$prefix/bin/whyslow" --config-help | grep -q '^\[sched\]' ||
	fail "the installed whyslow does not find its plugins under the prefix"
for f in share/man/man1/whyslow.1 share/man/man1/whyslow-flamegraph.1 share/man/man5/whyslow.ini.5 share/man/man7/whyslow-plugin.7 \
	share/bash-completion/completions/whyslow include/whyslow/plugin.h etc/whyslow/whyslow.ini; do
	[ -s "$prefix/$f" ] || fail "$f not installed under the prefix"
done
grep -q 'min_block " = 10ms"' "$prefix/share/man/man5/whyslow.ini.5" || fail "whyslow.ini(5) lacks the keys"
[ -x "$prefix/bin/whyslow-flamegraph" ] && [ -s "$prefix/share/doc/whyslow/README.md" ] ||
	fail "whyslow-flamegraph or the documents not installed"

# --uninstall (issue 35.7): what it installed goes, a file of someone else's in the same
# directories stays, and so does its directory
echo "not whyslow's" >"$prefix/share/man/man1/other.1"
# a listed directory swapped for a link elsewhere: nothing is deleted through it
mkdir "$work/elsewhere"
echo keep >"$work/elsewhere/whyslow.bash"
mv "$prefix/share/bash-completion/completions" "$work/completions.moved"
ln -s "$work/elsewhere" "$prefix/share/bash-completion/completions"
cp "$work/elsewhere/whyslow.bash" "$work/elsewhere/whyslow"
"$src/install.sh" --prefix "$prefix" --uninstall >"$work/uninstall.out" 2>&1 ||
	{ cat "$work/uninstall.out"; fail "install.sh --uninstall"; }
cat "$work/uninstall.out"
[ -f "$work/elsewhere/whyslow" ] || fail "--uninstall deleted through a symbolic link"
grep -q "left 1 listed paths that lead through a symbolic link" "$work/uninstall.out" ||
	fail "--uninstall did not say what it left"
rm -f "$prefix/share/bash-completion/completions" # the link itself, at a path the list names, may go
left=$(cd "$prefix" && find . -type f -o -type l | sort)
[ "$left" = "./share/man/man1/other.1" ] || fail "--uninstall left (or took) files: $left"
[ ! -d "$prefix/bin" ] || fail "--uninstall left the empty $prefix/bin"
"$src/install.sh" --prefix "$prefix" --uninstall >/dev/null 2>&1 && fail "a second --uninstall found a list"
echo "PASS: install.sh built the tarball and installed a working whyslow in $(($(date +%s) - t0))s"
