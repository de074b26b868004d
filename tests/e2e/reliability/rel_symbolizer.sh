#!/bin/bash
# Security round 3 (issue 36): an unprivileged user, made by this test, attacks root's symbolizer
# and `stuck` with what its own programs name. Whyslow must never hang (each run ends within its
# bound, and leaves no BPF program attached), never print a byte of a file that user cannot
# read, and name no holder a lock word merely claims.
#   rel_symbolizer.sh WHYSLOW PROGRAMS_DIR
. "$(dirname "$0")/rel_lib.sh"
rel_init symbolizer "$@"
W=$REL_WORK
PROG=$REL_PROGRAMS/hostile_sym
[ -x "$PROG" ] || rel_fatal "hostile_sym not built: $PROG"
for t in useradd userdel setpriv objcopy strip timeout; do
	command -v $t >/dev/null || rel_skip "$t not installed"
done

USER_NAME=wsatk$$
useradd -M -r -s /usr/sbin/nologin "$USER_NAME" || rel_fatal "cannot make user $USER_NAME"
# everything the user ran dies before the user goes (userdel refuses a user with processes)
drop_user() { pkill -KILL -u "$USER_NAME" 2>/dev/null; sleep 0.2; userdel "$USER_NAME" 2>/dev/null; }
trap 'drop_user; rel_cleanup' EXIT
U_UID=$(id -u "$USER_NAME")
U_GID=$(id -g "$USER_NAME")
as_user() { setpriv --reuid "$U_UID" --regid "$U_GID" --clear-groups --inh-caps=-all "$@"; }

# root's secrets: a 0600 file in a 0700 directory
SECRET=$(mktemp -d /root/whyslow-secret.XXXXXX) || rel_fatal "mktemp in /root"
trap 'rm -rf "$SECRET"; drop_user; rel_cleanup' EXIT
chmod 700 "$SECRET"
# the program's own symbols renamed: what root's copy would name its frames
objcopy --redefine-sym hostile_sleep=ROOT_SECRET_FN --redefine-sym main=ROOT_SECRET_MAIN \
	"$PROG" "$SECRET/secret.debug"
chmod 600 "$SECRET/secret.debug"
printf '0 7fffffffffff ROOT_SECRET_LINE\n' >"$SECRET/secret.map"
chmod 600 "$SECRET/secret.map"

# the user's own directory, where its programs live
UD=$W/user
mkdir "$UD" && chown "$U_UID:$U_GID" "$UD" && chmod 755 "$UD"

# A copy of the program with no build-id, no symbols, and a .gnu_debuglink section whose name
# is $2 (any bytes, as an attacker writes it) and CRC $3.
hostile_copy() {
	local out=$1 name=$2 crc=$3
	objcopy --remove-section .note.gnu.build-id "$PROG" "$out.tmp" && strip --strip-all "$out.tmp" &&
		python3 - "$name" "$crc" "$out.link" <<'PY' && objcopy --add-section .gnu_debuglink="$out.link" "$out.tmp" "$out"
import struct, sys
name = sys.argv[1].encode() + b"\0"
name += b"\0" * (-len(name) % 4)
open(sys.argv[3], "wb").write(name + struct.pack("<I", int(sys.argv[2])))
PY
	rm -f "$out.tmp" "$out.link"
	chown "$U_UID:$U_GID" "$out" && chmod 755 "$out"
}

# run_bounded NAME SECONDS ARGS...: whyslow as root on the user's command; its exit status, the
# report in $W/NAME.txt, stderr in $W/NAME.stderr. A run that outlives SECONDS is a hang.
run_bounded() {
	local name=$1 secs=$2 rc start
	shift 2
	start=$(date +%s)
	timeout -s KILL "$secs" "$WHYSLOW" "$@" >"$W/$name.out" 2>"$W/$name.stderr"
	rc=$?
	LAST_RC=$rc
	echo "  $name: exit $rc in $(($(date +%s) - start)) s"
	check "$name: whyslow ended by itself within $secs s, with the command's status 0 (exit $rc; 137 is the kill)" [ $rc = 0 ]
	check "$name: no BPF program left attached" no_ws_left 5
	return 0
}
# the report of run $1 was written, and no name from root's files is in anything it printed
no_secret() {
	grep -q "Summary:" "$W/$1.txt" && ! grep -q ROOT_SECRET "$W/$1.txt" "$W/$1.out" "$W/$1.stderr"
}

# --- 1. the perf map is a FIFO: root's open() of it would block for good --------------------
cat >"$UD/anon.sh" <<EOF
#!/bin/sh
mkfifo /tmp/perf-\$\$.map || exit 1
exec $PROG anon 300 2
EOF
chmod 755 "$UD/anon.sh"
if [ "$(uname -m)" = x86_64 ]; then
	run_bounded perffifo 60 run -u "$USER_NAME" -o "$W/perffifo.txt" -- "$UD/anon.sh"
	check "perf map FIFO: the refusal is said (SYMBOLS ... not a regular file)" \
		grep -q "SYMBOLS: .*perf-[0-9]*\.map (not a regular file)" "$W/perffifo.txt"
	find /tmp -maxdepth 1 -name 'perf-*.map' -user "$USER_NAME" -delete 2>/dev/null
	# --- 2. the perf map is a link to root's file: not followed, not printed -----------------
	cat >"$UD/anonlink.sh" <<EOF
