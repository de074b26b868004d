#!/bin/bash
# wheel.sh SRC_ROOT BUILD_DIR — the wheel (issue 35.8): tools/wheel makes it from BUILD_DIR, its
# contents are checked (name and tag, RECORD's hashes and sizes, modes, no build path, the
# plugins and the bundled libraries), pip installs it from the file into a fresh venv with no
# network, and the installed whyslow runs from the venv's bin/ with no variable set: --version
# names the venv's plugin directory, --config-help lists the plugins' sections, and as root
# `whyslow run -- true` traces with them.
# (exit 77 = the run skipped when not root, unless CI=true)
set -u
src=$(realpath "$1") build=$(realpath "$2")
t0=$(date +%s)
work=$(mktemp -d /tmp/whyslow-wheel-test.XXXXXX)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
py=/usr/bin/python3 # Debian's (python3-venv, python3-wheel), not a pyenv shim
unset WHYSLOW_PLUGIN_DIR

WHYSLOW_WHEEL_DIR=$work/w "$src/tools/wheel" "$build" >"$work/wheel.log" 2>&1 ||
	{ cat "$work/wheel.log"; fail "tools/wheel"; }
cat "$work/wheel.log"
whl=$(ls "$work"/w/out/*.whl)
[ "$(echo "$whl" | wc -l)" = 1 ] || fail "want one wheel, got: $whl"
case "$(basename "$whl")" in
whyslow-[0-9]*-py3-none-manylinux_2_[0-9]*_"$(uname -m)".whl) ;;
*) fail "wheel name $(basename "$whl"): want whyslow-VER-py3-none-manylinux_2_X_$(uname -m).whl" ;;
esac

# contents: every file in RECORD with its true hash and size, RECORD itself unhashed, modes
# 0755 for the scripts and 0644 for the rest, no path of the build machine inside (the BPF
# objects' line info named the sources by absolute path: tools/bpf-compile.sh maps them)
"$py" - "$whl" "$build" "$work" <<'PY' || fail "wheel contents"
import base64, hashlib, sys, zipfile, csv, io, re
whl, build, work = sys.argv[1:4]
z = zipfile.ZipFile(whl)
names = [i.filename for i in z.infolist()]
record = [n for n in names if n.endswith(".dist-info/RECORD")]
assert len(record) == 1, "one RECORD: %s" % record
rows = list(csv.reader(io.StringIO(z.read(record[0]).decode())))
listed = {r[0] for r in rows}
assert listed == set(names), "RECORD lists %s, the zip holds %s" % (listed ^ set(names), "those")
for path, digest, size in rows:
    if path == record[0]:
        assert digest == "" and size == "", "RECORD hashes itself"
        continue
    data = z.read(path)
    algo, _, want = digest.partition("=")
    assert algo == "sha256", "%s: %s" % (path, digest)
    got = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    assert got == want and int(size) == len(data), "%s: RECORD says %s %s" % (path, digest, size)
for i in z.infolist():
    mode = i.external_attr >> 16 & 0o7777
    if i.filename == record[0]:  # wheel pack writes it 0664; pip installs a RECORD of its own
        continue
    want = 0o755 if "/scripts/" in i.filename else 0o644
    assert mode == want, "%s: mode %o, want %o" % (i.filename, mode, want)
    data = z.read(i)
    for p in (build, work):
        assert p.encode() not in data, "%s holds the build path %s" % (i.filename, p)
need = [r"\.data/scripts/whyslow$", r"\.data/scripts/whyslow-flamegraph$",
        r"\.data/data/lib/.*/whyslow/plugins/futex\.so$", r"\.data/data/lib/.*/whyslow/lib/libbpf\.so\.1$",
        r"\.data/data/share/man/man1/whyslow\.1", r"\.dist-info/METADATA$", r"\.dist-info/WHEEL$"]
for n in need:
    assert any(re.search(n, f) for f in names), "no %s in the wheel" % n
