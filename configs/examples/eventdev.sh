#!/bin/sh
# Eventdev mode (C l3fwd's --mode=eventdev) on DPDK's software event device:
#
#   The eth RX adapter turns each packet received on the ports into an
#   event; the event device (event_sw0, a software scheduler) hands the
#   events to the worker lcores' event ports, keeping each flow's order
#   (--eventq-sched=atomic, the default; ordered and parallel are the
#   others); a worker looks its events up as poll mode does and forwards
#   them to the eth TX adapter, which sends them.
#
#   -l 0-1 -s 0x2: lcore 0 is the worker, lcore 1 a service core running
#   the scheduler and both adapters (without -s the set-up fails: "needs a
#   service core"). --config has no meaning here (every worker takes events
#   from every port), and C refuses it, as l3fwd-rs does. Each port gets
#   --event-eth-rxqs RX queues (default 1) and one TX queue, the adapters'.
#
# Two workers on a two-CPU machine: --lcores 0@0,1@1,2@0 -s 0x2 (workers 0
# and 2 share CPU 0, the service core has CPU 1).
#
# Event vectors (--event-vector [--event-vector-size N] [--event-vector-tmo
# NS], C's options and defaults, 32 and 1000000) need an RX adapter that is
# an internal port (a hardware event device): on event_sw, whose software
# RX adapter loses vectors in DPDK 22.11, l3fwd-rs refuses them in one line.
#
# Run it from anywhere after `make build`; L3FWD, GEN (absolute paths) and OUT
# override the binaries and the output directory.
set -eu
cd "$(dirname "$0")/../.."
L3FWD=${L3FWD:-target/release/l3fwd-rs}
GEN=${GEN:-target/release/l3fwd-gen}
OUT=${OUT:-out/examples/eventdev}
mkdir -p "$OUT"

"$GEN" --out "$OUT/in0.pcap" --count 1000 --seed 1
"$GEN" --out "$OUT/in1.pcap" --count 1000 --seed 2

"$L3FWD" -l 0-1 -s 0x2 --no-huge -m 1024 --no-pci --file-prefix l3fwd-ex-eventdev \
    --vdev=event_sw0 \
    --vdev=net_pcap0,rx_pcap="$OUT/in0.pcap",tx_pcap="$OUT/out0.pcap" \
    --vdev=net_pcap1,rx_pcap="$OUT/in1.pcap",tx_pcap="$OUT/out1.pcap" \
    -- -p 0x3 --mode=eventdev --eventq-sched=atomic --duration 3

ls -l "$OUT"
