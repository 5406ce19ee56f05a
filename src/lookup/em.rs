//! Exact match on the 5-tuple: the keys of the burst's IPv4 and IPv6
//! TCP/UDP packets go to rte_hash together (one bulk lookup per family and
//! burst), or one by one with `sequential`. Each key is taken from the frame once
//! and serves both hashing and comparison.
//!
//! Which frames are looked up follows the sample's `em_parse_ptype`: IPv4
//! with a 20-byte header (IHL 5; the version nibble is not looked at) and
//! IPv6 whose next header is TCP or UDP. Its burst code
//! (`l3fwd_em_process_packets`) looks a group of 8 up in bulk only if all 8
//! carry the same such type, and otherwise one by one with the same test,
//! so each frame's fate depends on that test alone. Everything else matches
//! nothing. Unlike the sample, no byte past the frame is read: a frame too
//! short for the ports its key ends with is a runt.

use em::{EmTables, Ipv4Key, Ipv6Key};

use super::{answer, Gather, Lookup, Route};
use crate::packet::{ipv4_tuple, ipv6_tuple, L3};
use crate::MAX_BURST;

const IPPROTO_TCP: u8 = 6;
const IPPROTO_UDP: u8 = 17;

/// Exact-match mode.
pub struct EmLookup {
    pub tables: EmTables,
    pub sequential: bool,
}

/// What exact match does with a frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EmKey {
    /// IPv4 with a 20-byte header carrying TCP or UDP: look this key up.
    V4(Ipv4Key),
    /// IPv6 whose next header is TCP or UDP: look this key up.
    V6(Ipv6Key),
    /// Not looked up: matches nothing.
    NotEligible,
    /// Shorter than its headers (under 14 bytes; IPv4 under 34, or 38 if
    /// eligible; IPv6 under 54, or 58 if eligible): dropped and counted.
    Runt,
}

/// The exact-match key of `frame`, parsed as `l3`, or why it has none.
#[inline(always)]
pub fn em_key(frame: &[u8], l3: &L3) -> EmKey {
    match l3 {
        L3::Ipv4(h) if h.ihl == 5 && is_tcp_or_udp(h.proto) => {
            ipv4_tuple(frame).map_or(EmKey::Runt, |t| EmKey::V4(Ipv4Key::from_header(t)))
        }
        L3::Ipv6(h) if is_tcp_or_udp(h.next_header) => {
            ipv6_tuple(frame).map_or(EmKey::Runt, |t| EmKey::V6(Ipv6Key::from_header(t)))
        }
        L3::Runt => EmKey::Runt,
        _ => EmKey::NotEligible,
    }
}

fn is_tcp_or_udp(proto: u8) -> bool {
    proto == IPPROTO_TCP || proto == IPPROTO_UDP
}

/// Keys of one burst in exact-match mode.
#[derive(Default)]
pub struct EmScratch {
    v4: Gather<Ipv4Key>,
    v6: Gather<Ipv6Key>,
}

impl Lookup for EmLookup {
    type Scratch = EmScratch;

    #[inline(always)]
    fn add(&self, scratch: &mut EmScratch, index: usize, l3: &L3, frame: &[u8]) -> Route {
        match em_key(frame, l3) {
            EmKey::V4(k) => scratch.v4.push(index, k),
            EmKey::V6(k) => scratch.v6.push(index, k),
            EmKey::NotEligible => {}
            EmKey::Runt => return Route::Runt,
        }
        Route::NoMatch
    }

    #[inline(always)]
    fn resolve(&self, scratch: &mut EmScratch, routes: &mut [Route; MAX_BURST]) {
        let EmScratch { v4, v6 } = scratch;
        let (keys4, from4) = v4.take();
        let (keys6, from6) = v6.take();
        let answer4 = |i, port| answer(from4, routes, i, port);
        if self.sequential {
            self.tables.lookup_v4_sequential(keys4, answer4);
        } else {
            self.tables.lookup_v4_multi(keys4, answer4);
        }
        let answer6 = |i, port| answer(from6, routes, i, port);
        if self.sequential {
            self.tables.lookup_v6_sequential(keys6, answer6);
        } else {
            self.tables.lookup_v6_multi(keys6, answer6);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::parse;
    use em::FiveTuple;
    use std::net::{Ipv4Addr, Ipv6Addr};

    const ETHER_TYPE_IPV4: [u8; 2] = [0x08, 0x00];
    const ETHER_TYPE_IPV6: [u8; 2] = [0x86, 0xdd];
    /// Frame lengths a key needs: it ends with the two TCP/UDP ports.
    const V4_MIN_LEN: usize = 14 + 20 + 4;
    const V6_MIN_LEN: usize = 14 + 40 + 4;

    /// The key the EM lookup takes from `frame`, through the one parse.
    fn key_of(frame: &[u8]) -> EmKey {
        em_key(frame, &parse(frame))
    }

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
