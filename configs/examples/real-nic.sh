#!/bin/sh
# l3fwd-rs on two real NIC ports: hugepages, vfio-pci, two lcores, RSS.
#
# Not run by the project's tests, which have no NIC: it needs root, an IOMMU
# (or vfio's no-IOMMU mode) and two DPDK-capable ports that carry nothing
# else, since binding them to vfio-pci takes them away from the kernel.
#
#   PORT0=0000:03:00.0 PORT1=0000:03:00.1 configs/examples/real-nic.sh
#
# PCI addresses: `dpdk-devbind.py --status`. Optional: NEXTHOP0 / NEXTHOP1,
# the MAC of the device each port sends to (default 02:00:00:00:00:0N, which
# a directly attached traffic generator in promiscuous mode accepts);
# LCORES (default 1,2); DRY_RUN=1 prints the commands without running them.
#
# Traffic: the default routes (configs/lpm_v4.cfg, configs/lpm_v6.cfg) send
# 198.18.0.0/24 and 2001:200::/64 to port 0, 198.18.1.0/24 and
# 2001:200:0:1::/64 to port 1; aim the generator's streams at those.
set -eu
cd "$(dirname "$0")/../.."
: "${PORT0:?set PORT0 and PORT1 to PCI addresses, e.g. PORT0=0000:03:00.0 (see dpdk-devbind.py --status)}"
: "${PORT1:?set PORT1 to a PCI address, e.g. PORT1=0000:03:00.1}"
L3FWD=${L3FWD:-target/release/l3fwd-rs}
NEXTHOP0=${NEXTHOP0:-02:00:00:00:00:00}
NEXTHOP1=${NEXTHOP1:-02:00:00:00:00:01}
LCORES=${LCORES:-1,2}
FIRST=${LCORES%%,*}
SECOND=${LCORES#*,}

run() {
    echo "+ $*"
    [ "${DRY_RUN:-0}" = 1 ] || "$@"
}

# 1. Hugepages: 1024 pages of 2 MiB = 2 GiB, plenty for the mbuf pool and
#    the tables of either mode (the virtual-port examples run in 1 GiB).
run sh -c 'echo 1024 > /sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages'

# 2. Give both ports to vfio-pci, the driver DPDK's PMDs map from user space.
#    To give them back: dpdk-devbind.py --bind=<their kernel driver> PORT0 PORT1
run modprobe vfio-pci
run dpdk-devbind.py --bind=vfio-pci "$PORT0" "$PORT1"

# 3. Forward. EAL arguments:
#    -l $LCORES     two lcores; leave CPU 0 to the OS, and pick CPUs on the
#                   NIC's NUMA node (/sys/bus/pci/devices/$PORT0/numa_node).
#                   The first is the main lcore: it forwards too.
#    -n 4           memory channels, for the mempool's object spreading
#    -a PCI         probe only these two devices (port ids follow PCI
#                   address order: port 0 is the lower address)
#    No --no-huge, no --vdev: hugepages and real ports.
# l3fwd arguments:
#    -P             promiscuous: accept frames whatever their destination MAC
#    --config       two RX queues per port, one per lcore: the NIC's RSS
#                   spreads flows over them; each lcore gets one TX queue
#                   per port
#    --eth-dest     the next hop's MAC on each port
#    --stats-interval 1   rates every second; Ctrl-C stops, flushes, closes
run "$L3FWD" -l "$LCORES" -n 4 -a "$PORT0" -a "$PORT1" \
    -- -p 0x3 -P \
    --config "(0,0,$FIRST),(0,1,$SECOND),(1,0,$FIRST),(1,1,$SECOND)" \
    --eth-dest=0,"$NEXTHOP0" --eth-dest=1,"$NEXTHOP1" \
    --stats-interval 1
