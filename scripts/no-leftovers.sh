#!/usr/bin/env bash
# Runs a command (make test's cargo test), then fails if it left DPDK
# runtime folders or hugepage files that were not there before: every run
# of l3fwd-rs, and every test, takes its own with it.
set -uo pipefail
if [ "$(id -u)" = 0 ]; then runtime=/var/run/dpdk; else runtime=${XDG_RUNTIME_DIR:-/tmp}/dpdk; fi
snapshot() {
	ls -1d "$runtime"/* 2>/dev/null
	awk '$3 == "hugetlbfs" { print $2 }' /proc/self/mounts | while read -r mount; do
		ls -1d "$mount"/* 2>/dev/null
	done
	true
}
before=$(snapshot | sort)
"$@"
status=$?
left=$(comm -13 <(echo "$before") <(snapshot | sort))
if [ -n "$left" ]; then
	echo "no-leftovers: the run left DPDK runtime files behind:" >&2
	echo "$left" >&2
	[ "$status" = 0 ] && status=1
fi
exit "$status"
