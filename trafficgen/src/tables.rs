//! Seeded rule tables of a real router's size and shape, as l3fwd rule files:
//! IPv4 and IPv6 route tables with the public Internet's prefix-length mix,
//! and exact-match tables of 5-tuples.
//!
//! Routes and rules stay inside a known part of the address space, so that
//! traffic aimed outside it is sure to miss (see [`MISS_V4`], [`MISS_V6`]):
//! IPv4 routes lie in 1.0.0.0-223.255.255.255, IPv6 routes in 2000::/4.

use std::collections::HashSet;
use std::fs::File;
use std::hash::Hash;
use std::io::{self, BufWriter, Write};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::ops::RangeInclusive;
use std::path::Path;

use rand::distributions::{Distribution, WeightedIndex};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// 240.0.0.0/4 (reserved): no generated IPv4 route or rule lies there.
pub const MISS_V4: u32 = 0xf000_0000;
/// fd00::/8 (unique local): no generated IPv6 route or rule lies there.
pub const MISS_V6: u128 = 0xfd << 120;
/// First and last IPv4 address routes are drawn from (1.0.0.0-223.255.255.255).
const V4_SPACE: RangeInclusive<u32> = 0x0100_0000..=0xdfff_ffff;
/// IPv6 routes are drawn from the /12 blocks IANA gave the regional
/// registries (top 12 bits), so that prefixes share leading bits as real ones do.
const V6_BLOCKS: [u128; 6] = [0x200, 0x240, 0x260, 0x280, 0x2a0, 0x2c0];

/// IPv4 prefix lengths in routes per 100 000, after the public Internet's
/// table (about 1M routes in 2024): most /24, then /22-/23, /16-/21; a few
/// shorter, and a few longer than /24 (internal routes) to need tbl8 groups.
const V4_MIX: [(RangeInclusive<u8>, u32); 14] = [
    (8..=8, 2),
    (9..=12, 40),
    (13..=15, 160),
    (16..=16, 1300),
    (17..=17, 800),
    (18..=18, 1200),
    (19..=19, 2500),
    (20..=20, 4500),
    (21..=21, 5000),
    (22..=22, 11000),
    (23..=23, 10000),
    (24..=24, 61498),
    (25..=31, 1500),
    (32..=32, 500),
];

/// IPv6 prefix lengths in per mille (about 230K routes in 2025): most /48,
/// then /32, /29 and the nibble lengths /36-/44; a few shorter and longer.
const V6_MIX: [(RangeInclusive<u8>, u32); 13] = [
    (16..=28, 10),
    (29..=29, 40),
    (30..=31, 20),
    (32..=32, 150),
    (33..=35, 55),
    (36..=36, 35),
    (37..=39, 35),
    (40..=40, 60),
    (41..=43, 35),
    (44..=44, 80),
    (45..=47, 85),
    (48..=48, 380),
    (49..=64, 15),
];

/// IPv6 routes longer than /32 sit inside one of (route count / this) /32
/// allocations, as customer and PI prefixes share their registry's blocks.
const V6_ROUTES_PER_ALLOCATION: usize = 8;

/// One route of a generated table: `addr/depth -> port`, host bits zero.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Route<A> {
    pub addr: A,
    pub depth: u8,
    pub port: u8,
}

/// An exact-match rule of a generated table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct EmRule<A> {
    pub dst: A,
    pub src: A,
    pub dst_port: u16,
    pub src_port: u16,
    /// UDP (17) or TCP (6).
    pub proto: u8,
    pub port: u8,
}

/// `n` distinct IPv4 routes with the Internet's prefix-length mix, each to a
/// port drawn from `ports`; the same for the same `seed`.
pub fn ipv4_routes(seed: u64, n: usize, ports: &[u8]) -> Vec<Route<u32>> {
    let rng = &mut ChaCha8Rng::seed_from_u64(seed);
    let depths = Depths::new(&V4_MIX);
    distinct(n, |seen: &mut HashSet<(u32, u8)>| {
        let depth = depths.sample(rng);
        let addr = u32::routable(rng).network(depth);
        seen.insert((addr, depth)).then(|| Route {
            addr,
            depth,
            port: pick(rng, ports),
        })
    })
}

