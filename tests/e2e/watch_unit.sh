#!/bin/bash
# The systemd unit whyslow.service (conf/whyslow.service.in; issue 31 item 5), without systemd as
# process 1 (CI has none): what the unit promises is checked piece by piece.
#  1. `systemd-analyze verify` accepts it, its ExecStart pointed at this build.
#  2. Its ExecStart's watch, run as root with exactly the unit's CapabilityBoundingSet (setpriv:
#     root keeps no capability outside the bounding set) on a victim run as nobody, works as
#     with every capability: `whyslow dump` writes a dump whose slow wait has its chain, its
#     kernel frames named (CAP_SYSLOG) and the victim's own functions named (its files opened
#     by a helper as nobody: CAP_SETUID/SETGID; its memory and pagemap read: CAP_SYS_PTRACE,
#     CAP_DAC_READ_SEARCH). `-p PID` stands for the unit's `-a`, which would trace the other
#     tests running beside this one; the capabilities asked are the same.
#  3. SIGTERM, what `systemctl stop` sends (KillSignal), leaves no BPF program of it loaded.
#   watch_unit.sh WHYSLOW VICTIM UNIT INI     (INI: conf/whyslow.ini, what the unit's -c names)
. "$(dirname "$0")/watch_lib.sh" || exit 1
WHYSLOW=$(readlink -f "$1") VICTIM=$(readlink -f "$2") UNIT=$3 INI=$(readlink -f "$4")
watch_setup watch-unit
command -v setpriv >/dev/null || watch_skip "setpriv (util-linux) not installed"
command -v systemd-analyze >/dev/null || watch_skip "systemd-analyze (systemd) not installed"
[ -r "$UNIT" ] || watch_die "no unit file: $UNIT"

# ---- 1. the unit as systemd reads it
sed "s|^ExecStart=[^ ]*/whyslow |ExecStart=$WHYSLOW |" "$UNIT" >"$WORK/whyslow.service"
grep -q "^ExecStart=$WHYSLOW " "$WORK/whyslow.service" || watch_die "no ExecStart=.../whyslow in $UNIT"
# (--man=no: the man page is not installed here)
if ! SYSTEMD_LOG_LEVEL=warning systemd-analyze verify --man=no "$WORK/whyslow.service" \
	>"$WORK/verify.out" 2>&1; then
	cat "$WORK/verify.out"
	watch_fail "systemd-analyze verify refused the unit"
