#!/bin/bash
# Ground truth "python" (issue 33): tests/programs/gt_python.py blocks thread py-victim in
# Worker.wait_for_lock() on a threading.Lock that py-holder holds in hold_lock() across a 300 ms
# sleep. whyslow's chain must name, with file and line as the interpreter itself wrote them in
# the truth file: the victim's Python frames at its wait (Worker.wait_for_lock <- run_victim),
# the holder's at the wakeup (its release) and at its own wait (its sleep) — in JSON (live and
# from a recording), text, folded stacks and Perfetto (tests/e2e/check_python.py).
# Debian's /usr/bin/python3.11 always (CI fails without it); pyenv's 3.11.7 (libpython), 3.12.1
# and 3.13.0 when present (said when not).
#   gt_python.sh WHYSLOW PROGRAM CHECK      (exit 0 pass, 1 fail, 77 skip)
set -u
WHYSLOW=$1 PROG=$2 CHECK=$3
skip() {
	[ "${CI:-}" = true ] && { echo "FAIL: $* (CI=true: not skipping)"; exit 1; }
	echo "SKIP: $*"; exit 77
}
[ "$(id -u)" = 0 ] || skip "needs root"
[ -x /usr/bin/python3.11 ] || skip "no /usr/bin/python3.11 (Debian 12's python3.11)"
work=$(mktemp -d /tmp/whyslow-python.XXXXXX) || exit 1
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

# one run, retried once when the program says its scenario did not happen (a loaded machine)
one() { # PY TAG
	local py=$1 d=$work/$2 st
	mkdir -p "$d"
	for try in 1 2; do
		"$WHYSLOW" run --format json -o "$d/live.jsonl" --perfetto "$d/trace.json" -- \
			"$py" "$PROG" "$d/truth.json"
		st=$?
		[ $st = 2 ] && continue
		[ $st = 0 ] || fail "$2: whyslow run exit $st"
		break
	done
	[ $st = 0 ] || fail "$2: the scenario did not happen twice"
	"$WHYSLOW" record -o "$d/rec.data" -- "$py" "$PROG" "$d/truth-rec.json" >/dev/null 2>&1 ||
		fail "$2: whyslow record exit $?"
	"$WHYSLOW" report "$d/rec.data" --format json >"$d/rec.jsonl" || fail "$2: report exit $?"
	"$WHYSLOW" report "$d/rec.data" --format folded >"$d/folded.txt" || fail "$2: folded exit $?"
	# the victim's own waits in text (the main thread's join is as long as its wait)
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
