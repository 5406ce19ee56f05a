//! Traffic aimed at generated tables (see [`crate::tables`]): each frame
//! goes to a random route or rule, or, for a share of them, to an address no
//! route or rule covers. Valid UDP/TCP only, TTL 64, no IPv4 options.

use std::ops::RangeInclusive;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::tables::{Address, EmRule, Route};
use crate::{Gen, GenOpts, Proto, L4};

/// What the frames look like and how many miss.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Aim {
    pub seed: u64,
    pub count: usize,
    /// Share of frames to addresses outside every route or rule, in percent.
    pub miss_percent: u8,
    /// Frame sizes without FCS, uniform in this range.
    pub sizes: RangeInclusive<usize>,
}

/// Frames to random addresses inside random routes of `v4` and `v6`, and
/// misses. A frame's destination may also lie in a longer route nested in
/// the one drawn: longest-prefix match decides.
pub fn at_routes(aim: &Aim, v4: &[Route<u32>], v6: &[Route<u128>]) -> Vec<Vec<u8>> {
    at_routes_in(Order::Random, aim, v4, v6)
}

/// [`at_routes`], the routes drawn in `order`.
pub fn at_routes_in(order: Order, aim: &Aim, v4: &[Route<u32>], v6: &[Route<u128>]) -> Vec<Vec<u8>> {
    aimed(order, aim, v4, v6, to_route, to_route)
}

/// Frames carrying the exact 5-tuple of random rules of `v4` and `v6`, and
/// misses (a rule's tuple with a destination outside every rule).
pub fn at_em_rules(aim: &Aim, v4: &[EmRule<u32>], v6: &[EmRule<u128>]) -> Vec<Vec<u8>> {
    at_em_rules_in(Order::Random, aim, v4, v6)
}

/// [`at_em_rules`], the rules drawn in `order`.
pub fn at_em_rules_in(order: Order, aim: &Aim, v4: &[EmRule<u32>], v6: &[EmRule<u128>]) -> Vec<Vec<u8>> {
    aimed(order, aim, v4, v6, to_rule, to_rule)
}

/// Which route or rule (of the IPv4 items, then the IPv6 ones) each frame goes to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Order {
    /// A random item per frame: some items get several frames, some none.
    Random,
    /// Items in turn, spread over `files` files of which this is number
    /// `file`: its frame J goes to item `file + J * files` (wrapping around),
    /// so that files of `items / files` frames each together hit every item
    /// exactly once: as many distinct flows as items.
    InTurn { file: usize, files: usize },
}

