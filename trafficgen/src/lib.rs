//! Seeded generator of l3fwd test and demo traffic.
//!
//! Frames aim at the default rule tables in `configs/` (the same as the C
//! sample's built-in ones), which give port N, for N < [`RULE_PORTS`]:
//! - LPM: 198.18.N.0/24 and 2001:200:0:N::/64;
//! - EM: dst 198.18.N.0, src 198.18.N.1, UDP 9 -> 9 (and dst 2001:200:0:N::,
//!   src 2001:200:0:N::1, UDP 9 -> 9).
//!
//! Subnets N >= [`RULE_PORTS`] of the same prefixes have no rule: misses.
//! The same seed, count, mix and options always yield the same frames.
//!
//! [`tables`] generates rule tables of a real router's size instead, and
//! [`aimed`] traffic that touches many of their entries.

#![forbid(unsafe_code)]

use std::net::IpAddr;
use std::ops::Range;

use etherparse::{EtherType, Ethernet2Header, IpHeaders, Ipv4Header, Ipv4Options, Ipv6Header, PacketBuilder};
use rand::distributions::{Distribution, WeightedIndex};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

pub mod aimed;
pub mod cli;
mod pcap;
pub mod tables;
pub use pcap::{read_pcap, write_pcap};

/// Ports 0..RULE_PORTS have a rule in each default table.
pub const RULE_PORTS: u8 = 16;
/// Smallest frame size accepted: the Ethernet minimum without FCS.
pub const MIN_FRAME: usize = 60;
/// Largest frame size accepted: the Ethernet maximum without FCS.
pub const MAX_FRAME: usize = 1514;

const ETH_LEN: usize = 14;
const IPV4_LEN: usize = 20;
const IPV6_LEN: usize = 40;
const UDP_LEN: usize = 8;
const TCP_LEN: usize = 20;
/// The traffic source; the forwarder rewrites both MACs anyway.
const SRC_MAC: [u8; 6] = [0x02, 0, 0, 0, 0xff, 0x01];
/// The forwarder's port.
const DST_MAC: [u8; 6] = [0x02, 0, 0, 0, 0xff, 0x00];
/// The UDP ports of every EM rule.
const EM_L4_PORT: u16 = 9;

/// What a generated frame is meant to exercise.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    /// Valid IPv4 (UDP or TCP, sometimes with options); TTL may be 0 or 1.
    V4,
    /// Valid IPv6 (UDP or TCP).
    V6,
    /// IPv4 the sample drops: version/IHL byte outside 0x45..=0x4F or total
    /// length < 20. At least 34 bytes long.
    InvalidV4,
    /// ARP and other non-IP ethertypes, at least 60 bytes long.
    NonIp,
    /// Shorter than the headers it announces: < 14 bytes, or an IPv4
    /// ethertype and < 34 bytes, or an IPv6 ethertype and < 54 bytes.
    Runt,
}

/// One generated frame and what it is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Frame {
    pub kind: Kind,
    pub data: Vec<u8>,
}

/// Relative weights of each [`Kind`] in the generated traffic.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mix {
    pub v4: u32,
    pub v6: u32,
    pub invalid_v4: u32,
    pub non_ip: u32,
    /// Keep at 0 when comparing with the C sample: it reads past runts.
    pub runt: u32,
}

impl Default for Mix {
    fn default() -> Self {
        Mix {
            v4: 8,
            v6: 4,
            invalid_v4: 1,
            non_ip: 1,
            runt: 0,
        }
    }
}

impl Mix {
    fn weights(&self) -> [(Kind, u32); 5] {
        [
            (Kind::V4, self.v4),
            (Kind::V6, self.v6),
            (Kind::InvalidV4, self.invalid_v4),
            (Kind::NonIp, self.non_ip),
            (Kind::Runt, self.runt),
        ]
    }
}

