#!/bin/bash
# Bad input: each mistake gives exactly one clear line on stderr, a non-zero exit (127/126 for
# a command not found / not executable), no whyslow BPF program left in the kernel, and no
# output file (not even a temporary one) at the -o path.
#   rel_bad_input.sh WHYSLOW PROGRAMS_DIR TEST_PLUGINS_DIR
. "$(dirname "$0")/rel_lib.sh"
rel_init bad_input "$@"
[ -n "$REL_TEST_PLUGINS" ] && [ -f "$REL_TEST_PLUGINS/bad_major.so" ] ||
	rel_fatal "test plugins dir (with bad_major.so, bad_elf.so, bad_verifier.so) not given: '$REL_TEST_PLUGINS'"

W=$REL_WORK
OUT=$W/out.jsonl
WRAP=() # a command that whyslow runs under (the BTF test hides the kernel's BTF)

# expect NAME WANT_RC REGEX -- whyslow ARGS...   (WANT_RC "nz" = any non-zero)
expect() {
	local name=$1 want=$2 re=$3 rc n bad=""
	shift 4
	rm -f "$OUT" "$OUT".tmp.*
	timeout -k 2 20 "${WRAP[@]}" "$WHYSLOW" "$@" >"$W/stdout" 2>"$W/stderr"
	rc=$?
	if [ "$want" = nz ]; then
		{ [ $rc -ne 0 ] && [ $rc -ne 124 ] && [ $rc -lt 128 ]; } || bad+=" exit $rc (want non-zero error);"
	else
		[ $rc -eq "$want" ] || bad+=" exit $rc (want $want);"
	fi
	n=$(nlines "$W/stderr")
	[ "$n" = 1 ] || bad+=" $n stderr lines (want exactly 1);"
	grep -q '^whyslow: ' "$W/stderr" || bad+=" stderr line does not start with 'whyslow: ';"
	grep -Eq -- "$re" "$W/stderr" || bad+=" stderr does not match /$re/;"
	compgen -G "$OUT*" >/dev/null && bad+=" output file left: $(echo $OUT*);"
	no_ws_left 2 || bad+=" BPF programs left attached;"
	if [ -z "$bad" ]; then
		ok "$name (exit $rc): $(head -c 200 "$W/stderr")"
	else
		notok "$name:$bad"
		sed 's/^/    stderr: /' "$W/stderr" | head -8
	fi
}

