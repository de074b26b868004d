#!/bin/bash
# run passes signals: SIGTERM / SIGHUP sent to whyslow reach the command, Ctrl-C (SIGINT to the
# process group) reaches it as it would without whyslow, and whyslow exits with the command's
# status (128 + N when a signal killed it), the report written and nothing left in the kernel.
#   rel_run_signals.sh WHYSLOW
. "$(dirname "$0")/rel_lib.sh"
rel_init run_signals "$@"
W=$REL_WORK
command -v setsid >/dev/null || rel_skip "setsid not installed"



# --- run: signals reach the command ------------------------------------------------------------
# SIGTERM to whyslow is forwarded; whyslow exits with the command's status
"$WHYSLOW" run --as-root -o "$W/run_term.txt" -- sh -c 'trap "exit 3" TERM; sleep 5 & wait' \
	>/dev/null 2>"$W/run_term.stderr" &
wp=$!
REL_PIDS+=("$wp")
wait_attached "$wp" || notok "run (TERM): never attached"
sleep 0.3
kill -TERM "$wp"
wait_rc "$wp" 10
check "run + SIGTERM: the command gets it and whyslow exits with its status 3 (got $RC)" [ "$RC" = 3 ]
check "run + SIGTERM: the report is written" grep -q "Summary:" "$W/run_term.txt"
check "run + SIGTERM: nothing left in the kernel" no_ws_left 2

"$WHYSLOW" run --as-root -o "$W/run_hup.txt" -- sh -c 'trap "exit 4" HUP; sleep 5 & wait' \
	>/dev/null 2>"$W/run_hup.stderr" &
wp=$!
REL_PIDS+=("$wp")
wait_attached "$wp" || notok "run (HUP): never attached"
sleep 0.3
kill -HUP "$wp"
wait_rc "$wp" 10
check "run + SIGHUP: forwarded, exit 4 (got $RC)" [ "$RC" = 4 ]

# Ctrl-C at a terminal goes to the whole foreground process group
setsid "$WHYSLOW" run --as-root -o "$W/run_int.txt" -- sh -c 'trap "exit 5" INT; sleep 5 & wait' \
	>/dev/null 2>"$W/run_int.stderr" &
wp=$!
REL_PIDS+=("$wp")
wait_attached "$wp" || notok "run (INT): never attached"
sleep 0.3
kill -INT -- -"$wp"
wait_rc "$wp" 10
check "run + Ctrl-C to the process group: the command's status 5 (got $RC)" [ "$RC" = 5 ]
check "run + Ctrl-C: the report is written" grep -q "Summary:" "$W/run_int.txt"

# the command killed by a signal: 128 + signal
"$WHYSLOW" run --as-root -o "$W/run_kill.txt" -- sh -c 'kill -KILL $$' >/dev/null 2>"$W/run_kill.stderr" &
wp=$!
REL_PIDS+=("$wp")
wait_rc "$wp" 15
check "run: command killed by SIGKILL → exit 137 (got $RC)" [ "$RC" = 137 ]
check "run: command killed → the report is still written" grep -q "Summary:" "$W/run_kill.txt"

"$WHYSLOW" run --as-root -o "$W/run_exit.txt" -- sh -c 'exit 42' >/dev/null 2>&1 &
wp=$!
wait_rc "$wp" 15
check "run: exit status 42 passed through (got $RC)" [ "$RC" = 42 ]
check "run: nothing left in the kernel after all that" no_ws_left 2

rel_done