/// Shape of the generated frames.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GenOpts {
    /// Frame sizes (without FCS) are uniform in `min_size..=max_size`, except
    /// that a valid frame is never shorter than its headers and runts are
    /// shorter by design.
    pub min_size: usize,
    pub max_size: usize,
    /// Aim at the EM rules: most v4/v6 frames carry a rule's exact 5-tuple,
    /// some differ in one field. Otherwise addresses and L4 ports are random
    /// within the LPM routes.
    pub em: bool,
    /// Most traffic goes to ports 0..ports (the enabled ports of a typical
    /// run); some goes to the other ports with rules, some to no rule.
    pub ports: u8,
}

impl Default for GenOpts {
    fn default() -> Self {
        GenOpts {
            min_size: 64,
            max_size: 400,
            em: false,
            ports: 2,
        }
    }
}

/// Checks what [`generate`] requires of its arguments.
pub fn validate(mix: &Mix, opts: &GenOpts) -> Result<(), String> {
    let total: u64 = mix.weights().iter().map(|&(_, w)| u64::from(w)).sum();
    if total == 0 {
        return Err("all traffic weights are 0".into());
    }
    if total > u64::from(u32::MAX) {
        return Err(format!("traffic weights add up to {total}, more than {}", u32::MAX));
    }
    if !(MIN_FRAME <= opts.min_size && opts.min_size <= opts.max_size && opts.max_size <= MAX_FRAME) {
        return Err(format!(
            "frame sizes {}..={} not within {MIN_FRAME}..={MAX_FRAME}",
            opts.min_size, opts.max_size
        ));
    }
    if !(1..=RULE_PORTS).contains(&opts.ports) {
        return Err(format!("ports must be within 1..={RULE_PORTS}"));
    }
    Ok(())
}

/// `count` frames drawn from `mix`, deterministic for `seed`.
///
/// # Panics
/// If [`validate`] rejects `mix` or `opts`.
pub fn generate(seed: u64, count: usize, mix: &Mix, opts: &GenOpts) -> Vec<Vec<u8>> {
    generate_frames(seed, count, mix, opts)
        .into_iter()
        .map(|frame| frame.data)
        .collect()
}

/// Like [`generate`], keeping the [`Kind`] of each frame.
pub fn generate_frames(seed: u64, count: usize, mix: &Mix, opts: &GenOpts) -> Vec<Frame> {
    if let Err(err) = validate(mix, opts) {
        panic!("trafficgen: {err}");
    }
    let weights = mix.weights();
    let pick = WeightedIndex::new(weights.iter().map(|&(_, w)| w)).expect("validated weights");
    let mut gen = Gen {
        rng: ChaCha8Rng::seed_from_u64(seed),
        opts,
    };
    (0..count)
        .map(|_| {
            let kind = weights[pick.sample(&mut gen.rng)].0;
            Frame {
                kind,
                data: gen.frame(kind),
            }
        })
        .collect()
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Proto {
    Udp,
    Tcp,
}

impl Proto {
    fn header_len(self) -> usize {
        match self {
            Proto::Udp => UDP_LEN,
            Proto::Tcp => TCP_LEN,
        }
    }
}

/// An address in the tables' space, for either IP version: subnet `net`
/// (198.18.net.0/24, 2001:200:0:net::/64) and `host` within it.
#[derive(Clone, Copy, Debug)]
struct Addr {
    net: u8,
    host: u8,
}

impl Addr {
    fn v4(self) -> [u8; 4] {
        [198, 18, self.net, self.host]
    }

    fn v6(self) -> [u8; 16] {
        let mut addr = [0; 16];
        addr[..8].copy_from_slice(&[0x20, 0x01, 0x02, 0x00, 0, 0, 0, self.net]);
        addr[15] = self.host;
        addr
    }
}

/// The fields a lookup may use, for either IP version.
#[derive(Clone, Copy, Debug)]
struct Flow {
    dst: Addr,
    src: Addr,
    l4: L4,
}

/// A frame's transport header fields.
#[derive(Clone, Copy, Debug)]
struct L4 {
    proto: Proto,
    sport: u16,
    dport: u16,
}

struct Gen<'a> {
    rng: ChaCha8Rng,
    opts: &'a GenOpts,
}

