#!/bin/bash
# End-to-end ground truths over loopback sockets (no slow disk): run tests/programs/gt_net under
# `whyslow run` and check the client's chain: socket, woken by the server thread that sent the
# reply, then that thread's 100 ms sleep (see tests/programs/gt_net.c).
#   gt_net.sh tcp|udp|net_trap WHYSLOW GT_NET CHECK_CHAIN    (exit 0 pass, 1 fail, 77 skip)
# With CI=true nothing is skipped. GT_KEEP=1 keeps the work directory after a pass.
case=$1 WHYSLOW=$2 GT_PROGRAM=$3 CHECK_CHAIN=$4
GT_DIR=$(cd "$(dirname "$0")" && pwd)
PYTHON=${PYTHON:-python3}

fail() { echo "FAIL: $*" >&2; exit 1; }
if [ "$(id -u)" != 0 ]; then
	[ "${CI:-}" = true ] && fail "gt_$case needs root (BPF); CI=true does not skip"
	echo "SKIP: gt_$case needs root (BPF)" >&2
	exit 77
fi
case $case in
tcp) args=(--proto tcp) ;;
udp) args=(--proto udp) ;;
net_trap) args=(--proto tcp --trap) ;;
*) fail "unknown case '$case' (tcp, udp, net_trap)" ;;
esac
[ -x "$WHYSLOW" ] || fail "whyslow binary not given or not executable: '$WHYSLOW'"
[ -x "$GT_PROGRAM" ] || fail "gt_net not given or not executable: '$GT_PROGRAM'"
[ -r "$CHECK_CHAIN" ] || fail "checker not found: '$CHECK_CHAIN'"

work=$(mktemp -d "${TMPDIR:-/tmp}/whyslow-e2e-$case.XXXXXX") || fail "mktemp failed"
ok=0
trap '[ $ok = 1 ] && [ "${GT_KEEP:-0}" != 1 ] && rm -rf "$work" || echo "work directory kept: $work" >&2' EXIT

cmd=("$WHYSLOW" run --as-root --format json -o "$work/whyslow.jsonl" --perfetto "$work/trace.json" --
     "$GT_PROGRAM" "${args[@]}" --truth "$work/truth.json")
echo "+ ${cmd[*]}"
timeout -k 5 60 "${cmd[@]}" >"$work/whyslow.stdout" 2>"$work/whyslow.stderr"
rc=$?
echo "--- whyslow stderr (exit $rc, last 20 lines) ---"
tail -n 20 "$work/whyslow.stderr"
[ $rc -eq 0 ] || fail "whyslow run exited $rc"
[ -s "$work/truth.json" ] || fail "gt_net wrote no truth file (see stderr above)"
echo "--- check_chain ---"
"$PYTHON" "$CHECK_CHAIN" --truth "$work/truth.json" --json "$work/whyslow.jsonl" --case "$case" ||
	fail "check_chain.py found a mismatch (see above)"
"$PYTHON" "$GT_DIR/check_perfetto.py" "$work/trace.json" --chains "$work/whyslow.jsonl" ||
	fail "check_perfetto.py found a problem in the Perfetto export"
"$PYTHON" "$GT_DIR/check_critpath.py" "$work/whyslow.jsonl" ||
	fail "check_critpath.py found a problem (see above)"
ok=1
echo "PASS gt_$case"
