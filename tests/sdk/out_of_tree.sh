#!/bin/bash
# The SDK proven from outside the tree:
#  1. install the SDK (headers, whyslow-plugin.pc, plugin directory) into a
#     temporary prefix with `meson install --tags devel`;
#  2. build plugins/klock and sdk/template, copied out of the source tree,
#     against it with PKG_CONFIG_PATH only: klock and the template with meson,
#     the template also with make; install klock into the SDK's plugindir;
#  3. check what they export (symbols.sh) and that the .pc's ABI numbers are
#     the headers';
#  e2e mode only (root): 4. load them with --plugin-dir next to the in-tree
#     futex/blkio (the scheduler model is in whyslow itself), and 5. see klock links ("kernel_lock", rwsem, the
#     waker proven to be the releaser) in the chains of klock_contend.
#
#   out_of_tree.sh build|e2e SRCDIR WHYSLOW PLUGIN_BUILD_DIR KLOCK_CONTEND
# Exit 0 pass, 1 fail, 77 skip (e2e when not root; with CI=true a failure instead).
set -u
mode=$1 src=$2 whyslow=$3 plugin_build=$4 contend=$5
here=$(cd "$(dirname "$0")" && pwd)
meson=${MESON:-meson}

fail() { echo "FAIL: $*" >&2; exit 1; }
skip() {
	if [ "${CI:-}" = true ]; then fail "(CI=true, not skipping) $*"; fi
	echo "SKIP: $*"; exit 77
}
step() { echo "== $*"; }
run() { echo "+ $*"; "$@" >"$tmp/log" 2>&1 || { tail -40 "$tmp/log"; fail "$*"; }; }

if [ "$mode" = e2e ] && [ "$(id -u)" != 0 ]; then
	skip "loading BPF needs root"
fi
tmp=$(mktemp -d /tmp/whyslow-sdk.XXXXXX)
chmod 755 "$tmp"
[ -n "${KEEP:-}" ] || trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix

step "1. install the SDK into $prefix"
run "$meson" setup "$tmp/sdk-build" "$src" --prefix="$prefix" -Dtests=disabled
run "$meson" install -C "$tmp/sdk-build" --no-rebuild --tags devel
pc=$(find "$prefix" -name whyslow-plugin.pc)
[ -n "$pc" ] || fail "no whyslow-plugin.pc under $prefix"
export PKG_CONFIG_PATH=$(dirname "$pc")
for h in plugin.h record.h whyslow.bpf.h; do
	[ -f "$prefix/include/whyslow/$h" ] || fail "include/whyslow/$h not installed"
done
plugindir=$(pkg-config --variable=plugindir whyslow-plugin)
[ -d "$plugindir" ] || fail "plugindir $plugindir not installed"
case $plugindir in "$prefix"/*) ;; *) fail "plugindir $plugindir is outside the prefix" ;; esac
flags=$(pkg-config --cflags --libs whyslow-plugin) || fail "pkg-config --cflags --libs whyslow-plugin"
echo "pkg-config --cflags --libs whyslow-plugin: $flags"
major=$(pkg-config --variable=abi_major whyslow-plugin)
minor=$(pkg-config --variable=abi_minor whyslow-plugin)
printf '#include <whyslow/plugin.h>\n_Static_assert(WS_ABI_MAJOR == %s && WS_ABI_MINOR == %s, "pc ABI != header ABI");\nint x;\n' \
	"$major" "$minor" >"$tmp/abi.c"
# shellcheck disable=SC2086
cc -std=c11 -c "$tmp/abi.c" -o "$tmp/abi.o" $(pkg-config --cflags whyslow-plugin) ||
	fail "whyslow-plugin.pc says ABI $major.$minor, plugin.h disagrees"
[ "$(pkg-config --modversion whyslow-plugin)" = "$major.$minor" ] ||
	fail "whyslow-plugin.pc's version $(pkg-config --modversion whyslow-plugin) is not its ABI $major.$minor"
echo "ABI $major.$minor in the .pc (version and variables) and the header"

step "2. build klock and the template out of tree"
mkdir -p "$tmp/src"
cp -r "$src/plugins/klock" "$tmp/src/klock"
cp -r "$src/sdk/template" "$tmp/src/template-meson"
cp -r "$src/sdk/template" "$tmp/src/template-make"
run "$meson" setup "$tmp/klock-build" "$tmp/src/klock"
run ninja -C "$tmp/klock-build"
run "$meson" install -C "$tmp/klock-build"
[ -f "$plugindir/klock.so" ] || fail "klock.so not installed into $plugindir"
run "$meson" setup "$tmp/template-build" "$tmp/src/template-meson"
run ninja -C "$tmp/template-build"
run make -C "$tmp/src/template-make"

step "3. exported symbols"
"$here/symbols.sh" "$whyslow" "$plugindir/klock.so" "$tmp/template-build/template.so" \
	"$tmp/src/template-make/template.so" || fail "symbols"

[ "$mode" = e2e ] || { echo "PASS (build)"; exit 0; }

step "4. load them through --plugin-dir"
pd=$tmp/plugins
mkdir -m 755 "$pd"
for p in futex blkio; do
	install -m 644 "$plugin_build/$p.so" "$pd/" || fail "no $plugin_build/$p.so (build the tree first)"
done
install -m 644 "$plugindir/klock.so" "$tmp/template-build/template.so" "$pd/"
run "$whyslow" --plugin-dir "$pd" run --as-root --sources sched,template -- true

step "5. klock links in klock_contend's chains"
out=$tmp/chains.jsonl
cmd=("$whyslow" --plugin-dir "$pd" run --as-root --format json --min-block 1ms
     --sources sched,klock -o "$out" -- "$contend" 512 20)
echo "+ ${cmd[*]}"
timeout -k 5 120 "${cmd[@]}" >"$tmp/prog.out" 2>"$tmp/whyslow.err" ||
	{ cat "$tmp/whyslow.err"; fail "whyslow run"; }
cat "$tmp/prog.out"
holder=$(sed -n 's/^holder tid //p' "$tmp/prog.out")
waiter=$(sed -n 's/^waiter tid //p' "$tmp/prog.out")
python3 - "$out" "$holder" "$waiter" <<'PY' || fail "no proven klock link"
import json, sys
path, holder, waiter = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
links, proven = 0, []
for line in open(path):
    d = json.loads(line)
    if d.get("type") != "chain":
        continue
    for l in d["links"]:
        if l["kind"] != "kernel_lock":
            continue
        links += 1
        if (l["tid"] == waiter and l.get("woken_by") == holder and l.get("lock_type") == "rwsem"
                and l.get("mode") in ("read", "write") and l.get("waker_fn")
                and "released" in l["evidence"]):
            proven.append(l)
print(f"{links} kernel_lock links, {len(proven)} from the waiter to the holder with the release proven")
if proven:
    print("e.g.", json.dumps(proven[0]))
# 14.3: the rwsem's owner field names the writer that held it when the wait began: the holder
# (mprotect holds mmap_lock for write). Nothing else may be named; readers are named as such.
named = [l for l in proven if "owner" in l]
wrong = [l for l in named if l["owner"] != holder or l.get("owner_evidence") != "rwsem_owner_field"]
print(f"{len(named)} of them name the holder from the lock's owner field, {len(wrong)} name another")
if wrong:
    print("wrong owner:", json.dumps(wrong[0]))
sys.exit(0 if proven and named and not wrong else 1)
PY
echo "PASS (e2e)"