/// `n` distinct IPv6 routes with the Internet's prefix-length mix, each to a
/// port drawn from `ports`; longer prefixes cluster in shared /32s. The
/// same for the same `seed`.
pub fn ipv6_routes(seed: u64, n: usize, ports: &[u8]) -> Vec<Route<u128>> {
    let rng = &mut ChaCha8Rng::seed_from_u64(seed);
    let depths = Depths::new(&V6_MIX);
    let allocations: Vec<u128> = (0..n.div_ceil(V6_ROUTES_PER_ALLOCATION))
        .map(|_| u128::routable(rng).network(32))
        .collect();
    distinct(n, |seen: &mut HashSet<(u128, u8)>| {
        let depth = depths.sample(rng);
        let addr = if depth > 32 {
            allocations[rng.gen_range(0..allocations.len())].random_host(32, rng)
        } else {
            u128::routable(rng)
        }
        .network(depth);
        seen.insert((addr, depth)).then(|| Route {
            addr,
            depth,
            port: pick(rng, ports),
        })
    })
}

/// `n` distinct IPv4 5-tuples, `tcp_percent` of them TCP and the others
/// UDP, each to a port drawn from `ports`; the same for the same `seed`.
pub fn ipv4_em_rules(seed: u64, n: usize, ports: &[u8], tcp_percent: u8) -> Vec<EmRule<u32>> {
    em_rules(seed, n, ports, tcp_percent)
}

/// `n` distinct IPv6 5-tuples, as [`ipv4_em_rules`].
pub fn ipv6_em_rules(seed: u64, n: usize, ports: &[u8], tcp_percent: u8) -> Vec<EmRule<u128>> {
    em_rules(seed, n, ports, tcp_percent)
}

fn em_rules<A: Address>(seed: u64, n: usize, ports: &[u8], tcp_percent: u8) -> Vec<EmRule<A>> {
    let rng = &mut ChaCha8Rng::seed_from_u64(seed);
    distinct(n, |seen: &mut HashSet<EmRule<A>>| {
        let rule = EmRule {
            dst: A::routable(rng),
            src: A::routable(rng),
            dst_port: rng.gen(),
            src_port: rng.gen(),
            proto: if rng.gen_range(0..100) < tcp_percent { 6 } else { 17 },
            port: 0,
        };
        // Uniqueness is by 5-tuple: the port is drawn after the check.
        seen.insert(rule).then(|| EmRule {
            port: pick(rng, ports),
            ..rule
        })
    })
}

/// Calls `draw` until it has returned `n` items; it returns None for a duplicate.
fn distinct<K, T>(n: usize, mut draw: impl FnMut(&mut HashSet<K>) -> Option<T>) -> Vec<T> {
    let mut seen = HashSet::with_capacity(n);
    let mut items = Vec::with_capacity(n);
    while items.len() < n {
        items.extend(draw(&mut seen));
    }
    items
}

/// Prefix lengths drawn from a mix of (lengths, weight): uniform within each range.
struct Depths {
    ranges: Vec<RangeInclusive<u8>>,
    weights: WeightedIndex<u32>,
}

impl Depths {
    fn new(mix: &[(RangeInclusive<u8>, u32)]) -> Self {
        Depths {
            ranges: mix.iter().map(|(r, _)| r.clone()).collect(),
            weights: WeightedIndex::new(mix.iter().map(|&(_, w)| w)).expect("positive weights"),
        }
    }

    fn sample(&self, rng: &mut ChaCha8Rng) -> u8 {
        let range = self.ranges[self.weights.sample(rng)].clone();
        rng.gen_range(range)
    }
}

fn pick(rng: &mut ChaCha8Rng, ports: &[u8]) -> u8 {
    ports[rng.gen_range(0..ports.len())]
}

/// Writes an l3fwd LPM rule file (`R<prefix>/<depth> <port>` lines).
pub fn write_lpm_rules<A: Address>(path: &Path, routes: &[Route<A>]) -> io::Result<()> {
    write_lines(path, routes, |out, r| {
        writeln!(out, "R{}/{} {}", r.addr.ip(), r.depth, r.port)
    })
}

