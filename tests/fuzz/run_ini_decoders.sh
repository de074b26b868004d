#!/bin/bash
# Build and run the ini and record-decoder fuzzers (libFuzzer + ASan + UBSan) for a bounded time.
#
#   tests/fuzz/run_ini_decoders.sh [SECONDS_EACH]     (default 30; env FUZZ_OUT: work directory)
#
# Needs clang with libFuzzer and the normal build (build/: the generated core_bpf.skel.h and the
# plugins' skeleton headers).  The plugins are rebuilt with the fuzzer's instrumentation into
# $FUZZ_OUT/plugins (root-owned, 0755, as the loader insists when run as root).  Crashes are kept
# in $FUZZ_OUT/crashes-<target>/; exit 1 if any target crashed.  (tests/fuzz/fuzz_trace_reader.c
# has its own runner.)  FUZZ_EXTRA_CFLAGS adds compiler flags, e.g. -fno-sanitize=nonnull-attribute
# to get past a known qsort(NULL, 0) report while it is unfixed.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
SECS=${1:-30}
BUILD=${BUILD:-$ROOT/build}
OUT=${FUZZ_OUT:-$ROOT/build-fuzz}
CC=${CC_FUZZ:-clang}
mkdir -p "$OUT/plugins"
chmod 755 "$OUT" "$OUT/plugins"
[ -f "$BUILD/core/core_bpf.skel.h" ] || { echo "run ninja -C $BUILD first" >&2; exit 1; }

# -D_GNU_SOURCE as meson.build gives every C file (O_PATH, nftw flags, process_vm_readv)
SAN=(-D_GNU_SOURCE -g -O1 -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=undefined ${FUZZ_EXTRA_CFLAGS:-})
INC=(-I"$ROOT/sdk/include" -I"$ROOT/core" -I"$BUILD/core")
# the engine is every core/*/ file but main.c and the BPF programs, so a new one needs no edit here
LIBS=(-lbpf -lelf -lz -lzstd -linih -ldl $(pkg-config --libs libdw 2>/dev/null))
set -e
srcs=()
for c in "$ROOT"/core/*/*.c; do case $c in */main.c | *.bpf.c) ;; *) srcs+=("$c") ;; esac; done
for t in fuzz_ini fuzz_decoders; do
	echo "building $t"
	$CC "${SAN[@]}" -fsanitize=fuzzer "${INC[@]}" -DWS_PLUGINDIR='"/nonexistent"' -DWS_VERSION='"fuzz"' \
		"$ROOT/tests/fuzz/$t.c" "${srcs[@]}" "${LIBS[@]}" -o "$OUT/$t"
done
for p in "$ROOT"/plugins/*/; do
	name=$(basename "$p")
	[ -f "$p/$name.c" ] || continue
	# a source with a kernel side needs its generated skeleton (the futex source has none)
	if grep -q "$name.skel.h" "$p/$name.c" && [ ! -f "$BUILD/plugins/$name.skel.h" ]; then continue; fi
	echo "building plugin $name (instrumented)"
	# every user-space file of the source (its kernel side is the skeleton)
	psrcs=()
	for c in "$p"/*.c; do [[ $c == *.bpf.c ]] || psrcs+=("$c"); done
	$CC "${SAN[@]}" -fsanitize=fuzzer-no-link -fPIC -shared -fvisibility=hidden \
		-I"$ROOT/sdk/include" -I"$p" -I"$BUILD/plugins" "${psrcs[@]}" -o "$OUT/plugins/$name.so"
	chmod 644 "$OUT/plugins/$name.so"
done
set +e

# seed corpora
mkdir -p "$OUT/corpus-fuzz_ini" "$OUT/corpus-fuzz_decoders"
cp "$ROOT"/conf/*.ini "$OUT/corpus-fuzz_ini/" 2>/dev/null
printf '[core]\nmin_block = 10ms\nring_size = 64K\nformat = json\n[sched]\nenabled = yes\n' >"$OUT/corpus-fuzz_ini/seed1.ini"
printf '[core]\nbad line\n[x]\nk=v\n;c\n#c\n' >"$OUT/corpus-fuzz_ini/seed2.ini"
python3 - "$OUT/corpus-fuzz_decoders" <<'PY'
import os, random, struct, sys
d = sys.argv[1]
random.seed(6)
for n in range(16):
    b = bytearray()
    for _ in range(40):
        src = random.choice([1, 1, 1, 2, 2, 3, 0])
        payload = bytes(random.randrange(256) for _ in range(random.choice([8, 16, 24, 32, 48])))
        b += bytes([src, random.randrange(8), len(payload), random.randrange(8), random.randrange(4),
                    random.randrange(256)]) + struct.pack("<H", random.randrange(20000)) + payload
    open(os.path.join(d, f"seed{n}"), "wb").write(bytes(b))
PY

export FUZZ_PLUGIN_DIR=$OUT/plugins
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
fail=0
for t in fuzz_ini fuzz_decoders; do
	mkdir -p "$OUT/crashes-$t" "$OUT/corpus-$t"
	# reproducers of an earlier run are replayed first: fixed, they become corpus seeds (and stop
	# counting as crashes); still crashing, they fail this run
	if compgen -G "$OUT/crashes-$t/*" >/dev/null; then
		if "$OUT/$t" -runs=1 "$OUT"/crashes-"$t"/* >"$OUT/$t.replay.log" 2>&1; then
			mv "$OUT"/crashes-"$t"/* "$OUT/corpus-$t/"
		else
			echo "$t: an earlier reproducer still crashes (see $OUT/$t.replay.log)"
			fail=1
			continue
		fi
	fi
	echo "== $t for ${SECS}s"
	"$OUT/$t" -max_total_time="$SECS" -max_len=4096 -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
		-artifact_prefix="$OUT/crashes-$t/" "$OUT/corpus-$t" >"$OUT/$t.log" 2>&1
	rc=$?
	grep -E "^#[0-9]+.*DONE|stat::number_of_executed_units|stat::peak_rss|SUMMARY|ERROR" "$OUT/$t.log" | tail -5
	if [ $rc -ne 0 ] || compgen -G "$OUT/crashes-$t/*" >/dev/null; then
		echo "$t: CRASH (exit $rc); reproducers: $(ls "$OUT/crashes-$t")"
		grep -A25 "ERROR\|runtime error" "$OUT/$t.log" | head -40
		fail=1
	else
		echo "$t: no crash"
	fi
done
exit $fail
