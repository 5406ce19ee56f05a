#!/usr/bin/env bash
# Build DPDK's own C l3fwd sample (the behavioural reference) so that tests and
# benchmarks can run it on virtual (pcap) ports next to l3fwd-rs.
#
# Usage: scripts/build-c-l3fwd.sh [OUT_DIR]   (default: target/c-l3fwd)
# Produces OUT_DIR/dpdk-l3fwd. Does nothing if that binary is newer than the
# installed sample sources and was built with the same variant settings.
#
# Variants (environment), for runs the stock sample cannot do:
#   C_L3FWD_MIN_MBUFS=N   raise the mbuf pool's minimum size from 8192 to N, so
#                         pcap ports replaying large files (one mbuf per frame)
#                         fit; like l3fwd-rs's --num-mbufs N
#   C_L3FWD_SEQUENTIAL=1  exact match looks packets up one by one
#                         (NO_HASH_MULTI_LOOKUP), like --sequential-lookup
set -euo pipefail

EXAMPLES=${DPDK_EXAMPLES:-/usr/share/dpdk/examples}
OUT=${1:-target/c-l3fwd}
BIN="$OUT/dpdk-l3fwd"
MIN_MBUFS=${C_L3FWD_MIN_MBUFS:-8192}
SEQUENTIAL=${C_L3FWD_SEQUENTIAL:-0}
VARIANT="min_mbufs=$MIN_MBUFS sequential=$SEQUENTIAL"

# Test binaries may run this concurrently: one build at a time.
mkdir -p "$OUT"
exec 9>"$OUT/.lock"
flock 9

# Idempotent: rebuild only when a source (or this script's patch) is newer.
if [[ -x "$BIN" ]] && [[ "$(cat "$OUT/.variant" 2>/dev/null)" == "$VARIANT" ]] &&
    [[ -z "$(find "$EXAMPLES/l3fwd" "$EXAMPLES/common" "${BASH_SOURCE[0]}" -newer "$BIN" -print -quit)" ]]; then
    exit 0
fi
if ! [[ "$MIN_MBUFS" =~ ^[1-9][0-9]*$ ]]; then
    echo "build-c-l3fwd: C_L3FWD_MIN_MBUFS must be a positive number, not '$MIN_MBUFS'" >&2
    exit 1
fi

# The Makefile includes ../common, so keep both folders side by side.
SRC="$OUT/src"
rm -rf "$SRC"
mkdir "$SRC"
cp -r "$EXAMPLES/l3fwd" "$EXAMPLES/common" "$SRC/"

# patch FILE PATTERN REPLACEMENT: sed, failing if the pattern is not there.
patch() {
    if ! grep -q "$2" "$1"; then
        echo "build-c-l3fwd: pattern '$2' not found in $1" >&2
        exit 1
    fi
    sed -i "s|$2|$3|" "$1"
}

# pcap ports do not offer RX checksum offload; requesting it makes
# rte_eth_dev_configure fail. Request no RX offloads instead.
MAIN="$SRC/l3fwd/main.c"
patch "$MAIN" '\.offloads = RTE_ETH_RX_OFFLOAD_CHECKSUM,' \
    '.offloads = 0, /* l3fwd-rs: no RX checksum offload on virtual ports */'
if [[ "$MIN_MBUFS" != 8192 ]]; then
    patch "$MAIN" '(unsigned)8192)' "(unsigned)$MIN_MBUFS) /* l3fwd-rs: C_L3FWD_MIN_MBUFS */"
fi
if [[ "$SEQUENTIAL" == 1 ]]; then
    patch "$SRC/l3fwd/l3fwd.h" '^#define __L3_FWD_H__$' \
        '#define __L3_FWD_H__\n#define NO_HASH_MULTI_LOOKUP 1 /* l3fwd-rs: C_L3FWD_SEQUENTIAL */'
fi

make -s -C "$SRC/l3fwd" >/dev/null
# Replace by rename: a running binary cannot be overwritten in place.
cp "$SRC/l3fwd/build/l3fwd-shared" "$BIN.tmp"
mv -f "$BIN.tmp" "$BIN"
echo "$VARIANT" >"$OUT/.variant"