/// Writes an l3fwd exact-match rule file
/// (`R<dst> <src> <dst port> <src port> <proto> <port>` lines).
pub fn write_em_rules<A: Address>(path: &Path, rules: &[EmRule<A>]) -> io::Result<()> {
    write_lines(path, rules, |out, r| {
        let (dst, src) = (r.dst.ip(), r.src.ip());
        writeln!(out, "R{dst} {src} {} {} {} {}", r.dst_port, r.src_port, r.proto, r.port)
    })
}

fn write_lines<T>(
    path: &Path,
    items: &[T],
    line: impl Fn(&mut BufWriter<File>, &T) -> io::Result<()>,
) -> io::Result<()> {
    let mut out = BufWriter::new(File::create(path)?);
    writeln!(out, "# {} rules generated by trafficgen", items.len())?;
    for item in items {
        line(&mut out, item)?;
    }
    out.flush()
}

/// An address as a number: `u32` for IPv4, `u128` for IPv6.
pub trait Address: Copy + Eq + Hash {
    /// 32 or 128.
    const BITS: u8;
    fn from_bits(bits: u128) -> Self;
    fn bits(self) -> u128;
    /// As std's address, for printing.
    fn ip(self) -> IpAddr;
    /// A random address of the space routes and rules are drawn from.
    fn routable(rng: &mut ChaCha8Rng) -> Self;
    /// A random address outside that space: no generated route or rule covers it.
    fn unrouted(rng: &mut ChaCha8Rng) -> Self;

    /// The address with the bits past `depth` cleared.
    fn network(self, depth: u8) -> Self {
        Self::from_bits(self.bits() & !host_mask::<Self>(depth))
    }

    /// A random address inside `self/depth`.
    fn random_host(self, depth: u8, rng: &mut ChaCha8Rng) -> Self {
        Self::from_bits(self.network(depth).bits() | (rng.gen::<u128>() & host_mask::<Self>(depth)))
    }
}

/// The bits past `depth` of an address of `A`.
fn host_mask<A: Address>(depth: u8) -> u128 {
    u128::MAX.checked_shr(128 - u32::from(A::BITS - depth)).unwrap_or(0)
}

impl Address for u32 {
    const BITS: u8 = 32;

    fn from_bits(bits: u128) -> Self {
        bits as u32
    }

    fn bits(self) -> u128 {
        self.into()
    }

    fn ip(self) -> IpAddr {
        Ipv4Addr::from(self).into()
    }

    fn routable(rng: &mut ChaCha8Rng) -> Self {
        rng.gen_range(V4_SPACE)
    }

    fn unrouted(rng: &mut ChaCha8Rng) -> Self {
        MISS_V4 | (rng.gen::<u32>() >> 4)
    }
}

impl Address for u128 {
    const BITS: u8 = 128;

    fn from_bits(bits: u128) -> Self {
        bits
    }

    fn bits(self) -> u128 {
        self
    }

    fn ip(self) -> IpAddr {
        Ipv6Addr::from(self).into()
    }

    fn routable(rng: &mut ChaCha8Rng) -> Self {
        V6_BLOCKS[rng.gen_range(0..V6_BLOCKS.len())] << 116 | rng.gen::<u128>() >> 12
    }

