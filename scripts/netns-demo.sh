#!/usr/bin/env bash
# l3fwd-rs routing the kernel's own traffic between two network namespaces.
#
#   scripts/netns-demo.sh run     # set up, ping + TCP through l3fwd-rs, tear down
#   scripts/netns-demo.sh clean   # remove what an interrupted run left
#
# PMD=af_xdp (default; af_packet if af_xdp cannot start), af_packet, tap, or
# kernel: no l3fwd-rs, the Linux kernel forwarding in a middle namespace on
# the same veth set-up (the baseline). SECS: length of the TCP transfer.
# Needs root, iproute2, ethtool, iputils-ping, iperf3 (make deps). Uses only
# documentation addresses (192.0.2.0/24, 198.51.100.0/24, 2001:db8::/32)
# inside namespaces: nothing leaves the machine.
set -euo pipefail

PMD=${PMD:-af_xdp}
SECS=${SECS:-3}
BIN=${BIN:-target/release/l3fwd-rs}
LCORE=${LCORE:-1}
NS=(l3demo-0 l3demo-1)
ROUTER=l3demo-router
ROOT_IF=(l3demo-r0 l3demo-r1)   # veth ends on the forwarder's side
SITE_IF=(l3demo-n0 l3demo-n1)   # their peers in the namespaces
SITE_MAC=(02:0a:00:00:00:00 02:0a:00:00:00:01)
PORT_MAC=(02:0d:00:00:00:00 02:0d:00:00:00:01)
ADDR4=(192.0.2.2 198.51.100.2)
GW4=(192.0.2.1 198.51.100.1)
ADDR6=(2001:db8:0:1::2 2001:db8:0:2::2)
GW6=(2001:db8:0:1::1 2001:db8:0:2::1)
PREFIX=l3fwd-demo
WORK=/tmp/l3fwd-demo

clean() {
	if [ -f $WORK/l3fwd.pid ]; then
		kill -INT "$(cat $WORK/l3fwd.pid)" 2>/dev/null || true
		sleep 1
	fi
	for ns in "${NS[@]}" $ROUTER; do ip netns del "$ns" 2>/dev/null || true; done
	for i in 0 1; do
		ip link del "${ROOT_IF[$i]}" 2>/dev/null || true
		ip link del "${SITE_IF[$i]}" 2>/dev/null || true
	done
	rm -rf "/var/run/dpdk/$PREFIX" $WORK
}

# Address, default routes via the made-up gateway, static neighbour
# entries naming the forwarder's port (l3fwd answers no ARP or ND).
configure_site() {
	local i=$1 ns=${NS[$1]} dev=${SITE_IF[$1]}
	ip netns exec "$ns" ethtool -K "$dev" tx off >/dev/null
	ip -n "$ns" link set "$dev" address "${SITE_MAC[$i]}" addrgenmode none up
	ip -n "$ns" addr add "${ADDR4[$i]}/24" dev "$dev"
	ip -n "$ns" -6 addr add "${ADDR6[$i]}/64" dev "$dev" nodad
	ip -n "$ns" route add default via "${GW4[$i]}"
	ip -n "$ns" -6 route add default via "${GW6[$i]}"
	ip -n "$ns" neigh add "${GW4[$i]}" lladdr "${PORT_MAC[$i]}" dev "$dev" nud permanent
	ip -n "$ns" -6 neigh add "${GW6[$i]}" lladdr "${PORT_MAC[$i]}" dev "$dev" nud permanent
}

make_veths() {
	for i in 0 1; do
		ip netns add "${NS[$i]}"
		ip link add "${ROOT_IF[$i]}" address "${PORT_MAC[$i]}" type veth \
			peer name "${SITE_IF[$i]}" netns "${NS[$i]}"
		ethtool -K "${ROOT_IF[$i]}" tx off >/dev/null
		echo 1 >"/proc/sys/net/ipv6/conf/${ROOT_IF[$i]}/disable_ipv6"
		configure_site "$i"
	done
}

# The baseline: the root ends in a middle namespace that forwards.
kernel_router() {
	ip netns add $ROUTER
	ip netns exec $ROUTER sysctl -qw net.ipv4.ip_forward=1 net.ipv6.conf.all.forwarding=1
	for i in 0 1; do
		ip link set "${ROOT_IF[$i]}" netns $ROUTER
		ip netns exec $ROUTER sysctl -qw "net.ipv6.conf.${ROOT_IF[$i]}.disable_ipv6=0"
		ip -n $ROUTER link set "${ROOT_IF[$i]}" up
		ip -n $ROUTER addr add "${GW4[$i]}/24" dev "${ROOT_IF[$i]}"
		ip -n $ROUTER -6 addr add "${GW6[$i]}/64" dev "${ROOT_IF[$i]}" nodad
		# Static next hops, as l3fwd-rs has (--eth-dest): no ARP/ND wait.
		for a in "${ADDR4[$i]}" "${ADDR6[$i]}"; do
			ip -n $ROUTER neigh add "$a" lladdr "${SITE_MAC[$i]}" dev "${ROOT_IF[$i]}" nud permanent
		done
	done
}

