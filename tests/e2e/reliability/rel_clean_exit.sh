#!/bin/bash
# Clean exit, always.  attach: SIGINT / SIGTERM / SIGHUP → stop, flush, report, exit 0; a second
# SIGINT exits at once (130); SIGKILL (attach or run) → the kernel drops every ws_* program
# within 2 s and no output appears at the -o path.
#   rel_clean_exit.sh WHYSLOW
. "$(dirname "$0")/rel_lib.sh"
rel_init clean_exit "$@"
W=$REL_WORK
command -v setsid >/dev/null || rel_skip "setsid not installed"


sleep 120 &
TARGET=$!
REL_PIDS+=("$TARGET")

# --- attach + SIGINT / SIGTERM: exit 0 with a complete report ---------------------------------
for sig in INT TERM; do
	out=$W/attach_$sig.jsonl
	"$WHYSLOW" attach --format json -o "$out" "$TARGET" >"$W/attach_$sig.stdout" 2>"$W/attach_$sig.stderr" &
	wp=$!
	REL_PIDS+=("$wp")
	if ! wait_attached "$wp"; then
		notok "attach ($sig): whyslow never attached"; sed 's/^/    /' "$W/attach_$sig.stderr"; continue
	fi
	kill -"$sig" "$wp"
	wait_rc "$wp" 10
	check "attach + SIG$sig: exit 0 (got $RC after ${ELAPSED}ms)" [ "$RC" = 0 ]
	check "attach + SIG$sig: the report is complete (JSON Lines ending in a summary)" json_stream_ok "$out"
	check "attach + SIG$sig: no temporary output file left" eval '! compgen -G "$out.tmp.*" >/dev/null'
	check "attach + SIG$sig: nothing left in the kernel" no_ws_left 2
	check "attach + SIG$sig: nothing on stderr but whyslow's own lines" \
		eval '! grep -v "^whyslow: " "$W/attach_$sig.stderr" | grep -q .'
	kill -0 "$TARGET" 2>/dev/null || rel_fatal "the traced process died"
done

# text format to stdout: the summary is printed
"$WHYSLOW" attach "$TARGET" >"$W/attach_text.stdout" 2>"$W/attach_text.stderr" &
wp=$!
REL_PIDS+=("$wp")
wait_attached "$wp" || notok "attach (text): never attached"
kill -HUP "$wp"
wait_rc "$wp" 10
check "attach (text) + SIGHUP: exit 0 (got $RC)" [ "$RC" = 0 ]
check "attach (text) + SIGHUP: the summary is printed" grep -q "Summary:" "$W/attach_text.stdout"

# --- a second SIGINT exits at once --------------------------------------------------------------
"$WHYSLOW" attach --format json -o "$W/twice.jsonl" "$TARGET" >/dev/null 2>"$W/twice.stderr" &
wp=$!
REL_PIDS+=("$wp")
wait_attached "$wp" || notok "attach (twice): never attached"
kill -INT "$wp"
sleep 0.02
kill -INT "$wp" 2>/dev/null
wait_rc "$wp" 5
# The first SIGINT alone may already have finished the run (it takes ~20 ms): then 0 with a
# complete report is right; otherwise the second one must end it at once with 130.
check "second SIGINT: exits at once with 130, or had already finished cleanly (got $RC after ${ELAPSED}ms)" \
	eval '[ "$RC" = 130 ] || { [ "$RC" = 0 ] && json_stream_ok "$W/twice.jsonl"; }'

check "second SIGINT: within 1 s" [ "$ELAPSED" -lt 1000 ]
check "second SIGINT: no half-written output at the -o path (none, or a complete one)" \
	eval '[ ! -e "$W/twice.jsonl" ] || json_stream_ok "$W/twice.jsonl"'
check "second SIGINT: nothing left in the kernel" no_ws_left 2

# --- SIGKILL: the kernel frees everything -----------------------------------------------------
for mode in attach run; do
	if [ $mode = attach ]; then
		"$WHYSLOW" attach --format json -o "$W/killed.jsonl" "$TARGET" >/dev/null 2>&1 &
	else
		"$WHYSLOW" run --as-root --format json -o "$W/killed.jsonl" -- sleep 30 >/dev/null 2>&1 &
	fi
	wp=$!
	REL_PIDS+=("$wp")
	wait_attached "$wp" || notok "$mode (SIGKILL): never attached"
	n=$(bpftool prog show | grep -c ' name ws_')
	REL_PIDS+=($(cat /proc/"$wp"/task/*/children 2>/dev/null)) # run: the command, killed at exit
	kill -KILL "$wp"
	wait "$wp" 2>/dev/null
	check "$mode + SIGKILL: no ws_* program left within 2 s (had $n loaded)" no_ws_left 2
	check "$mode + SIGKILL: no output at the -o path" [ ! -e "$W/killed.jsonl" ]
	compgen -G "$W/killed.jsonl.tmp.*" >/dev/null &&
		echo "  note: SIGKILL left the temporary $(echo $W/killed.jsonl.tmp.*) (O_TMPFILE + linkat would leave none)" &&
		rm -f "$W"/killed.jsonl.tmp.*
done


# --- attach to a process that is gone (issue 11.8): it ends, it never waits for ever ---------
# a zombie: exited, its parent has not reaped it
python3 -c 'import os, sys, time
p = os.fork()
if p == 0:
    os._exit(0)
print(p, flush=True)
time.sleep(30)' >"$W/zombie.pid" &
REL_PIDS+=($!)
for _ in $(seq 50); do [ -s "$W/zombie.pid" ] && break; sleep 0.05; done
zp=$(cat "$W/zombie.pid")
sleep 0.2
grep -q '^State:.*Z' "/proc/$zp/status" 2>/dev/null || notok "attach zombie: pid $zp is not a zombie"
timeout -k 2 20 "$WHYSLOW" attach "$zp" >/dev/null 2>"$W/zombie.err"
RC=$?
check "attach to a zombie: refused with exit 1 at once (got $RC)" [ "$RC" = 1 ]
check "attach to a zombie: says so" grep -q "process $zp has exited (a zombie" "$W/zombie.err"
# a target that exits while whyslow attaches: whichever side of the attach its exit falls on,
# whyslow ends by itself (before: it waited for an exit the kernel had already reported)
for delay in 0.1 0.3 0.6; do
	sleep "$delay" &
	sp=$!
	REL_PIDS+=($sp)
	timeout -k 2 20 "$WHYSLOW" attach "$sp" >/dev/null 2>"$W/gone.err"
	RC=$?
	check "attach to a process that exits after ${delay}s: ends by itself (got $RC)" \
		eval '[ "$RC" = 0 ] || { [ "$RC" = 1 ] && grep -q "no process\|has exited" "$W/gone.err"; }'
done
check "attach to a gone process: nothing left in the kernel" no_ws_left 2

rel_done
