#!/bin/bash
# Privilege: unprivileged, whyslow refuses in one line naming root or CAP_BPF + CAP_PERFMON, with a
# non-zero exit and nothing loaded; with only CAP_BPF it says CAP_PERFMON is missing.  Under sudo
# (SUDO_USER/SUDO_UID/SUDO_GID), `run` starts the command as the invoking user — uid, gid,
# groups, HOME, USER; -u USER chooses another; --as-root keeps root.
#   rel_privilege.sh WHYSLOW
. "$(dirname "$0")/rel_lib.sh"
rel_init privilege "$@"
W=$REL_WORK
command -v setpriv >/dev/null || rel_skip "setpriv not installed"
id nobody >/dev/null 2>&1 || rel_skip "no user 'nobody'"
NOBODY_UID=$(id -u nobody)
NOBODY_GID=$(id -g nobody)
# the plugins must be readable by nobody for the privilege check to be what stops it
as_nobody() { setpriv --reuid nobody --regid "$NOBODY_GID" --clear-groups --inh-caps=-all "$@"; }

# one line, non-zero, naming what is needed
as_nobody "$WHYSLOW" run -- true >"$W/np.stdout" 2>"$W/np.stderr"
rc=$?
check "unprivileged run: non-zero exit (got $rc)" [ $rc -ne 0 ]
check "unprivileged run: exactly one stderr line ($(nlines "$W/np.stderr"))" [ "$(nlines "$W/np.stderr")" = 1 ]
check "unprivileged run: names root or CAP_BPF and CAP_PERFMON" grep -Eq "root|CAP_BPF.*CAP_PERFMON" "$W/np.stderr"
sed 's/^/    stderr: /' "$W/np.stderr"
check "unprivileged run: the command did not run" [ ! -s "$W/np.stdout" ]
as_nobody "$WHYSLOW" attach $$ >/dev/null 2>"$W/np2.stderr"
rc=$?
check "unprivileged attach: non-zero (got $rc), one line naming root/CAP_BPF" \
	eval '[ $rc -ne 0 ] && [ "$(nlines "$W/np2.stderr")" = 1 ] && grep -Eq "root|CAP_BPF" "$W/np2.stderr"'

# CAP_BPF alone: say that CAP_PERFMON is missing
setpriv --reuid nobody --regid "$NOBODY_GID" --clear-groups --inh-caps=-all,+bpf --ambient-caps=+bpf \
	"$WHYSLOW" run -- true >/dev/null 2>"$W/bpfonly.stderr"
rc=$?
check "CAP_BPF only: non-zero (got $rc), names CAP_PERFMON as missing" \
	eval '[ $rc -ne 0 ] && grep -q "CAP_PERFMON" "$W/bpfonly.stderr" && grep -Eq "not CAP_PERFMON|missing|lacks|without" "$W/bpfonly.stderr"'
sed 's/^/    stderr: /' "$W/bpfonly.stderr"
check "nothing left in the kernel" no_ws_left 2

# --- sudo semantics -----------------------------------------------------------------------------
probe='echo "uid=$(id -u) gid=$(id -g) groups=$(id -G) home=$HOME user=$USER"'
sudo_env=(env SUDO_USER=nobody SUDO_UID="$NOBODY_UID" SUDO_GID="$NOBODY_GID" SUDO_COMMAND=whyslow HOME=/root USER=root)
"${sudo_env[@]}" "$WHYSLOW" run -o "$W/sudo.txt" -- sh -c "$probe" >"$W/sudo.out" 2>"$W/sudo.stderr"
rc=$?
cat "$W/sudo.out" | sed 's/^/    /'
check "under sudo: exit 0 (got $rc)" [ $rc = 0 ]
check "under sudo: the command runs as the invoking user (uid $NOBODY_UID)" grep -q "^uid=$NOBODY_UID " "$W/sudo.out"
check "under sudo: with the user's gid" grep -q " gid=$NOBODY_GID " "$W/sudo.out"
check "under sudo: root's groups are dropped (no group 0)" eval '! grep -Eq "groups=(.* )?0( |$)" "$W/sudo.out"'
check "under sudo: HOME and USER are the user's" grep -q "home=$(getent passwd nobody | cut -d: -f6) user=nobody" "$W/sudo.out"
check "under sudo: the report is still written (as root)" grep -q "Summary:" "$W/sudo.txt"

"${sudo_env[@]}" "$WHYSLOW" run --as-root -o "$W/asroot.txt" -- sh -c "$probe" >"$W/asroot.out" 2>/dev/null
check "under sudo with --as-root: the command runs as root" grep -q "^uid=0 " "$W/asroot.out"

"$WHYSLOW" run -u nobody -o "$W/u.txt" -- sh -c "$probe" >"$W/u.out" 2>/dev/null
check "-u nobody (no sudo): the command runs as nobody" grep -q "^uid=$NOBODY_UID " "$W/u.out"

# SUDO_UID given but SUDO_USER not (some sudo setups strip it): still the invoking user
env -u SUDO_USER SUDO_UID="$NOBODY_UID" SUDO_GID="$NOBODY_GID" "$WHYSLOW" run -o "$W/uidonly.txt" \
	-- sh -c "$probe" >"$W/uidonly.out" 2>/dev/null
check "under sudo with only SUDO_UID/SUDO_GID: runs as uid $NOBODY_UID" grep -q "^uid=$NOBODY_UID " "$W/uidonly.out"

"$WHYSLOW" run -u no-such-user-xyz -o "$W/nouser.txt" -- true >/dev/null 2>"$W/nouser.stderr"
rc=$?
check "-u with an unknown user: non-zero (got $rc), one line naming it" \
	eval '[ $rc -ne 0 ] && [ "$(nlines "$W/nouser.stderr")" = 1 ] && grep -q "no-such-user-xyz" "$W/nouser.stderr"'
check "-u with an unknown user: no output file" [ ! -e "$W/nouser.txt" ]
check "nothing left in the kernel" no_ws_left 2
rel_done
