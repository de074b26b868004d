#!/bin/bash
# run.sh — build the recording-reader fuzzer with clang (-fsanitize=fuzzer,address) and run it
# for a bounded time over the seed corpus.
#
#   tests/fuzz/run.sh [SECONDS]      (default 30; exit 0 no crash, 1 crash, 77 no libFuzzer)
#
# The seed corpus (tests/fuzz/corpus) holds small valid recordings and some near misses; new
# inputs libFuzzer finds go to a scratch directory, not into the source tree. Crashes are written
# to $FUZZ_OUT (default: a temporary directory, kept and named on failure).
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
secs=${1:-30}
CC=${CLANG:-clang}
out=${FUZZ_OUT:-$(mktemp -d "${TMPDIR:-/tmp}/whyslow-fuzz.XXXXXX")}
mkdir -p "$out/corpus"

command -v "$CC" >/dev/null || { echo "SKIP: no clang" >&2; exit 77; }
if ! echo 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n){(void)d;(void)n;return 0;}' |
	"$CC" -x c -fsanitize=fuzzer -o "$out/probe" - 2>/dev/null; then
	echo "SKIP: $CC does not support -fsanitize=fuzzer (install libclang-rt-dev / a full clang)" >&2
	exit 77
fi
"$CC" -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
	-I"$root/core" -I"$root/sdk/include" -D_GNU_SOURCE \
	"$here/fuzz_trace_reader.c" "$root/core/record/trace.c" "$root/core/record/trace_zstd.c" \
	"$root/core/record/stuck_rec.c" \
	"$root/core/hang/stuck_print.c" "$root/core/hang/stuck_free.c" "$root/core/stacks/stack_fmt.c" "$root/core/base/syscall_fmt.c" "$root/core/stacks/demangle.c" \
	"$root/core/base/util.c" "$root/core/base/clock.c" "$root/core/stacks/stackrec.c" \
	-lzstd -o "$out/fuzz_trace_reader" || exit 1
echo "fuzzing the recording reader for ${secs}s (work: $out)"
cd "$out" || exit 1
# -malloc_limit_mb: no single allocation may exceed a few record caps (the reader's bound is
# one record of at most 1 MiB); ASan's quarantine is kept small so RSS measures the reader
ASAN_OPTIONS=${ASAN_OPTIONS:-quarantine_size_mb=32:detect_leaks=1} \
./fuzz_trace_reader -max_total_time="$secs" -rss_limit_mb=512 -malloc_limit_mb=4 \
	-max_len=65536 -print_final_stats=1 corpus "$here/corpus" 2>"$out/fuzz.log"
rc=$?
tail -n 25 "$out/fuzz.log"
if [ $rc -ne 0 ]; then
	echo "FAIL: the fuzzer found a problem (exit $rc); inputs and log kept in $out" >&2
	exit 1
fi
[ -z "${FUZZ_OUT:-}" ] && rm -rf "$out"
echo "PASS: no crash in ${secs}s"
