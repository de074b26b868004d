#!/bin/bash
# What root writes, and what the command inherits (issue 11 #3, #4, #8):
# - the command gets exactly fds 0, 1, 2 (nothing of root's: not the report's temporary file);
# - an output path that is a symbolic link is refused; a FIFO without a reader does not hang;
# - the attacker flipping their output path between /dev/null, a file and a link to root's 0600 file while
#   root writes there 200 times never touches root's file;
# - under sudo a device is opened only if the invoking user could open it, and files are 0600 and
#   theirs; otherwise the umask decides; a closed stdout is an error; SUDO_UID=abc is refused.
#   rel_outputs.sh WHYSLOW
. "$(dirname "$0")/rel_lib.sh"
rel_init outputs "$@"
W=$REL_WORK
command -v setpriv >/dev/null || rel_skip "setpriv not installed"
id nobody >/dev/null 2>&1 || rel_skip "no user 'nobody'"
N=${REL_RACE_RUNS:-200}
NOBODY_UID=$(id -u nobody)
NOBODY_GID=$(id -g nobody)
as_nobody() { setpriv --reuid nobody --regid "$NOBODY_GID" --clear-groups "$@"; }
bg_nobody() {
	setpriv --reuid nobody --regid "$NOBODY_GID" --clear-groups "$@" &
	REL_PIDS+=($!)
}
DATA=$(cd "$REL_DIR/../../data" && pwd)/gt_mutex_disk.data
[ -f "$DATA" ] || rel_fatal "no recording at $DATA"
sudo_env=(env SUDO_USER=nobody SUDO_UID="$NOBODY_UID" SUDO_GID="$NOBODY_GID")
# whyslow started with nothing but 0, 1 and 2 open (as a login shell would)
clean_fds() { python3 -c 'import subprocess, sys; sys.exit(subprocess.run(sys.argv[1:]).returncode)' "$@"; }

# --- #3: nothing leaks into the command ------------------------------------------------------------
clean_fds "$WHYSLOW" run -o "$W/fd.txt" -- sh -c 'ls /proc/$$/fd' >"$W/fd.out" 2>"$W/fd.stderr"
check "the command's fds are exactly 0 1 2 (got: $(echo $(cat "$W/fd.out")))" \
	[ "$(echo $(cat "$W/fd.out"))" = "0 1 2" ]
"$WHYSLOW" run -o "$W/fd2.txt" -- sh -c 'readlink /proc/$$/fd/1 >&2' 2>"$W/fd2.stderr" >&-
check "with whyslow's stdout closed, the command's fd 1 is not root's report ($(grep -v whyslow "$W/fd2.stderr"))" \
	eval '! grep -q "fd2.txt" "$W/fd2.stderr"'
clean_fds "$WHYSLOW" run -o "$W/fd3.txt" --perfetto "$W/fd.pf" -- sh -c 'ls /proc/$$/fd' >"$W/fd3.out" 2>/dev/null
check "with --perfetto too: exactly 0 1 2 (got: $(echo $(cat "$W/fd3.out")))" [ "$(echo $(cat "$W/fd3.out"))" = "0 1 2" ]

# --- #4: symbolic links and FIFOs --------------------------------------------------------------
A=$W/attacker
mkdir "$A" && chown nobody: "$A" && chmod 755 "$A"
echo SECRET >"$W/secret" && chmod 600 "$W/secret"
as_nobody ln -s "$W/secret" "$A/out"
"$WHYSLOW" report "$DATA" -o "$A/out" >/dev/null 2>"$W/link.stderr"
rc=$?
sed 's/^/    stderr: /' "$W/link.stderr"
check "output path that is a symlink: refused (rc $rc) in one line" \
	eval '[ $rc -ne 0 ] && [ "$(nlines "$W/link.stderr")" = 1 ] && grep -q "symbolic link" "$W/link.stderr"'
check "  root's file untouched" eval '[ "$(cat "$W/secret")" = SECRET ] && [ ! -L "$W/secret" ]'

mkfifo "$W/fifo"
as_nobody ln -s "$W/fifo" "$A/tofifo"
timeout 10 "$WHYSLOW" report "$DATA" -o "$A/tofifo" >/dev/null 2>"$W/lf.stderr"
rc=$?
check "symlink to a FIFO: refused, no hang (rc $rc)" eval '[ $rc -ne 0 ] && [ $rc -ne 124 ]'
timeout 10 "$WHYSLOW" report "$DATA" -o "$W/fifo" >/dev/null 2>"$W/fifo.stderr"
rc=$?
sed 's/^/    stderr: /' "$W/fifo.stderr"
check "FIFO with no reader: refused at once (rc $rc), saying so" \
	eval '[ $rc -ne 0 ] && [ $rc -ne 124 ] && grep -q "no reader" "$W/fifo.stderr"'
timeout 10 cat "$W/fifo" >"$W/fifo.read" &
sleep 0.3
timeout 10 "$WHYSLOW" report "$DATA" -o "$W/fifo" >/dev/null 2>"$W/fifo2.stderr"
rc=$?
wait
check "FIFO with a reader: written (rc $rc)" eval '[ $rc = 0 ] && grep -q Summary "$W/fifo.read"'

# the race: flip $A/out between a link to /dev/null (a device: written in place) and a link to
# root's file, and between the attacker's own file and that link; 200 writes
bg_nobody bash -c 'while :; do ln -sfn /dev/null "$2/out"; ln -sfn "$1" "$2/out"; rm -f "$2/out";
	echo x >"$2/out"; ln -sfn "$1" "$2/out"; done' flip "$W/secret" "$A" 2>/dev/null
