#!/bin/bash
# node_frames.sh — a Node.js program's JavaScript functions at its wait (issue 33 item 3), from
# the map node writes with --perf-basic-prof (/tmp/perf-PID.map, read as the program's user);
# --interpreted-frames-native-stack gives each function not yet compiled a frame of its own (else
# every interpreted function is the one InterpreterEntryTrampoline).
#
#   node_frames.sh WHYSLOW   (exit 77 = skipped when not root or without node; a failure under
#                             CI=true)
#
# waitHere() blocks 150 ms in Atomics.wait (a futex wait in V8's runtime) three times, called from
# outerCaller(). The chain of such a wait must carry, above V8's own frames, the frames the map
# names JS:~waitHere and JS:~outerCaller, in that order, with the script's path; and the text
# must read in JavaScript. The program idles 1.5 s before it exits, so its stacks unwind on a
# busy machine too (a clean-clone CI run once had them missing in the text run).
set -u
WHYSLOW=$1
fail() { echo "FAIL: $*"; exit 1; }
. "$(dirname "${BASH_SOURCE[0]}")/skip.sh"
[ "$(id -u)" = 0 ] || skip "needs root (BPF)"
command -v node >/dev/null || skip "no node (apt-get install nodejs)"
work=$(mktemp -d /tmp/whyslow-node.XXXXXX)
trap 'rm -rf "$work"' EXIT
chmod 755 "$work"
# node writes V8 logs (isolate-*.log) where it runs: in the temp dir, not the build dir
WHYSLOW=$(realpath "$WHYSLOW")
cd "$work" || fail "cannot enter $work"
cat >"$work/wait.js" <<'JS'
function waitHere(ms) {
  const sab = new SharedArrayBuffer(4);
  return Atomics.wait(new Int32Array(sab), 0, 0, ms);
}
function outerCaller() { for (let i = 0; i < 3; i++) waitHere(150); }
outerCaller();
// alive a while after its waits, idle in the event loop (no JavaScript frame there): a busy
// machine's reader reads the maps of a program that exits at once too late to unwind its waits
setTimeout(() => {}, 1500);
JS
"$WHYSLOW" run --as-root --format json -o "$work/r.json" -- node --perf-basic-prof \
	--interpreted-frames-native-stack "$work/wait.js" \
	2>"$work/err" || fail "whyslow run exited $?: $(cat "$work/err")"
python3 - "$work/r.json" "$work/wait.js" <<'PY' || exit 1
import json, sys
chains = [json.loads(l) for l in open(sys.argv[1]) if '"type":"chain"' in l]
best = None
for c in chains:
    for link in c.get("links", []):
        names = [f.get("sym") or "" for f in link.get("stack") or [] if not f.get("kernel")]
        js = [n for n in names if n.startswith("JS:")]
        if js:
            best = js
            break
    if best:
        break
if not best:
    sys.exit("FAIL: no link's stack has a JavaScript frame (%d chains)" % len(chains))
want = ["waitHere", "outerCaller"]
got = [n.split()[0].lstrip("JS:~*") for n in best]
if got[:2] != want or sys.argv[2] not in best[0]:
    sys.exit("FAIL: JavaScript frames %r, want %r from %s" % (best, want, sys.argv[2]))
print("JSON: " + " <- ".join(best[:2]))
PY
# the text reads in JavaScript too: its frames first, V8's C++ after "via"
"$WHYSLOW" run --as-root --top 20 -o "$work/r.txt" -- node --perf-basic-prof \
	--interpreted-frames-native-stack "$work/wait.js" 2>"$work/err" ||
	fail "whyslow run (text) exited $?: $(cat "$work/err")"
grep -q "in JS:~waitHere .*wait.js:1:18 .* JS:~outerCaller .*, via " "$work/r.txt" ||
	fail "the text does not read in JavaScript: $(grep -c 'JS:' "$work/r.txt") lines name a JS frame; the waits of 150ms: $(grep -A2 'blocked 15[0-9]ms' "$work/r.txt" | head -12)"
echo "PASS node_frames"
