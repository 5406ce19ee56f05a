//! Exact-match keys, byte for byte as l3fwd 22.11 builds them.
//!
//! The C sample loads 16 (IPv4) or 48 (IPv6) bytes of the IP header as it
//! sits in the frame and masks off the fields that change per hop, so rule
//! keys are laid out the same way: `union ipv4_5tuple_host` and
//! `union ipv6_5tuple_host`, addresses and ports in network byte order.

use std::net::{Ipv4Addr, Ipv6Addr};

/// The fields a rule matches on, in the order of a rule-file line.
///
/// `A` is [`Ipv4Addr`] or [`Ipv6Addr`]; [`Ipv4Key::from`] /
/// [`Ipv6Key::from`] turn a tuple into the key bytes rte_hash stores.
///
/// ```
/// use std::net::Ipv4Addr;
/// let rule = em::FiveTuple {
///     dst: Ipv4Addr::new(198, 18, 1, 0),
///     src: Ipv4Addr::new(198, 18, 1, 1),
///     dst_port: 9,
///     src_port: 9,
///     proto: 17, // UDP
/// };
/// let key = em::Ipv4Key::from(&rule);
/// // TTL 0, protocol, checksum 0, source, destination, source port, destination port
/// assert_eq!(key.as_ref(), &[0, 17, 0, 0, 198, 18, 1, 1, 198, 18, 1, 0, 0, 9, 0, 9]);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct FiveTuple<A> {
    /// Destination address.
    pub dst: A,
    /// Source address.
    pub src: A,
    /// Destination TCP/UDP port.
    pub dst_port: u16,
    /// Source TCP/UDP port.
    pub src_port: u16,
    /// IP protocol (IPv4) or next header (IPv6).
    pub proto: u8,
}

/// `union ipv4_5tuple_host`: the 16 frame bytes from the TTL on, with the
/// TTL and header checksum zeroed (`mask0`). Layout: TTL 0, protocol 1,
/// checksum 2..4, source 4..8, destination 8..12, ports 12..16.
///
/// Why this odd layout: it is where those fields sit in the frame, so the
/// key of a packet is one 16-byte copy and one mask (C does it with one
/// SSE load and AND), with no field-by-field gathering. Rules are
/// converted into the same layout once, at load time. Build one with
/// [`Ipv4Key::from`] (a rule) or [`Ipv4Key::from_header`] (a frame).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Ipv4Key([u8; 16]);

/// `union ipv6_5tuple_host`: the 48 frame bytes from the payload length on,
/// with payload length, hop limit and the trailing 8 bytes zeroed (`mask1`,
/// `mask2`). Layout: payload length 0..2, next header 2, hop limit 3,
/// source 4..20, destination 20..36, ports 36..40, zero 40..48.
///
/// As for [`Ipv4Key`], the layout is the frame's, so extracting a key is a
/// copy and a mask. Build one with [`Ipv6Key::from`] (a rule) or
/// [`Ipv6Key::from_header`] (a frame).
///
/// ```
/// let rule = em::FiveTuple {
///     dst: "2001:200:0:1::".parse().unwrap(),
///     src: "2001:200::1".parse().unwrap(),
///     dst_port: 9,
///     src_port: 9,
///     proto: 6, // TCP
/// };
/// let key = em::Ipv6Key::from(&rule);
/// let bytes = key.as_ref();
/// assert_eq!(bytes[2], 6);
/// assert_eq!(bytes[20..36], rule.dst.octets());
/// assert_eq!(bytes[40..], [0; 8]);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Ipv6Key([u8; 48]);

/// `mask0`: keeps protocol, addresses and ports.
const V4_MASK: [u8; 16] = [
    0, 0xff, 0, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
];

/// Bytes of an IPv6 key that come from the frame; the rest (`reserve`) is zero.
pub const V6_FRAME_BYTES: usize = 40;

impl Ipv4Key {
    /// The key of a frame's 16 bytes from the IPv4 TTL to the TCP/UDP
    /// destination port (a 20-byte header): one masked copy.
    ///
    /// ```
    /// // TTL 64, UDP, checksum, 10.0.0.1 -> 198.18.3.0, ports 12345 -> 9
    /// let bytes = [64, 17, 0xbe, 0xef, 10, 0, 0, 1, 198, 18, 3, 0, 0x30, 0x39, 0, 9];
    /// let key = em::Ipv4Key::from_header(&bytes);
    /// assert_eq!(key.as_ref(), &[0, 17, 0, 0, 10, 0, 0, 1, 198, 18, 3, 0, 0x30, 0x39, 0, 9]);
    /// ```
    #[inline(always)]
    pub fn from_header(bytes: &[u8; 16]) -> Self {
        Self(std::array::from_fn(|i| bytes[i] & V4_MASK[i]))
    }
}

impl Ipv6Key {
    /// The key of a frame's 40 bytes from the IPv6 payload length to the
    /// TCP/UDP destination port (no extension header): a copy and a mask.
    #[inline(always)]
    pub fn from_header(bytes: &[u8; V6_FRAME_BYTES]) -> Self {
        let mut key = [0; 48];
        key[..V6_FRAME_BYTES].copy_from_slice(bytes);
        // mask1 clears the payload length and the hop limit.
        key[0] = 0;
        key[1] = 0;
        key[3] = 0;
        Self(key)
    }
}

