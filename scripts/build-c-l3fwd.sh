#!/usr/bin/env bash
# Build DPDK's own C l3fwd sample (the behavioural reference) so that tests and
# benchmarks can run it on virtual (pcap) ports next to l3fwd-rs.
#
# Usage: scripts/build-c-l3fwd.sh [OUT_DIR]   (default: target/c-l3fwd)
# Produces OUT_DIR/dpdk-l3fwd. Does nothing if that binary is newer than the
# installed sample sources.
set -euo pipefail

EXAMPLES=${DPDK_EXAMPLES:-/usr/share/dpdk/examples}
OUT=${1:-target/c-l3fwd}
BIN="$OUT/dpdk-l3fwd"

# Test binaries may run this concurrently: one build at a time.
mkdir -p "$OUT"
exec 9>"$OUT/.lock"
flock 9

# Idempotent: rebuild only when a source (or this script's patch) is newer.
if [[ -x "$BIN" ]] &&
    [[ -z "$(find "$EXAMPLES/l3fwd" "$EXAMPLES/common" "${BASH_SOURCE[0]}" -newer "$BIN" -print -quit)" ]]; then
    exit 0
fi

# The Makefile includes ../common, so keep both folders side by side.
SRC="$OUT/src"
rm -rf "$SRC"
mkdir "$SRC"
cp -r "$EXAMPLES/l3fwd" "$EXAMPLES/common" "$SRC/"

# pcap ports do not offer RX checksum offload; requesting it makes
# rte_eth_dev_configure fail. Request no RX offloads instead.
MAIN="$SRC/l3fwd/main.c"
PATTERN='\.offloads = RTE_ETH_RX_OFFLOAD_CHECKSUM,'
if ! grep -q "$PATTERN" "$MAIN"; then
    echo "build-c-l3fwd: pattern '$PATTERN' not found in $MAIN" >&2
    exit 1
fi
sed -i "s|$PATTERN|.offloads = 0, /* l3fwd-rs: no RX checksum offload on virtual ports */|" "$MAIN"

make -s -C "$SRC/l3fwd" >/dev/null
# Replace by rename: a running binary cannot be overwritten in place.
cp "$SRC/l3fwd/build/l3fwd-shared" "$BIN.tmp"
mv -f "$BIN.tmp" "$BIN"
