//! What the forwarder reads and writes in a frame, as C l3fwd's vector path
//! does it (`l3fwd_sse.h`, `l3fwd_common.h`), but never past the frame's end.
//!
//! Every frame is parsed once, by [`parse`], into an [`L3`] record that
//! every lookup mode takes; the header offsets are written here and nowhere
//! else. The packet type comes from the Ethernet type alone, as
//! `--parse-ptype` does in the C sample: no reliance on the NIC.

/// Ethernet header length.
pub const ETH_LEN: usize = 14;
const ETHERTYPE: usize = 12;
const ETHERTYPE_IPV4: u16 = 0x0800;
const ETHERTYPE_IPV6: u16 = 0x86dd;

// IPv4 header fields, as frame offsets.
const IPV4_VER_IHL: usize = ETH_LEN;
const IPV4_TOTAL_LEN: usize = ETH_LEN + 2;
const IPV4_TTL: usize = ETH_LEN + 8;
const IPV4_PROTO: usize = ETH_LEN + 9;
const IPV4_CHECKSUM: usize = ETH_LEN + 10;
const IPV4_DST: usize = ETH_LEN + 16;
/// End of a 20-byte IPv4 header: the bytes the IPv4 path reads and writes.
const IPV4_END: usize = ETH_LEN + 20;

// IPv6 header fields, as frame offsets.
const IPV6_PAYLOAD_LEN: usize = ETH_LEN + 4;
const IPV6_NEXT_HEADER: usize = ETH_LEN + 6;
const IPV6_DST: usize = ETH_LEN + 24;
const IPV6_END: usize = ETH_LEN + 40;

/// TCP/UDP source and destination ports: 4 bytes after the IP header.
const L4_PORTS_LEN: usize = 4;

/// The layer-3 header a frame carries, as far as any lookup mode cares:
/// read once per frame by [`parse`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum L3 {
    /// IPv4 (at least the fixed 20-byte header is in the frame).
    Ipv4(Ipv4Header),
    /// IPv6 (the fixed 40-byte header is in the frame).
    Ipv6(Ipv6Header),
    /// Neither IPv4 nor IPv6 (ARP, VLAN-tagged, ...): goes back out of the
    /// input port, as in the C sample.
    Other,
    /// Shorter than the headers it announces: dropped and counted.
    Runt,
}

/// The IPv4 fields the lookups read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ipv4Header {
    /// Destination address, host order.
    pub dst: u32,
    /// Header length in 32-bit words (5 without options).
    pub ihl: u8,
    /// Protocol of the payload (6 TCP, 17 UDP, ...).
    pub proto: u8,
}

/// The IPv6 fields the lookups read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ipv6Header {
    /// Destination address, network order.
    pub dst: [u8; 16],
    /// Next header (6 TCP, 17 UDP, or an extension header).
    pub next_header: u8,
}

/// What the vector parse reads of eight frames at once
/// ([`dpdk::Simd::tagged_words`]): which are IPv4 as [`parse`] tells
/// (a whole 20-byte header, Ethernet type 0x0800), and their destinations.
pub const IPV4_DESTINATION: dpdk::TaggedWord = dpdk::TaggedWord {
    min_len: IPV4_END as u16,
    tag_at: ETHERTYPE as u16,
    tag: ETHERTYPE_IPV4,
    word_at: IPV4_DST as u16,
};
const _: () = assert!(IPV4_DESTINATION.reads_within_min_len());

/// Reads the layer-3 header of `frame`: the one parse of each frame.
#[inline(always)]
pub fn parse(frame: &[u8]) -> L3 {
    parse_then(frame, |l3| l3)
}

/// [`parse`], handing the record to `then`. `then` is called from each
/// branch of the parse, so once inlined each call sees which kind of
/// header it has, and the per-packet path never builds the enum in memory.
#[inline(always)]
pub fn parse_then<R>(frame: &[u8], then: impl FnOnce(L3) -> R) -> R {
    // One length test covers the common case, an IPv4 frame.
    let Some(h) = frame.first_chunk::<IPV4_END>() else {
        return then(parse_short(frame));
    };
    if carries(h, ETHERTYPE_IPV4) {
        then(L3::Ipv4(Ipv4Header {
            dst: u32::from_be_bytes([h[IPV4_DST], h[IPV4_DST + 1], h[IPV4_DST + 2], h[IPV4_DST + 3]]),
            ihl: h[IPV4_VER_IHL] & 0x0f,
            proto: h[IPV4_PROTO],
        }))
    } else if carries(h, ETHERTYPE_IPV6) {
        match frame.first_chunk::<IPV6_END>() {
            Some(h) => then(L3::Ipv6(Ipv6Header {
                // A fixed range of a fixed-size array: cannot fail.
                dst: h[IPV6_DST..IPV6_END].try_into().unwrap_or_default(),
                next_header: h[IPV6_NEXT_HEADER],
            })),
            None => then(L3::Runt),
        }
    } else {
        then(L3::Other)
    }
}