#!/bin/sh
ln -s $SECRET/secret.map /tmp/perf-\$\$.map || exit 1
exec $PROG anon 300 2
EOF
	chmod 755 "$UD/anonlink.sh"
	run_bounded perflink 60 run -u "$USER_NAME" -o "$W/perflink.txt" -- "$UD/anonlink.sh"
	check "perf map link to a root file: no line of it printed" no_secret perflink
	check "perf map link: the refusal is said" grep -q "SYMBOLS: .*perf-[0-9]*\.map (a symbolic link)" "$W/perflink.txt"
	find /tmp -maxdepth 1 -name 'perf-*.map' -user "$USER_NAME" -delete 2>/dev/null
else
	echo "  (anonymous-code cases are x86_64 only)"
fi

# --- 3. the debuglink names a FIFO next to the binary ----------------------------------------
hostile_copy "$UD/fifolink" fifolink.debug 0
mkfifo "$UD/fifolink.debug" && chown "$U_UID:$U_GID" "$UD/fifolink.debug"
run_bounded dbgfifo 60 run -u "$USER_NAME" -o "$W/dbgfifo.txt" -- "$UD/fifolink" sleep 300 2
check "debuglink FIFO: the refusal is said" grep -q "SYMBOLS: .*fifolink\.debug (not a regular file)" "$W/dbgfifo.txt"

# --- control: a debuglink the user may read is followed, so the refusals below are refusals ---
objcopy --redefine-sym hostile_sleep=USER_DEBUG_FN "$PROG" "$UD/ctl.debug"
chown "$U_UID:$U_GID" "$UD/ctl.debug"
crc=$(python3 -c 'import sys, zlib; print(zlib.crc32(open(sys.argv[1], "rb").read()))' "$UD/ctl.debug")
hostile_copy "$UD/ctl" ctl.debug "$crc"
run_bounded control 60 run -u "$USER_NAME" -o "$W/control.txt" -- "$UD/ctl" sleep 300 2
check "control: the user's own debug file names the frame (USER_DEBUG_FN)" \
	grep -q "USER_DEBUG_FN" "$W/control.txt"

# --- 4. the debuglink climbs into root's 0700 directory --------------------------------------
hostile_copy "$UD/climb" "../../../../../../../..$SECRET/secret.debug" 0
run_bounded climb 60 run -u "$USER_NAME" -o "$W/climb.txt" -- "$UD/climb" sleep 300 2
check "debuglink with ../: root's debug file not read (no ROOT_SECRET)" no_secret climb

# --- 5. a plain debuglink name, a link beside the binary to root's file, the right CRC --------
crc=$(python3 -c 'import sys, zlib; print(zlib.crc32(open(sys.argv[1], "rb").read()))' "$SECRET/secret.debug")
hostile_copy "$UD/linked" secret.debug "$crc"
ln -s "$SECRET/secret.debug" "$UD/secret.debug"
run_bounded linked 60 run -u "$USER_NAME" -o "$W/linked.txt" -- "$UD/linked" sleep 300 2
check "debuglink through a link to root's file: read as the user, so not at all" no_secret linked
check "debuglink link: the refusal says the user cannot read it" \
	grep -q "SYMBOLS: .*secret\.debug (the process's user cannot read it)" "$W/linked.txt"

# --- 6. a FIFO mounted over the program in its own user+mount namespace ------------------------
if as_user unshare -Urm true 2>/dev/null; then
	cp "$PROG" "$UD/nsprog" && chown "$U_UID:$U_GID" "$UD/nsprog"
	mkfifo "$UD/nsfifo" && chown "$U_UID:$U_GID" "$UD/nsfifo"
	cat >"$UD/ns.sh" <<EOF
#!/bin/sh
exec unshare -Urm sh -c '$UD/nsprog sleep 400 3 & p=\$!; sleep 0.2; mount --bind $UD/nsfifo $UD/nsprog || exit 9; wait \$p'
EOF
	chmod 755 "$UD/ns.sh"
	run_bounded nsfifo 60 run -u "$USER_NAME" -o "$W/nsfifo.txt" -- "$UD/ns.sh"
	check "FIFO over a mapped file in a user+mount namespace: the command's mount worked (exit $LAST_RC)" \
		[ "$LAST_RC" = 0 ]
	check "FIFO over a mapped file: a report was written" grep -q "Summary:" "$W/nsfifo.txt"
	check "FIFO over a mapped file: its refusal is said" \
		grep -q "SYMBOLS: .*/proc/[0-9]*/root$UD/nsprog (not a regular file)" "$W/nsfifo.txt"
else
	[ "${CI:-}" = true ] && notok "unprivileged user namespaces are off: the namespace case did not run"
	echo "  (unprivileged user namespaces off: namespace case skipped)"
fi

# --- 7. stuck on a fake process-shared mutex naming a root process as its owner ----------------
setpriv --reuid "$U_UID" --regid "$U_GID" --clear-groups --inh-caps=-all "$PROG" fakemutex 1 \
	>"$W/fake.out" 2>&1 &
fake=$!
REL_PIDS+=("$fake")
wait_for_line "$W/fake.out" "^ready" 5 || notok "fakemutex did not start"
sleep 0.3
timeout -s KILL 60 "$WHYSLOW" stuck --min-block 1ms "$fake" >"$W/stuck.txt" 2>"$W/stuck.stderr"
rc=$?
echo "  stuck: exit $rc"
sed 's/^/    /' "$W/stuck.txt" | head -20
check "stuck, fake pshared mutex: pid 1 is not named as the holder" \
	eval '! grep -Eq "held by tid 1 " "$W/stuck.txt"'
check "stuck, fake pshared mutex: the word's claim is said, not verified" \
	grep -q "names tid 1, not verified" "$W/stuck.txt"
kill -KILL "$fake" 2>/dev/null
wait "$fake" 2>/dev/null

rel_done
