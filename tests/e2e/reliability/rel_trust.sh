#!/bin/bash
# Trust by descriptor (issue 11 #1, #2): root never loads a plugin or reads a -c config that an
# unprivileged user could have swapped in.  The attacker (nobody) owns a directory and places
# symbolic links in it pointing at root's real plugins and config: refused outright (the link is
# theirs).  Then the attacker flips the link between root's files and their own while root runs
# whyslow 200 times: their library's constructor never runs, their config is never used.  A
# root-owned link in a root-owned directory is still followed.
#   rel_trust.sh WHYSLOW
. "$(dirname "$0")/rel_lib.sh"
rel_init trust "$@"
W=$REL_WORK
command -v setpriv >/dev/null || rel_skip "setpriv not installed"
command -v cc >/dev/null || rel_skip "cc not installed (builds the attacker's library)"
id nobody >/dev/null 2>&1 || rel_skip "no user 'nobody'"
N=${REL_RACE_RUNS:-200}
as_nobody() { setpriv --reuid nobody --regid "$(id -g nobody)" --clear-groups "$@"; }
# in the background, as a direct child (so that killing $! ends it)
bg_nobody() {
	setpriv --reuid nobody --regid "$(id -g nobody)" --clear-groups "$@" &
	REL_PIDS+=($!)
}

A=$W/attacker
mkdir -p "$A/evil"
cat >"$W/evil.c" <<C
#include <fcntl.h>
#include <unistd.h>
__attribute__((constructor)) static void pwn(void)
{
	int fd = open("$W/pwned", O_WRONLY | O_CREAT, 0644);

	if (fd >= 0)
		close(fd);
}
C
cc -shared -fPIC -o "$A/evil/sched.so" "$W/evil.c" || rel_fatal "cannot build the attacker's library"
printf '[core]\noutput = %s/attacker-chose-this\n' "$W" >"$A/evil.ini"
printf '[core]\nmin_block = 10ms\n' >"$W/root.ini"
chmod 644 "$W/root.ini" "$A/evil.ini" "$A/evil/sched.so"
chown -R nobody: "$A"
chmod 755 "$A" "$A/evil"

# --- the attacker's link to root's files: refused without any race -------------------------------
as_nobody ln -s "$WHYSLOW_PLUGIN_DIR" "$A/pd"
"$WHYSLOW" run --plugin-dir "$A/pd" --sources sched -- true >/dev/null 2>"$W/pd.stderr"
rc=$?
sed 's/^/    stderr: /' "$W/pd.stderr"
check "plugin dir through the attacker's link: refused (rc $rc)" [ $rc -ne 0 ]
check "  in one line naming the attacker's directory" \
	eval '[ "$(nlines "$W/pd.stderr")" = 1 ] && grep -q "owned by uid $(id -u nobody)" "$W/pd.stderr"'
WHYSLOW_PLUGIN_DIR=$A/pd "$WHYSLOW" run --sources sched -- true >/dev/null 2>"$W/pdenv.stderr"
rc=$?
check "WHYSLOW_PLUGIN_DIR through the attacker's link: refused (rc $rc)" \
	eval '[ $rc -ne 0 ] && grep -q "owned by uid" "$W/pdenv.stderr"'
# the attacker's link in a root-owned sticky directory (like /tmp): the link itself is refused
S=$W/sticky
mkdir "$S" && chmod 1777 "$S"
as_nobody ln -s "$WHYSLOW_PLUGIN_DIR" "$S/pd"
"$WHYSLOW" run --plugin-dir "$S/pd" --sources sched -- true >/dev/null 2>"$W/spd.stderr"
rc=$?
sed 's/^/    stderr: /' "$W/spd.stderr"
check "plugin dir through the attacker's link in a sticky directory: refused (rc $rc), naming the link" \
	eval '[ $rc -ne 0 ] && [ "$(nlines "$W/spd.stderr")" = 1 ] && grep -q "symbolic link" "$W/spd.stderr"'

as_nobody ln -s "$W/root.ini" "$A/c.ini"
"$WHYSLOW" -c "$A/c.ini" run -- true >/dev/null 2>"$W/cfg.stderr"
rc=$?
sed 's/^/    stderr: /' "$W/cfg.stderr"
check "-c through the attacker's link to root's config: refused (rc $rc), one line" \
	eval '[ $rc -ne 0 ] && [ "$(nlines "$W/cfg.stderr")" = 1 ] && grep -q "owned by uid" "$W/cfg.stderr"'
as_nobody ln -s "$W/root.ini" "$S/c.ini"
"$WHYSLOW" -c "$S/c.ini" run -- true >/dev/null 2>"$W/scfg.stderr"
rc=$?
check "-c through the attacker's link in a sticky directory: refused (rc $rc), naming the link" \
	eval '[ $rc -ne 0 ] && grep -q "symbolic link" "$W/scfg.stderr"'

# --- root's own link in root's directory: followed -------------------------------------------------
ln -s "$WHYSLOW_PLUGIN_DIR" "$W/rootlink"
"$WHYSLOW" run --plugin-dir "$W/rootlink" --sources sched -o "$W/ok.txt" -- true >/dev/null 2>"$W/rootlink.stderr"
rc=$?
check "plugin dir through root's own link: accepted (rc $rc)" eval '[ $rc = 0 ] && grep -q Summary "$W/ok.txt"'
ln -s "$W/root.ini" "$W/rootlink.ini"
"$WHYSLOW" -c "$W/rootlink.ini" run -o "$W/ok2.txt" -- true >/dev/null 2>"$W/rootlinkc.stderr"
rc=$?
check "-c through root's own link: accepted (rc $rc)" [ $rc = 0 ]

# --- the race: the attacker flips the links while root runs ---------------------------------------
flipper() {
	# as nobody: swap each link between root's target and the attacker's, forever
	bg_nobody bash -c '
		while :; do
			ln -sfn "$1" "$3/pd"; ln -sfn "$3/evil" "$3/pd"
			ln -sfn "$2" "$3/c.ini"; ln -sfn "$3/evil.ini" "$3/c.ini"
		done' flip "$WHYSLOW_PLUGIN_DIR" "$W/root.ini" "$A"
}
flipper
accepted=0
# N runs each, or fewer (never under 30) when they take longer than REL_RACE_SECONDS: a loaded
# machine or an ASan build makes each run slow, and the test's time limit is fixed
deadline=$((SECONDS + ${REL_RACE_SECONDS:-120})) done_runs=0
for i in $(seq "$N"); do
	"$WHYSLOW" run --plugin-dir "$A/pd" --sources sched -- true >/dev/null 2>&1 && accepted=$((accepted + 1))
	"$WHYSLOW" -c "$A/c.ini" run -- true >/dev/null 2>&1 && accepted=$((accepted + 1))
	done_runs=$i
	[ $i -ge 30 ] && [ $SECONDS -ge $deadline ] && break
done
N=$done_runs
kill "${REL_PIDS[@]}" 2>/dev/null
wait 2>/dev/null
check "race, $N runs each: the attacker's library never ran as root" [ ! -e "$W/pwned" ]
check "race, $N runs each: the attacker's config never chose an output" [ ! -e "$W/attacker-chose-this" ]
check "race, $N runs each: never accepted through the attacker's links ($accepted)" [ "$accepted" = 0 ]
check "nothing left in the kernel" no_ws_left 2
rel_done
