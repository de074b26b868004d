#!/bin/sh
# From a binary with symbols and DWARF, make the two copies Debian ships (tests/unit/test_symbols.c):
#   STRIPPED: no .symtab, no DWARF, only what .dynsym exports;
#   LINKED:   the same, with a .gnu_debuglink to DEBUG, a file with the .symtab and DWARF.
# usage: strip_variants.sh OBJCOPY FULL STRIPPED LINKED DEBUG
set -e
objcopy=$1 full=$2 stripped=$3 linked=$4 debug=$5
"$objcopy" --strip-all "$full" "$stripped"
"$objcopy" --only-keep-debug "$full" "$debug"
# The link is looked up next to the binary by its base name; the CRC is of DEBUG as written.
"$objcopy" --strip-all --add-gnu-debuglink="$debug" "$full" "$linked"
