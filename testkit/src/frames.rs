//! Hand-built test frames (etherparse) and checks on forwarded ones.

use etherparse::{PacketBuilder, SlicedPacket};

/// Source MAC of the frames the tests send.
pub const CLIENT_MAC: [u8; 6] = [0x02, 0, 0, 0, 0xee, 0x01];

/// The pcap PMD's MAC for port `p`: 02:"pcap":p.
pub fn port_mac(p: u8) -> [u8; 6] {
    [0x02, 0x70, 0x63, 0x61, 0x70, p]
}

/// l3fwd's default next-hop MAC for port `p`.
pub fn next_hop_mac(p: u8) -> [u8; 6] {
    [0x02, 0, 0, 0, 0, p]
}

/// An Ethernet/IPv4/UDP frame with a valid checksum and `payload` bytes.
pub fn udp4(src: [u8; 4], dst: [u8; 4], ttl: u8, payload: usize) -> Vec<u8> {
    udp4_ports(src, dst, (1024, 9), ttl, payload)
}

/// The flow of the default exact-match rule of port `n`
/// (`R198.18.n.0 198.18.n.1 9 9 0x11 n`).
pub fn em_flow4(n: u8) -> Vec<u8> {
    udp4_ports([198, 18, n, 1], [198, 18, n, 0], (9, 9), 64, 26)
}

/// As [`udp4`], with UDP ports `(source, destination)`.
pub fn udp4_ports(src: [u8; 4], dst: [u8; 4], ports: (u16, u16), ttl: u8, payload: usize) -> Vec<u8> {
    let b = PacketBuilder::ethernet2(CLIENT_MAC, port_mac(0))
        .ipv4(src, dst, ttl)
        .udp(ports.0, ports.1);
    let mut f = Vec::new();
    b.write(&mut f, &vec![0xab; payload]).expect("build frame");
    f
}

/// An Ethernet/IPv6/UDP frame.
pub fn udp6(src: [u8; 16], dst: [u8; 16], hop_limit: u8, payload: usize) -> Vec<u8> {
    let b = PacketBuilder::ethernet2(CLIENT_MAC, port_mac(0))
        .ipv6(src, dst, hop_limit)
        .udp(1024, 9);
    let mut f = Vec::new();
    b.write(&mut f, &vec![0xcd; payload]).expect("build frame");
    f
}

/// `2001:200:0:<n>::<last>`, inside the default IPv6 route to port n.
pub fn v6_in_route(n: u16, last: u8) -> [u8; 16] {
    let mut a = [0u8; 16];
    a[..4].copy_from_slice(&[0x20, 0x01, 0x02, 0x00]);
    a[6..8].copy_from_slice(&n.to_be_bytes());
    a[15] = last;
    a
}

/// An ARP-like non-IP frame.
pub fn non_ip(len: usize) -> Vec<u8> {
    let mut f = vec![0x11; len];
    f[..6].copy_from_slice(&[0xff; 6]);
    f[6..12].copy_from_slice(&CLIENT_MAC);
    f[12..14].copy_from_slice(&[0x08, 0x06]);
    f
}

/// IPv4 header checksum over the 20 bytes at `ip`, with the field itself.
pub fn ipv4_checksum_ok(ip: &[u8]) -> bool {
    let mut sum: u32 = ip[..20]
        .chunks(2)
        .map(|w| u32::from(u16::from_be_bytes([w[0], w[1]])))
        .sum();
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    sum == 0xffff
}

/// Asserts `out` is `sent` forwarded out of `port`: MACs rewritten, IPv4
/// TTL one less with a valid checksum, every other byte unchanged.
pub fn assert_forwarded(sent: &[u8], out: &[u8], port: u8, dest_mac: [u8; 6]) {
    assert_eq!(out.len(), sent.len(), "length changed");
    assert_eq!(&out[..6], &dest_mac, "destination MAC");
    assert_eq!(&out[6..12], &port_mac(port), "source MAC");
    let parsed = SlicedPacket::from_ethernet(out).expect("forwarded frame parses");
    match parsed.net {
        Some(etherparse::NetSlice::Ipv4(_)) => {
            assert_eq!(out[22], sent[22].wrapping_sub(1), "TTL");
            assert!(ipv4_checksum_ok(&out[14..34]), "IPv4 checksum");
            assert_eq!(&out[12..22], &sent[12..22]);
            assert_eq!(&out[26..], &sent[26..]);
        }
        _ => assert_eq!(&out[12..], &sent[12..], "bytes after the MACs"),
    }
}
