#!/bin/sh
# gen-ini-man.sh WHYSLOW PLUGIN_DIR VERSION SYSCONFDIR IN OUT
# Writes whyslow.ini(5): IN with @KEYS@ replaced by `whyslow --config-help=man`, so the page is
# printed from the key tables and cannot drift from what whyslow accepts.
set -eu
whyslow=$1 plugin_dir=$2 version=$3 sysconfdir=$4 in=$5 out=$6
keys=$(mktemp)
trap 'rm -f "$keys"' EXIT
"$whyslow" --plugin-dir "$plugin_dir" --config-help=man >"$keys"
sed -e "s|@VERSION@|$version|g" -e "s|@SYSCONFDIR@|$sysconfdir|g" "$in" |
	awk -v keys="$keys" '$0 == "@KEYS@" { while ((getline l < keys) > 0) print l; next } { print }' >"$out"
