//! The forwarder's contract for one frame, as an executable check: what
//! `packet::parse`, `packet::rewrite`, `mode::em_key` and
//! `packet::ipv6_dst_bytes` must do, in each lookup mode, with any
//! bytes of any length. Shared by tests/forwarding/packet_props.rs (proptest) and the
//! cargo-fuzz target fuzz/fuzz_targets/packet.rs, so both hold the code to
//! the same rules:
//! - no panic, whatever the bytes;
//! - exactly one decision per frame: forwarded, or dropped as a runt or as
//!   an invalid IPv4 header (both counted by the forwarder);
//! - a frame shorter than the headers its lookup reads is a runt, never
//!   looked up or rewritten;
//! - the decision and the rewrite depend on the frame's bytes only, never on
//!   what lies after it in memory;
//! - a rewrite changes the MACs, and for IPv4 the TTL and checksum, nothing
//!   else;
//! - the vector parse ([`check_vector`]) reads, in every instruction set the
//!   CPU has, what `packet::parse` reads.

use std::net::{Ipv4Addr, Ipv6Addr};
use std::sync::{Mutex, OnceLock};

use em::{FiveTuple, Ipv4Key, Ipv6Key};
use l3fwd_modes::ModeInfo;
use l3fwd_rs::dataplane::mode::{em_key, EmKey};
use l3fwd_rs::dataplane::packet::{
    ipv6_dst_bytes, parse, rewrite, EthRewrite, Ipv4Header, Ipv6Header, ETH_LEN, IPV4_DESTINATION, L3,
};

/// What the forwarder does with a frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// Rewritten and sent (to the port its lookup gives).
    Forward,
    /// Shorter than its headers: dropped, counted as `runt`.
    DropRunt,
    /// IPv4 failing the RFC 1812 checks: dropped, counted as `invalid`.
    DropInvalid,
}

/// Whether `mode` drops `frame` as a runt: each mode reads its own
/// headers (parsed as `l3`, keyed as `key`). A mode of `l3fwd_modes::MODES`
/// that the oracle has no rule for fails here, so a new mode comes with one.
fn runt_in(mode: &ModeInfo, frame: &[u8], l3: &L3, key: &EmKey) -> bool {
    match mode.name {
        // The destination, or ACL's fields from the protocol byte on
        // (zeros past the frame): a runt only when the parse is.
        "lpm" | "acl" => *l3 == L3::Runt,
        "em" => *key == EmKey::Runt,
        // As C, FIB looks every frame that is not IPv4 up as IPv6: its
        // destination's bytes must be in the frame.
        "fib" => match l3 {
            L3::Runt => true,
            L3::Ipv4(_) => false,
            _ => ipv6_dst_bytes(frame).is_none(),
        },
        other => panic!("the oracle has no rule for lookup mode {other}"),
    }
}

/// The MACs every test rewrite writes.
pub const ETH: EthRewrite = [0xa0, 0xa1, 0xa2, 0xa3, 0xa4, 0xa5, 0xb0, 0xb1, 0xb2, 0xb3, 0xb4, 0xb5];

const IPV4: [u8; 2] = [0x08, 0x00];
const IPV6: [u8; 2] = [0x86, 0xdd];
const TTL: usize = ETH_LEN + 8;
const CHECKSUM: usize = ETH_LEN + 10;

/// Decides `frame`'s fate in `mode` as the forwarder does, asserting the
/// contract on the way (panics on any breach).
pub fn check(frame: &[u8], mode: &ModeInfo) -> Decision {
    let l3 = parse(frame);
    assert_eq!(l3, expected_l3(frame), "parse {frame:02x?}");
    let key = em_key(frame, &l3);
    assert_eq!(key, expected_key(frame), "em_key {frame:02x?}");
    // EM drops by em_key but rewrites by the parse: a parse runt must be an
    // em_key runt, or EM would rewrite a frame too short for it.
    if l3 == L3::Runt {
        assert_eq!(key, EmKey::Runt, "parse runt but em_key not: {frame:02x?}");
    }
    // FIB's IPv6 destination, read from any frame long enough to hold one.
    let dst6 = (frame.len() >= ETH_LEN + 40).then(|| frame[38..54].try_into().unwrap());
    assert_eq!(ipv6_dst_bytes(frame), dst6, "ipv6_dst_bytes {frame:02x?}");
    let decision = if runt_in(mode, frame, &l3, &key) {
        Decision::DropRunt
    } else {
        let mut out = frame.to_vec();
        let valid = rewrite(&mut out, &ETH);
        assert_rewrite(frame, &out, &l3);
        assert_eq!(valid, expected_valid(frame, &l3), "rewrite verdict {frame:02x?}");
        if valid {
            Decision::Forward
        } else {
            Decision::DropInvalid
        }
    };
    assert_bytes_after_do_not_matter(frame, mode, decision);
    decision
}

