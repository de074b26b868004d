#!/bin/sh
# Compile one BPF C file for CO-RE and strip its DWARF (BTF stays): clang LLVM_STRIP IN OUT CFLAGS...
set -e
clang=$1 strip=$2 in=$3 out=$4
shift 4
# BTF's line info names each source file, absolute: the build's paths would be in every package,
# so the source tree is "whyslow" there and the build directory (where ninja runs) "build"
src=$(cd "$(dirname "$0")/.." && pwd)
"$clang" "$@" -fdebug-prefix-map="$PWD"=build -fdebug-prefix-map="$src"=whyslow -c "$in" -o "$out.tmp"
"$strip" -g "$out.tmp" -o "$out"
rm -f "$out.tmp"