impl Gen<'_> {
    fn frame(&mut self, kind: Kind) -> Vec<u8> {
        match kind {
            Kind::V4 => self.v4(),
            Kind::V6 => self.v6(),
            Kind::InvalidV4 => self.invalid_v4(),
            Kind::NonIp => self.non_ip(),
            Kind::Runt => self.runt(),
        }
    }

    fn v4(&mut self) -> Vec<u8> {
        let flow = self.flow();
        let size = self.size();
        let room = size.saturating_sub(ETH_LEN + IPV4_LEN + flow.l4.proto.header_len());
        let header = Ipv4Header {
            source: flow.src.v4(),
            destination: flow.dst.v4(),
            time_to_live: self.ttl(),
            identification: self.rng.gen(),
            options: self.ipv4_options(room),
            ..Default::default()
        };
        self.build(IpHeaders::Ipv4(header, Default::default()), &flow.l4, size)
    }

    fn v6(&mut self) -> Vec<u8> {
        let flow = self.flow();
        let size = self.size();
        let header = Ipv6Header {
            source: flow.src.v6(),
            destination: flow.dst.v6(),
            hop_limit: self.ttl(),
            ..Default::default()
        };
        self.build(IpHeaders::Ipv6(header, Default::default()), &flow.l4, size)
    }

    /// A valid frame from `src` to `dst` (both of one family): TTL 64, no
    /// IPv4 options, so that l3fwd's fixed-offset exact-match key sees `l4`.
    fn plain(&mut self, src: IpAddr, dst: IpAddr, l4: &L4) -> Vec<u8> {
        const TTL: u8 = 64;
        let size = self.size();
        let ip = match (src, dst) {
            (IpAddr::V4(src), IpAddr::V4(dst)) => IpHeaders::Ipv4(
                Ipv4Header {
                    source: src.octets(),
                    destination: dst.octets(),
                    time_to_live: TTL,
                    identification: self.rng.gen(),
                    ..Default::default()
                },
                Default::default(),
            ),
            (IpAddr::V6(src), IpAddr::V6(dst)) => IpHeaders::Ipv6(
                Ipv6Header {
                    source: src.octets(),
                    destination: dst.octets(),
                    hop_limit: TTL,
                    ..Default::default()
                },
                Default::default(),
            ),
            _ => panic!("trafficgen: {src} and {dst} are of different families"),
        };
        self.build(ip, l4, size)
    }

    /// A valid IPv4 frame with one field broken the way the sample checks.
    fn invalid_v4(&mut self) -> Vec<u8> {
        /// Bytes just outside the valid range and a few far off.
        const BAD_VERSION_IHL: [u8; 6] = [0x44, 0x40, 0x35, 0x65, 0x50, 0x00];
        let mut frame = self.v4();
        let ip = &mut frame[ETH_LEN..];
        match self.rng.gen_range(0..3) {
            0 => ip[0] = BAD_VERSION_IHL[self.rng.gen_range(0..BAD_VERSION_IHL.len())],
            1 => {
                ip[0] = loop {
                    let byte = self.rng.gen();
                    if !(0x45..=0x4f).contains(&byte) {
                        break byte;
                    }
                }
            }
            _ => ip[2..4].copy_from_slice(&self.rng.gen_range(0..IPV4_LEN as u16).to_be_bytes()),
        }
        frame
    }

    fn non_ip(&mut self) -> Vec<u8> {
        /// ARP, VLAN, LLDP, MPLS, local experimental.
        const ETHER_TYPES: [u16; 5] = [0x0806, 0x8100, 0x88cc, 0x8847, 0x88b5];
        let ether_type = if self.rng.gen_bool(0.5) {
            ETHER_TYPES[self.rng.gen_range(0..ETHER_TYPES.len())]
        } else {
            self.non_ip_ether_type()
        };
        let eth = Ethernet2Header {
            source: SRC_MAC,
            destination: DST_MAC,
            ether_type: EtherType(ether_type),
        };
        let mut frame = eth.to_bytes().to_vec();
        if eth.ether_type == EtherType::ARP {
            frame.extend_from_slice(&arp_request());
        }
        let size = self.size();
        let fill = self.bytes(size.saturating_sub(frame.len()));
        frame.extend(fill);
        frame
    }

    fn non_ip_ether_type(&mut self) -> u16 {
        loop {
            let ether_type = EtherType(self.rng.gen());
            if ether_type != EtherType::IPV4 && ether_type != EtherType::IPV6 {
                return ether_type.0;
            }
        }
    }

    /// A valid frame cut short within the headers it announces.
    fn runt(&mut self) -> Vec<u8> {
        let (mut frame, lens): (_, Range<usize>) = match self.rng.gen_range(0..3) {
            0 => (self.v4(), ETH_LEN..ETH_LEN + IPV4_LEN),
            1 => (self.v6(), ETH_LEN..ETH_LEN + IPV6_LEN),
            _ => (self.v4(), 1..ETH_LEN),
        };
        frame.truncate(self.rng.gen_range(lens));
        frame
    }

    fn flow(&mut self) -> Flow {
        if self.opts.em {
            self.em_flow()
        } else {
            self.lpm_flow()
        }
    }

    /// Random addresses and ports; the destination subnet picks the route.
    fn lpm_flow(&mut self) -> Flow {
        Flow {
            dst: Addr {
                net: self.net(),
                host: self.rng.gen(),
            },
            src: Addr {
                net: self.rng.gen(),
                host: self.rng.gen(),
            },
            l4: L4 {
                proto: if self.rng.gen_ratio(1, 5) {
                    Proto::Tcp
                } else {
                    Proto::Udp
                },
                sport: self.rng.gen(),
                dport: self.rng.gen(),
            },
        }
    }

    /// A rule's exact 5-tuple, or (1 in 4) one that differs in one field.
    fn em_flow(&mut self) -> Flow {
        let net = self.net();
        let mut flow = Flow {
            dst: Addr { net, host: 0 },
            src: Addr { net, host: 1 },
            l4: L4 {
                proto: Proto::Udp,
                sport: EM_L4_PORT,
                dport: EM_L4_PORT,
            },
        };
        if self.rng.gen_ratio(1, 4) {
            match self.rng.gen_range(0..5) {
                0 => flow.dst.host = self.rng.gen_range(1..=u8::MAX),
                1 => flow.src.host = self.rng.gen_range(2..=u8::MAX),
                2 => flow.l4.sport = self.rng.gen_range(EM_L4_PORT + 1..=u16::MAX),
                3 => flow.l4.dport = self.rng.gen_range(EM_L4_PORT + 1..=u16::MAX),
                _ => flow.l4.proto = Proto::Tcp,
            }
        }
        flow
    }

    /// The destination subnet: mostly the routes of ports 0..opts.ports,
    /// sometimes any route (mostly of disabled ports), sometimes no route.
    fn net(&mut self) -> u8 {
        match self.rng.gen_range(0..10) {
            0 => self.rng.gen_range(RULE_PORTS..=u8::MAX),
            1 => self.rng.gen_range(0..RULE_PORTS),
            _ => self.rng.gen_range(0..self.opts.ports),
        }
    }

    fn size(&mut self) -> usize {
        self.rng.gen_range(self.opts.min_size..=self.opts.max_size)
    }

    /// TTL / hop limit, 0 and 1 included often enough to matter.
    fn ttl(&mut self) -> u8 {
        match self.rng.gen_range(0..16) {
            0 => 0,
            1 => 1,
            _ => self.rng.gen_range(2..=u8::MAX),
        }
    }

    /// Sometimes (1 in 8) NOP options, as many words as fit in `room` bytes.
    fn ipv4_options(&mut self, room: usize) -> Ipv4Options {
        const NOP: u8 = 1;
        let max_words = usize::from(Ipv4Options::MAX_LEN) / 4;
        let words = if self.rng.gen_ratio(1, 8) {
            self.rng.gen_range(1..=max_words).min(room / 4)
        } else {
            0
        };
        Ipv4Options::try_from(&[NOP; 40][..words * 4]).expect("at most 40 bytes, 4-byte words")
    }

    /// Ethernet + `ip` + the `l4` header + random payload up to `size`;
    /// lengths and checksums are computed by etherparse.
    fn build(&mut self, ip: IpHeaders, l4: &L4, size: usize) -> Vec<u8> {
        let headers = ETH_LEN + ip.header_len() + l4.proto.header_len();
        let payload = self.bytes(size.saturating_sub(headers));
        let step = PacketBuilder::ethernet2(SRC_MAC, DST_MAC).ip(ip);
        let mut frame = Vec::with_capacity(headers + payload.len());
        match l4.proto {
            Proto::Udp => step.udp(l4.sport, l4.dport).write(&mut frame, &payload),
            Proto::Tcp => step
                .tcp(l4.sport, l4.dport, self.rng.gen(), u16::MAX)
                .write(&mut frame, &payload),
        }
        .expect("frame sizes are far below the length fields' limits");
        frame
    }

    fn bytes(&mut self, len: usize) -> Vec<u8> {
        let mut bytes = vec![0; len];
        self.rng.fill(&mut bytes[..]);
        bytes
    }
}

