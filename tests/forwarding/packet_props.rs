//! Property tests of the per-frame code (`packet::parse`,
//! `packet::rewrite`, `mode::em_key`) on hostile input: arbitrary bytes and
//! lengths 0..=2048, frames shorter than every header, IPv4 options and
//! IHL/total-length lies, IPv6 with short payloads, VLAN tags. Every frame
//! goes through the contract in tests/oracle (no panic, one decision, no
//! read past the frame, rewrite only of MACs/TTL/checksum), in every lookup
//! mode. The cargo-fuzz target in fuzz/ checks the same contract.

use crate::oracle::{check, check_vector, Decision};
use l3fwd_modes::MODES;
use l3fwd_rs::dataplane::mode::{Em, Lpm, Mode};
use proptest::collection::vec;
use proptest::prelude::*;

const MAX_FRAME: usize = 2048;

/// LPM's and EM's decisions for `frame`, once the oracle has checked it in
/// every mode and in the vector parse.
fn decide(frame: &[u8]) -> (Decision, Decision) {
    for mode in MODES {
        check(frame, mode);
    }
    check_vector(frame);
    (check(frame, &Lpm::INFO), check(frame, &Em::INFO))
}

/// A length to cut a frame to: anywhere up to 2048, often short enough to
/// cut into the headers.
fn cut() -> impl Strategy<Value = usize> {
    prop_oneof![0..=MAX_FRAME, 0..=80usize]
}

fn eth(ethertype: [u8; 2]) -> Vec<u8> {
    let mut f = vec![0x02, 0, 0, 0, 0xee, 0x01, 0x02, 0, 0, 0, 0xee, 0x02];
    f.extend_from_slice(&ethertype);
    f
}

/// IPv4 with any version/IHL byte (mostly plausible ones), options filling
/// what the IHL claims, a total length that may lie, any protocol, and TCP
/// or UDP ports and payload after the header; then cut.
fn ipv4() -> impl Strategy<Value = Vec<u8>> {
    (
        prop_oneof![0x45..=0x4fu8, any::<u8>()],
        prop::option::of(any::<u16>()),
        any::<u8>(),
        prop_oneof![Just(6u8), Just(17u8), any::<u8>()],
        any::<[u8; 8]>(),
        vec(any::<u8>(), 0..MAX_FRAME),
        cut(),
    )
        .prop_map(|(ver_ihl, total_len_lie, ttl, proto, addrs, payload, len)| {
            let ihl = usize::from(ver_ihl & 0x0f).max(5);
            let mut f = eth([0x08, 0x00]);
            let total_len = total_len_lie.unwrap_or((ihl * 4 + payload.len()) as u16);
            f.extend_from_slice(&[ver_ihl, 0]);
            f.extend_from_slice(&total_len.to_be_bytes());
            f.extend_from_slice(&[0x12, 0x34, 0x40, 0x00, ttl, proto, 0xbe, 0xef]);
            f.extend_from_slice(&addrs);
            // Options: NOPs ended by an end-of-list, as many words as the
            // IHL claims.
            let options = (ihl - 5) * 4;
            f.extend((1..=options).map(|i| if i == options { 0 } else { 1 }));
            f.extend_from_slice(&payload);
            f.truncate(len);
            f
        })
}

/// IPv6 with any next header (TCP, UDP, extension headers, other), a
/// payload length that may lie, and a payload that may be too short for
/// the ports; then cut.
fn ipv6() -> impl Strategy<Value = Vec<u8>> {
    (
        prop_oneof![Just(6u8), Just(17u8), Just(0u8), Just(44u8), Just(58u8), any::<u8>()],
        prop::option::of(any::<u16>()),
        any::<[u8; 32]>(),
        vec(any::<u8>(), 0..MAX_FRAME),
        cut(),
    )
        .prop_map(|(next_header, payload_len_lie, addrs, payload, len)| {
            let mut f = eth([0x86, 0xdd]);
            let payload_len = payload_len_lie.unwrap_or(payload.len() as u16);
            f.extend_from_slice(&[0x60, 0, 0, 0]);
            f.extend_from_slice(&payload_len.to_be_bytes());
            f.extend_from_slice(&[next_header, 64]);
            f.extend_from_slice(&addrs);
            f.extend_from_slice(&payload);
            f.truncate(len);
            f
        })
}

/// An 802.1Q or 802.1ad tag in front of an IPv4 or IPv6 packet.
fn vlan() -> impl Strategy<Value = Vec<u8>> {
    (
        prop_oneof![Just([0x81u8, 0x00]), Just([0x88u8, 0xa8])],
        any::<u16>(),
        prop_oneof![ipv4(), ipv6()],
        cut(),
    )
        .prop_map(|(tpid, tci, inner, len)| {
            let mut f = eth(tpid);
            f.extend_from_slice(&tci.to_be_bytes());
            f.extend_from_slice(inner.get(12..).unwrap_or_default());
            f.truncate(len);
            f
        })
}