/// Whether the Ethernet header that starts `h` announces `ethertype`,
/// compared as it is on the wire (no byte swap).
#[inline(always)]
fn carries(h: &[u8; IPV4_END], ethertype: u16) -> bool {
    h[ETHERTYPE..ETHERTYPE + 2] == ethertype.to_be_bytes()
}

/// [`parse`] for a frame too short for an IPv4 header: a runt if it
/// announces IPv4 or IPv6 (or has no whole Ethernet header), else other.
#[cold]
fn parse_short(frame: &[u8]) -> L3 {
    let Some(eth) = frame.first_chunk::<ETH_LEN>() else {
        return L3::Runt;
    };
    match u16::from_be_bytes([eth[ETHERTYPE], eth[ETHERTYPE + 1]]) {
        ETHERTYPE_IPV4 | ETHERTYPE_IPV6 => L3::Runt,
        _ => L3::Other,
    }
}

/// The 16 bytes of any frame where an IPv6 destination would be, if it
/// holds them: what C's FIB mode looks up for every frame that is not IPv4.
#[inline(always)]
pub fn ipv6_dst_bytes(frame: &[u8]) -> Option<[u8; 16]> {
    frame.get(IPV6_DST..IPV6_END)?.try_into().ok()
}

/// The 16 bytes of an IPv4 frame from the TTL to the end of the TCP/UDP
/// ports that follow a 20-byte header (TTL, protocol, checksum, source,
/// destination, ports): the 5-tuple in frame order, as exact match (and
/// ACL) read it. None if the frame ends before the ports.
#[inline(always)]
pub fn ipv4_tuple(frame: &[u8]) -> Option<&[u8; 16]> {
    frame.get(IPV4_TTL..IPV4_END + L4_PORTS_LEN)?.try_into().ok()
}

/// The 40 bytes of an IPv6 frame from the payload length to the end of
/// the TCP/UDP ports that follow the fixed header: the 5-tuple in frame
/// order. None if the frame ends before the ports.
#[inline(always)]
pub fn ipv6_tuple(frame: &[u8]) -> Option<&[u8; 40]> {
    frame.get(IPV6_PAYLOAD_LEN..IPV6_END + L4_PORTS_LEN)?.try_into().ok()
}

/// Writes into `into` the `L` bytes of an IPv4 frame from its protocol
/// byte on, as C's ACL mode hands them to rte_acl (which reads the ports
/// as if the header had no options); zeros past the end of a shorter
/// frame, where C would read whatever the buffer held. Written in place:
/// a key returned by value is copied twice on its way into a gather.
#[inline(always)]
pub fn ipv4_from_proto<const L: usize>(frame: &[u8], into: &mut [u8; L]) {
    from_offset(frame, IPV4_PROTO, into)
}

/// As [`ipv4_from_proto`], the bytes of an IPv6 frame from its
/// next-header byte on (ACL mode).
#[inline(always)]
pub fn ipv6_from_next_header<const L: usize>(frame: &[u8], into: &mut [u8; L]) {
    from_offset(frame, IPV6_NEXT_HEADER, into)
}

#[inline(always)]
fn from_offset<const L: usize>(frame: &[u8], at: usize, into: &mut [u8; L]) {
    match frame.get(at..at + L) {
        Some(bytes) => into.copy_from_slice(bytes),
        None => {
            let rest = frame.get(at..).unwrap_or_default();
            let n = rest.len().min(L);
            into[..n].copy_from_slice(&rest[..n]);
            into[n..].fill(0);
        }
    }
}

/// Destination and source MAC for frames leaving one port: the first 12
/// bytes of every frame sent there.
pub type EthRewrite = [u8; 12];

/// Builds the rewrite for a port: `dst` is the next hop (`--eth-dest` or
/// `02:00:00:00:00:<port>`), `src` the port's own MAC.
pub fn eth_rewrite(dst: [u8; 6], src: [u8; 6]) -> EthRewrite {
    let mut r = [0u8; 12];
    r[..6].copy_from_slice(&dst);
    r[6..].copy_from_slice(&src);
    r
}

/// The default next-hop MAC of l3fwd: locally administered, port in the last
/// byte.
pub fn default_dest_mac(port: u16) -> [u8; 6] {
    [0x02, 0, 0, 0, 0, port as u8]
}