/// An ARP request body: who has 198.18.0.1, tell 198.18.0.2.
fn arp_request() -> Vec<u8> {
    let mut body = vec![0, 1, 0x08, 0x00, 6, 4, 0, 1];
    body.extend_from_slice(&SRC_MAC);
    body.extend_from_slice(&[198, 18, 0, 2]);
    body.extend_from_slice(&[0; 6]);
    body.extend_from_slice(&[198, 18, 0, 1]);
    body
}

#[cfg(test)]
mod tests {
    use super::*;
    use etherparse::{NetSlice, SlicedPacket, TransportSlice};

    fn all_kinds() -> Mix {
        Mix {
            runt: 1,
            ..Mix::default()
        }
    }

    fn frames(opts: &GenOpts) -> Vec<Frame> {
        generate_frames(7, 2000, &all_kinds(), opts)
    }

    fn of_kind(frames: &[Frame], kind: Kind) -> impl Iterator<Item = &[u8]> {
        frames.iter().filter(move |f| f.kind == kind).map(|f| &f.data[..])
    }

    #[test]
    fn deterministic_for_a_seed() {
        let opts = GenOpts::default();
        assert_eq!(frames(&opts), frames(&opts));
        assert_ne!(
            generate(1, 100, &all_kinds(), &opts),
            generate(2, 100, &all_kinds(), &opts)
        );
    }