# Starts l3fwd-rs on $1 (af_xdp, af_packet, tap); fails if it does not
# forward within 20 s.
start_l3fwd() {
	local pmd=$1 vdevs=()
	for i in 0 1; do
		case $pmd in
		af_xdp) vdevs+=("--vdev=net_af_xdp$i,iface=${ROOT_IF[$i]}") ;;
		af_packet) vdevs+=("--vdev=net_af_packet$i,iface=${ROOT_IF[$i]}") ;;
		tap) vdevs+=("--vdev=net_tap$i,iface=${SITE_IF[$i]},mac=${PORT_MAC[$i]}") ;;
		esac
	done
	printf 'R192.0.2.0/24 0\nR198.51.100.0/24 1\n' >$WORK/v4.cfg
	printf 'R2001:db8:0:1::/64 0\nR2001:db8:0:2::/64 1\n' >$WORK/v6.cfg
	"$BIN" -l "$LCORE" --no-huge -m 512 --no-pci --file-prefix $PREFIX "${vdevs[@]}" \
		-- -p 0x3 --config "(0,0,$LCORE),(1,0,$LCORE)" \
		--rule_ipv4=$WORK/v4.cfg --rule_ipv6=$WORK/v6.cfg \
		--eth-dest=0,${SITE_MAC[0]} --eth-dest=1,${SITE_MAC[1]} --stats-interval 1 \
		>$WORK/l3fwd.out 2>$WORK/l3fwd.err &
	echo $! >$WORK/l3fwd.pid
	for _ in $(seq 200); do
		grep -q ': forwarding' $WORK/l3fwd.err && return 0
		kill -0 "$(cat $WORK/l3fwd.pid)" 2>/dev/null || break
		sleep 0.1
	done
	echo "l3fwd-rs on $pmd did not start:" >&2
	grep -v '^$' $WORK/l3fwd.err | tail -5 >&2
	kill -INT "$(cat $WORK/l3fwd.pid)" 2>/dev/null || true
	rm -f $WORK/l3fwd.pid
	return 1
}

traffic() {
	local what=$1
	for dst in ${ADDR4[1]} ${ADDR6[1]}; do
		ip netns exec "${NS[0]}" ping -q -c 50 -i 0.01 "$dst" |
			awk -v w="$what" -v d="$dst" '/transmitted/ {loss=$0} /^rtt/ {split($4, r, "/"); printf "%-22s ping %-16s rtt avg %s ms (%s)\n", w, d, r[2], loss}'
	done
	ip netns exec "${NS[1]}" iperf3 -s -1 -D -B "${ADDR4[1]}" -I $WORK/iperf3.pid
	sleep 0.3
	ip netns exec "${NS[0]}" iperf3 -c "${ADDR4[1]}" -t "$SECS" -f m |
		awk -v w="$what" '/receiver/ {printf "%-22s TCP %s %s over %s s\n", w, $7, $8, '"$SECS"'}'
}

run() {
	[ "$(id -u)" = 0 ] || { echo "needs root (network namespaces)" >&2; exit 1; }
	clean
	mkdir -p $WORK
	trap clean EXIT
	local pmd=$PMD
	if [ "$pmd" = kernel ]; then
		make_veths
		kernel_router
		traffic "Linux kernel"
		return
	fi
	if [ "$pmd" = tap ]; then
		for i in 0 1; do ip netns add "${NS[$i]}"; done
		start_l3fwd tap
		for i in 0 1; do
			ip link set "${SITE_IF[$i]}" netns "${NS[$i]}"
			configure_site "$i"
		done
	else
		make_veths
		for i in 0 1; do ip link set "${ROOT_IF[$i]}" up; done
		if ! start_l3fwd "$pmd"; then
			[ "$pmd" = af_xdp ] || exit 1
			echo "af_xdp unavailable here: using af_packet" >&2
			pmd=af_packet
			start_l3fwd $pmd
		fi
	fi
	traffic "l3fwd-rs $pmd"
	kill -INT "$(cat $WORK/l3fwd.pid)"
	wait "$(cat $WORK/l3fwd.pid)" 2>/dev/null || true
	rm -f $WORK/l3fwd.pid
	echo "--- l3fwd-rs rates (one line a second) and summary"
	grep -v '^$' $WORK/l3fwd.out
}

case ${1:-run} in
run) run ;;
clean) clean ;;
*) echo "usage: $0 [run|clean]" >&2; exit 2 ;;
esac
