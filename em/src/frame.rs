//! Which frames l3fwd looks up, and their keys.
//!
//! The sample's `em_parse_ptype` marks a frame IPv4 + TCP/UDP when the
//! Ethernet type is IPv4, the header length (IHL * 4) is 20 and the protocol
//! is TCP or UDP, and IPv6 + TCP/UDP when the Ethernet type is IPv6 and the
//! next header is TCP or UDP; the version nibble is not looked at. Its burst
//! code (`l3fwd_em_process_packets`) looks up a group of 8 in bulk only if
//! all 8 carry the same such type, and otherwise one by one with the same
//! test, so each frame's fate depends on that test alone. Everything else
//! goes back out of its input port without a lookup.
//!
//! Unlike the sample, no byte past the frame is read: a frame too short for
//! what it announces is a [`EmKey::Runt`].

use crate::key::{Ipv4Key, Ipv6Key};

const ETHER_HDR_LEN: usize = 14;
const ETHER_TYPE_IPV4: [u8; 2] = [0x08, 0x00];
const ETHER_TYPE_IPV6: [u8; 2] = [0x86, 0xdd];
const IPV4_HDR_LEN: usize = 20;
const IPV6_HDR_LEN: usize = 40;
const IPPROTO_TCP: u8 = 6;
const IPPROTO_UDP: u8 = 17;

/// What l3fwd's EM mode does with a frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EmKey {
    /// IPv4 with a 20-byte header carrying TCP or UDP: look this key up.
    V4(Ipv4Key),
    /// IPv6 whose next header is TCP or UDP: look this key up.
    V6(Ipv6Key),
    /// Not looked up: the frame goes back out of its input port.
    NotEligible,
    /// Shorter than its headers (under 14 bytes; IPv4 under 34, or 38 if
    /// eligible; IPv6 under 54, or 58 if eligible): dropped and counted.
    Runt,
}

/// Classifies a frame (Ethernet header first) and extracts its key.
///
/// The key is extracted once and serves both the hash and the compare
/// inside rte_hash. Every read is bounds-checked against `frame`, so a
/// truncated frame is [`EmKey::Runt`] rather than a read past its end.
///
/// ```
/// use em::{key_of, EmKey};
/// // Ethernet + IPv4 (IHL 5, UDP) + UDP ports: 38 bytes are enough.
/// let mut frame = vec![0u8; 12];
/// frame.extend([0x08, 0x00, 0x45, 0, 0, 28, 0, 0, 0, 0, 64, 17, 0, 0]);
/// frame.extend([10, 0, 0, 1, 198, 18, 3, 0, 0x30, 0x39, 0, 9]);
/// assert!(matches!(key_of(&frame), EmKey::V4(_)));
///
/// assert_eq!(key_of(&frame[..37]), EmKey::Runt);      // ports cut off
/// frame[23] = 1;                                      // ICMP: no ports
/// assert_eq!(key_of(&frame), EmKey::NotEligible);
/// frame[12..14].copy_from_slice(&[0x08, 0x06]);       // ARP
/// assert_eq!(key_of(&frame), EmKey::NotEligible);
/// ```
#[inline]
pub fn key_of(frame: &[u8]) -> EmKey {
    match frame.get(12..ETHER_HDR_LEN) {
        None => EmKey::Runt,
        Some(t) if t == ETHER_TYPE_IPV4 => ipv4_key(frame),
        Some(t) if t == ETHER_TYPE_IPV6 => ipv6_key(frame),
        Some(_) => EmKey::NotEligible,
    }
}

#[inline(always)]
fn ipv4_key(frame: &[u8]) -> EmKey {
    if frame.len() < ETHER_HDR_LEN + IPV4_HDR_LEN {
        return EmKey::Runt;
    }
    let ihl = frame[ETHER_HDR_LEN] & 0x0f;
    let proto = frame[ETHER_HDR_LEN + 9];
    if usize::from(ihl) * 4 != IPV4_HDR_LEN || !is_tcp_or_udp(proto) {
        return EmKey::NotEligible;
    }
    match frame[Ipv4Key::FRAME_OFFSET..].first_chunk() {
        Some(bytes) => EmKey::V4(Ipv4Key::from_header(bytes)),
        None => EmKey::Runt,
    }
}