wheel = z.read([n for n in names if n.endswith(".dist-info/WHEEL")][0]).decode()
assert "Root-Is-Purelib: false" in wheel, wheel
print("contents: %d files, RECORD right, modes 0755/0644, no build path" % len(names))
PY

# a fresh venv; pip from the file alone
"$py" -m venv "$work/venv" >"$work/venv.log" 2>&1 || { cat "$work/venv.log"; fail "python3 -m venv"; }
"$work/venv/bin/pip" install --no-index --no-cache-dir --disable-pip-version-check "$whl" >"$work/pip.log" 2>&1 ||
	{ cat "$work/pip.log"; fail "pip install --no-index $whl"; }
tail -1 "$work/pip.log"
export PATH=$work/venv/bin:$PATH
[ "$(command -v whyslow)" = "$work/venv/bin/whyslow" ] || fail "whyslow on PATH is $(command -v whyslow)"
whyslow --version >"$work/version" 2>&1 || { cat "$work/version"; fail "whyslow --version"; }
cat "$work/version"
grep -q "^whyslow [0-9]" "$work/version" || fail "--version"
plugins=$(echo "$work"/venv/lib/*/whyslow/plugins)
grep -qx "plugin directory: $plugins" "$work/version" ||
	fail "the venv's whyslow does not take the venv's plugins ($plugins)"
ldd "$work/venv/bin/whyslow" | grep -q "libbpf.so.1 => $work/venv/bin/../lib/.*/whyslow/lib/libbpf.so.1 " ||
	fail "the venv's whyslow does not load the bundled libbpf: $(ldd "$work/venv/bin/whyslow" | grep libbpf)"
whyslow --config-help >"$work/keys" 2>&1 || { cat "$work/keys"; fail "whyslow --config-help"; }
grep -q '^\[futex\]' "$work/keys" && grep -q '^\[blkio\]' "$work/keys" ||
	fail "--config-help lacks the plugins' sections: $(grep '^\[' "$work/keys" | tr '\n' ' ')"
whyslow-flamegraph --help >/dev/null 2>&1 || fail "whyslow-flamegraph --help"
head -1 "$work/venv/bin/whyslow-flamegraph" | grep -q "^#!$work/venv/bin/python" ||
	fail "whyslow-flamegraph runs $(head -1 "$work/venv/bin/whyslow-flamegraph"), not the venv's python"

if [ "$(id -u)" != 0 ]; then
	[ "${CI:-}" = true ] && fail "the run needs root (CI=true: not skipping)"
	echo "SKIP: whyslow run needs root (the wheel installed and ran --version in $(($(date +%s) - t0))s)"
	exit 77
fi
# the report's summary names the sources it traced with: every plugin of the venv among them
whyslow run -- true >"$work/run.out" 2>"$work/run.err" || { cat "$work/run.err"; fail "whyslow run -- true"; }
srcs=$(sed -n 's/^Summary: .*; sources \([a-z0-9_,]*\).*$/\1/p' "$work/run.err")
[ -n "$srcs" ] || { cat "$work/run.err"; fail "whyslow run -- true: no summary naming its sources"; }
for so in "$plugins"/*.so; do
	case ",$srcs," in *,"$(basename "$so" .so)",*) ;; *) fail "plugin $so not among the run's sources ($srcs)" ;; esac
done
echo "run -- true as root: sources $srcs"
# root loads no plugin that someone else could change: a venv of another user's is refused, named
chown -R nobody "$plugins"
whyslow run -- true >"$work/run.out" 2>"$work/run.err" && fail "root loaded plugins owned by nobody"
grep -q "^whyslow: $plugins.*refused: .* is owned by uid $(id -u nobody), not root" "$work/run.err" ||
	fail "plugins owned by nobody: not refused as such: $(cat "$work/run.err")"
echo "PASS: the wheel installs into a venv and whyslow runs from it with its plugins in $(($(date +%s) - t0))s"
