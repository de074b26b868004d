# skip.sh — sourced by the end-to-end tests that stand alone (gt_lib.sh has its own gt_skip):
#   skip REASON...   exit 77, meson's "skipped"; under CI=true nothing may be skipped: exit 1.
skip() {
	if [ "${CI:-}" = true ]; then
		echo "FAIL (CI=true, not skipping): $*"
		exit 1
	fi
	echo "SKIP: $*"
	exit 77
}
