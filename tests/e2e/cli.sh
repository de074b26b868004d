#!/bin/bash
# Command-line conventions (issue 17): getopt_long forms, help per command, options checked
# against their command, units required, -o -, run's report on stderr (the command's stdout stays
# its own), the warning for sources without sched, -p PID, and report's parser.
#   cli.sh WHYSLOW DATA_FILE     (exit 77 = skipped when not root, unless CI=true)
set -u
WHYSLOW=$(realpath "$1") DATA=$(realpath "$2")
if [ "$(id -u)" != 0 ]; then
	[ "${CI:-}" = true ] && { echo "FAIL: needs root (CI=true: not skipping)"; exit 1; }
	echo "SKIP: needs root"; exit 77
fi
W=$(mktemp -d /tmp/whyslow-cli.XXXXXX)
trap 'rm -rf "$W"' EXIT
cd "$W" || exit 1
fails=0
ok() { echo "ok   $1"; }
notok() {
	echo "FAIL $1"
	fails=$((fails + 1))
	sed 's/^/    stdout: /' "$W/out" | head -5
	sed 's/^/    stderr: /' "$W/err" | head -5
}
# t NAME WANT_RC STDOUT_RE STDERR_RE -- ARGS...   ("" = not checked; WANT_RC nz = non-zero)
t() {
	local name=$1 want=$2 outre=$3 errre=$4 rc bad=""
	shift 5
	timeout -k 2 30 "$WHYSLOW" "$@" >"$W/out" 2>"$W/err"
	rc=$?
	if [ "$want" = nz ]; then
		[ $rc -ne 0 ] && [ $rc -lt 124 ] || bad+=" exit $rc (want an error);"
	else
		[ $rc = "$want" ] || bad+=" exit $rc (want $want);"
	fi
	[ -z "$outre" ] || grep -Eq -- "$outre" "$W/out" || bad+=" stdout lacks /$outre/;"
	[ -z "$errre" ] || grep -Eq -- "$errre" "$W/err" || bad+=" stderr lacks /$errre/;"
	if [ "$want" = nz ] && [ "$(wc -l <"$W/err")" != 1 ]; then
		bad+=" $(wc -l <"$W/err") stderr lines (want one);"
	fi
	if [ -z "$bad" ]; then ok "$name"; else notok "$name:$bad"; fi
}

# --- help ----------------------------------------------------------------------------------
t "whyslow --help: the commands" 0 "^Usage: whyslow \[options\] COMMAND" "" -- --help
t "run --help: run's own help" 0 "^Usage: whyslow run " "" -- run --help
t "attach --help: attach's own help" 0 "^Usage: whyslow attach " "" -- attach --help
t "help record: record's help" 0 "^Usage: whyslow record " "" -- help record
t "help report: report's help" 0 "^Usage: whyslow report " "" -- help report
t "help stuck: stuck's help and options" 0 "^ +--format FMT +text \(default\) or json" "" -- help stuck
grep -q "^Usage: whyslow stuck " "$W/out" && grep -q -- "--min-block DUR" "$W/out" && ! grep -q -- "--sources" "$W/out" &&
	ok "help stuck: its usage and only its options" || notok "help stuck: not stuck's help"
t "stuck --help" 0 "^Usage: whyslow stuck " "" -- stuck --help
t "report --help" 0 "^Usage: whyslow report " "" -- report --help
t "help with an unknown command" nz "" "help: no command 'nope'" -- help nope
t "--version" 0 "^whyslow [0-9]" "" -- --version
t "--config-help names keys with defaults" 0 "min_block +default 10ms" "" -- --config-help
t "--config-help=xml is refused" nz "" "give text, ini or man" -- --config-help=xml

