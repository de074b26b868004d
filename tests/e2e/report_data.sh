#!/bin/bash
# report_data.sh — the committed recordings under tests/data/, analysed by `whyslow report`.
# Needs no root and no BPF: the causal engine's end-to-end answer is checked in every build.
#
#   report_data.sh WHYSLOW DATA_DIR CHECK_CHAIN CHECK_PERFETTO       (exit 0 pass, 1 fail)
#
# For each DATA_DIR/gt_<case>.data with its gt_<case>.truth.json (written by the ground-truth
# program during that recording; see record_report.sh RECORD_SAVE): report --format json must
# give the right chain (check_chain.py), twice the same, and report --format perfetto must pass
# check_perfetto.py with every chain hop drawn as a flow, and report --format folded must parse
# back with its weights equal to the chains' blocked time (check_folded.py).
set -u
WHYSLOW=$1 DATA=$2 CHECK_CHAIN=$3 CHECK_PERFETTO=$4
PYTHON=${PYTHON:-python3}
work=$(mktemp -d "${TMPDIR:-/tmp}/whyslow-report-data.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
n=0
for data in "$DATA"/gt_*.data; do
	[ -e "$data" ] || continue
	case=$(basename "$data" .data)
	case=${case#gt_}
	truth="$DATA/gt_$case.truth.json"
	echo "--- $data ---"
	"$WHYSLOW" report --format json "$data" >"$work/a.jsonl" || fail "report $data exited $?"
	"$WHYSLOW" report --format json "$data" >"$work/b.jsonl" || fail "report $data exited $?"
	cmp -s "$work/a.jsonl" "$work/b.jsonl" || fail "two reports of $data differ"
	"$PYTHON" "$CHECK_CHAIN" --truth "$truth" --json "$work/a.jsonl" --case "$case" ||
		fail "check_chain.py: wrong chain in $data"
	"$WHYSLOW" report "$data" --format perfetto -o "$work/trace.json" || fail "perfetto export"
	"$PYTHON" "$CHECK_PERFETTO" "$work/trace.json" --chains "$work/a.jsonl" || fail "perfetto check"
	# the recording is of a run whose main thread waits on the victim, which waits on the read
	"$PYTHON" "$(dirname "$0")/check_critpath.py" "$work/a.jsonl" --top "block I/O" ||
		fail "critical path check"
	"$WHYSLOW" report "$data" --format folded >"$work/folded" || fail "folded export"
	"$PYTHON" "$(dirname "$0")/check_folded.py" "$work/folded" "$work/a.jsonl" || fail "folded check"
	# the same towers as a pprof profile: decoded here, and by Debian's go tool pprof
	"$WHYSLOW" report "$data" --format pprof -o "$work/profile.pb.gz" || fail "pprof export"
	"$PYTHON" "$(dirname "$0")/check_pprof.py" "$work/profile.pb.gz" "$work/folded" ||
		fail "pprof check"
	if command -v go >/dev/null; then
		total=$(go tool pprof -top -unit=ns "$work/profile.pb.gz" 2>/dev/null |
			sed -n 's/.*Total samples = \([0-9]*\)ns.*/\1/p')
		[ "$total" = "$(awk '{s += $NF} END {print s}' "$work/folded")" ] ||
			fail "go tool pprof reads a total of '$total' ns, the folded lines another"
	elif [ "${CI:-}" = true ]; then
		fail "go tool pprof is needed under CI=true (apt-get install golang-go)"
	fi
	if command -v script >/dev/null; then
		# a binary profile is not written to a terminal: refused, nothing written
		script -qec "'$WHYSLOW' report '$data' --format pprof" /dev/null >"$work/tty" 2>&1
		[ $? = 2 ] && grep -q 'not for a terminal' "$work/tty" ||
			fail "--format pprof to a terminal was not refused: $(head -c 300 "$work/tty")"
	fi
	"$PYTHON" "$(dirname "$0")/../../tools/flamegraph.py" "$work/folded" >"$work/fg.svg" &&
		grep -q '<svg' "$work/fg.svg" || fail "tools/flamegraph.py could not draw the folded stacks"
	"$WHYSLOW" report "$data" >"$work/text" || fail "text report"
	grep -q 'blocked' "$work/text" || fail "text report shows no chain"
	# a victim filter that matches nothing leaves only the summary
	"$WHYSLOW" report --format json --comm no-such-thread "$data" >"$work/none.jsonl" || fail "filter"
	[ "$(grep -c '"type":"chain"' "$work/none.jsonl")" = 0 ] || fail "--comm filter let chains through"
	n=$((n + 1))
done
[ $n -gt 0 ] || fail "no recordings in $DATA"

# The README's flame-graph pipeline, read from README.md and run exactly as printed, in a
# scratch tree that has the repository's tests/ and tools/ and an empty docs/ (so it never writes
# over the committed picture), with this build's whyslow first on PATH.
top=$(realpath "$(dirname "$0")/../..")
line=$(grep -m1 '^whyslow report tests/data/.*--format folded | tools/flamegraph.py' "$top/README.md") ||
	fail "README.md no longer shows the flame-graph pipeline this test runs"
mkdir -p "$work/tree/docs" "$work/bin"
ln -s "$top/tests" "$top/tools" "$work/tree/"
ln -s "$(realpath "$WHYSLOW")" "$work/bin/whyslow"
(cd "$work/tree" && PATH="$work/bin:$PATH" bash -o pipefail -c "$line") ||
	fail "the README's pipeline failed: $line"
svg=$(sed -n 's/.*> *\([^ ]*\.svg\).*/\1/p' <<<"$line")
grep -q '<svg' "$work/tree/$svg" && grep -q 'block' "$work/tree/$svg" ||
	fail "the README's pipeline drew no flame graph of the recording's block I/O in $svg"
echo "ok: the README's pipeline as printed: $line"
echo "PASS report_data ($n recordings)"
