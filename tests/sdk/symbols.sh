#!/bin/bash
# ABI guard on symbols:
#  - each plugin exports exactly one symbol, whyslow_plugin_entry;
#  - the whyslow executable exports nothing of its own (only the C library's
#    copy-relocated stdout/stderr show up), and no plugin needs a symbol it
#    defines: plugins get everything through the host table.
#   symbols.sh WHYSLOW PLUGIN.so...
set -u
exe=$1; shift
fail=0
# a sanitizer build (tools/test's second pass) adds its runtime's hooks: not ours
san='^__(asan|ubsan|lsan|sanitizer)_'
ours=$(nm -D --defined-only "$exe" | awk '$3 !~ /@/ { print $3 }' | grep -Ev "$san")
if [ -n "$ours" ]; then
	echo "FAIL $exe exports its own symbols:"; echo "$ours"; fail=1
else
	echo "ok   $exe exports no symbols of its own"
fi
for so in "$@"; do
	exports=$(nm -D --defined-only "$so" | awk '{ print $3 }')
	if [ "$exports" != whyslow_plugin_entry ]; then
		echo "FAIL $so exports:"; echo "$exports"; fail=1
	else
		echo "ok   $so exports only whyslow_plugin_entry"
	fi
	# every undefined symbol must come from a library, never from the executable (a
	# sanitizer-instrumented plugin leaves libc's symbols for the runtime to interpose)
	nm -D --undefined-only "$so" | grep -qE " ${san#^}" && continue
	for u in $(nm -D --undefined-only "$so" | awk '{ print $2 }'); do
		case $u in *@*) continue ;; esac
		# unversioned: weak hooks like __gmon_start__ are fine, anything else is suspect
		case $u in __gmon_start__|_ITM_*|__cxa_finalize) continue ;; esac
		[[ $u =~ $san ]] && continue
		echo "FAIL $so needs unversioned symbol $u (from the executable?)"; fail=1
	done
done
exit $fail
