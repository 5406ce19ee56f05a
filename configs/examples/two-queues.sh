#!/bin/sh
# Two RX queues per port, spread over two lcores:
#
#   lcore 0 polls queue 0 of port 0 and queue 0 of port 1,
#   lcore 1 polls queue 1 of port 0 and queue 1 of port 1.
#
# This is how l3fwd scales on a real NIC: the NIC hashes each packet's
# addresses (RSS, which l3fwd-rs turns on whenever a port has more than one
# RX queue) and spreads flows over the queues; each lcore then owns a share
# of every port's traffic. In --config, a port's queue ids must appear as
# 0, 1, 2... in order; the number of RX queues of a port is how many of its
# tuples there are.
#
# A pcap port has one RX queue per rx_pcap= argument, each reading its own
# file (there is no RSS in software), and one TX queue per tx_pcap=: two
# lcores need two TX queues on every port. Two queues polled by ONE lcore
# also work: `-l 0` and --config "(0,0,0),(0,1,0),(1,0,0),(1,1,0)", with a
# single tx_pcap= per port.
#
# Needs two CPUs (see two-lcores.sh for a one-CPU variant). Run it from
# anywhere after `make build`; L3FWD, GEN (absolute paths) and OUT override
# the binaries and the output directory.
set -eu
cd "$(dirname "$0")/../.."
L3FWD=${L3FWD:-target/release/l3fwd-rs}
GEN=${GEN:-target/release/l3fwd-gen}
OUT=${OUT:-out/examples/two-queues}
mkdir -p "$OUT"

for q in 0 1; do
    "$GEN" --out "$OUT/in0-rxq$q.pcap" --count 500 --seed "1$q"
    "$GEN" --out "$OUT/in1-rxq$q.pcap" --count 500 --seed "2$q"
done

"$L3FWD" -l 0,1 --no-huge -m 1024 --no-pci --file-prefix l3fwd-ex-two-queues \
    --vdev=net_pcap0,rx_pcap="$OUT/in0-rxq0.pcap",rx_pcap="$OUT/in0-rxq1.pcap",tx_pcap="$OUT/out0-txq0.pcap",tx_pcap="$OUT/out0-txq1.pcap" \
    --vdev=net_pcap1,rx_pcap="$OUT/in1-rxq0.pcap",rx_pcap="$OUT/in1-rxq1.pcap",tx_pcap="$OUT/out1-txq0.pcap",tx_pcap="$OUT/out1-txq1.pcap" \
    -- -p 0x3 --config "(0,0,0),(0,1,1),(1,0,0),(1,1,1)" --duration 3

# The summary shows packets per RX queue of each port, and what each lcore
# did; lcore 0 sent on TX queue 0 of each port, lcore 1 on TX queue 1.
ls -l "$OUT"