# N writes, or fewer (never under 30) past REL_RACE_SECONDS (a loaded machine, an ASan build)
deadline=$((SECONDS + ${REL_RACE_SECONDS:-120}))
for i in $(seq "$N"); do
	"$WHYSLOW" report "$DATA" -o "$A/out" >/dev/null 2>&1
	[ $i -ge 30 ] && [ $SECONDS -ge $deadline ] && N=$i && break
done
kill "${REL_PIDS[@]}" 2>/dev/null
wait 2>/dev/null
check "race, $N writes: root's 0600 file untouched" \
	eval '[ "$(cat "$W/secret")" = SECRET ] && [ "$(stat -c %a:%u "$W/secret")" = 600:0 ] && [ ! -L "$W/secret" ]'
check "race: no temporary file left behind" eval '! ls "$A"/out.tmp.* >/dev/null 2>&1'

# --- devices under sudo: only what the invoking user could open --------------------------------
mknod "$W/nulldev" c 1 3 && chmod 600 "$W/nulldev"
"${sudo_env[@]}" "$WHYSLOW" report "$DATA" -o "$W/nulldev" >/dev/null 2>"$W/dev.stderr"
rc=$?
sed 's/^/    stderr: /' "$W/dev.stderr"
check "under sudo, root's 0600 device: refused (rc $rc), naming the user" \
	eval '[ $rc -ne 0 ] && grep -q nobody "$W/dev.stderr"'
check "  and still a device" [ -c "$W/nulldev" ]
chmod 666 "$W/nulldev"
"${sudo_env[@]}" "$WHYSLOW" report "$DATA" -o "$W/nulldev" >/dev/null 2>&1
rc=$?
check "under sudo, a device the user can open: written (rc $rc), still a device" eval '[ $rc = 0 ] && [ -c "$W/nulldev" ]'

# --- modes -------------------------------------------------------------------------------------
"${sudo_env[@]}" "$WHYSLOW" report "$DATA" -o "$W/sudo.txt" >/dev/null 2>&1
check "under sudo: the report is 0600 and the invoking user's ($(stat -c %a:%U "$W/sudo.txt" 2>&1))" \
	[ "$(stat -c %a:%u "$W/sudo.txt")" = "600:$NOBODY_UID" ]
(umask 077 && "$WHYSLOW" report "$DATA" -o "$W/u077.txt" >/dev/null 2>&1)
(umask 022 && "$WHYSLOW" report "$DATA" -o "$W/u022.txt" >/dev/null 2>&1)
check "not under sudo: the umask decides (077 -> $(stat -c %a "$W/u077.txt"), 022 -> $(stat -c %a "$W/u022.txt"))" \
	eval '[ "$(stat -c %a "$W/u077.txt")" = 600 ] && [ "$(stat -c %a "$W/u022.txt")" = 644 ]'

# --- closed stdout, bad sudo environment ---------------------------------------------------------
"$WHYSLOW" report "$DATA" >&- 2>"$W/closed.stderr"
rc=$?
check "report with stdout closed: non-zero (rc $rc) and says so" \
	eval '[ $rc -ne 0 ] && grep -q "standard output is closed" "$W/closed.stderr"'
env -u SUDO_USER SUDO_UID=abc "$WHYSLOW" run -o "$W/abc.txt" -- id -u >"$W/abc.out" 2>"$W/abc.stderr"
rc=$?
sed 's/^/    stderr: /' "$W/abc.stderr"
check "SUDO_UID=abc without SUDO_USER: refused (rc $rc), one line, the command did not run" \
	eval '[ $rc -ne 0 ] && [ "$(nlines "$W/abc.stderr")" = 1 ] && [ ! -s "$W/abc.out" ]'
# --- #5: a thread name with ESC, BEL and a newline is escaped in the text report -----------------
evil="$W/$(printf 'x\033[2J\a\nFORGED')"
cp "$(command -v sleep)" "$evil"
"$WHYSLOW" run -o "$W/esc.txt" -- "$evil" 0.2 >/dev/null 2>&1
check "text report: the escaped thread name is there" grep -qF 'x\x1b[2J\x07\x0aFORG' "$W/esc.txt"
check "text report: no raw ESC or BEL, no forged line" \
	eval '! grep -q "$(printf "\033")" "$W/esc.txt" && ! grep -q "$(printf "\a")" "$W/esc.txt" && ! grep -q "^FORG" "$W/esc.txt"'
rm -f "$evil"
# --- #8: a [core] format the ini cannot mean -------------------------------------------------------
printf '[core]\nformat = xml\n' >"$W/xml.ini"
"$WHYSLOW" -c "$W/xml.ini" run -o "$W/xml.out" -- true >/dev/null 2>"$W/xml.stderr"
rc=$?
sed 's/^/    stderr: /' "$W/xml.stderr"
check "ini format = xml: refused (rc $rc) in one line naming it" \
	eval '[ $rc -ne 0 ] && [ "$(nlines "$W/xml.stderr")" = 1 ] && grep -q xml "$W/xml.stderr" && [ ! -e "$W/xml.out" ]'
check "/dev/null is still a character device" [ -c /dev/null ]
check "nothing left in the kernel" no_ws_left 2
rel_done