fi
caps=$(sed -n 's/^CapabilityBoundingSet=//p' "$UNIT")
[ -n "$caps" ] || watch_die "the unit names no CapabilityBoundingSet"
bounding=-all
for c in $caps; do
	c=${c#CAP_}
	bounding="$bounding,+${c,,}"
done
read -r -a exec_args <<<"$(sed -n 's/^ExecStart=[^ ]* //p' "$UNIT")"
[ "${exec_args[-2]} ${exec_args[-1]}" = "watch -a" ] || watch_die "ExecStart does not end in watch -a: ${exec_args[*]}"
[ "${exec_args[0]}" = -c ] || watch_die "ExecStart names no -c INI: ${exec_args[*]}"
exec_args[1]=$INI # the shipped ini, not installed here
echo "unit: ExecStart ${exec_args[*]}; bounding set $bounding"

# ---- 2. its watch with those capabilities only, on a process of another user
install -d -o nobody -m 0755 "$WORK/victim"
chmod 0755 "$WORK"
setpriv --reuid nobody --regid nogroup --clear-groups -- \
	"$VICTIM" --go "$WORK/victim/go" --truth "$WORK/victim/truth" --rounds 200 --slow-round 5 &
VPID=$!
WATCH_PIDS+=($VPID)
SPOOL=$WORK/spool
# the unit's -c and ini; -a for this test's own victim (see above)
setpriv --bounding-set "$bounding" -- "$WHYSLOW" "${exec_args[@]:0:$((${#exec_args[@]} - 1))}" \
	-p $VPID --spool "$SPOOL" >"$WORK/watch.out" 2>"$WORK/watch.err" &
WPID=$!
WATCH_PIDS+=($WPID)
wait_watching $WPID || { cat "$WORK/watch.err" >&2; watch_die "the watch did not start with the unit's capabilities"; }
grep -q "^CapBnd:" /proc/$WPID/status && echo "watch $WPID: $(grep ^CapEff: /proc/$WPID/status)"
PROGS=$(progs_of $WPID)
touch "$WORK/victim/go"
# the slow round (the 6th of 200 rounds of 20 ms) ends about 0.6 s in, the victim 4 s later:
# the dump is asked for in between, then the watch ended as systemctl stop ends it
sleep 1.5
DUMP=$("$WHYSLOW" dump 2>"$WORK/dump.err") || watch_fail "whyslow dump: $(cat "$WORK/dump.err")"
echo "dump: $DUMP"
kill -0 $VPID 2>/dev/null || watch_fail "the victim ended before the dump: it proves nothing"
kill -TERM $WPID
for _ in $(seq 100); do kill -0 $WPID 2>/dev/null || break; sleep 0.1; done
wait $WPID
rc=$?
echo "--- watch stderr (exit $rc)"
cat "$WORK/watch.err"
[ $rc -eq 0 ] || watch_fail "watch exit status $rc after SIGTERM"
check_detached $WPID "$PROGS"
wait $VPID || watch_fail "watch_victim failed"
[ -n "$DUMP" ] && [ -f "$DUMP" ] || watch_die "no dump"
"$WHYSLOW" report --format json "$DUMP" >"$WORK/report.jsonl" 2>"$WORK/report.err" ||
	watch_fail "whyslow report DUMP: $(cat "$WORK/report.err")"
python3 - "$WORK/victim/truth" "$WORK/report.jsonl" <<'PY' || watch_fail "the dump made with the unit's capabilities"
import json, sys
truth = open(sys.argv[1]).read().split()
victim, holder = int(truth[1]), int(truth[3])
chains = [json.loads(l) for l in open(sys.argv[2])]
chains = [c for c in chains if c.get("type") == "chain" and c["tid"] == victim and c["blocked_ns"] >= 350e6]
assert chains, "no chain of the victim's slow wait in the dump"
link = chains[0]["links"][0]
assert link["kind"] == "futex" and link.get("woken_by") == holder, link
stack = link.get("stack") or []
kernel = [f.get("sym") for f in stack if f.get("kernel")]
user = [f.get("sym") for f in stack if not f.get("kernel")]
print("  victim's wait: kernel %s; user %s" % (kernel[:2], user[:4]))
assert any(k and not k.startswith("0x") and "+0x" not in k for k in kernel), "kernel frames not named: %s" % kernel
assert "victim" in user, "the victim's own function is not named: %s (%s)" % (user, {k: v for k, v in link.items() if "stack" in k and k != "stack"})
PY
# ---- 4. logs to the journal: with stderr the stream systemd names in JOURNAL_STREAM, each line
# starts with its syslog level (journald reads "<N>"); any other stderr gets none
: >"$WORK/journal"
js=$(stat -c '%d:%i' "$WORK/journal")
JOURNAL_STREAM=$js "$WHYSLOW" watch -p $$ --spool "$WORK/no/such/dir" 2>>"$WORK/journal" >/dev/null
JOURNAL_STREAM=1:1 "$WHYSLOW" watch -p $$ --spool "$WORK/no/such/dir" 2>"$WORK/not-journal" >/dev/null
echo "  journal: $(head -n 1 "$WORK/journal")"
grep -q '^<3>whyslow: ' "$WORK/journal" || watch_fail "no <3> level on the journal's error line"
grep -q '^whyslow: ' "$WORK/not-journal" || watch_fail "a level prefix on a stderr that is not the journal"
watch_end