# --- errors: one line, non-zero ---------------------------------------------------------------
t "an option of another command" nz "" "--as-root does not apply to attach" -- attach --as-root 1
t "--live outside record" nz "" "--live does not apply to run" -- run --live x -- true
t "-u with report" nz "" "-u does not apply to report" -- report -u root x
t "a duration without a unit" nz "" "--min-block: '10' has no unit; add one .*e\.g\. 10ms" -- run --min-block 10 -- true
printf '[core]\nmin_block = 10\n' >"$W/bare.ini"
t "the ini refuses it alike" nz "" "bare\.ini:2: \[core\] min_block: '10' has no unit; add one .*e\.g\. 10ms" -- -c "$W/bare.ini" run -- true
t "stuck refuses it alike" nz "" "--min-block: '10' has no unit" -- stuck --min-block 10 1
t "a bad --min-block=value" nz "" "--min-block: 'fast' is not a duration" -- run --min-block=fast -- true
t "report: a duration without a unit" nz "" "--min-block: '5' has no unit" -- report --min-block 5 "$DATA"
t "an option missing its value" nz "" "--top needs a value" -- run --top
t "a value given to a flag" nz "" "--as-root=yes: this option takes no value" -- run --as-root=yes -- true
t "an unknown option" nz "" "unknown option '--bogus'" -- run --bogus -- true
t "an unknown command, the commands named" nz "" "unknown command 'jump' \(run, attach, record, report, stuck, watch, dump, help\)" -- jump
t "stuck: an option of another command" nz "" "--sources does not apply to stuck" -- stuck --sources sched 1
t "stuck: a format it cannot write" nz "" "--format: 'folded' is not text or json" -- stuck --format=folded 1
t "record -o -" nz "" "a recording is a file" -- record -o - -- true
[ -e "$W/-" ] && notok "a file named - was created" || ok "no file named - created"

# --- getopt_long forms, -o -, where the report goes -------------------------------------------
t "--opt=value forms" 0 "" "" -- run --min-block=5ms --top=3 --format=json -o "$W/eq.jsonl" -- true
grep -q '"type":"summary"' "$W/eq.jsonl" && ok "--format=json honoured" || notok "--format=json not honoured"
t "run: the report goes to stderr" 0 "^CMDOUT$" "^Summary: " -- run -- sh -c 'echo CMDOUT'
[ "$(cat "$W/out")" = CMDOUT ] && ok "run: stdout holds only the command's output" ||
	notok "run: stdout holds more than the command's output"
t "run -o -: the report on stdout" 0 '"type":"summary"' "" -- run --format json -o - -- sh -c 'echo CMDOUT'
grep -q '"type":"summary"' "$W/err" && notok "run -o -: the report also went to stderr" || ok "run -o -: not on stderr"
t "run --duration is accepted" 0 "" "" -- run --duration 1s -o /dev/null -- true
t "whyslow -- COMMAND means run" 0 "^CMDOUT$" "Summary: " -- -- sh -c 'echo CMDOUT'
t "--sources without sched: a warning" 0 "" "warning: sources futex without sched" -- --sources futex run -o /dev/null -- true
# a target that switches often, so tracing it is seen in the summary's thread count
sh -c 'for i in $(seq 600); do sleep 0.05; done' &
sp=$!
t "attach -p PID --duration" 0 '"threads":[1-9]' "" -- attach -p "$sp" --duration 300ms --format json
t "attach PID with options after it" 0 '"threads":[1-9]' "" -- attach "$sp" --duration=300ms --format=json
t "whyslow -p PID means attach" 0 '"threads":[1-9]' "" -- -p "$sp" --duration 300ms --format json
t "record attach -p PID" 0 "" "recorded [0-9]+ records" -- record -o "$W/r.data" attach -p "$sp" --duration=300ms
t "record -o FILE -- COMMAND" 0 "" "recorded [0-9]+ records" -- record -o "$W/r2.data" -- true
kill "$sp"
wait "$sp" 2>/dev/null
# stuck takes --opt=value and --opt value as every command does
sleep 30 &
sp=$!
sleep 0.3
t "stuck --format=json --min-block=1ms PID" 0 '"type":"open_wait".*"kind":"sleep"' "" -- stuck --format=json --min-block=1ms "$sp"
t "stuck --format json --min-block 1ms PID" 0 '"type":"open_wait".*"kind":"sleep"' "" -- stuck --format json --min-block 1ms "$sp"
t "stuck PID --format=json (options after the PID)" 0 '"type":"open_wait"' "" -- stuck "$sp" --format=json --min-block=1ms
kill "$sp"
wait "$sp" 2>/dev/null

# --- -o -: stdout is the report's alone, whatever the command prints (issue 35.1) -------------
# The README's and run --help's pipeline, as printed (with whyslow's path; root needs no sudo),
# on an ./app that prints JSON of its own without a newline: jq parses the stream, and the
# command's output went to stderr.
printf '#!/bin/sh\nprintf "{\\"done\\": 100}"\n' >"$W/app"
chmod 755 "$W/app"
if "$WHYSLOW" run --format json -o - -- ./app 2>/dev/null | jq . >"$W/out" 2>"$W/err" &&
	grep -q '"type": "summary"' "$W/out"; then
	ok "-o - | jq: the report alone on stdout"
