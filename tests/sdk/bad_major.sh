#!/bin/bash
# A plugin built for another ABI major, alone in a plugin directory, makes
# `whyslow --plugin-dir DIR run -- true` print one line naming it and both ABIs, and exit
# non-zero.
#   bad_major.sh WHYSLOW PLUGIN.so PLUGIN_MAJOR WHYSLOW_MAJOR [WHAT_TO_DO]
# WHAT_TO_DO: words the line must also hold (how to fix it).
set -u
exe=$1 so=$2 pmajor=$3 major=$4 todo=${5:-}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
chmod 755 "$dir"
install -m 644 "$so" "$dir/bad_major.so"
"$exe" --plugin-dir "$dir" run -- true >"$dir/out" 2>"$dir/err"
rc=$?
cat "$dir/err"
lines=$(wc -l <"$dir/err")
if [ $rc -eq 0 ]; then echo "FAIL: exit status 0"; exit 1; fi
if [ "$lines" -ne 1 ]; then echo "FAIL: $lines lines on stderr, want 1"; exit 1; fi
if ! grep -Eq "bad_major.so: refused: built for plugin ABI $pmajor\.[0-9]+, this whyslow has ABI $major\.[0-9]+" "$dir/err"; then
	echo "FAIL: message does not name the plugin and both ABIs"; exit 1
fi
if [ -n "$todo" ] && ! grep -qF "$todo" "$dir/err"; then
	echo "FAIL: message does not say: $todo"; exit 1
fi
echo "ok   refused with exit status $rc"