    #[test]
    fn every_kind_appears() {
        let frames = frames(&GenOpts::default());
        for (kind, _) in all_kinds().weights() {
            assert!(of_kind(&frames, kind).next().is_some(), "{kind:?}");
        }
    }

    #[test]
    fn sizes_in_range() {
        let opts = GenOpts {
            min_size: 100,
            max_size: 200,
            ..GenOpts::default()
        };
        for frame in frames(&opts).iter().filter(|f| f.kind != Kind::Runt) {
            assert!((100..=200).contains(&frame.data.len()), "{frame:?}");
        }
    }

    #[test]
    fn valid_v4_parses_with_correct_checksums() {
        for em in [false, true] {
            let frames = frames(&GenOpts {
                em,
                ..GenOpts::default()
            });
            for data in of_kind(&frames, Kind::V4) {
                let packet = SlicedPacket::from_ethernet(data).expect("parses");
                let Some(NetSlice::Ipv4(ip)) = &packet.net else {
                    panic!("not IPv4: {data:?}");
                };
                let header = ip.header().to_header();
                assert_eq!(header.header_checksum, header.calc_header_checksum());
                assert_eq!(usize::from(header.total_len), data.len() - ETH_LEN);
                match &packet.transport {
                    Some(TransportSlice::Udp(udp)) => assert_eq!(
                        udp.checksum(),
                        udp.to_header().calc_checksum_ipv4(&header, udp.payload()).unwrap()
                    ),
                    Some(TransportSlice::Tcp(tcp)) => assert_eq!(
                        tcp.checksum(),
                        tcp.to_header().calc_checksum_ipv4(&header, tcp.payload()).unwrap()
                    ),
                    other => panic!("no UDP/TCP: {other:?}"),
                }
            }
        }
    }