else
	notok "-o - | jq: not a JSON stream"
fi
"$WHYSLOW" run --as-root --format json -o - -- ./app >"$W/out" 2>"$W/err"
grep -q '{"done": 100}' "$W/err" && ! grep -q '"done"' "$W/out" &&
	ok "-o -: the command's stdout went to stderr" || notok "-o -: the command's stdout was not moved to stderr"
"$WHYSLOW" run --as-root -o "$W/r.txt" -- ./app >"$W/out" 2>"$W/err"
grep -q '{"done": 100}' "$W/out" && ok "-o FILE: the command's stdout stays its own" ||
	notok "-o FILE: the command's stdout is not its own"

# --- every output path is checked before the command starts (issue 35.3) ---------------------
# A path in a missing directory: one line naming it, non-zero, and the command never ran (it
# would have made $W/ran). Before, a bad --perfetto was found after the run and its report.
bad=/nonexistent-whyslow-dir/out
for args in "run -o $bad" "run --perfetto $bad" "run --format pprof -o $bad" \
	"record -o $bad" "record -o $W/live.data --live $bad" "record -o $W/p.data --perfetto $bad"; do
	rm -f "$W/ran"
	# shellcheck disable=SC2086 # the words of $args are the options
	t "$args: refused up front" nz "" "cannot write $bad: .*choose another output path" -- $args -- touch "$W/ran"
	[ -e "$W/ran" ] && notok "$args: the command ran before the path was found bad" ||
		ok "$args: the command did not run"
done
[ -e "$W/live.data" ] || [ -e "$W/p.data" ] && notok "a refused record left its -o file" ||
	ok "a refused record left no file"
t "report --format perfetto to a bad path" nz "" "cannot write $bad" -- report "$DATA" --format perfetto -o "$bad"
t "watch --spool in a missing directory" nz "" "$bad" -- watch --spool "$bad/x" -a

# --- each chain printed once (issue 35.4): the longest waits refer to a reason's example -------
"$WHYSLOW" run --as-root -o "$W/once.txt" -- sh -c 'sleep 0.3' >"$W/out" 2>"$W/err"
if python3 - "$W/once.txt" <<'PY'; then
import re, sys
text = open(sys.argv[1]).read()
reasons = text.split("Reasons, costliest first")[1].split("The longest single waits:")[0]
longest = text.split("The longest single waits:")[1].split("\nSummary:")[0]
first = [l.strip() for l in reasons.splitlines() if re.match(r"\s+\d\d:\d\d:\d\d\.\d+ ", l)][0]
refs = [l for l in longest.splitlines() if l.endswith("the example of reason 1 above")]
assert len(refs) == 1 and refs[0].startswith(first), "no reference to reason 1: %r" % longest
assert text.count(first) == 2, "reason 1's chain printed more than once"
PY
	ok "each chain printed once: the longest waits refer to reason 1's example"
else
	notok "a chain printed twice: $(cat "$W/once.txt")"
fi

# --- colour: on a terminal only, and not with NO_COLOR ----------------------------------------
script -qc "$WHYSLOW report --top=1 $DATA" /dev/null >"$W/tty" 2>&1
grep -aq $'\033\\[1m' "$W/tty" && ok "terminal: bold victims" || notok "terminal: no colour"
NO_COLOR=1 script -qc "$WHYSLOW report --top=1 $DATA" /dev/null >"$W/tty" 2>&1
grep -aq $'\033\\[' "$W/tty" && notok "NO_COLOR: still coloured" || ok "NO_COLOR: no colour"
"$WHYSLOW" report --top=1 "$DATA" >"$W/out" 2>&1
grep -aq $'\033' "$W/out" && notok "a file got colour codes" || ok "a file: no colour"

# --- the text report: one of a thing in the singular, no "+ 0ns" terms in the off-CPU sum -----
t "one thread: \"1 thread\"" 0 "" "^Summary: .* traced, 1 thread, [0-9]+ records?, " -- run -- true
grep -Eq "[+=] 0ns |\b1 (threads|waits)\b" "$W/err" && notok "a 0ns term or a plural of one: $(grep -E "[+=] 0ns |\b1 (threads|waits)\b" "$W/err")" ||
	ok "no 0ns term, no plural of one"

