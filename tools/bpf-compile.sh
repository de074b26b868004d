#!/bin/sh
# Compile one BPF C file for CO-RE and strip its DWARF (BTF stays): clang LLVM_STRIP IN OUT CFLAGS...
set -e
clang=$1 strip=$2 in=$3 out=$4
shift 4
"$clang" "$@" -c "$in" -o "$out.tmp"
"$strip" -g "$out.tmp" -o "$out"
rm -f "$out.tmp"