type Aimer<T> = fn(&mut Gen<'_>, &T, bool) -> Vec<u8>;

/// `aim.count` frames, each aimed by `f4` or `f6` at an item of `v4` or `v6`
/// picked in `order` (at random: every item equally likely, so the families
/// mix as the tables do), or a miss.
fn aimed<T4, T6>(order: Order, aim: &Aim, v4: &[T4], v6: &[T6], f4: Aimer<T4>, f6: Aimer<T6>) -> Vec<Vec<u8>> {
    assert!(
        !v4.is_empty() || !v6.is_empty(),
        "trafficgen: no route or rule to aim at"
    );
    let opts = GenOpts {
        min_size: *aim.sizes.start(),
        max_size: *aim.sizes.end(),
        ..GenOpts::default()
    };
    let mut gen = Gen {
        rng: ChaCha8Rng::seed_from_u64(aim.seed),
        opts: &opts,
    };
    let items = v4.len() + v6.len();
    (0..aim.count)
        .map(|j| {
            let miss = gen.rng.gen_range(0..100) < aim.miss_percent;
            let i = match order {
                Order::Random => gen.rng.gen_range(0..items),
                Order::InTurn { file, files } => (file + j * files) % items,
            };
            match v4.get(i) {
                Some(item) => f4(&mut gen, item, miss),
                None => f6(&mut gen, &v6[i - v4.len()], miss),
            }
        })
        .collect()
}

fn to_route<A: Address>(gen: &mut Gen<'_>, route: &Route<A>, miss: bool) -> Vec<u8> {
    let dst = if miss {
        A::unrouted(&mut gen.rng)
    } else {
        route.addr.random_host(route.depth, &mut gen.rng)
    };
    let src = A::routable(&mut gen.rng);
    let l4 = L4 {
        proto: Proto::Udp,
        sport: gen.rng.gen(),
        dport: gen.rng.gen(),
    };
    gen.plain(src.ip(), dst.ip(), &l4)
}

fn to_rule<A: Address>(gen: &mut Gen<'_>, rule: &EmRule<A>, miss: bool) -> Vec<u8> {
    let dst = if miss { A::unrouted(&mut gen.rng) } else { rule.dst };
    let l4 = L4 {
        proto: if rule.proto == 6 { Proto::Tcp } else { Proto::Udp },
        sport: rule.src_port,
        dport: rule.dst_port,
    };
    gen.plain(rule.src.ip(), dst.ip(), &l4)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tables::{ipv4_em_rules, ipv4_routes, ipv6_em_rules, ipv6_routes, MISS_V4, MISS_V6};
    use etherparse::{NetSlice, SlicedPacket, TransportSlice};
    use std::collections::HashSet;

    const PORTS: [u8; 2] = [0, 1];

    fn aim(count: usize) -> Aim {
        Aim {
            seed: 3,
            count,
            miss_percent: 10,
            sizes: 64..=128,
        }
    }

    /// (source, destination, protocol, source port, destination port) of a
    /// valid UDP/TCP frame; addresses as numbers.
    fn fields(frame: &[u8]) -> (u128, u128, u8, u16, u16) {
        let packet = SlicedPacket::from_ethernet(frame).expect("parses");
        let (src, dst, proto) = match &packet.net {
            Some(NetSlice::Ipv4(ip)) => {
                let h = ip.header();
                (
                    u32::from(h.source_addr()).into(),
                    u32::from(h.destination_addr()).into(),
                    h.protocol().0,
                )
            }
            Some(NetSlice::Ipv6(ip)) => {
                let h = ip.header();
                (h.source_addr().into(), h.destination_addr().into(), h.next_header().0)
            }
            other => panic!("not IP: {other:?}"),
        };
        let (sport, dport) = match &packet.transport {
            Some(TransportSlice::Udp(udp)) => (udp.source_port(), udp.destination_port()),
            Some(TransportSlice::Tcp(tcp)) => (tcp.source_port(), tcp.destination_port()),
            other => panic!("no UDP/TCP: {other:?}"),
        };
        (src, dst, proto, sport, dport)
    }

    fn is_miss(dst: u128) -> bool {
        dst >> 28 == u128::from(MISS_V4 >> 28) || dst >> 120 == MISS_V6 >> 120
    }

    #[test]
    fn frames_go_inside_routes_or_miss() {
        let v4 = ipv4_routes(1, 1000, &PORTS);
        let v6 = ipv6_routes(1, 1000, &PORTS);
        let frames = at_routes(&aim(4000), &v4, &v6);
        let covered = |dst: u128| match u32::try_from(dst) {
            Ok(a) => v4.iter().any(|r| a.network(r.depth) == r.addr),
            Err(_) => v6.iter().any(|r| dst.network(r.depth) == r.addr),
        };
        let misses = frames.iter().filter(|f| is_miss(fields(f).1)).count();
        assert!((300..500).contains(&misses), "{misses} misses");
        assert!(frames
            .iter()
            .map(|f| fields(f).1)
            .all(|dst| is_miss(dst) || covered(dst)));
        assert!(frames.iter().all(|f| (64..=128).contains(&f.len())));
        assert_eq!(frames, at_routes(&aim(4000), &v4, &v6), "same seed, same frames");
    }

    #[test]
    fn in_turn_files_together_hit_every_rule_once() {
        let v4 = ipv4_em_rules(1, 1000, &PORTS, 0);
        let aim = Aim {
            miss_percent: 0,
            ..aim(500)
        };
        let mut tuples = HashSet::new();
        for file in 0..2 {
            let frames = at_em_rules_in(Order::InTurn { file, files: 2 }, &aim, &v4, &[]);
            assert_eq!(frames.len(), 500);
            tuples.extend(frames.iter().map(|f| fields(f)));
        }
        let rules: HashSet<_> = v4
            .iter()
            .map(|r| (u128::from(r.src), u128::from(r.dst), r.proto, r.src_port, r.dst_port))
            .collect();
        assert_eq!(tuples, rules, "1000 frames in 2 files: each of 1000 rules once");
        // More frames than routes wrap around, each frame still to a route.
        let routes = ipv4_routes(1, 10, &PORTS);
        let frames = at_routes_in(Order::InTurn { file: 0, files: 1 }, &aim, &routes, &[]);
        for (j, frame) in frames.iter().enumerate() {
            let route = routes[j % 10];
            assert_eq!(u32::try_from(fields(frame).1).unwrap().network(route.depth), route.addr);
        }
    }

    #[test]
    fn frames_carry_rule_tuples_or_miss() {
        let v4 = ipv4_em_rules(1, 1000, &PORTS, 25);
        let v6 = ipv6_em_rules(1, 10, &PORTS, 25);
        let tuples: HashSet<_> = v4
            .iter()
            .map(|r| (u128::from(r.src), u128::from(r.dst), r.proto, r.src_port, r.dst_port))
            .chain(v6.iter().map(|r| (r.src, r.dst, r.proto, r.src_port, r.dst_port)))
            .collect();
        let frames = at_em_rules(&aim(2000), &v4, &v6);
        let hits = frames.iter().filter(|f| tuples.contains(&fields(f))).count();
        let misses = frames.iter().filter(|f| is_miss(fields(f).1)).count();
        assert_eq!(hits + misses, frames.len());
        assert!((150..250).contains(&misses), "{misses} misses");
    }
}