# --- while tracing: the status line (tty), -v progress, what the command left behind ----------
# (on a terminal: the status_tty test, under a pty)
script -qc "$WHYSLOW run --format json -o - -- sleep 1" /dev/null >"$W/tty" 2>&1
grep -aq "events, " "$W/tty" && notok "a JSON report streaming to the terminal got a status line between its lines" ||
	ok "a JSON report streaming to the terminal: no status line"
t "not a terminal: no status line" 0 "" "" -- run -o /dev/null -- sleep 0.6
grep -q "events, " "$W/err" && notok "a status line although stderr is a file" || ok "no status line in a file"
t "-v: progress lines wherever stderr goes" 0 "" "^whyslow: [0-9]+ threads, [0-9]+ events, [0-9]+ lost, " -- -v run -o /dev/null -- sleep 1.5
s=$(date +%s)
# (named as it is when sh exits: "sh" when the child has not exec()ed sleep yet, as under ASan)
t "left behind: named, and traced for a grace period" 0 "" "sh exited; still tracing what it left behind: [0-9]+ \((sleep|sh)\); stopping in 10s" \
	-- run -o /dev/null -- sh -c 'sleep 40 >/dev/null 2>&1 & exit 0'
el=$(($(date +%s) - s))
[ $el -ge 9 ] && [ $el -le 25 ] && ok "left behind: stopped after the grace period (${el}s)" ||
	notok "left behind: whyslow took ${el}s (want about 10s after the command)"
s=$(date +%s)
t "--wait: traced until it exits" 0 "" "until they exit \(--wait\)" -- run --wait -o /dev/null -- sh -c 'sleep 2 >/dev/null 2>&1 & exit 0'
t "--wait applies to run only" nz "" "--wait does not apply to attach" -- attach --wait 1

# --- report ------------------------------------------------------------------------------------
t "report --top=1 FILE" 0 "blocked" "" -- report --top=1 "$DATA"
t "report FILE --format=json -o -" 0 '"type":"summary"' "" -- report "$DATA" --format=json -o -
[ -e "$W/-" ] && notok "report -o - created a file named -" || ok "report -o -: no file named -"
"$WHYSLOW" report --top=1 - <"$DATA" >"$W/out" 2>"$W/err" && grep -q "blocked" "$W/out" &&
	ok "report -: the recording read from standard input" || notok "report - did not read standard input"
t "report DIR: said to be a directory" nz "" "is a directory: give a recording" -- report "$W"
# several recordings, one per host (README, "Across hosts"): what takes one only is said so
t "report A B: joined" 0 "^Across 2 recordings" "" -- report "$DATA" "$DATA"
t "report A B --format json: host objects" 0 '"type":"host"' "" -- report --format json "$DATA" "$DATA"
t "report A B --format perfetto" nz "" "perfetto takes one recording" -- report --format perfetto "$DATA" "$DATA"
t "report A B --tid" nz "" "the filters .* take one recording" -- report --tid 1 "$DATA" "$DATA"
t "report of 17 recordings" nz "" "17 recordings given; at most 16" -- report $(seq -f "$W/r%g.data" 17)
t "record --clock-shift without a unit" nz "" "--clock-shift=5: give a duration" -- record --clock-shift 5 -- true
t "record --host ''" nz "" "--host: give a name" -- record --host "" -- true

# --- the text report follows the locale's character set --------------------------------------
LC_ALL=C "$WHYSLOW" report "$DATA" >"$W/out" 2>"$W/err"
grep -q ' <- woken by' "$W/out" && ! grep -q '←' "$W/out" && ok "LC_ALL=C: ASCII arrows" ||
	notok "LC_ALL=C: the report is not ASCII"
LC_ALL=C.UTF-8 "$WHYSLOW" report "$DATA" >"$W/out" 2>"$W/err"
grep -q ' ← woken by' "$W/out" && ok "LC_ALL=C.UTF-8: UTF-8 arrows" || notok "LC_ALL=C.UTF-8: no UTF-8 arrows"

[ -c /dev/null ] || { echo "FAIL /dev/null is no longer a device"; fails=$((fails + 1)); }
echo "$fails failure(s)"
[ $fails = 0 ]
