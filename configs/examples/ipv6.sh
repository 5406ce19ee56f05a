#!/bin/sh
# IPv6 forwarding, in both lookup modes, one lcore and two ports.
#
# LPM (the default mode) always loads both rule files and tells IPv4 from
# IPv6 by the Ethernet type, so IPv6 needs no flag: the destination of each
# IPv6 frame goes to rte_lpm6 (one bulk lookup per burst), its routes from
# --rule_ipv6 (R<prefix>/<depth> <port> lines). As in the C sample, rule
# files are read only as a pair: --rule_ipv6 without --rule_ipv4 is
# ignored (with a warning) and the built-in tables are used.
#
# Exact match (-E, or --lookup=em) fills ONE table, as the C sample does:
# the IPv4 5-tuples of --rule_ipv4 without --ipv6, the IPv6 ones of
# --rule_ipv6 with it; packets of the other
# family all miss and go back out of their input port.
#
# IPv6 frames are not changed beyond their MAC addresses: no hop-limit
# decrement, as in the C sample (its RFC 1812 checks are IPv4 only).
#
# Run it from anywhere after `make build`; L3FWD, GEN (absolute paths) and OUT
# override the binaries and the output directory.
set -eu
cd "$(dirname "$0")/../.."
L3FWD=${L3FWD:-target/release/l3fwd-rs}
GEN=${GEN:-target/release/l3fwd-gen}
OUT=${OUT:-out/examples/ipv6}
mkdir -p "$OUT"

EAL="--no-huge -m 1024 --no-pci"

# IPv6-only traffic aimed at the LPM routes...
"$GEN" --out "$OUT/lpm-in0.pcap" --count 1000 --seed 1 --v4 0 --v6 1 --invalid 0 --non-ip 0
"$GEN" --out "$OUT/lpm-in1.pcap" --count 1000 --seed 2 --v4 0 --v6 1 --invalid 0 --non-ip 0
# ...and at the exact-match 5-tuples (--em: mostly hits, some near misses).
"$GEN" --out "$OUT/em-in0.pcap" --count 1000 --seed 1 --v4 0 --v6 1 --invalid 0 --non-ip 0 --em
"$GEN" --out "$OUT/em-in1.pcap" --count 1000 --seed 2 --v4 0 --v6 1 --invalid 0 --non-ip 0 --em

echo "== LPM, IPv6 routes of configs/lpm_v6.cfg"
"$L3FWD" -l 0 $EAL --file-prefix l3fwd-ex-ipv6-lpm \
    --vdev=net_pcap0,rx_pcap="$OUT/lpm-in0.pcap",tx_pcap="$OUT/lpm-out0.pcap" \
    --vdev=net_pcap1,rx_pcap="$OUT/lpm-in1.pcap",tx_pcap="$OUT/lpm-out1.pcap" \
    -- -p 0x3 --config "(0,0,0),(1,0,0)" \
    --rule_ipv4=configs/lpm_v4.cfg --rule_ipv6=configs/lpm_v6.cfg --duration 2

echo "== Exact match, IPv6 5-tuples of configs/em_v6.cfg"
"$L3FWD" -l 0 $EAL --file-prefix l3fwd-ex-ipv6-em \
    --vdev=net_pcap0,rx_pcap="$OUT/em-in0.pcap",tx_pcap="$OUT/em-out0.pcap" \
    --vdev=net_pcap1,rx_pcap="$OUT/em-in1.pcap",tx_pcap="$OUT/em-out1.pcap" \
    -- -p 0x3 --config "(0,0,0),(1,0,0)" -E --ipv6 \
    --rule_ipv4=configs/em_v4.cfg --rule_ipv6=configs/em_v6.cfg --duration 2

ls -l "$OUT"
