#!/bin/bash
# Output paths through directories (issue 36 items 2 and 6, issue 35 item 3):
# - a symbolic link *directory* on the output path that someone else owns, or that sits in a
#   directory others can write to, is refused in one line naming it; root's 0600 file behind it is
#   untouched, also while the attacker swaps the link in and out during 100 writes;
# - root's own links in root's directories are followed (/var/run -> /run, the system's kind);
# - a replaced file keeps its mode and group; someone else's file is refused, never replaced;
# - every output path (-o, --perfetto, record -o, --live) is checked before the command starts.
#   rel_outdir.sh WHYSLOW
. "$(dirname "$0")/rel_lib.sh"
rel_init outdir "$@"
W=$REL_WORK
command -v setpriv >/dev/null || rel_skip "setpriv not installed"
id nobody >/dev/null 2>&1 || rel_skip "no user 'nobody'"
N=${REL_RACE_RUNS:-100}
NOBODY_UID=$(id -u nobody)
NOBODY_GID=$(id -g nobody)
as_nobody() { setpriv --reuid nobody --regid "$NOBODY_GID" --clear-groups "$@"; }
sudo_env=(env SUDO_USER=nobody SUDO_UID="$NOBODY_UID" SUDO_GID="$NOBODY_GID")
DATA=$(cd "$REL_DIR/../../data" && pwd)/gt_mutex_disk.data
[ -f "$DATA" ] || rel_fatal "no recording at $DATA"
# whyslow report DATA -o PATH, stderr to $W/$1.stderr; sets RC
rep() {
	local name=$1
	shift
	"$@" "$WHYSLOW" report "$DATA" -o "$OUT" >/dev/null 2>"$W/$name.stderr"
	RC=$?
	grep -v 'was recorded with sources' "$W/$name.stderr" | sed 's/^/    stderr: /'
}
# the error lines of $1.stderr (report's note about plugin versions is not one)
errlines() { grep -v 'was recorded with sources' "$W/$1.stderr" | grep -c .; }
secret_intact() { [ "$(cat "$R/secret")" = SECRET ] && [ "$(stat -c %a:%u "$R/secret")" = 600:0 ]; }

R=$W/rootdir # root's directory with root's 0600 file
mkdir "$R" && echo SECRET >"$R/secret" && chmod 600 "$R/secret"
A=$W/attacker # nobody's directory
mkdir "$A" && chown nobody: "$A" && chmod 755 "$A"

# --- a link directory someone else made --------------------------------------------------------
as_nobody ln -s "$R" "$A/d"
OUT=$A/d/secret rep link
check "nobody's symlinked directory on the path: refused (rc $RC) in one line naming it" \
	eval '[ $RC -ne 0 ] && [ "$(errlines link)" = 1 ] && grep -q "$A/d is a symbolic link" "$W/link.stderr"'
check "  root's 0600 file behind it untouched" secret_intact
check "  no temporary file left in root's directory" eval '! compgen -G "$R/secret.tmp.*" >/dev/null'

# the same under sudo as nobody: the link is the invoking user's, so it is followed, and the
# file found there is root's, not theirs: refused
OUT=$A/d/secret rep sudolink "${sudo_env[@]}"
check "under sudo, the user's own link to root's file: refused (rc $RC), root's file untouched" \
	eval '[ $RC -ne 0 ] && secret_intact && grep -q "belongs to uid 0" "$W/sudolink.stderr"'

# the race: the link swapped in and out while root writes through it (45/100 got through before)
rm -f "$A/d"
# from a known state, so this check stands on its own
echo SECRET >"$R/secret" && chmod 600 "$R/secret" && rm -f "$R"/secret.tmp.*
# setpriv itself in the background (it execs bash), so $! is the flipper and the kill reaches it
setpriv --reuid nobody --regid "$NOBODY_GID" --clear-groups bash -c 'while :; do mkdir "$2/d"
	rm -rf "$2/d"; ln -s "$1" "$2/d"; rm -f "$2/d"; done' flip "$R" "$A" 2>/dev/null &
REL_PIDS+=($!)
deadline=$((SECONDS + ${REL_RACE_SECONDS:-120}))
written=0
for i in $(seq "$N"); do
	"$WHYSLOW" report "$DATA" -o "$A/d/secret" >/dev/null 2>&1 && written=$((written + 1))
	[ $i -ge 30 ] && [ $SECONDS -ge $deadline ] && N=$i && break
done
kill "${REL_PIDS[@]}" 2>/dev/null
wait 2>/dev/null
echo "    race: $written of $N writes went to nobody's own directory"
check "race, $N writes through a swapped link directory: root's 0600 file untouched" secret_intact
check "race: no temporary file left behind" eval '! compgen -G "$R/secret.tmp.*" >/dev/null'

# --- which links are followed ------------------------------------------------------------------
ln -s "$R" "$W/rootlink" # root's link in root's 0755 directory
OUT=$W/rootlink/new.txt rep rootlink
check "root's link in root's directory: followed (rc $RC), the report is behind it" \
	eval '[ $RC = 0 ] && grep -q Summary "$R/new.txt"'