/// Rewrites a frame for transmission: MACs for every frame, and for one
/// [`parse`] reads as IPv4 the sample's RFC 1812 handling (TTL - 1,
/// incremental checksum update). Returns false when the IPv4 header is
/// invalid and the frame must be dropped. Tells IPv4 from the frame itself,
/// with the parse's test, rather than from a record of the parse: the
/// header's line is in cache by now, and a record costs a store and a load
/// per packet.
#[inline(always)]
pub fn rewrite(frame: &mut [u8], eth: &EthRewrite) -> bool {
    match frame.first_chunk_mut::<IPV4_END>() {
        Some(h) if carries(h, ETHERTYPE_IPV4) => {
            h[..ETHERTYPE].copy_from_slice(eth);
            rfc1812_process(h)
        }
        _ => {
            if let Some(h) = frame.first_chunk_mut::<ETHERTYPE>() {
                h.copy_from_slice(eth);
            }
            true
        }
    }
}

/// Whether `frame` is one [`parse`] reads as IPv4, the frames [`rewrite`]
/// takes through the RFC 1812 step.
#[inline(always)]
pub fn is_ipv4(frame: &[u8]) -> bool {
    frame
        .first_chunk::<IPV4_END>()
        .is_some_and(|h| carries(h, ETHERTYPE_IPV4))
}

