#!/bin/bash
# demo_intact.sh WHYSLOW PLUGIN_DIR PROGRAM — runs the demo's exact command (tests/e2e/demo.sh) and
# checks that it printed the chain and left the machine intact: /dev/null is still the character
# device 1:3, and the demo left no file behind it. Root only (77 = skip; CI=true makes it a failure).
set -u
fail() { echo "FAIL: $*" >&2; exit 1; }
if [ "$(id -u)" != 0 ]; then
	[ "${CI:-}" = true ] && fail "CI=true: demo_intact needs root"
	echo "SKIP: demo_intact needs root" >&2
	exit 77
fi
devnull_ok() { [ -c /dev/null ] && [ "$(stat -c '%t:%T' /dev/null)" = "1:3" ]; }
devnull_ok || fail "/dev/null is not the character device 1:3 before the demo ran"
out=$(mktemp /tmp/whyslow-demo-test.XXXXXX)
trap 'rm -f "$out"' EXIT
"$(dirname "$0")/demo.sh" "$@" >"$out" 2>&1
rc=$?
cat "$out"
devnull_ok || fail "/dev/null is no longer the character device 1:3 after the demo"
ls /dev/null.tmp* >/dev/null 2>&1 && fail "the demo left /dev/null.tmp* behind"
[ $rc -eq 0 ] || fail "the demo exited $rc"
grep -q 'blocked .* on futex' "$out" || fail "the demo printed no futex wait"
grep -q 'block I/O' "$out" || fail "the demo's chain does not reach the block I/O"
echo "PASS demo_intact"