#[inline(always)]
fn ipv6_key(frame: &[u8]) -> EmKey {
    if frame.len() < ETHER_HDR_LEN + IPV6_HDR_LEN {
        return EmKey::Runt;
    }
    if !is_tcp_or_udp(frame[ETHER_HDR_LEN + 6]) {
        return EmKey::NotEligible;
    }
    match frame[Ipv6Key::FRAME_OFFSET..].first_chunk() {
        Some(bytes) => EmKey::V6(Ipv6Key::from_header(bytes)),
        None => EmKey::Runt,
    }
}

fn is_tcp_or_udp(proto: u8) -> bool {
    proto == IPPROTO_TCP || proto == IPPROTO_UDP
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::key::FiveTuple;
    use std::net::{Ipv4Addr, Ipv6Addr};

    /// Frame lengths a key needs: it ends with the two TCP/UDP ports.
    const V4_MIN_LEN: usize = ETHER_HDR_LEN + IPV4_HDR_LEN + 4;
    const V6_MIN_LEN: usize = ETHER_HDR_LEN + IPV6_HDR_LEN + 4;

    /// An Ethernet + IPv4 + UDP/TCP-ports frame with every per-hop field set.
    fn ipv4_frame(version_ihl: u8, proto: u8) -> Vec<u8> {
        let mut f = vec![0xee; 12]; // MACs
        f.extend_from_slice(&ETHER_TYPE_IPV4);
        f.extend_from_slice(&[version_ihl, 0x00, 0x00, 0x2e]); // ver/IHL, TOS, total length
        f.extend_from_slice(&[0x12, 0x34, 0x40, 0x00]); // id, flags/fragment
        f.extend_from_slice(&[64, proto, 0xbe, 0xef]); // TTL, proto, checksum
        f.extend_from_slice(&[10, 0, 0, 1, 198, 18, 3, 0]); // src, dst
        f.extend_from_slice(&[0x30, 0x39, 0x00, 0x09]); // sport 12345, dport 9
        f.extend_from_slice(&[0xaa; 18]); // rest of L4 + payload
        f
    }

    fn ipv6_frame(next_header: u8) -> Vec<u8> {
        let mut f = vec![0xee; 12];
        f.extend_from_slice(&ETHER_TYPE_IPV6);
        f.extend_from_slice(&[0x60, 0x00, 0x00, 0x00, 0x00, 0x1a, next_header, 64]);
        f.extend_from_slice(&"2001:200::1".parse::<Ipv6Addr>().unwrap().octets());
        f.extend_from_slice(&"2001:200:0:3::".parse::<Ipv6Addr>().unwrap().octets());
        f.extend_from_slice(&[0x30, 0x39, 0x00, 0x09]);
        f.extend_from_slice(&[0xaa; 22]);
        f
    }

    #[test]
    fn ipv4_udp_and_tcp_frames_give_the_rule_key() {
        for proto in [IPPROTO_UDP, IPPROTO_TCP] {
            let rule = FiveTuple {
                dst: Ipv4Addr::new(198, 18, 3, 0),
                src: Ipv4Addr::new(10, 0, 0, 1),
                dst_port: 9,
                src_port: 12345,
                proto,
            };
            assert_eq!(key_of(&ipv4_frame(0x45, proto)), EmKey::V4(Ipv4Key::from(&rule)));
        }
    }

    #[test]
    fn ipv4_key_is_the_masked_header_bytes() {
        let EmKey::V4(key) = key_of(&ipv4_frame(0x45, IPPROTO_UDP)) else {
            panic!("not a v4 key")
        };
        #[rustfmt::skip]
        assert_eq!(key.as_ref(), &[
            0, 17, 0, 0, 10, 0, 0, 1, 198, 18, 3, 0, 0x30, 0x39, 0x00, 0x09,
        ]);
    }

    #[test]
    fn ipv6_udp_and_tcp_frames_give_the_rule_key() {
        for nh in [IPPROTO_UDP, IPPROTO_TCP] {
            let rule = FiveTuple {
                dst: "2001:200:0:3::".parse().unwrap(),
                src: "2001:200::1".parse().unwrap(),
                dst_port: 9,
                src_port: 12345,
                proto: nh,
            };
            assert_eq!(key_of(&ipv6_frame(nh)), EmKey::V6(Ipv6Key::from(&rule)));
        }
    }

    #[test]
    fn only_the_header_length_not_the_version_decides_ipv4() {
        // em_parse_ptype reads IHL only; the forwarder's RFC 1812 check
        // drops a bad version later.
        assert!(matches!(key_of(&ipv4_frame(0x65, IPPROTO_UDP)), EmKey::V4(_)));
        assert_eq!(key_of(&ipv4_frame(0x46, IPPROTO_UDP)), EmKey::NotEligible);
        assert_eq!(key_of(&ipv4_frame(0x44, IPPROTO_UDP)), EmKey::NotEligible);
    }

    #[test]
    fn other_protocols_and_ethertypes_are_not_looked_up() {
        assert_eq!(key_of(&ipv4_frame(0x45, 1)), EmKey::NotEligible);
        assert_eq!(key_of(&ipv6_frame(58)), EmKey::NotEligible);
        assert_eq!(key_of(&ipv6_frame(0)), EmKey::NotEligible); // hop-by-hop extension
        let mut arp = ipv4_frame(0x45, IPPROTO_UDP);
        arp[12..14].copy_from_slice(&[0x08, 0x06]);
        assert_eq!(key_of(&arp), EmKey::NotEligible);
        let mut vlan = ipv4_frame(0x45, IPPROTO_UDP);
        vlan[12..14].copy_from_slice(&[0x81, 0x00]);
        assert_eq!(key_of(&vlan), EmKey::NotEligible);
        assert_eq!(key_of(&[0; 14]), EmKey::NotEligible);
    }

    #[test]
    fn short_frames_are_runts_at_exact_boundaries() {
        let v4 = ipv4_frame(0x45, IPPROTO_UDP);
        assert!(matches!(key_of(&v4[..V4_MIN_LEN]), EmKey::V4(_)));
        assert_eq!(key_of(&v4[..V4_MIN_LEN - 1]), EmKey::Runt);
        let icmp = ipv4_frame(0x45, 1);
        assert_eq!(key_of(&icmp[..34]), EmKey::NotEligible);
        assert_eq!(key_of(&icmp[..33]), EmKey::Runt);
        let v6 = ipv6_frame(IPPROTO_TCP);
        assert!(matches!(key_of(&v6[..V6_MIN_LEN]), EmKey::V6(_)));
        assert_eq!(key_of(&v6[..V6_MIN_LEN - 1]), EmKey::Runt);
        let icmp6 = ipv6_frame(58);
        assert_eq!(key_of(&icmp6[..54]), EmKey::NotEligible);
        assert_eq!(key_of(&icmp6[..53]), EmKey::Runt);
        for len in 0..14 {
            assert_eq!(key_of(&v4[..len]), EmKey::Runt, "{len}");
        }
    }

    #[test]
    fn bytes_after_the_ports_do_not_change_the_key() {
        let a = ipv6_frame(IPPROTO_UDP);
        let mut b = a.clone();
        b[V6_MIN_LEN..].fill(0x55);
        b[18..20].copy_from_slice(&[0xff, 0xff]); // payload length
        b[21] = 1; // hop limit
        assert_eq!(key_of(&a), key_of(&b));
    }
}