/// C l3fwd's `rfc1812_process`, byte for byte: the version/IHL byte must be
/// 0x45..=0x4F and the total length at least 20; TTL is decremented and the
/// checksum adjusted by adding one to its first byte (with carry into the
/// second), which is what the sample's little-endian `hdr_checksum++` does.
#[inline(always)]
fn rfc1812_process(h: &mut [u8; IPV4_END]) -> bool {
    let ihl_diff = h[IPV4_VER_IHL].wrapping_sub(0x45);
    let total_len = u16::from_be_bytes([h[IPV4_TOTAL_LEN], h[IPV4_TOTAL_LEN + 1]]);
    h[IPV4_TTL] = h[IPV4_TTL].wrapping_sub(1);
    let sum = u16::from_le_bytes([h[IPV4_CHECKSUM], h[IPV4_CHECKSUM + 1]]).wrapping_add(1);
    [h[IPV4_CHECKSUM], h[IPV4_CHECKSUM + 1]] = sum.to_le_bytes();
    ihl_diff <= 0x0f - 0x05 && total_len >= 20
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn ipv4_frame(ver_ihl: u8, total_len: u16, ttl: u8, dst: [u8; 4]) -> Vec<u8> {
        let mut f = vec![0u8; 60];
        f[12..14].copy_from_slice(&ETHERTYPE_IPV4.to_be_bytes());
        f[14] = ver_ihl;
        f[16..18].copy_from_slice(&total_len.to_be_bytes());
        f[22] = ttl;
        f[23] = 17;
        f[30..34].copy_from_slice(&dst);
        let sum = ipv4_checksum(&f[14..34]);
        f[24..26].copy_from_slice(&sum.to_be_bytes());
        f
    }

    fn ipv4_checksum(h: &[u8]) -> u16 {
        let mut s: u32 = 0;
        for (i, w) in h.chunks(2).enumerate() {
            if i != 5 {
                s += u16::from_be_bytes([w[0], w[1]]) as u32;
            }
        }
        while s > 0xffff {
            s = (s & 0xffff) + (s >> 16);
        }
        !(s as u16)
    }

    #[test]
    fn parses_by_ethertype_and_bounds() {
        let f = ipv4_frame(0x46, 46, 64, [198, 18, 1, 7]);
        let v4 = L3::Ipv4(Ipv4Header {
            dst: 0xc612_0107,
            ihl: 6,
            proto: 17,
        });
        assert_eq!(parse(&f), v4);
        assert_eq!(parse(&f[..33]), L3::Runt);
        assert_eq!(parse(&f[..34]), v4);
        assert_eq!(parse(&f[..13]), L3::Runt);
        let mut v6 = vec![0u8; 54];
        v6[12..14].copy_from_slice(&ETHERTYPE_IPV6.to_be_bytes());
        v6[20] = 6;
        v6[38] = 0x20;
        v6[53] = 9;
        let mut dst = [0u8; 16];
        dst[0] = 0x20;
        dst[15] = 9;
        assert_eq!(parse(&v6), L3::Ipv6(Ipv6Header { dst, next_header: 6 }));
        assert_eq!(parse(&v6[..53]), L3::Runt);
        assert_eq!(parse(&v6[..20]), L3::Runt);
        let mut arp = vec![0u8; 14];
        arp[12..14].copy_from_slice(&[0x08, 0x06]);
        assert_eq!(parse(&arp), L3::Other);
    }

    #[test]
    fn tuples_end_with_the_ports() {
        let f = ipv4_frame(0x45, 46, 64, [198, 18, 1, 7]);
        assert_eq!(ipv4_tuple(&f).map(|t| t[..2].to_vec()), Some(vec![64, 17]));
        assert!(ipv4_tuple(&f[..38]).is_some() && ipv4_tuple(&f[..37]).is_none());
        let v6 = vec![0x11u8; 58];
        assert!(ipv6_tuple(&v6).is_some() && ipv6_tuple(&v6[..57]).is_none());
    }

    /// An ACL input written over a slot that held another key.
    fn acl_input<const L: usize>(frame: &[u8], write: fn(&[u8], &mut [u8; L])) -> [u8; L] {
        let mut slot = [0xee; L];
        write(frame, &mut slot);
        slot
    }

    #[test]
    fn acl_inputs_start_at_the_protocol_and_pad_short_frames() {
        let f = ipv4_frame(0x45, 46, 64, [198, 18, 1, 7]);
        let input: [u8; 17] = acl_input(&f, ipv4_from_proto);
        assert_eq!(input[0], 17);
        assert_eq!(&input[7..11], &[198, 18, 1, 7]);
        let short: [u8; 17] = acl_input(&f[..36], ipv4_from_proto);
        assert_eq!(&short[..13], &input[..13]);
        assert_eq!(&short[13..], &[0; 4]);
        let v6: [u8; 40] = acl_input(&[6u8; 30], ipv6_from_next_header);
        assert_eq!((&v6[..10], &v6[10..]), (&[6u8; 10][..], &[0u8; 30][..]));
    }

    #[test]
    fn rewrite_sets_macs_ttl_and_keeps_checksum_valid() {
        let mut f = ipv4_frame(0x45, 46, 64, [198, 18, 1, 7]);
        let eth = eth_rewrite(default_dest_mac(1), [0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0x01]);
        assert!(rewrite(&mut f, &eth));
        assert_eq!(&f[..12], &eth);
        assert_eq!(f[22], 63);
        assert_eq!(u16::from_be_bytes([f[24], f[25]]), ipv4_checksum(&f[14..34]));
    }

    #[test]
    fn invalid_ipv4_headers_are_dropped() {
        let eth = [0u8; 12];
        for (ver_ihl, len) in [(0x44, 46), (0x50, 46), (0x35, 46), (0x45, 19), (0x45, 0)] {
            let mut f = ipv4_frame(ver_ihl, len, 64, [1, 2, 3, 4]);
            assert!(!rewrite(&mut f, &eth), "{ver_ihl:#x} len {len}");
        }
        for (ver_ihl, len) in [(0x45, 20), (0x4f, 60), (0x46, 0x100)] {
            let mut f = ipv4_frame(ver_ihl, len, 64, [1, 2, 3, 4]);
            assert!(rewrite(&mut f, &eth), "{ver_ihl:#x} len {len}");
        }
    }

    #[test]
    fn checksum_update_carries_like_the_c_sample() {
        let mut f = ipv4_frame(0x45, 46, 1, [1, 2, 3, 4]);
        f[24] = 0xff;
        f[25] = 0x12;
        rewrite(&mut f, &[0; 12]);
        assert_eq!((f[22], f[24], f[25]), (0, 0x00, 0x13));
    }

    proptest! {
        #[test]
        fn acl_inputs_are_the_frame_bytes_then_zeros(frame in proptest::collection::vec(any::<u8>(), 0..100)) {
            let v4: [u8; 17] = acl_input(&frame, ipv4_from_proto);
            let v6: [u8; 40] = acl_input(&frame, ipv6_from_next_header);
            for (input, at) in [(&v4[..], IPV4_PROTO), (&v6[..], IPV6_NEXT_HEADER)] {
                for (i, &b) in input.iter().enumerate() {
                    prop_assert_eq!(b, frame.get(at + i).copied().unwrap_or(0));
                }
            }
        }

        #[test]
        fn rewrite_tells_ipv4_as_the_parse_does(mut f in proptest::collection::vec(any::<u8>(), 0..60), v4 in any::<bool>()) {
            if v4 && f.len() >= ETHERTYPE + 2 {
                f[ETHERTYPE..ETHERTYPE + 2].copy_from_slice(&ETHERTYPE_IPV4.to_be_bytes());
            }
            prop_assert_eq!(is_ipv4(&f), matches!(parse(&f), L3::Ipv4(_)));
        }

        #[test]
        fn touches_only_macs_ttl_and_checksum(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
            let mut f = bytes.clone();
            let l3 = parse(&f);
            prop_assume!(l3 != L3::Runt);
            rewrite(&mut f, &[7; 12]);
            prop_assert_eq!(f.len(), bytes.len());
            prop_assert_eq!(&f[..12], &[7u8; 12][..]);
            let changed: Vec<usize> = (12..f.len()).filter(|&i| f[i] != bytes[i]).collect();
            let allowed: &[usize] = if matches!(l3, L3::Ipv4(_)) { &[IPV4_TTL, IPV4_CHECKSUM, IPV4_CHECKSUM + 1] } else { &[] };
            prop_assert!(changed.iter().all(|i| allowed.contains(i)), "changed {:?}", changed);
        }
    }
}