S=$W/sticky # a /tmp of its own
mkdir "$S" && chmod 1777 "$S"
ln -s "$R" "$S/rootlink"
OUT=$S/rootlink/secret rep sticky
check "root's link in a sticky world-writable directory: refused (rc $RC), naming it" \
	eval '[ $RC -ne 0 ] && grep -q "$S/rootlink is a symbolic link in a directory others can write to" "$W/sticky.stderr" && secret_intact'
as_nobody ln -s "$R" "$S/nlink"
OUT=$S/nlink/secret rep stickyn
check "nobody's link in a sticky directory: refused (rc $RC)" eval '[ $RC -ne 0 ] && secret_intact'
if [ -L /var/run ] && [ "$(stat -c %u /var/run)" = 0 ]; then
	RUN=$(mktemp -d /run/whyslow-rel-outdir.XXXXXX)
	OUT=/var/run/${RUN#/run/}/r.txt rep varrun
	check "a system link (/var/run -> /run): followed (rc $RC)" eval '[ $RC = 0 ] && grep -q Summary "$RUN/r.txt"'
	rm -rf "$RUN"
else
	echo "    (/var/run is not root's symbolic link here: that check is left out)"
fi

# --- replacing a file keeps its mode and group; someone else's is refused ----------------------
echo old >"$W/kept.txt" && chmod 640 "$W/kept.txt" && chgrp adm "$W/kept.txt" 2>/dev/null ||
	chgrp "$NOBODY_GID" "$W/kept.txt"
grp=$(stat -c %g "$W/kept.txt")
OUT=$W/kept.txt rep kept
check "root replaces its own 0640 file: written (rc $RC), still 0640, root's, group $grp ($(stat -c %a:%u:%g "$W/kept.txt"))" \
	eval '[ $RC = 0 ] && grep -q Summary "$W/kept.txt" && [ "$(stat -c %a:%u:%g "$W/kept.txt")" = "640:0:$grp" ]'
echo old >"$W/nb.txt" && chown nobody: "$W/nb.txt" && chmod 644 "$W/nb.txt"
OUT=$W/nb.txt rep nbkept "${sudo_env[@]}"
check "under sudo, the user's own 0644 file: replaced (rc $RC), still 0644 and theirs ($(stat -c %a:%u "$W/nb.txt"))" \
	eval '[ $RC = 0 ] && grep -q Summary "$W/nb.txt" && [ "$(stat -c %a:%u "$W/nb.txt")" = "644:$NOBODY_UID" ]'
OUT=$W/nb.txt rep nbroot
check "root, not under sudo, replacing nobody's file: refused (rc $RC), it is untouched" \
	eval '[ $RC -ne 0 ] && grep -q "belongs to uid $NOBODY_UID" "$W/nbroot.stderr" && grep -q Summary "$W/nb.txt" && [ "$(stat -c %u "$W/nb.txt")" = $NOBODY_UID ]'
OUT=$R/secret rep sudoroot "${sudo_env[@]}"
check "under sudo as nobody, replacing root's 0600 file: refused (rc $RC), one line, untouched" \
	eval '[ $RC -ne 0 ] && [ "$(errlines sudoroot)" = 1 ] && secret_intact'
ls "$W"/*.tmp.* "$R"/*.tmp.* 2>/dev/null | sed 's/^/    left: /'
check "no temporary file left anywhere" eval '! compgen -G "$W/*.tmp.*" >/dev/null && ! compgen -G "$R/*.tmp.*" >/dev/null'

# --- every output path is checked before the command starts -------------------------------------
upfront() {
	local name=$1
	shift
	rm -f "$W/ran"
	timeout -k 5 60 "$WHYSLOW" "$@" -- sh -c "touch $W/ran; exit 7" >/dev/null 2>"$W/$name.stderr"
	RC=$?
	sed 's/^/    stderr: /' "$W/$name.stderr"
	check "$name: refused (rc $RC) before the command ran, in one line" \
		eval '[ $RC -ne 0 ] && [ $RC != 7 ] && [ ! -e "$W/ran" ] && [ "$(nlines "$W/$name.stderr")" = 1 ]'
}
upfront "run --perfetto into a missing directory" run --as-root --perfetto "$W/nodir/t.json"
as_nobody ln -s "$R" "$A/d2"
upfront "run --perfetto through nobody's link directory" run --as-root --perfetto "$A/d2/t.json"
upfront "run -o through nobody's link directory" run --as-root -o "$A/d2/r.txt"
upfront "record -o through nobody's link directory" record --as-root -o "$A/d2/r.data"
upfront "record --live into a missing directory" record --as-root -o "$W/ok.data" --live "$W/nodir/l.txt"
upfront "record --perfetto into a missing directory" record --as-root -o "$W/ok2.data" --perfetto "$W/nodir/t.json"
check "  and left no recording behind" eval '[ ! -e "$W/ok.data" ] && [ ! -e "$W/ok2.data" ] && ! compgen -G "$W/ok*.tmp.*" >/dev/null'
check "root's directory holds only its file and the report written through root's link" \
	eval '[ "$(ls "$R" | tr "\n" " ")" = "new.txt secret " ] && secret_intact'
check "/dev/null is still the character device 1:3" eval '[ -c /dev/null ] && [ "$(stat -c %t:%T /dev/null)" = 1:3 ]'
check "nothing left in the kernel" no_ws_left 2
rel_done