# a plugin dir holding the real plugins plus $@ (root-owned, 0755)
plugdir() {
	local d=$W/plugins.$1
	shift
	mkdir -p "$d" && chmod 755 "$d"
	cp "$WHYSLOW_PLUGIN_DIR"/*.so "$@" "$d"/
	chmod 644 "$d"/*.so
	echo "$d"
}

ini() { printf "$2" >"$W/$1"; chmod 644 "$W/$1"; echo "$W/$1"; }

# --- configuration -----------------------------------------------------------------------------
f=$(ini syntax.ini '[core]\nmin_block = 1ms\nthis line is not ini\n')
expect "ini syntax error names file:line" nz "syntax\\.ini:3" -- -c "$f" run -o "$OUT" -- true
f=$(ini section.ini '[core]\nmin_block = 1ms\n[nosuchsource]\nx = 1\n')
expect "unknown section (with keys) names file:line of the header" nz "section\\.ini:3: .*unknown section \\[nosuchsource\\]" -- -c "$f" run -o "$OUT" -- true
f=$(ini section_empty.ini '[core]\n[nosuchsource]\n')
expect "unknown empty section is refused too (file:line)" nz "section_empty\\.ini:2: .*unknown section \\[nosuchsource\\]" -- -c "$f" run -o "$OUT" -- true
f=$(ini key.ini '[core]\nmin_blok = 1ms\n')
expect "unknown key names file:line and the known keys" nz "key\\.ini:2: unknown key 'min_blok'.*min_block" -- -c "$f" run -o "$OUT" -- true
f=$(ini srckey.ini '[sched]\nno_such_key = 1\n')
expect "unknown key in a source section" nz "srckey\\.ini:2: unknown key 'no_such_key' in \\[sched\\]" -- -c "$f" run -o "$OUT" -- true
f=$(ini range.ini '[core]\nring_size = 1\n')
expect "bad value gives the accepted range" nz "range\\.ini:2: .*ring_size.*out of range \\(65536 to 1073741824\\)" -- -c "$f" run -o "$OUT" -- true
f=$(ini pow2.ini '[core]\nring_size = 100000\n')
expect "ring_size not a power of 2" nz "ring_size.*power of 2" -- -c "$f" run -o "$OUT" -- true
f=$(ini dur.ini '[core]\nmin_block = soon\n')
expect "bad duration says what a duration looks like" nz "dur\\.ini:2: .*min_block.*duration" -- -c "$f" run -o "$OUT" -- true
expect "bad --min-block value" nz "min-block" -- run --min-block fast -o "$OUT" -- true
expect "missing config file" nz "nope\\.ini" -- -c "$W/nope.ini" run -o "$OUT" -- true

# --- sources and plugins ----------------------------------------------------------------------
expect "unknown source in --sources lists the available ones" nz "unknown source 'nosuch'.*sched" -- --sources sched,nosuch run -o "$OUT" -- true
expect "missing plugin dir" nz "$W/no-plugins" -- --plugin-dir "$W/no-plugins" run -o "$OUT" -- true
mkdir -p "$W/empty-plugins" && chmod 755 "$W/empty-plugins"
expect "plugin dir without plugins" nz "no plugins" -- --plugin-dir "$W/empty-plugins" run -o "$OUT" -- true
d=$(plugdir abi "$REL_TEST_PLUGINS/bad_major.so")
expect "wrong-ABI plugin is refused, naming the ABI" nz "bad_major\\.so: refused: built for plugin ABI" -- --plugin-dir "$d" run -o "$OUT" -- true
d=$(plugdir elf "$REL_TEST_PLUGINS/bad_elf.so")
expect "plugin with a garbage BPF object: one line, a real reason" nz "bad_elf.*(not a proper ELF|not valid).*[A-Za-z]" -- --plugin-dir "$d" --sources sched,bad_elf run -o "$OUT" -- true
grep -q 'Unknown error' "$W/stderr" && notok "garbage BPF object: reason is libbpf's errno printed as 'Unknown error N' (use libbpf_strerror)"
d=$(plugdir verifier "$REL_TEST_PLUGINS/bad_verifier.so")
expect "plugin the verifier rejects: one line with the verifier's reason" nz "bad_verifier.*(invalid mem access|map_value_or_null)" -- --plugin-dir "$d" --sources sched,bad_verifier run -o "$OUT" -- true
timeout 20 "$WHYSLOW" -v --plugin-dir "$d" --sources sched,bad_verifier run -o "$OUT" -- true >/dev/null 2>"$W/stderr.v"
check "with -v the full verifier log is shown" grep -q "BEGIN PROG LOAD LOG\|processed [0-9]* insns" "$W/stderr.v"
check "nothing left after the -v verifier failure" no_ws_left 2

# trust
d=$(plugdir untrusted)
chmod 777 "$d"
expect "world-writable plugin dir is refused, naming path and fix" nz "$d.*writable by group or others.*chmod" -- --plugin-dir "$d" run -o "$OUT" -- true
chmod 755 "$d"
chmod 666 "$d/futex.so"
expect "world-writable plugin file is refused" nz "futex\\.so.*writable" -- --plugin-dir "$d" --sources sched,futex run -o "$OUT" -- true
chmod 644 "$d/futex.so"
f=$(ini writable.ini '[core]\n')
chmod 666 "$f"
expect "world-writable config file is refused" nz "writable\\.ini.*writable by group or others" -- -c "$f" run -o "$OUT" -- true
f=$(ini notmine.ini '[core]\n')
chown nobody "$f"
expect "config file owned by another user is refused" nz "notmine\\.ini.*owned by" -- -c "$f" run -o "$OUT" -- true
mkdir -p "$W/open" && chmod 777 "$W/open" && printf '[core]\n' >"$W/open/c.ini" && chmod 644 "$W/open/c.ini"
expect "config file in a world-writable directory is refused" nz "c\\.ini.*$W/open is writable" -- -c "$W/open/c.ini" run -o "$OUT" -- true

# --- the command, the PID, the output ----------------------------------------------------------
expect "command not found: exit 127" 127 "no-such-command-xyz.*not found" -- run -o "$OUT" -- no-such-command-xyz
printf '#!/bin/sh\nexit 0\n' >"$W/notexec.sh" && chmod 644 "$W/notexec.sh"
expect "command not executable: exit 126" 126 "notexec\\.sh.*Permission denied" -- run -o "$OUT" -- "$W/notexec.sh"
expect "directory as command: exit 126" 126 "$W" -- run -o "$OUT" -- "$W"
pid=$(($(cat /proc/sys/kernel/pid_max) - 1))
while [ -e /proc/$pid ]; do pid=$((pid - 1)); done
expect "nonexistent PID" nz "no process .*$pid" -- attach -o "$OUT" "$pid"
expect "PID not a number" nz "not a process id" -- attach -o "$OUT" 12abc
expect "unwritable output path /proc/nope/x" nz "/proc/nope/x" -- run -o /proc/nope/x -- true
expect "unwritable output path /sys/kernel/x" nz "/sys/kernel/x" -- run -o /sys/kernel/x -- true
expect "unwritable output path for attach" nz "/proc/nope/x" -- attach -o /proc/nope/x $$

# --- the kernel --------------------------------------------------------------------------------
# A kernel without BTF, seen from a private mount namespace where /sys/kernel/btf is empty.
mkdir -p "$W/nobtf"
if command -v unshare >/dev/null && unshare -m true 2>/dev/null; then
	WRAP=(unshare -m sh -c 'mount --bind "$0" /sys/kernel/btf && exec "$@"' "$W/nobtf")
	expect "kernel without BTF" nz "no BTF.*CONFIG_DEBUG_INFO_BTF" -- run -o "$OUT" -- true
	WRAP=()
else
	notok "kernel without BTF: cannot make a mount namespace to hide /sys/kernel/btf (unshare -m)"
fi

rel_done