/// Any bytes behind an IP ethertype, or no structure at all.
fn raw() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        vec(any::<u8>(), 0..=MAX_FRAME),
        (
            prop_oneof![Just([0x08u8, 0x00]), Just([0x86u8, 0xdd])],
            vec(any::<u8>(), 0..=MAX_FRAME)
        )
            .prop_map(|(ethertype, mut f)| {
                if f.len() >= 14 {
                    f[12..14].copy_from_slice(&ethertype);
                }
                f
            }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn arbitrary_bytes_get_one_decision(frame in raw()) {
        decide(&frame);
    }

    #[test]
    fn ipv4_with_options_and_lying_lengths(frame in ipv4()) {
        let (lpm, em) = decide(&frame);
        // Both modes agree except where EM needs the ports and LPM does not.
        if frame.len() >= 14 + 20 + 4 {
            prop_assert_eq!(lpm, em);
        }
    }

    #[test]
    fn ipv6_with_short_payloads(frame in ipv6()) {
        let (lpm, em) = decide(&frame);
        prop_assert_ne!(lpm, Decision::DropInvalid, "IPv6 has no RFC 1812 check");
        prop_assert_ne!(em, Decision::DropInvalid);
    }

    #[test]
    fn vlan_tagged_frames_go_back_unchanged_but_macs(frame in vlan()) {
        // As in the C sample: not IP to the forwarder, back out of the input
        // port with new MACs; a tagged frame shorter than 14 bytes is a runt.
        let expected = if frame.len() < 14 { Decision::DropRunt } else { Decision::Forward };
        prop_assert_eq!(decide(&frame), (expected, expected));
    }
}

/// Every length from 0 to 2048 of a valid IPv4/UDP and IPv6/UDP frame, and
/// every version/IHL byte: runts exactly below the headers each mode reads.
#[test]
fn every_length_and_every_version_ihl_byte() {
    let mut v4 = eth([0x08, 0x00]);
    v4.extend_from_slice(&[
        0x45, 0, 0x07, 0xf2, 0, 0, 0, 0, 64, 17, 0, 0, 10, 0, 0, 1, 198, 18, 1, 1, 0, 9, 0, 9,
    ]);
    v4.resize(MAX_FRAME, 0xab);
    let mut v6 = eth([0x86, 0xdd]);
    v6.extend_from_slice(&[0x60, 0, 0, 0, 0x07, 0xc2, 17, 64]);
    v6.extend_from_slice(&[0x20; 32]);
    v6.resize(MAX_FRAME, 0xcd);
    for len in 0..=MAX_FRAME {
        let (lpm, em) = decide(&v4[..len]);
        assert_eq!(lpm == Decision::DropRunt, len < 34, "IPv4 LPM, {len} bytes");
        assert_eq!(em == Decision::DropRunt, len < 38, "IPv4 EM, {len} bytes");
        let (lpm, em) = decide(&v6[..len]);
        assert_eq!(lpm == Decision::DropRunt, len < 54, "IPv6 LPM, {len} bytes");
        assert_eq!(em == Decision::DropRunt, len < 58, "IPv6 EM, {len} bytes");
    }
    for ver_ihl in 0..=u8::MAX {
        let mut f = v4[..64].to_vec();
        f[14] = ver_ihl;
        let expected = if (0x45..=0x4f).contains(&ver_ihl) {
            Decision::Forward
        } else {
            Decision::DropInvalid
        };
        assert_eq!(check(&f, &Lpm::INFO), expected, "version/IHL {ver_ihl:#04x}");
    }
}

/// The generator's labels and the packet code agree on every frame of a
/// large mixed sample, runts included.
#[test]
fn generated_traffic_is_decided_as_labelled() {
    use trafficgen::{generate_frames, GenOpts, Kind, Mix};
    let mix = Mix {
        runt: 2,
        ..Mix::default()
    };
    for em in [false, true] {
        let opts = GenOpts {
            min_size: 60,
            max_size: 1514,
            em,
            ..GenOpts::default()
        };
        for frame in generate_frames(7, 5000, &mix, &opts) {
            let expected = match frame.kind {
                Kind::V4 | Kind::V6 | Kind::NonIp => Decision::Forward,
                Kind::InvalidV4 => Decision::DropInvalid,
                Kind::Runt => Decision::DropRunt,
            };
            assert_eq!(
                check(&frame.data, &Lpm::INFO),
                expected,
                "{:?} {:02x?}",
                frame.kind,
                frame.data
            );
        }
    }
}
