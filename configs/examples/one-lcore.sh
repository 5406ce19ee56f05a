#!/bin/sh
# One forwarding lcore, two ports: the smallest l3fwd setup.
#
#   lcore 0 polls RX queue 0 of port 0 and RX queue 0 of port 1, and sends on
#   TX queue 0 of both ports (one TX queue per lcore per port).
#
# The ports are virtual (net_pcap): each reads its input file once and writes
# what it sends to its output file, so the run needs no NIC, no hugepages and
# no root beyond what DPDK's runtime directory needs. The forwarder stops by
# itself after --duration seconds, flushes its TX buffers, closes the ports
# (which completes the output files) and prints its totals.
#
# Run it from anywhere after `make build`; L3FWD, GEN (absolute paths) and OUT
# override the binaries and the output directory.
set -eu
cd "$(dirname "$0")/../.."
L3FWD=${L3FWD:-target/release/l3fwd-rs}
GEN=${GEN:-target/release/l3fwd-gen}
OUT=${OUT:-out/examples/one-lcore}
mkdir -p "$OUT"

# 1000 frames per port aimed at the default LPM routes (configs/lpm_v4.cfg,
# configs/lpm_v6.cfg): mostly IPv4 and IPv6 to ports 0 and 1, a few invalid
# IPv4 headers and non-IP frames.
"$GEN" --out "$OUT/in0.pcap" --count 1000 --seed 1
"$GEN" --out "$OUT/in1.pcap" --count 1000 --seed 2

# Before `--`, EAL's arguments:
#   -l 0                      one lcore, 0: the main lcore, which forwards too
#   --no-huge -m 1024         1 GiB of ordinary memory instead of hugepages
#   --no-pci                  do not probe PCI devices: the vdevs are the ports
#   --file-prefix NAME        runtime files of this process, apart from others'
#   --vdev=net_pcapN,...      port N: one RX queue per rx_pcap=, one TX queue
#                             per tx_pcap=
# After `--`, l3fwd's, as for the C sample:
#   -p 0x3                    ports 0 and 1
#   --config "(p,q,l),..."    RX queue q of port p is polled by lcore l
#   --duration 3              l3fwd-rs only: stop after 3 s (else Ctrl-C)
"$L3FWD" -l 0 --no-huge -m 1024 --no-pci --file-prefix l3fwd-ex-one-lcore \
    --vdev=net_pcap0,rx_pcap="$OUT/in0.pcap",tx_pcap="$OUT/out0.pcap" \
    --vdev=net_pcap1,rx_pcap="$OUT/in1.pcap",tx_pcap="$OUT/out1.pcap" \
    -- -p 0x3 --config "(0,0,0),(1,0,0)" --duration 3

# out0.pcap holds what was routed to port 0, from either input: frames to
# 198.18.0.0/24 and 2001:200::/64, plus the misses and non-IP frames that
# came in on port 0 (they go back out of their input port). Invalid IPv4
# headers are dropped and counted in the summary.
ls -l "$OUT"
