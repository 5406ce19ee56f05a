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
#   C_L3FWD_LPM_RULES=N   the IPv4 LPM table holds N rules instead of 1024...
#   C_L3FWD_LPM_TBL8S=N   ...and N tbl8 groups instead of 256 (one per /24
#                         holding a longer prefix); like --lpm-max-rules and
#                         --lpm-tbl8s, for large route tables. FIB mode's IPv4
#                         table (65536 routes, 32768 tbl8 groups) gets these
#                         sizes too where they are larger
set -euo pipefail

EXAMPLES=${DPDK_EXAMPLES:-/usr/share/dpdk/examples}
OUT=${1:-target/c-l3fwd}
BIN="$OUT/dpdk-l3fwd"
MIN_MBUFS=${C_L3FWD_MIN_MBUFS:-8192}
SEQUENTIAL=${C_L3FWD_SEQUENTIAL:-0}
LPM_RULES=${C_L3FWD_LPM_RULES:-1024}
LPM_TBL8S=${C_L3FWD_LPM_TBL8S:-256}
VARIANT="min_mbufs=$MIN_MBUFS sequential=$SEQUENTIAL"
# The stock LPM sizes leave the variant as it was, so existing builds stay valid.
if [[ "$LPM_RULES" != 1024 || "$LPM_TBL8S" != 256 ]]; then
    VARIANT="$VARIANT lpm_rules=$LPM_RULES lpm_tbl8s=$LPM_TBL8S"
fi

# Test binaries may run this concurrently: one build at a time.
mkdir -p "$OUT"
exec 9>"$OUT/.lock"
flock 9

# Idempotent: rebuild only when a source (or this script's patch) is newer.
if [[ -x "$BIN" ]] && [[ "$(cat "$OUT/.variant" 2>/dev/null)" == "$VARIANT" ]] &&
    [[ -z "$(find "$EXAMPLES/l3fwd" "$EXAMPLES/common" "${BASH_SOURCE[0]}" -newer "$BIN" -print -quit)" ]]; then
    exit 0
fi
for setting in "C_L3FWD_MIN_MBUFS=$MIN_MBUFS" "C_L3FWD_LPM_RULES=$LPM_RULES" "C_L3FWD_LPM_TBL8S=$LPM_TBL8S"; do
    if ! [[ "${setting#*=}" =~ ^[1-9][0-9]*$ ]]; then
        echo "build-c-l3fwd: ${setting%%=*} must be a positive number, not '${setting#*=}'" >&2
        exit 1
    fi
done

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
# Event mode installs --parse-ptype's callback on poll-mode queues only, so
# on ports without packet types (pcap) every frame looks non-IP and goes
# back out of its input port. Install it on event mode's RX queues too,
# before the service cores start the RX adapter polling them (after, the
# first bursts could arrive without packet types).
patch "$MAIN" '^..l3fwd_event_service_setup();$' \
    '\t\t{ /* l3fwd-rs: ptype parser in event mode too */\n\t\tRTE_ETH_FOREACH_DEV(portid)\n\t\t\tfor (queue = 0; (enabled_port_mask \& (1 << portid)) \&\& queue < evt_rsrc->eth_rx_queues; queue++)\n\t\t\t\tif (prepare_ptype_parser(portid, queue) == 0)\n\t\t\t\t\trte_exit(EXIT_FAILURE, "ptype check fails\\n");\n\t\tl3fwd_event_service_setup(); }'
if [[ "$MIN_MBUFS" != 8192 ]]; then
    patch "$MAIN" '(unsigned)8192)' "(unsigned)$MIN_MBUFS) /* l3fwd-rs: C_L3FWD_MIN_MBUFS */"
fi
if [[ "$LPM_RULES" != 1024 || "$LPM_TBL8S" != 256 ]]; then
    LPM="$SRC/l3fwd/l3fwd_lpm.c"
    patch "$LPM" '#define IPV4_L3FWD_LPM_MAX_RULES         1024$' \
        "#define IPV4_L3FWD_LPM_MAX_RULES $LPM_RULES /* l3fwd-rs: C_L3FWD_LPM_RULES */"
    patch "$LPM" '#define IPV4_L3FWD_LPM_NUMBER_TBL8S (1 << 8)$' \
        "#define IPV4_L3FWD_LPM_NUMBER_TBL8S $LPM_TBL8S /* l3fwd-rs: C_L3FWD_LPM_TBL8S */"
fi
# FIB mode sizes its IPv4 table apart from the LPM (setup_fib): 65536 routes
# and 32768 tbl8 groups. Larger LPM sizes raise it too, so that a build takes
# the same routes in both modes (stock, a 1M-route table stops at entry 66596).
FIB="$SRC/l3fwd/l3fwd_fib.c"
if ((LPM_RULES > 65536)); then
    patch "$FIB" 'config_ipv4\.max_routes = (1 << 16);$' \
        "config_ipv4.max_routes = $LPM_RULES; /* l3fwd-rs: C_L3FWD_LPM_RULES */"
fi
if ((LPM_TBL8S > 32768)); then
    patch "$FIB" 'config_ipv4\.dir24_8\.num_tbl8 = (1 << 15);$' \
        "config_ipv4.dir24_8.num_tbl8 = $LPM_TBL8S; /* l3fwd-rs: C_L3FWD_LPM_TBL8S */"
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
