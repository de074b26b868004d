#!/bin/bash
# report_zstd.sh — compressed recordings (format 1.6) report exactly as uncompressed ones.
#
#   report_zstd.sh WHYSLOW DATA_DIR [record]   (exit 0 pass, 1 fail, 77 skip: no zstd CLI)
#
# The compressed layer is one standard zstd stream after the uncompressed header, so the zstd
# CLI converts either way (zconv below). Without root: the committed DATA_DIR/gt_mutex_disk.data
# compressed reports byte for byte as it does raw (text, json, folded, perfetto); cut anywhere it
# reads up to the cut, named "ends early at offset N"; a flipped byte is one line, refused.
# `record` (as root, in the root suite: BPF; the unit suite also runs under qemu-user, which has
# none): record's own output, compressed by default (and decompressed, the same report), raw with
# --compress=none.
set -u
WHYSLOW=$1 DATA=$2 MODE=${3:-report}
command -v zstd >/dev/null || { echo "SKIP: no zstd CLI (tools/deps.sh installs it)" >&2; exit 77; }
work=$(mktemp -d "${TMPDIR:-/tmp}/whyslow-report-zstd.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# zconv IN OUT zstd|none: the same records, the header's compression byte (offset 16) set
zconv() {
	local flag body
	case $3 in
	zstd) flag='\001' body=(zstd -q -3 -c) ;;
	none) flag='\000' body=(zstd -q -d -c) ;;
	esac
	{ head -c 16 "$1"; printf "$flag"; tail -c +18 "$1" | head -c 7; tail -c +25 "$1" | "${body[@]}"; } >"$2"
}
flag() { od -An -tu1 -j16 -N1 "$1" | tr -d ' '; }

# same_reports A B: every format of `report` gives the same bytes for both
same_reports() {
	local fmt
	for fmt in text json folded perfetto; do
		"$WHYSLOW" report --format "$fmt" -o "$work/a.$fmt" "$1" 2>"$work/a.err" ||
			fail "report --format $fmt $1 exited $?: $(cat "$work/a.err")"
		"$WHYSLOW" report --format "$fmt" -o "$work/b.$fmt" "$2" 2>"$work/b.err" ||
			fail "report --format $fmt $2 exited $?: $(cat "$work/b.err")"
		cmp -s "$work/a.$fmt" "$work/b.$fmt" || fail "report --format $fmt differs: $1 and $2"
		diff <(sed "s|$1|FILE|g" "$work/a.err") <(sed "s|$2|FILE|g" "$work/b.err") ||
			fail "report --format $fmt says other things on stderr"
	done
	echo "identical reports (text, json, folded, perfetto): $1 and $2"
}

if [ "$MODE" != record ]; then
echo "--- 1. a raw recording compressed: the same reports ---"
raw="$DATA/gt_mutex_disk.data" z="$work/z.data"
zconv "$raw" "$z" zstd
[ "$(flag "$z")" = 1 ] || fail "zconv did not mark $z compressed"
echo "$(stat -c %s "$raw") bytes raw, $(stat -c %s "$z") compressed"
same_reports "$raw" "$z"

echo "--- 2. cut short: read up to the cut, and said ---"
# as record writes it, in pieces that decode on their own (record: blocks flushed once a second;
# here: frames of 512 bytes, one after the other, which is a zstd stream too)
mkdir "$work/parts"
tail -c +25 "$raw" | split -b 512 - "$work/parts/p"
{ head -c 16 "$raw"; printf '\001'; tail -c +18 "$raw" | head -c 7;
  for p in "$work/parts"/p*; do zstd -q -3 -c "$p"; done; } >"$work/frames.data"
same_reports "$raw" "$work/frames.data"
z="$work/frames.data"
size=$(stat -c %s "$z")
for cut in $((size / 3)) $((size / 2)) $((size - 20)); do
	head -c "$cut" "$z" >"$work/cut.data"
	"$WHYSLOW" report "$work/cut.data" >/dev/null 2>"$work/cut.err" ||
		fail "a compressed recording cut at $cut of $size was refused: $(cat "$work/cut.err")"
	grep -q 'recording ends early at offset [0-9]* (killed?)' "$work/cut.err" ||
		fail "cut at $cut: no 'ends early at offset' in: $(cat "$work/cut.err")"
done
cat "$work/cut.err"
# only the last frame's checksum lost: every record is there
head -c $((size - 1)) "$z" >"$work/cut.data"
"$WHYSLOW" report "$work/cut.data" >/dev/null 2>"$work/cut.err" && ! grep -q 'ends early' "$work/cut.err" ||
	fail "cut in the checksum: $(cat "$work/cut.err")"
# inside the metadata: nothing to report, an error with its offset
head -c 30 "$z" >"$work/cut.data"
"$WHYSLOW" report "$work/cut.data" >/dev/null 2>"$work/cut.err" && fail "a header alone was accepted"
grep -q 'cut.data: offset [0-9]*: ' "$work/cut.err" || fail "no offset in: $(cat "$work/cut.err")"

echo "--- 3. a flipped byte: refused in one line ---"
cp "$z" "$work/bad.data"
printf '\377' | dd of="$work/bad.data" bs=1 seek=$((size / 2)) conv=notrunc status=none
"$WHYSLOW" report "$work/bad.data" >/dev/null 2>"$work/bad.err" && fail "a corrupt recording was accepted"
grep -v '^whyslow: note:' "$work/bad.err" >"$work/bad.err1"
[ "$(wc -l <"$work/bad.err1")" = 1 ] && grep -q 'bad.data: offset [0-9]*: ' "$work/bad.err1" ||
	fail "not one line with an offset: $(cat "$work/bad.err")"
cat "$work/bad.err1"

echo "--- 4. --compress takes zstd or none ---"
"$WHYSLOW" record --compress=lz4 -o "$work/x.data" -- true 2>"$work/opt.err" && fail "--compress=lz4 accepted"
grep -q 'record --compress=lz4: give zstd (the default) or none' "$work/opt.err" ||
	fail "--compress=lz4: $(cat "$work/opt.err")"

	echo "PASS report_zstd"
	exit 0
fi
if [ "$(id -u)" != 0 ]; then
	[ "${CI:-}" = true ] && fail "needs root (CI=true: not skipping)"
	echo "SKIP: needs root"
	exit 77
fi
echo "--- 5. record: compressed by default, raw with --compress=none ---"
busy='i=0; while [ $i -lt 300 ]; do sleep 0.001; i=$((i+1)); done'
"$WHYSLOW" record --as-root -o "$work/rec.data" -- sh -c "$busy" 2>"$work/rec.err" ||
	fail "record exited $?: $(cat "$work/rec.err")"
[ "$(flag "$work/rec.data")" = 1 ] || fail "record's default is not compressed"
zconv "$work/rec.data" "$work/rec_raw.data" none
[ "$(flag "$work/rec_raw.data")" = 0 ] || fail "zconv none"
same_reports "$work/rec.data" "$work/rec_raw.data"
"$WHYSLOW" record --as-root --compress=none -o "$work/none.data" -- sh -c "$busy" 2>"$work/rec.err" ||
	fail "record --compress=none exited $?: $(cat "$work/rec.err")"
[ "$(flag "$work/none.data")" = 0 ] || fail "--compress=none wrote a compressed recording"
"$WHYSLOW" report "$work/none.data" >/dev/null || fail "report of a --compress=none recording"
echo "$(stat -c %s "$work/rec.data") bytes compressed, $(stat -c %s "$work/rec_raw.data") raw"
echo "PASS report_zstd record"
