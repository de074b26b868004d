#!/bin/bash
# ABI guard: a plugin written in C++ gets an unmangled entry symbol from
# WS_PLUGIN_DEFINE (the loader dlsym()s "whyslow_plugin_entry").
#   cxx_entry.sh SDK_INCLUDE_DIR
set -u
inc=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
ok() { echo "ok   $*"; }
bad() { echo "FAIL $*"; fail=1; }
# plugin.h's declarations have C linkage under C++: the entry symbol is unmangled.
cat >"$tmp/e.cc" <<'CC'
#include <whyslow/plugin.h>
static const struct ws_plugin p = { sizeof(struct ws_plugin), WS_ABI_MAJOR, WS_ABI_MINOR,
	WS_KIND_THIRD_PARTY, 0, "cxx", "C++ plugin", "1" };
WS_PLUGIN_DEFINE(p)
CC
if c++ -std=c++11 -Wall -Werror -I"$inc" -c "$tmp/e.cc" -o "$tmp/e.o" 2>"$tmp/err" &&
   nm "$tmp/e.o" | grep -qw "T whyslow_plugin_entry"; then
	ok "plugin.h: WS_PLUGIN_DEFINE from C++ exports an unmangled whyslow_plugin_entry"
else
	bad "plugin.h: WS_PLUGIN_DEFINE from C++ defines $(nm "$tmp/e.o" | awk '/ T / { print $3 }'), not whyslow_plugin_entry (the macro expands outside extern \"C\")"
fi

exit $fail
