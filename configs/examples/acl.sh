#!/bin/sh
# ACL mode: deny and route rules on the 5-tuple (rte_acl), one lcore and two
# ports.
#
# --lookup=acl reads ClassBench rule files, both required (there are no
# built-in ones): '@' lines deny, 'R' lines route to the port in their last
# field, and the first line that matches wins. configs/acl_v4.cfg and
# acl_v6.cfg are commented examples aimed at l3fwd-gen's traffic. A packet
# no rule matches, and any non-IP frame, is dropped; the summary counts
# those drops as "no-rule" and denied ones as "denied". --alg picks rte_acl's
# classify method (scalar, sse, avx2, avx512x16, ...; default: the best the
# CPU has).
#
# Run it from anywhere after `make build`; L3FWD, GEN (absolute paths) and OUT
# override the binaries and the output directory.
set -eu
cd "$(dirname "$0")/../.."
L3FWD=${L3FWD:-target/release/l3fwd-rs}
GEN=${GEN:-target/release/l3fwd-gen}
OUT=${OUT:-out/examples/acl}
mkdir -p "$OUT"

# IPv4 and IPv6, TCP and UDP, some invalid IPv4 headers and non-IP frames.
"$GEN" --out "$OUT/in0.pcap" --count 1000 --seed 1
"$GEN" --out "$OUT/in1.pcap" --count 1000 --seed 2

"$L3FWD" -l 0 --no-huge -m 1024 --no-pci --file-prefix l3fwd-ex-acl \
    --vdev=net_pcap0,rx_pcap="$OUT/in0.pcap",tx_pcap="$OUT/out0.pcap" \
    --vdev=net_pcap1,rx_pcap="$OUT/in1.pcap",tx_pcap="$OUT/out1.pcap" \
    -- -p 0x3 --config "(0,0,0),(1,0,0)" --lookup=acl \
    --rule_ipv4=configs/acl_v4.cfg --rule_ipv6=configs/acl_v6.cfg --alg=scalar --duration 2

ls -l "$OUT"
