#!/bin/bash
# ABI guard: every public SDK header compiles on its own, as C99 with -pedantic
# -Werror and as C++, and whyslow.bpf.h compiles for BPF after vmlinux.h.
#   headers.sh SDK_INCLUDE_DIR VMLINUX_H
# Exit 0 pass, 1 fail.
set -u
inc=$1 vmlinux=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
ok() { echo "ok   $*"; }
bad() { echo "FAIL $*"; fail=1; }

for h in plugin.h record.h recent.h table.h; do
	printf '#include <whyslow/%s>\n#include <whyslow/%s>\nint ws_header_test;\n' "$h" "$h" >"$tmp/t.c"
	if cc -std=c99 -pedantic -Wall -Wextra -Werror -I"$inc" -c "$tmp/t.c" -o "$tmp/t.o" 2>"$tmp/err"; then
		ok "$h: cc -std=c99 -pedantic -Werror"
	else
		bad "$h: cc -std=c99 -pedantic -Werror"; cat "$tmp/err"
	fi
	cp "$tmp/t.c" "$tmp/t.cc"
	if c++ -std=c++11 -pedantic -Wall -Wextra -Werror -I"$inc" -c "$tmp/t.cc" -o "$tmp/t.o" 2>"$tmp/err"; then
		ok "$h: c++ -std=c++11 -pedantic -Werror"
	else
		bad "$h: c++ -std=c++11 -pedantic -Werror"; cat "$tmp/err"
	fi
done

# No implicit padding in the structs that cross the boundary: a member appended in 3.x takes
# reserved space, never bytes an older build left undefined (plugin.h, "Evolution rules").
for h in plugin.h record.h; do
	printf '#include <whyslow/%s>\nint ws_header_test;\n' "$h" >"$tmp/p.c"
	if cc -std=c99 -Wpadded -Werror -I"$inc" -c "$tmp/p.c" -o "$tmp/p.o" 2>"$tmp/err"; then
		ok "$h: no implicit padding (-Wpadded)"
	else
		bad "$h: implicit padding"; cat "$tmp/err"
	fi
done

# BPF side: after vmlinux.h and libbpf's helpers, as the header says.
cp "$vmlinux" "$tmp/vmlinux.h"
printf '#include "vmlinux.h"\n#include <bpf/bpf_helpers.h>\n#include <whyslow/whyslow.bpf.h>\n#include <whyslow/whyslow.bpf.h>\nchar LICENSE[] SEC("license") = "GPL";\n' >"$tmp/b.bpf.c"
if clang -g -O2 -target bpf -Wall -Werror -Wno-unused-function -I"$tmp" -I"$inc" -c "$tmp/b.bpf.c" -o "$tmp/b.o" 2>"$tmp/err"; then
	ok "whyslow.bpf.h: clang -target bpf after vmlinux.h"
else
	bad "whyslow.bpf.h: clang -target bpf"; cat "$tmp/err"
fi
exit $fail