/// The layer 3 header the frame announces, from the spec: Ethernet type,
/// and length enough for the fixed IP header.
fn expected_l3(f: &[u8]) -> L3 {
    match ethertype(f) {
        None => L3::Runt,
        Some(IPV4) if f.len() < ETH_LEN + 20 => L3::Runt,
        Some(IPV4) => L3::Ipv4(Ipv4Header {
            dst: u32::from_be_bytes(f[30..34].try_into().unwrap()),
            ihl: f[ETH_LEN] & 0x0f,
            proto: f[ETH_LEN + 9],
        }),
        Some(IPV6) if f.len() < ETH_LEN + 40 => L3::Runt,
        Some(IPV6) => L3::Ipv6(Ipv6Header {
            dst: f[38..54].try_into().unwrap(),
            next_header: f[ETH_LEN + 6],
        }),
        Some(_) => L3::Other,
    }
}

/// The exact-match key of the C sample, from the frame's fields: only
/// 20-byte IPv4 headers and IPv6 (no extension header) carrying TCP or UDP
/// are looked up; each needs its ports inside the frame.
fn expected_key(f: &[u8]) -> EmKey {
    let tcp_or_udp = |p: u8| p == 6 || p == 17;
    let port = |at: usize| u16::from_be_bytes([f[at], f[at + 1]]);
    match ethertype(f) {
        None => EmKey::Runt,
        Some(IPV4) if f.len() < ETH_LEN + 20 => EmKey::Runt,
        Some(IPV4) if f[ETH_LEN] & 0x0f != 5 || !tcp_or_udp(f[ETH_LEN + 9]) => EmKey::NotEligible,
        Some(IPV4) if f.len() < ETH_LEN + 24 => EmKey::Runt,
        Some(IPV4) => EmKey::V4(Ipv4Key::from(&FiveTuple {
            src: Ipv4Addr::from(<[u8; 4]>::try_from(&f[26..30]).unwrap()),
            dst: Ipv4Addr::from(<[u8; 4]>::try_from(&f[30..34]).unwrap()),
            src_port: port(34),
            dst_port: port(36),
            proto: f[ETH_LEN + 9],
        })),
        Some(IPV6) if f.len() < ETH_LEN + 40 => EmKey::Runt,
        Some(IPV6) if !tcp_or_udp(f[ETH_LEN + 6]) => EmKey::NotEligible,
        Some(IPV6) if f.len() < ETH_LEN + 44 => EmKey::Runt,
        Some(IPV6) => EmKey::V6(Ipv6Key::from(&FiveTuple {
            src: Ipv6Addr::from(<[u8; 16]>::try_from(&f[22..38]).unwrap()),
            dst: Ipv6Addr::from(<[u8; 16]>::try_from(&f[38..54]).unwrap()),
            src_port: port(54),
            dst_port: port(56),
            proto: f[ETH_LEN + 6],
        })),
        Some(_) => EmKey::NotEligible,
    }
}

fn ethertype(f: &[u8]) -> Option<[u8; 2]> {
    f.get(12..14).map(|t| [t[0], t[1]])
}

/// RFC 1812 as the C sample checks it: version/IHL byte 0x45..=0x4F and a
/// total length of at least 20. Anything but IPv4 passes.
fn expected_valid(f: &[u8], l3: &L3) -> bool {
    match l3 {
        L3::Ipv4(_) => (0x45..=0x4f).contains(&f[ETH_LEN]) && u16::from_be_bytes([f[16], f[17]]) >= 20,
        _ => true,
    }
}

/// `out` is `frame` rewritten: same length, the new MACs, and for IPv4 the
/// TTL one less and the checksum's first byte one more (with carry, the
/// sample's little-endian `hdr_checksum++`); no other byte touched.
fn assert_rewrite(frame: &[u8], out: &[u8], l3: &L3) {
    assert_eq!(out.len(), frame.len(), "rewrite changed the length");
    let macs = frame.len().min(12);
    assert_eq!(out[..macs], ETH[..macs], "MACs");
    let mut expected = frame.to_vec();
    expected[..macs].copy_from_slice(&ETH[..macs]);
    if matches!(l3, L3::Ipv4(_)) {
        expected[TTL] = frame[TTL].wrapping_sub(1);
        let sum = u16::from_le_bytes([frame[CHECKSUM], frame[CHECKSUM + 1]]).wrapping_add(1);
        expected[CHECKSUM..CHECKSUM + 2].copy_from_slice(&sum.to_le_bytes());
    }
    assert_eq!(out, &expected[..], "rewrite touched more than MACs, TTL and checksum");
}

