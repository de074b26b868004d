#!/bin/sh
# Stands in for check_chain.py inside the arm64 guest (no python there): keeps the truth and
# whyslow's JSON of one case for the host, which runs the real checker on them.
#   collect.sh --truth T --json J --case C
while [ $# -gt 1 ]; do
	case $1 in
	--truth) truth=$2 ;;
	--json) json=$2 ;;
	--case) case=$2 ;;
	esac
	shift 2
done
mkdir -p "/out/$case" && cp "$truth" "/out/$case/truth.json" && cp "$json" "/out/$case/whyslow.jsonl" || exit 1
echo "collect.sh: $case: truth and whyslow output kept for the host's check_chain.py"