/// The key's bytes, as rte_hash stores them.
impl AsRef<[u8; 16]> for Ipv4Key {
    fn as_ref(&self) -> &[u8; 16] {
        &self.0
    }
}

/// The key's bytes, as rte_hash stores them.
impl AsRef<[u8; 48]> for Ipv6Key {
    fn as_ref(&self) -> &[u8; 48] {
        &self.0
    }
}

/// `convert_ipv4_5tuple`: a rule's key.
impl From<&FiveTuple<Ipv4Addr>> for Ipv4Key {
    fn from(t: &FiveTuple<Ipv4Addr>) -> Self {
        let mut key = [0; 16];
        key[1] = t.proto;
        key[4..8].copy_from_slice(&t.src.octets());
        key[8..12].copy_from_slice(&t.dst.octets());
        key[12..14].copy_from_slice(&t.src_port.to_be_bytes());
        key[14..16].copy_from_slice(&t.dst_port.to_be_bytes());
        Self(key)
    }
}

impl FiveTuple<Ipv4Addr> {
    /// The flow of a key's bytes, as the table holds them.
    pub fn of_key(k: &[u8; 16]) -> Self {
        let word = |at: usize| u16::from_be_bytes([k[at], k[at + 1]]);
        FiveTuple {
            dst: Ipv4Addr::new(k[8], k[9], k[10], k[11]),
            src: Ipv4Addr::new(k[4], k[5], k[6], k[7]),
            dst_port: word(14),
            src_port: word(12),
            proto: k[1],
        }
    }
}

impl FiveTuple<Ipv6Addr> {
    /// The flow of a key's bytes, as the table holds them.
    pub fn of_key(k: &[u8; 48]) -> Self {
        let addr = |at: usize| Ipv6Addr::from(std::array::from_fn::<u8, 16, _>(|i| k[at + i]));
        FiveTuple {
            dst: addr(20),
            src: addr(4),
            dst_port: u16::from_be_bytes([k[38], k[39]]),
            src_port: u16::from_be_bytes([k[36], k[37]]),
            proto: k[2],
        }
    }
}

/// `convert_ipv6_5tuple`: a rule's key.
impl From<&FiveTuple<Ipv6Addr>> for Ipv6Key {
    fn from(t: &FiveTuple<Ipv6Addr>) -> Self {
        let mut key = [0; 48];
        key[2] = t.proto;
        key[4..20].copy_from_slice(&t.src.octets());
        key[20..36].copy_from_slice(&t.dst.octets());
        key[36..38].copy_from_slice(&t.src_port.to_be_bytes());
        key[38..40].copy_from_slice(&t.dst_port.to_be_bytes());
        Self(key)
    }
}

/// The all-zero key: a placeholder in fixed-size key arrays. It is also the
/// key of an all-zero rule, so placeholders must never be looked up.
impl Default for Ipv4Key {
    fn default() -> Self {
        Self([0; 16])
    }
}

/// The all-zero key: a placeholder in fixed-size key arrays. It is also the
/// key of an all-zero rule, so placeholders must never be looked up.
impl Default for Ipv6Key {
    fn default() -> Self {
        Self([0; 48])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ipv4_rule_key_matches_the_c_union() {
        let t = FiveTuple {
            dst: Ipv4Addr::new(198, 18, 1, 0),
            src: Ipv4Addr::new(198, 18, 1, 1),
            dst_port: 0x0102,
            src_port: 0x0304,
            proto: 17,
        };
        #[rustfmt::skip]
        let expected = [
            0, 17, 0, 0,            // pad0 (TTL), proto, pad1 (checksum)
            198, 18, 1, 1,          // ip_src
            198, 18, 1, 0,          // ip_dst
            0x03, 0x04, 0x01, 0x02, // port_src, port_dst
        ];
        assert_eq!(Ipv4Key::from(&t).as_ref(), &expected);
    }

    #[test]
    fn ipv6_rule_key_matches_the_c_union() {
        let src: Ipv6Addr = "2001:200::1".parse().unwrap();
        let dst: Ipv6Addr = "2001:200:0:1::".parse().unwrap();
        let t = FiveTuple {
            dst,
            src,
            dst_port: 9,
            src_port: 0xabcd,
            proto: 6,
        };
        let key = Ipv6Key::from(&t);
        let b = key.as_ref();
        assert_eq!(b[..4], [0, 0, 6, 0]); // pad0 (payload length), proto, pad1 (hop limit)
        assert_eq!(b[4..20], src.octets());
        assert_eq!(b[20..36], dst.octets());
        assert_eq!(b[36..40], [0xab, 0xcd, 0, 9]);
        assert_eq!(b[40..], [0; 8]); // reserve
    }

    #[test]
    fn header_masks_clear_only_per_hop_fields() {
        let v4 = Ipv4Key::from_header(&[0xff; 16]);
        assert_eq!(v4.as_ref(), &V4_MASK);
        let v6 = Ipv6Key::from_header(&[0xff; 40]);
        let mut expected = [0xff; 48];
        expected[..4].copy_from_slice(&[0, 0, 0xff, 0]);
        expected[40..].fill(0);
        assert_eq!(v6.as_ref(), &expected);
    }
}
