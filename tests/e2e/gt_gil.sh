#!/bin/bash
# Ground truth "gil" (issue 33 item 2): tests/programs/gt_gil.py keeps CPython's GIL busy in
# compress() on thread py-hog while py-victim's handle() needs it. whyslow must name the
# victim's futex waits "the GIL (python3.N pid P)" ("lock": "gil") and the thread holding it
# (read from the interpreter's state by the waiter as its wait ended) as the hog, as the truth
# file the interpreter wrote says — in JSON (live and from a recording) and text
# (tests/e2e/check_gil.py). Debian's /usr/bin/python3.11 always (CI fails without it); pyenv's
# 3.11.7 (libpython), 3.12.1 and 3.13.0 when present (said when not): each version's GIL offsets
# (core/stacks/pyproc.c) checked against the running interpreter.
#   gt_gil.sh WHYSLOW PROGRAM CHECK      (exit 0 pass, 1 fail, 77 skip)
set -u
WHYSLOW=$1 PROG=$2 CHECK=$3
. "$(dirname "${BASH_SOURCE[0]}")/skip.sh"
[ "$(id -u)" = 0 ] || skip "needs root"
[ -x /usr/bin/python3.11 ] || skip "no /usr/bin/python3.11 (Debian 12's python3.11)"
work=$(mktemp -d /tmp/whyslow-gil.XXXXXX) || exit 1
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

# a run, retried once when the program says its scenario did not happen (a loaded machine)
attempt() { # TAG TRUTH COMMAND...
	local tag=$1 truth=$2 st
	shift 2
	for try in 1 2; do
		"$@" "$truth"
		st=$?
		[ $st = 2 ] && continue
		[ $st = 0 ] || fail "$tag: whyslow exit $st"
		return 0
	done
	fail "$tag: the scenario did not happen twice"
}

one() { # PY TAG
	local py=$1 d=$work/$2 tid
	mkdir -p "$d"
	attempt "$2 run" "$d/truth.json" "$WHYSLOW" run --min-block 5ms --format json \
		-o "$d/live.jsonl" -- "$py" "$PROG"
	attempt "$2 record" "$d/truth-rec.json" "$WHYSLOW" record --min-block 5ms \
		-o "$d/rec.data" -- "$py" "$PROG" 2>/dev/null
	"$WHYSLOW" report "$d/rec.data" --format json >"$d/rec.jsonl" || fail "$2: report exit $?"
	tid=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["victim"]["tid"])' \
		"$d/truth-rec.json") || fail "$2: no truth file"
	"$WHYSLOW" report "$d/rec.data" --tid "$tid" >"$d/report.txt" || fail "$2: report exit $?"
	python3 "$CHECK" "$d" || fail "$2: see above"
}

one /usr/bin/python3.11 debian-3.11
for v in 3.11.7 3.12.1 3.13.0; do
	py=/root/.pyenv/versions/$v/bin/python3
	if [ -x "$py" ]; then one "$py" "pyenv-$v"; else echo "  skipped pyenv $v: not installed"; fi
done
echo "PASS"
