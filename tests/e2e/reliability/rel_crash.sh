#!/bin/bash
# A killed recording is not lost (issue 11 #7), and a recording keeps no arguments (#8):
# SIGKILL during `record` leaves NAME.tmp.XXXXXX; `report NAME` names it; `report NAME.tmp.XXXXXX`
# reads every complete record and says "recording ends early at offset N (killed?); results up to
# HH:MM:SS.mmm".  A complete recording cut inside a record reads the same way.  The command's
# arguments are not stored in the recording.
#   rel_crash.sh WHYSLOW
. "$(dirname "$0")/rel_lib.sh"
rel_init crash "$@"
W=$REL_WORK
DATA=$(cd "$REL_DIR/../../data" && pwd)/gt_mutex_disk.data

"$WHYSLOW" record -o "$W/k.data" -- sh -c 'for i in $(seq 400); do sleep 0.01; done; : s3cret-arg' \
	>/dev/null 2>"$W/rec.stderr" &
wpid=$!
REL_PIDS+=($wpid)
wait_attached "$wpid" || notok "record attached"
sleep 2
kill -KILL "$wpid"
wait "$wpid" 2>/dev/null
tmp=$(ls "$W"/k.data.tmp.* 2>/dev/null | head -1)
check "SIGKILL leaves the unfinished recording as k.data.tmp.XXXXXX ($tmp, $(stat -c %s "$tmp" 2>/dev/null) bytes)" [ -s "$tmp" ]
"$WHYSLOW" report "$W/k.data" >/dev/null 2>"$W/nofile.stderr"
rc=$?
sed 's/^/    stderr: /' "$W/nofile.stderr"
check "report k.data: fails (rc $rc) and names the unfinished file" \
	eval '[ $rc -ne 0 ] && grep -qF "$tmp" "$W/nofile.stderr"'
"$WHYSLOW" report "$tmp" >"$W/k.txt" 2>"$W/k.stderr"
rc=$?
sed 's/^/    stderr: /' "$W/k.stderr"
check "report of the killed recording: exit 0 (rc $rc) with a report" eval '[ $rc = 0 ] && grep -q Summary "$W/k.txt"'
check "  says where it ends and up to when" \
	grep -Eq "recording ends early at offset [0-9]+ \(killed\?\); results up to [0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}" "$W/k.stderr"
check "  it holds more than the start (threads traced: $(grep -o '[0-9]* threads' "$W/k.txt"))" \
	eval '! grep -q " 0 threads" "$W/k.txt"'
check "the recording does not hold the command's arguments" eval '! grep -aq s3cret-arg "$tmp"'

# a complete recording cut in the middle of a record (power loss before the last write)
size=$(stat -c %s "$DATA")
head -c $((size * 2 / 3)) "$DATA" >"$W/cut.data"
"$WHYSLOW" report "$W/cut.data" >"$W/cut.txt" 2>"$W/cut.stderr"
rc=$?
sed 's/^/    stderr: /' "$W/cut.stderr"
# (a "note:" line about plugin versions, for a fixture recorded by an older build, is not an error)
grep -v '^whyslow: note: ' "$W/cut.stderr" >"$W/cut.errors"
check "a recording cut at 2/3: exit 0 (rc $rc), one line saying where it ends" \
	eval '[ $rc = 0 ] && [ "$(nlines "$W/cut.errors")" = 1 ] && grep -q "recording ends early at offset" "$W/cut.errors"'
# only the header: still an error, not an empty report
head -c 20 "$DATA" >"$W/hdr.data"
"$WHYSLOW" report "$W/hdr.data" >/dev/null 2>&1
check "a file cut inside its header: still an error" [ $? -ne 0 ]
check "nothing left in the kernel" no_ws_left 2
rel_done
