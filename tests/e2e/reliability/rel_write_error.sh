#!/bin/bash
# A write error mid-run (issue 11.8): the report's output fills up (a 64 KiB tmpfs, in a private
# mount namespace) while the command is still running.
# - run: whyslow says so at once, waits for the command (it finishes its work) and exits with the
#   command's status, or 1 when the command succeeded; nothing half-written is left;
# - record --live: the recording is still written complete and `report` reads it.
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
check "nothing left in the kernel" no_ws_left 2
rel_done