    fn unrouted(rng: &mut ChaCha8Rng) -> Self {
        MISS_V6 | (rng.gen::<u128>() >> 8)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PORTS: [u8; 3] = [0, 1, 5];

    /// Share of routes of `depths`, in percent.
    fn share<A>(routes: &[Route<A>], depths: RangeInclusive<u8>) -> f64 {
        let n = routes.iter().filter(|r| depths.contains(&r.depth)).count();
        100.0 * n as f64 / routes.len() as f64
    }

    fn check_distinct_and_masked<A: Address + std::fmt::Debug>(routes: &[Route<A>], n: usize) {
        assert_eq!(routes.len(), n);
        let prefixes: HashSet<(A, u8)> = routes.iter().map(|r| (r.addr, r.depth)).collect();
        assert_eq!(prefixes.len(), n, "distinct");
        for r in routes {
            assert_eq!(r.addr, r.addr.network(r.depth), "{r:?} has host bits");
            assert!(PORTS.contains(&r.port));
        }
    }

    #[test]
    fn ipv4_routes_mix_prefix_lengths_like_the_internet() {
        let routes = ipv4_routes(1, 100_000, &PORTS);
        check_distinct_and_masked(&routes, 100_000);
        assert!((59.0..64.0).contains(&share(&routes, 24..=24)));
        assert!((19.0..23.0).contains(&share(&routes, 22..=23)));
        assert!((14.0..18.0).contains(&share(&routes, 16..=21)));
        assert!((0.1..0.5).contains(&share(&routes, 8..=15)));
        assert!((1.5..2.5).contains(&share(&routes, 25..=32)));
        // No route reaches the space misses are aimed at.
        assert!(routes
            .iter()
            .all(|r| r.addr >= 0x0100_0000 && r.addr | !u32::MAX.network(r.depth) < MISS_V4));
        assert_eq!(routes, ipv4_routes(1, 100_000, &PORTS), "same seed, same routes");
        assert_ne!(routes, ipv4_routes(2, 100_000, &PORTS));
    }

    #[test]
    fn ipv6_routes_are_mostly_slash48_and_32_to_44_in_registry_blocks() {
        let routes = ipv6_routes(1, 50_000, &PORTS);
        check_distinct_and_masked(&routes, 50_000);
        assert!((35.0..41.0).contains(&share(&routes, 48..=48)));
        assert!((40.0..50.0).contains(&share(&routes, 32..=44)));
        assert!((0.5..3.0).contains(&share(&routes, 16..=28)));
        assert!((0.5..3.0).contains(&share(&routes, 49..=64)));
        for r in &routes {
            assert!(
                V6_BLOCKS.contains(&(r.addr >> 116)),
                "{:x}/{} outside the blocks",
                r.addr,
                r.depth
            );
        }
    }

    #[test]
    fn em_rules_are_distinct_5_tuples() {
        let rules = ipv4_em_rules(1, 10_000, &PORTS, 25);
        let tuples: HashSet<_> = rules
            .iter()
            .map(|r| (r.dst, r.src, r.dst_port, r.src_port, r.proto))
            .collect();
        assert_eq!(tuples.len(), 10_000);
        assert!(rules
            .iter()
            .all(|r| (r.proto == 6 || r.proto == 17) && PORTS.contains(&r.port)));
        let tcp = rules.iter().filter(|r| r.proto == 6).count();
        assert!((2000..3000).contains(&tcp), "{tcp} TCP rules");
        assert!(ipv4_em_rules(1, 100, &PORTS, 0).iter().all(|r| r.proto == 17));
        assert!(rules.iter().all(|r| r.dst < MISS_V4 && r.src < MISS_V4));
        let v6 = ipv6_em_rules(1, 100, &PORTS, 25);
        assert!(v6.iter().all(|r| r.dst >> 120 != MISS_V6 >> 120));
    }

    #[test]
    fn rule_files_are_what_l3fwd_reads() {
        let dir = std::env::temp_dir().join(format!("tables-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let route = Route {
            addr: 0x0a01_0000u32,
            depth: 16,
            port: 3,
        };
        let rule = EmRule {
            dst: 1u128,
            src: 0x2001_0db8u128 << 96,
            dst_port: 9,
            src_port: 1024,
            proto: 17,
            port: 1,
        };
        write_lpm_rules(&dir.join("lpm"), &[route]).unwrap();
        write_em_rules(&dir.join("em"), &[rule]).unwrap();
        let lpm = std::fs::read_to_string(dir.join("lpm")).unwrap();
        let em = std::fs::read_to_string(dir.join("em")).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(lpm.lines().nth(1), Some("R10.1.0.0/16 3"));
        assert_eq!(em.lines().nth(1), Some("R::1 2001:db8:: 9 1024 17 1"));
        assert!(lpm.starts_with('#') && em.starts_with('#'));
    }
}
