#!/bin/sh
# Two forwarding lcores, one per port:
#
#   lcore 0 polls RX queue 0 of port 0, lcore 1 polls RX queue 0 of port 1.
#   Either may route a packet to either port, so each lcore gets its own TX
#   queue on every port: TX queue 0 belongs to lcore 0, TX queue 1 to
#   lcore 1 (the index of the lcore among the enabled ones, as in the C
#   sample). No queue is shared, so no lock is needed.
#
# A pcap port has one TX queue per tx_pcap= argument, so each port below
# gets two output files, one per lcore. With a single tx_pcap= the setup
# fails: "port 0: 2 lcores need 2 TX queues, but the port supports at most 1".
#
# Needs two CPUs for lcores 0 and 1; on a one-CPU machine use
# `--lcores 0@0,1@0` instead of `-l 0,1` (both lcores on CPU 0: it runs, but
# they share the CPU).
#
# Run it from anywhere after `make build`; L3FWD, GEN (absolute paths) and OUT
# override the binaries and the output directory.
set -eu
cd "$(dirname "$0")/../.."
L3FWD=${L3FWD:-target/release/l3fwd-rs}
GEN=${GEN:-target/release/l3fwd-gen}
OUT=${OUT:-out/examples/two-lcores}
mkdir -p "$OUT"

"$GEN" --out "$OUT/in0.pcap" --count 1000 --seed 1
"$GEN" --out "$OUT/in1.pcap" --count 1000 --seed 2

# --stats-interval 1 prints per-port rates every second; with more than one
# lcore the summary also has a line per lcore.
"$L3FWD" -l 0,1 --no-huge -m 1024 --no-pci --file-prefix l3fwd-ex-two-lcores \
    --vdev=net_pcap0,rx_pcap="$OUT/in0.pcap",tx_pcap="$OUT/out0-txq0.pcap",tx_pcap="$OUT/out0-txq1.pcap" \
    --vdev=net_pcap1,rx_pcap="$OUT/in1.pcap",tx_pcap="$OUT/out1-txq0.pcap",tx_pcap="$OUT/out1-txq1.pcap" \
    -- -p 0x3 --config "(0,0,0),(1,0,1)" --stats-interval 1 --duration 3

# out0-txq0.pcap: what lcore 0 (input port 0) sent on port 0;
# out0-txq1.pcap: what lcore 1 (input port 1) sent on port 0; and so on.
ls -l "$OUT"