    #[test]
    fn v4_has_options_and_low_ttls_sometimes() {
        let frames = frames(&GenOpts::default());
        let v4: Vec<_> = of_kind(&frames, Kind::V4).collect();
        assert!(v4.iter().any(|f| (0x46..=0x4f).contains(&f[ETH_LEN])));
        for ttl in [0, 1] {
            assert!(v4.iter().any(|f| f[ETH_LEN + 8] == ttl));
        }
    }

    #[test]
    fn invalid_v4_fails_the_samples_checks() {
        for data in of_kind(&frames(&GenOpts::default()), Kind::InvalidV4) {
            assert!(data.len() >= ETH_LEN + IPV4_LEN);
            assert_eq!(data[12..14], [0x08, 0x00]);
            let ip = &data[ETH_LEN..];
            let total_len = u16::from_be_bytes([ip[2], ip[3]]);
            assert!(!(0x45..=0x4f).contains(&ip[0]) || total_len < IPV4_LEN as u16);
        }
    }

    #[test]
    fn non_ip_is_long_enough() {
        for data in of_kind(&frames(&GenOpts::default()), Kind::NonIp) {
            assert!(data.len() >= MIN_FRAME);
            assert!(data[12..14] != [0x08, 0x00] && data[12..14] != [0x86, 0xdd]);
        }
    }

    #[test]
    fn runts_are_shorter_than_announced_headers() {
        for data in of_kind(&frames(&GenOpts::default()), Kind::Runt) {
            let announced = match data.get(12..14) {
                None => ETH_LEN,
                Some([0x08, 0x00]) => ETH_LEN + IPV4_LEN,
                Some([0x86, 0xdd]) => ETH_LEN + IPV6_LEN,
                Some(other) => panic!("runt of ethertype {other:?}"),
            };
            assert!(!data.is_empty() && data.len() < announced, "{data:?}");
        }
    }

    #[test]
    fn em_mode_mostly_hits_rules() {
        let frames = frames(&GenOpts {
            em: true,
            ..GenOpts::default()
        });
        let v4: Vec<_> = of_kind(&frames, Kind::V4).collect();
        let hits = v4
            .iter()
            .filter(|f| {
                let (ip, l4) = (&f[ETH_LEN..], &f[ETH_LEN + IPV4_LEN..]);
                let net = ip[18];
                ip[0] == 0x45
                    && ip[9] == 17
                    && net < RULE_PORTS
                    && ip[12..20] == [198, 18, net, 1, 198, 18, net, 0]
                    && l4[..4] == [0, 9, 0, 9]
            })
            .count();
        assert!(hits * 2 > v4.len() && hits < v4.len(), "{hits} of {}", v4.len());
    }

    #[test]
    fn pcap_round_trip() {
        let frames = generate(3, 50, &all_kinds(), &GenOpts::default());
        let path = std::env::temp_dir().join(format!("trafficgen-{}.pcap", std::process::id()));
        write_pcap(&path, &frames).unwrap();
        let read = read_pcap(&path);
        std::fs::remove_file(&path).unwrap();
        assert_eq!(read.unwrap(), frames);
    }

    #[test]
    fn empty_file_reads_as_no_frames() {
        let path = std::env::temp_dir().join(format!("trafficgen-empty-{}.pcap", std::process::id()));
        std::fs::write(&path, b"").unwrap();
        let read = read_pcap(&path);
        std::fs::remove_file(&path).unwrap();
        assert!(read.unwrap().is_empty());
    }

    #[test]
    fn validate_rejects_bad_options() {
        let mix = Mix::default();
        let zero = Mix {
            v4: 0,
            v6: 0,
            invalid_v4: 0,
            non_ip: 0,
            runt: 0,
        };
        assert!(validate(&mix, &GenOpts::default()).is_ok());
        assert!(validate(&zero, &GenOpts::default()).is_err());
        for (min_size, max_size, ports) in [(59, 100, 2), (100, 99, 2), (60, 1515, 2), (64, 64, 0), (64, 64, 17)] {
            let opts = GenOpts {
                min_size,
                max_size,
                ports,
                ..GenOpts::default()
            };
            assert!(validate(&mix, &opts).is_err(), "{opts:?}");
        }
    }
}