/// The frame inside two buffers with different bytes after it: parse,
/// em_key and rewrite see only the frame, and rewrite writes only inside it.
fn assert_bytes_after_do_not_matter(frame: &[u8], mode: &ModeInfo, decision: Decision) {
    let mut results = Vec::new();
    for tail in [0x00, 0xff] {
        let mut buf = frame.to_vec();
        buf.extend_from_slice(&[tail; 64]);
        let (inside, after) = buf.split_at_mut(frame.len());
        let l3 = parse(inside);
        let key = em_key(inside, &l3);
        let runt = runt_in(mode, inside, &l3, &key);
        let verdict = (!runt).then(|| rewrite(inside, &ETH));
        assert!(after.iter().all(|&b| b == tail), "wrote past the frame");
        results.push((l3, key, verdict, inside.to_vec()));
    }
    assert_eq!(results[0], results[1], "the bytes after the frame changed the outcome");
    let expected = match results[0].2 {
        None => Decision::DropRunt,
        Some(true) => Decision::Forward,
        Some(false) => Decision::DropInvalid,
    };
    assert_eq!(expected, decision);
}

/// Lanes in one group of the vector parse.
const LANES: usize = 8;

/// Bytes a fresh mbuf of the default size holds (RTE_MBUF_DEFAULT_DATAROOM).
const MBUF_ROOM: usize = 2048;

/// The vector parse's read of `frame` ([`dpdk::Simd::tagged_words`] with
/// [`IPV4_DESTINATION`], which LPM and FIB route eight at a time), in each
/// instruction set this CPU has: a lane is tagged exactly when `parse`
/// reads IPv4, with the destination `parse` reads. The eight lanes hold
/// the frame cut short by 0 to 7 bytes, so lanes of different lengths
/// (across every header boundary, over a run of inputs) share a group; their
/// mbufs' bytes after the frame are all 0x00, then all 0xff, which must
/// change nothing. A frame longer than an mbuf's room is not checked.
pub fn check_vector(frame: &[u8]) {
    if frame.len() > MBUF_ROOM {
        return;
    }
    let lanes: [&[u8]; LANES] = std::array::from_fn(|cut| &frame[..frame.len().saturating_sub(cut)]);
    let expected = lanes.map(|lane| match parse(lane) {
        L3::Ipv4(h) => Some(h.dst),
        _ => None,
    });
    // One check at a time holds the group's mbufs (tests run in threads).
    let guard = vector_pool().lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let pool = &*guard;
    for tail in [0x00, 0xff] {
        // The pool holds one group's mbufs: filled with `tail` and freed,
        // they are the lanes' buffers.
        let fill = [tail; MBUF_ROOM];
        let filled: Vec<dpdk::Mbuf> = (0..LANES)
            .map(|_| dpdk::Mbuf::from_frame(pool, &fill).expect("an mbuf of the lanes' pool, filled whole"))
            .collect();
        drop(filled);
        let pkts: Vec<dpdk::Mbuf> = lanes
            .iter()
            .map(|lane| dpdk::Mbuf::from_frame(pool, lane).expect("an mbuf of the lanes' pool for each lane"))
            .collect();
        for simd in dpdk::Simd::available() {
            let (mut words, mut tagged) = ([0u32; LANES], [0u8; 1]);
            let read = simd.tagged_words(&pkts, &IPV4_DESTINATION, &mut words, &mut tagged);
            assert_eq!(read, LANES, "{}: one whole group", simd.name());
            for (i, lane) in lanes.iter().enumerate() {
                let got = (tagged[0] >> i & 1 == 1).then_some(words[i]);
                assert_eq!(
                    got,
                    expected[i],
                    "{} lane {i}, bytes after 0x{tail:02x}: {lane:02x?}",
                    simd.name()
                );
            }
        }
    }
}

/// The pool of [`check_vector`]'s lanes: one group's mbufs, no cache, on an
/// EAL of the test process.
fn vector_pool() -> &'static Mutex<dpdk::Mempool> {
    static POOL: OnceLock<Mutex<dpdk::Mempool>> = OnceLock::new();
    POOL.get_or_init(|| {
        let eal = dpdk::Eal::for_tests(&[]).expect("EAL init");
        Mutex::new(dpdk::Mempool::create(eal, "oracle_lanes", LANES as u32, 0, 0).expect("the lanes' pool"))
    })
}
