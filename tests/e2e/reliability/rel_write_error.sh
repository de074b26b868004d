#!/bin/bash
# A write error mid-run (issue 11.8): the report's output fills up (a 64 KiB tmpfs, in a private
# mount namespace) while the command is still running.
# - run: whyslow says so at once, waits for the command (it finishes its work) and exits with the
#   command's status, or 1 when the command succeeded; nothing half-written is left;
# - record --live: the recording is still written complete and `report` reads it.
# A write error at the end (issue 36 item 5): -o /dev/full, or a report, --live file or --perfetto
# export that no longer fits on a full tmpfs: said once with its own errno ("No space left on
# device", not EIO), whyslow exits with the command's status (1 if it succeeded), nothing
# half-written is left, and the recording is still written complete.
#   rel_write_error.sh WHYSLOW PROGRAMS_DIR
. "$(dirname "$0")/rel_lib.sh"
rel_init write_error "$@"
W=$REL_WORK
PP=$REL_PROGRAMS/rel_pingpong
[ -x "$PP" ] || rel_fatal "rel_pingpong not built: '$PP'"
command -v unshare >/dev/null || rel_skip "unshare not installed"
mkdir "$W/tiny"
# in_tiny CMD...: CMD with a 64 KiB tmpfs on $W/tiny, seen by nothing else
in_tiny() { unshare -m sh -c 'mount -t tmpfs -o size=64k tmpfs "$0" && exec "$@"' "$W/tiny" "$@"; }
in_tiny true || rel_skip "cannot mount a tmpfs in a private mount namespace (unshare -m)"
# many chains (--min-block 0) fill 64 KiB at once; then the command still has work to do
cmd() { echo "$PP 20000; sleep 1; touch $W/done.$1; exit $2"; }

for status in 7 0; do
	rm -f "$W/done.$status"
	in_tiny timeout -k 5 60 "$WHYSLOW" run --as-root --min-block 0 --format json -o "$W/tiny/r.jsonl" \
		-- sh -c "$(cmd "$status" "$status")" >/dev/null 2>"$W/run$status.stderr"
	rc=$?
	sed 's/^/    stderr: /' "$W/run$status.stderr" | head -3
	want=$([ "$status" = 0 ] && echo 1 || echo "$status")
	check "run, report output full, command exits $status: whyslow exits $want (got $rc)" [ "$rc" = "$want" ]
	check "run, report output full: the command was waited for (it finished its work)" [ -e "$W/done.$status" ]
	check "run, report output full: said once, with the cause" \
		eval '[ "$(grep -c "cannot write the report: No space left on device" "$W/run$status.stderr")" = 1 ]'
done

rm -f "$W/done.5"
in_tiny timeout -k 5 60 "$WHYSLOW" record --as-root --min-block 0 --format json --live "$W/tiny/live.jsonl" \
	-o "$W/rec.data" -- sh -c "$(cmd 5 5)" >/dev/null 2>"$W/rec.stderr"
rc=$?
sed 's/^/    stderr: /' "$W/rec.stderr" | head -3
check "record --live, live output full: exits with the command's 5 (got $rc)" [ "$rc" = 5 ]
check "record --live, live output full: the command finished its work" [ -e "$W/done.5" ]
check "record --live, live output full: the recording is complete" \
	eval '[ -s "$W/rec.data" ] && ! compgen -G "$W/rec.data.tmp.*" >/dev/null'
"$WHYSLOW" report --format json "$W/rec.data" >"$W/rep.jsonl" 2>"$W/rep.stderr"
rc=$?
check "report of that recording: exits 0 (got $rc)" [ "$rc" = 0 ]
check "report of that recording: chains and one summary" \
	eval 'grep -q "\"type\":\"chain\"" "$W/rep.jsonl" && json_stream_ok "$W/rep.jsonl"'
check "report of that recording: it ends complete (no 'ends early')" eval '! grep -q "ends early" "$W/rep.stderr"'

# --- at the end: the output no longer fits -------------------------------------------------------
# in_full CMD...: CMD with a 64 KiB tmpfs on $W/tiny filled up first (seen by nothing else)
in_full() {
	unshare -m sh -c 'mount -t tmpfs -o size=64k tmpfs "$0" &&
		{ dd if=/dev/zero of="$0/fill" bs=4k 2>/dev/null; exec timeout -k 5 60 "$@"; }' "$W/tiny" "$@"
}
# at_end KEY NAME WANT_RC CMD...: run it (stderr in $W/KEY.stderr); the command's own exit is 7 or 0
at_end() {
	local key=$1 name=$2 want=$3
	shift 3
	rm -f "$W/ran"
	"$@" >/dev/null 2>"$W/$key.stderr"
	RC=$?
	sed 's/^/    stderr: /' "$W/$key.stderr" | head -3
	check "$name: exits $want (got $RC), the command ran" eval '[ "$RC" = "$want" ] && [ -e "$W/ran" ]'
	check "$name: said once, as no space left (not an I/O error)" \
		eval '[ "$(grep -c "No space left on device" "$W/$key.stderr")" = 1 ] && ! grep -q "Input/output error" "$W/$key.stderr"'
}
at_end full7 "run -o /dev/full, command exits 7" 7 timeout -k 5 60 "$WHYSLOW" run --as-root -o /dev/full -- sh -c "touch $W/ran; exit 7"
at_end full0 "run -o /dev/full, command exits 0" 1 timeout -k 5 60 "$WHYSLOW" run --as-root -o /dev/full -- sh -c "touch $W/ran"
at_end disk7 "run -o on a full disk, command exits 7" 7 in_full "$WHYSLOW" run --as-root -o "$W/tiny/r.txt" \
	-- sh -c "touch $W/ran; exit 7"
check "  no report, no temporary file left" eval '[ ! -e "$W/tiny/r.txt" ] && ! compgen -G "$W/tiny/r.txt.tmp.*" >/dev/null'
at_end pf7 "run --perfetto on a full disk, command exits 7" 7 in_full "$WHYSLOW" run --as-root -o "$W/pf.txt" \
	--perfetto "$W/tiny/t.json" -- sh -c "touch $W/ran; exit 7"
check "  the report itself is written" grep -q Summary "$W/pf.txt"
rm -f "$W/rec2.data"
at_end live7 "record --live on a full disk (text, written at the end), command exits 7" 7 in_full \
	"$WHYSLOW" record --as-root --live "$W/tiny/live.txt" -o "$W/rec2.data" -- sh -c "touch $W/ran; exit 7"
check "  the recording is complete all the same" \
	eval '[ -s "$W/rec2.data" ] && ! compgen -G "$W/rec2.data.tmp.*" >/dev/null && ! grep -q "did not complete" "$W/live7.stderr"'
"$WHYSLOW" report "$W/rec2.data" >"$W/rep2.txt" 2>"$W/rep2.stderr"
rc=$?
check "  report reads it whole (rc $rc)" eval '[ $rc = 0 ] && grep -q Summary "$W/rep2.txt" && ! grep -q "ends early" "$W/rep2.stderr"'
check "/dev/null is still the character device 1:3" eval '[ -c /dev/null ] && [ "$(stat -c %t:%T /dev/null)" = 1:3 ]'
check "nothing left in the kernel" no_ws_left 2
rel_done
