//! The exact-match tables: rte_hash from key to the output port (the
//! sample's `ipv4_l3fwd_out_if`), stored with the key, so a flow can be
//! added or deleted while lcores look up ([`EmTables::writer`]).

use std::fmt;
use std::net::{Ipv4Addr, Ipv6Addr};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Instant;

use dpdk::{DpdkError, Hash, HashWriter, Qsbr};

use crate::key::{FiveTuple, Ipv4Key, Ipv6Key};
use crate::rules::Rule;

/// l3fwd's table size (`L3FWD_HASH_ENTRIES` on 64-bit). 22.11 uses it
/// whatever `--hash-entry-num` says ("Hash entry number will be ignored");
/// l3fwd-rs sizes each table with that option, or this: the room
/// `flow add` has beyond the rule files.
pub const DEFAULT_HASH_ENTRIES: u32 = 4 * 1024 * 1024;

/// `RTE_MAX_ETHPORTS`: a hit on a port at or above it goes back to the input port.
const MAX_PORTS: u8 = dpdk::MAX_PORTS as u8;

/// Width of the C sample's `1 << if_out` (a 32-bit int): x86 takes the
/// shift count modulo this, so its "is the port enabled" test wraps.
const SHIFT_WIDTH: u8 = 32;

/// rte_hash refuses tables smaller than one bucket.
const MIN_ENTRIES: u32 = 8;

/// Stored for rules whose port is disabled or out of range: a hit on them
/// answers "no route", like a miss. Never a real port, since it is >=
/// `MAX_PORTS`.
const NO_ROUTE: u8 = u8::MAX;

/// IPv4 and IPv6 exact-match tables: read by the lcores, written in
/// place by their [`EmWriter`].
pub struct EmTables {
    v4: Table<16>,
    v6: Table<48>,
}

/// A table could not be created or a rule not added.
#[derive(Debug)]
pub enum TableError {
    /// rte_hash_create failed.
    Create {
        /// `"IPv4"` or `"IPv6"`.
        family: &'static str,
        /// DPDK's error.
        source: DpdkError,
    },
    /// rte_hash_add_key failed (the table is full).
    Add {
        /// `"IPv4"` or `"IPv6"`.
        family: &'static str,
        /// The rule's line.
        line: usize,
        /// DPDK's error.
        source: DpdkError,
    },
}

impl fmt::Display for TableError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Create { family, source } => write!(f, "{family} exact-match table: {source}"),
            Self::Add { family, line, source } => {
                write!(f, "{family} exact-match table: rule of line {line}: {source}")
            }
        }
    }
}

impl std::error::Error for TableError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Create { source, .. } | Self::Add { source, .. } => Some(source),
        }
    }
}

impl EmTables {
    /// Builds both tables on `socket`, each sized for `entries` keys (or
    /// its rule count, if larger; an empty family gets a minimal table).
    ///
    /// As in the C sample, a rule is loaded only if `enabled` accepts its
    /// port modulo 32 (C tests `1 << if_out`, whose shift count x86 takes
    /// modulo 32), so a later duplicate to a disabled port leaves an earlier
    /// one in place; a later duplicate that is loaded replaces the earlier
    /// one (and is logged). A hit on a loaded rule whose port is >= 32 or
    /// not enabled answers "no route", like a miss.
    pub fn new(
        eal: &dpdk::Eal,
        entries: u32,
        socket: i32,
        v4: &[Rule<Ipv4Addr>],
        v6: &[Rule<Ipv6Addr>],
        enabled: impl Fn(u8) -> bool,
    ) -> Result<EmTables, TableError> {
        Ok(EmTables {
            v4: Table::build::<_, Ipv4Key>(eal, "IPv4", entries, socket, v4, &enabled)?,
            v6: Table::build::<_, Ipv6Key>(eal, "IPv6", entries, socket, v6, &enabled)?,
        })
    }

    /// Output ports of IPv4 keys, handed to rte_hash as `batching` says:
    /// `each` gets the index of each key and its port, or None when no rule
    /// routes it. Every batching gives the same answers.
    #[inline]
    pub fn lookup_v4(&self, keys: &[Ipv4Key], batching: Batching, each: impl FnMut(usize, Option<u16>)) {
        self.v4.lookup(keys, batching, each);
    }

    /// Output ports of IPv6 keys, as [`Self::lookup_v4`].
    #[inline]
    pub fn lookup_v6(&self, keys: &[Ipv6Key], batching: Batching, each: impl FnMut(usize, Option<u16>)) {
        self.v6.lookup(keys, batching, each);
    }
}

/// The one writer of live [`EmTables`], on the control thread.
pub struct EmWriter {
    v4: FamilyWriter<16>,
    v6: FamilyWriter<48>,
}

struct FamilyWriter<const N: usize> {
    hash: HashWriter<N>,
    family: &'static str,
    capacity: u32,
}

impl EmTables {
    /// Hands the writing to an [`EmWriter`] for tables the lcores read
    /// under `qsbr` (see [`dpdk::Hash::writer`]).
    pub fn writer(&mut self, qsbr: &Arc<Qsbr>) -> Result<EmWriter, DpdkError> {
        Ok(EmWriter {
            v4: self.v4.writer(qsbr)?,
            v6: self.v6.writer(qsbr)?,
        })
    }
}

impl EmWriter {
    /// Adds the flow of `tuple` to `port`, or gives it `port` if present.
    /// A full table answers which option sizes it, and is unchanged.
    pub fn add_v4(&mut self, tuple: &FiveTuple<Ipv4Addr>, port: u8) -> Result<(), String> {
        self.v4.add(Ipv4Key::from(tuple).as_ref(), port)
    }

    /// [`EmWriter::add_v4`] for IPv6.
    pub fn add_v6(&mut self, tuple: &FiveTuple<Ipv6Addr>, port: u8) -> Result<(), String> {
        self.v6.add(Ipv6Key::from(tuple).as_ref(), port)
    }

    /// The flows the tables hold: IPv4, IPv6.
    pub fn flows(&self) -> [usize; 2] {
        [self.v4.hash.len(), self.v6.hash.len()]
    }

    /// The flows the tables hold, as rule-file lines (`flow del` takes
    /// them), IPv4 then IPv6, each family sorted.
    pub fn flow_lines(&self) -> Vec<String> {
        fn line<A: std::fmt::Display>(t: FiveTuple<A>, port: usize) -> String {
            let (dst, src, dport, sport, proto) = (t.dst, t.src, t.dst_port, t.src_port, t.proto);
            format!("R{dst} {src} {dport} {sport} {proto:#04x} {port}")
        }
        let mut v4 = Vec::new();
        self.v4
            .hash
            .for_each(|k, port| v4.push((FiveTuple::<Ipv4Addr>::of_key(k), port)));
        let mut v6 = Vec::new();
        self.v6
            .hash
            .for_each(|k, port| v6.push((FiveTuple::<Ipv6Addr>::of_key(k), port)));
        v4.sort_by_key(|(t, _)| (t.dst, t.src, t.dst_port, t.src_port, t.proto));
        v6.sort_by_key(|(t, _)| (t.dst, t.src, t.dst_port, t.src_port, t.proto));
        let v4 = v4.into_iter().map(|(t, p)| line(t, p));
        v4.chain(v6.into_iter().map(|(t, p)| line(t, p))).collect()
    }

    /// Deletes the flow of `tuple`; says so if there is none.
    pub fn del_v4(&mut self, tuple: &FiveTuple<Ipv4Addr>) -> Result<(), String> {
        self.v4.del(Ipv4Key::from(tuple).as_ref())
    }

    /// [`EmWriter::del_v4`] for IPv6.
    pub fn del_v6(&mut self, tuple: &FiveTuple<Ipv6Addr>) -> Result<(), String> {
        self.v6.del(Ipv6Key::from(tuple).as_ref())
    }
}

impl<const N: usize> FamilyWriter<N> {
    fn add(&mut self, key: &[u8; N], port: u8) -> Result<(), String> {
        let port = if port < MAX_PORTS { port } else { NO_ROUTE };
        match self.hash.insert(key, port.into()) {
            Ok(_) => Ok(()),
            Err(e) if e.is_out_of_space() => Err(format!(
                "the {} exact-match table is full ({} entries; --hash-entry-num sizes it)",
                self.family, self.capacity
            )),
            Err(e) => Err(format!("{} exact-match table: {e}", self.family)),
        }
    }

    fn del(&mut self, key: &[u8; N]) -> Result<(), String> {
        match self.hash.remove(key) {
            Ok(Some(_)) => Ok(()),
            Ok(None) => Err("no such flow to delete".into()),
            Err(e) => Err(format!("{} exact-match table: {e}", self.family)),
        }
    }
}

/// How a burst's keys go to rte_hash.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Batching {
    /// Bulk lookups of up to `group` keys ([`Batching::WHOLE_BURST`] by
    /// default). rte_hash prefetches the buckets of all the keys of one
    /// call before it compares the first, so the larger the group, the more
    /// misses overlap and the fewer calls a burst costs. C l3fwd looks up
    /// groups of 8 (`EM_HASH_LOOKUP_COUNT`), which it needs to test each
    /// group's packet types; `--em-lookup-group 8` measures that choice.
    Bulk { group: usize },
    /// One `rte_hash_lookup` per key (C built with `NO_HASH_MULTI_LOOKUP`).
    Sequential,
}

impl Batching {
    /// A whole burst (up to [`dpdk::HASH_BULK_MAX`] keys) per call.
    pub const WHOLE_BURST: Batching = Batching::Bulk {
        group: dpdk::HASH_BULK_MAX,
    };
}

/// One family's table, of `N`-byte keys, each with its output port or
/// [`NO_ROUTE`] stored beside it.
struct Table<const N: usize> {
    hash: Hash<N>,
    family: &'static str,
    capacity: u32,
}

impl<const N: usize> Table<N> {
    fn build<A, K>(
        eal: &dpdk::Eal,
        family: &'static str,
        entries: u32,
        socket: i32,
        rules: &[Rule<A>],
        enabled: &impl Fn(u8) -> bool,
    ) -> Result<Self, TableError>
    where
        K: for<'a> From<&'a FiveTuple<A>> + AsRef<[u8; N]>,
    {
        // rte_hash names must be unique in the process.
        static TABLES: AtomicU32 = AtomicU32::new(0);
        let start = Instant::now();
        let rule_count = u32::try_from(rules.len()).unwrap_or(u32::MAX);
        let capacity = if rules.is_empty() {
            MIN_ENTRIES
        } else {
            entries.max(rule_count).max(MIN_ENTRIES)
        };
        let name = format!("em_{family}_{}", TABLES.fetch_add(1, Ordering::Relaxed));
        let create = |source| TableError::Create { family, source };
        let mut hash = Hash::<N>::new(eal, &name, capacity, socket).map_err(create)?;
        let mut skipped = 0;
        for rule in rules {
            if !enabled(rule.port % SHIFT_WIDTH) {
                skipped += 1;
                continue;
            }
            let key = K::from(&rule.tuple);
            let add = |source| TableError::Add {
                family,
                line: rule.line,
                source,
            };
            let port = if rule.port < MAX_PORTS && enabled(rule.port) {
                rule.port
            } else {
                NO_ROUTE
            };
            if hash.insert(key.as_ref(), port.into()).map_err(add)?.is_some() {
                let line = rule.line;
                log::warn!("EM: {family} rule of line {line} has the 5-tuple of an earlier rule and replaces it");
            }
        }
        log::info!(
            "EM: {family}: added {} rules ({skipped} to disabled ports skipped) to a {capacity}-entry table in {:.1?}",
            rules.len() - skipped,
            start.elapsed()
        );
        Ok(Self { hash, family, capacity })
    }

    fn writer(&mut self, qsbr: &Arc<Qsbr>) -> Result<FamilyWriter<N>, DpdkError> {
        Ok(FamilyWriter {
            hash: self.hash.writer(qsbr)?,
            family: self.family,
            capacity: self.capacity,
        })
    }

    /// The port stored for a rule, if it routes.
    #[inline(always)]
    fn port_of(value: Option<usize>) -> Option<u16> {
        match value? {
            v if v == NO_ROUTE.into() => None,
            port => Some(port as u16),
        }
    }

    #[inline(always)]
    fn lookup<K: AsRef<[u8; N]>>(&self, keys: &[K], batching: Batching, mut each: impl FnMut(usize, Option<u16>)) {
        match batching {
            // The default: the burst in one call, as before groups existed.
            Batching::Bulk { group } if group >= keys.len() => {
                self.hash.lookup_bulk(keys, |i, value| each(i, Self::port_of(value)))
            }
            Batching::Bulk { group } => {
                for (g, keys) in keys.chunks(group).enumerate() {
                    self.hash
                        .lookup_bulk(keys, |i, value| each(g * group + i, Self::port_of(value)));
                }
            }
            Batching::Sequential => {
                for (i, key) in keys.iter().enumerate() {
                    each(i, Self::port_of(self.hash.lookup(key.as_ref())));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::{load_v4, load_v6};
    use proptest::prelude::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;
    use std::collections::HashMap;
    use std::path::Path;

    fn eal() -> &'static dpdk::Eal {
        dpdk::Eal::for_tests(&[]).expect("EAL init")
    }

    fn all_ports(_: u8) -> bool {
        true
    }

    fn v4_rule(n: u32, port: u8, line: usize) -> Rule<Ipv4Addr> {
        Rule {
            tuple: FiveTuple {
                dst: Ipv4Addr::from(n),
                src: Ipv4Addr::from(!n),
                dst_port: n as u16,
                src_port: (n >> 16) as u16,
                proto: if n & 1 == 0 { 6 } else { 17 },
            },
            port,
            line,
        }
    }

    fn v6_rule(n: u32, port: u8, line: usize) -> Rule<Ipv6Addr> {
        let t = v4_rule(n, port, line).tuple;
        Rule {
            tuple: FiveTuple {
                dst: t.dst.to_ipv6_mapped(),
                src: Ipv6Addr::from(u128::from(n) << 64),
                dst_port: t.dst_port,
                src_port: t.src_port,
                proto: t.proto,
            },
            port,
            line,
        }
    }

    fn v4_keys(rules: &[Rule<Ipv4Addr>]) -> Vec<Ipv4Key> {
        rules.iter().map(|r| Ipv4Key::from(&r.tuple)).collect()
    }

    fn v6_keys(rules: &[Rule<Ipv6Addr>]) -> Vec<Ipv6Key> {
        rules.iter().map(|r| Ipv6Key::from(&r.tuple)).collect()
    }

    /// Every batching tried: a whole burst, C's groups of 8, groups that
    /// leave a remainder, one key per call, and one by one.
    const BATCHINGS: [Batching; 5] = [
        Batching::WHOLE_BURST,
        Batching::Bulk { group: 8 },
        Batching::Bulk { group: 3 },
        Batching::Bulk { group: 1 },
        Batching::Sequential,
    ];

    /// IPv4 lookups in every batching, checked equal; every key answered once.
    fn lookup_v4(t: &EmTables, keys: &[Ipv4Key]) -> Vec<Option<u16>> {
        let all = BATCHINGS.map(|b| answers(keys.len(), |each| t.lookup_v4(keys, b, each)));
        assert!(all.iter().all(|a| *a == all[0]), "{all:?}");
        all[0].clone()
    }

    /// IPv6 lookups in every batching, checked equal; every key answered once.
    fn lookup_v6(t: &EmTables, keys: &[Ipv6Key]) -> Vec<Option<u16>> {
        let all = BATCHINGS.map(|b| answers(keys.len(), |each| t.lookup_v6(keys, b, each)));
        assert!(all.iter().all(|a| *a == all[0]), "{all:?}");
        all[0].clone()
    }

    /// What a lookup of `n` keys answered, checking each index came once.
    fn answers(n: usize, lookup: impl FnOnce(&mut dyn FnMut(usize, Option<u16>))) -> Vec<Option<u16>> {
        let mut out = vec![None; n];
        let mut seen = vec![0; n];
        lookup(&mut |i, port| {
            out[i] = port;
            seen[i] += 1;
        });
        assert!(seen.iter().all(|&s| s == 1), "answers per key: {seen:?}");
        out
    }

    #[test]
    fn default_rules_route_to_their_ports() {
        let configs = Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs");
        let v4 = load_v4(configs.join("em_v4.cfg")).unwrap();
        let v6 = load_v6(configs.join("em_v6.cfg")).unwrap();
        let t = EmTables::new(eal(), DEFAULT_HASH_ENTRIES, 0, &v4, &v6, |p| p < 4).unwrap();
        let expected: Vec<Option<u16>> = (0..16).map(|p| (p < 4).then_some(p)).collect();
        assert_eq!(lookup_v4(&t, &v4_keys(&v4)), expected);
        assert_eq!(lookup_v6(&t, &v6_keys(&v6)), expected);
        let miss = Ipv4Key::from(&FiveTuple {
            proto: 6,
            ..v4[0].tuple
        });
        assert_eq!(lookup_v4(&t, &[miss]), [None]);
    }

    #[test]
    fn duplicates_and_disabled_ports_follow_the_load_order() {
        let key = |n| Ipv4Key::from(&v4_rule(n, 0, 0).tuple);
        let rules = [
            v4_rule(1, 2, 1),
            v4_rule(1, 3, 2), // later duplicate wins
            v4_rule(2, 2, 3),
            v4_rule(2, 5, 4), // disabled: not loaded, line 3 stays
            v4_rule(3, 2, 5),
            v4_rule(3, 34, 6), // 34 % 32 = 2 is enabled: loaded, then >= 32 at lookup
            v4_rule(4, 33, 7), // 33 % 32 = 1 is disabled: not loaded
            v4_rule(5, 255, 8),
        ];
        let t = EmTables::new(eal(), 64, 0, &rules, &[], |p| matches!(p, 2 | 3 | 31)).unwrap();
        let ports = lookup_v4(&t, &[key(1), key(2), key(3), key(4), key(5)]);
        assert_eq!(ports, [Some(3), Some(2), None, None, None]);
    }

    #[test]
    fn empty_rule_sets_miss() {
        let t = EmTables::new(eal(), 0, 0, &[], &[], all_ports).unwrap();
        assert_eq!(lookup_v4(&t, &v4_keys(&[v4_rule(1, 0, 1)])), [None]);
        assert_eq!(lookup_v6(&t, &v6_keys(&[v6_rule(1, 0, 1)])), [None]);
    }

    #[test]
    fn create_error_names_the_family() {
        let err = EmTables::new(eal(), u32::MAX, 0, &[v4_rule(1, 0, 1)], &[], all_ports)
            .err()
            .unwrap();
        assert!(
            err.to_string()
                .starts_with("IPv4 exact-match table: cannot create hash table"),
            "{err}"
        );
    }

    #[test]
    fn multi_equals_sequential_for_every_burst_length() {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let ports: Vec<u8> = (0..200).map(|_| rng.gen_range(0..40)).collect();
        let v4: Vec<_> = (0..200)
            .map(|n| v4_rule(n, ports[n as usize], n as usize + 1))
            .collect();
        let v6: Vec<_> = (0..200)
            .map(|n| v6_rule(n, ports[n as usize], n as usize + 1))
            .collect();
        let t = EmTables::new(eal(), 1024, 0, &v4, &v6, |p| p % 3 != 0).unwrap();
        for len in 1..=32 {
            // Rules 0..400: half hit, half miss; a third of hits to disabled ports.
            let picks: Vec<u32> = (0..len).map(|_| rng.gen_range(0..400)).collect();
            let k4: Vec<_> = picks.iter().map(|&n| Ipv4Key::from(&v4_rule(n, 0, 0).tuple)).collect();
            let k6: Vec<_> = picks.iter().map(|&n| Ipv6Key::from(&v6_rule(n, 0, 0).tuple)).collect();
            let expected: Vec<Option<u16>> = picks
                .iter()
                .map(|&n| match v4.get(n as usize) {
                    Some(r) if r.port < MAX_PORTS && r.port % 3 != 0 => Some(r.port.into()),
                    _ => None,
                })
                .collect();
            assert_eq!(lookup_v4(&t, &k4), expected, "IPv4, {len} keys");
            assert_eq!(lookup_v6(&t, &k6), expected, "IPv6, {len} keys");
        }
    }

    /// What the C sample answers, as a plain map built in load order.
    fn model(rules: &[Rule<Ipv4Addr>], mask: u32) -> HashMap<Ipv4Key, u8> {
        let enabled = |p: u8| mask & (1 << (p % 32)) != 0;
        let mut map = HashMap::new();
        for r in rules.iter().filter(|r| enabled(r.port)) {
            map.insert(Ipv4Key::from(&r.tuple), r.port);
        }
        map.retain(|_, &mut p| p < 32 && enabled(p));
        map
    }

    /// Tables written in place, and their writer, the lcores reporting to `qsbr`.
    fn live_tables(entries: u32, v4: &[Rule<Ipv4Addr>], qsbr: &Arc<Qsbr>) -> (EmTables, EmWriter) {
        let mut t = EmTables::new(eal(), entries, 0, v4, &[], all_ports).unwrap();
        let w = t.writer(qsbr).unwrap();
        (t, w)
    }

    fn v4_key(n: u32) -> Ipv4Key {
        Ipv4Key::from(&v4_rule(n, 0, 0).tuple)
    }

    #[test]
    fn a_full_table_says_which_option_sizes_it_and_changes_nothing() {
        let qsbr = Arc::new(Qsbr::new(1).unwrap());
        let rules: Vec<_> = (0..8).map(|n| v4_rule(n, 1, n as usize + 1)).collect();
        let (t, mut w) = live_tables(8, &rules, &qsbr);
        let keys: Vec<_> = (0..9).map(v4_key).collect();
        let err = w.add_v4(&v4_rule(8, 2, 0).tuple, 2).unwrap_err();
        assert_eq!(
            err,
            "the IPv4 exact-match table is full (8 entries; --hash-entry-num sizes it)"
        );
        let mut before = vec![Some(1); 8];
        before.push(None);
        assert_eq!(lookup_v4(&t, &keys), before);
        // A replace needs no room; a deleted flow's slot is reused (no
        // reader online, so its grace period is over at once).
        w.add_v4(&v4_rule(0, 2, 0).tuple, 2).unwrap();
        w.del_v4(&v4_rule(1, 0, 0).tuple).unwrap();
        assert_eq!(w.del_v4(&v4_rule(1, 0, 0).tuple).unwrap_err(), "no such flow to delete");
        w.add_v4(&v4_rule(8, 3, 0).tuple, 3).unwrap();
        let after = lookup_v4(&t, &keys);
        assert_eq!(after[..3], [Some(2), None, Some(1)]);
        assert_eq!(after[8], Some(3));
    }

    #[test]
    fn readers_see_a_flow_before_or_after_each_change_never_a_wrong_port() {
        let qsbr = Arc::new(Qsbr::new(1).unwrap());
        // Flows 0..64 change between ports 1, 2 and none; 64..512 stay on
        // port 3 while cuckoo moves and slot reuse go on around them.
        let rules: Vec<_> = (0..512).map(|n| v4_rule(n, if n < 64 { 1 } else { 3 }, 0)).collect();
        let (t, mut w) = live_tables(1024, &rules, &qsbr);
        let lcores = Arc::new(dpdk::Live::new(Arc::clone(&qsbr), ()));
        let mut reader = lcores.register(0).unwrap();
        let done = std::sync::atomic::AtomicBool::new(false);
        let rounds = AtomicU32::new(0);
        std::thread::scope(|s| {
            let (t, done, rounds) = (&t, &done, &rounds);
            s.spawn(move || {
                let keys: Vec<_> = (0..512).map(v4_key).collect();
                let mut online = reader.online();
                while !done.load(Ordering::Relaxed) {
                    t.lookup_v4(&keys, Batching::WHOLE_BURST, |i, port| match i {
                        0..64 => assert!(matches!(port, None | Some(1) | Some(2)), "flow {i}: {port:?}"),
                        _ => assert_eq!(port, Some(3), "flow {i}"),
                    });
                    online.quiescent();
                    rounds.fetch_add(1, Ordering::Relaxed);
                }
            });
            // Each flow in its own phase of: to port 1, to port 2, deleted;
            // until the reader has looked them all up many times.
            let mut written = Ok(());
            for round in 0.. {
                if round >= 300 && rounds.load(Ordering::Relaxed) >= 200 {
                    break;
                }
                written = (0..64).try_for_each(|n| match (round + n) % 3 {
                    0 => w.add_v4(&v4_rule(n, 0, 0).tuple, 1),
                    1 => w.add_v4(&v4_rule(n, 0, 0).tuple, 2),
                    _ => w.del_v4(&v4_rule(n, 0, 0).tuple),
                });
                if written.is_err() {
                    break;
                }
            }
            done.store(true, Ordering::Relaxed);
            assert!(written.is_ok(), "{written:?}");
        });
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(32))]

        /// Flows added, replaced and deleted in place answer as tables
        /// built fresh from the rules they leave, and as a plain map. (The
        /// family loaded has rules at the start: a rule file without any
        /// is refused, and an empty family gets a minimal table.)
        #[test]
        fn changes_in_place_equal_a_fresh_build(
            start in prop::collection::vec((0u32..48, 0u8..40), 1..40),
            changes in prop::collection::vec((0u32..64, prop::option::of(0u8..40)), 0..120),
        ) {
            let qsbr = Arc::new(Qsbr::new(1).unwrap());
            let rules: Vec<_> = start.iter().enumerate().map(|(i, &(n, p))| v4_rule(n, p, i + 1)).collect();
            let (t, mut w) = live_tables(64, &rules, &qsbr);
            let mut now: HashMap<u32, u8> = start.iter().copied().collect();
            for &(n, change) in &changes {
                let tuple = v4_rule(n, 0, 0).tuple;
                match change {
                    Some(port) => {
                        w.add_v4(&tuple, port).unwrap();
                        now.insert(n, port);
                    }
                    None => prop_assert_eq!(w.del_v4(&tuple).is_ok(), now.remove(&n).is_some()),
                }
            }
            let final_rules: Vec<_> = now.iter().map(|(&n, &p)| v4_rule(n, p, 0)).collect();
            let fresh = EmTables::new(eal(), 64, 0, &final_rules, &[], all_ports).unwrap();
            let probes: Vec<_> = (0..70).map(v4_key).collect();
            let expected: Vec<Option<u16>> = (0..70)
                .map(|n| now.get(&n).filter(|&&p| p < MAX_PORTS).map(|&p| p.into()))
                .collect();
            prop_assert_eq!(lookup_v4(&t, &probes), expected.clone());
            prop_assert_eq!(lookup_v4(&fresh, &probes), expected);
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        #[test]
        fn tables_answer_like_a_hash_map(
            // A small key space, so duplicates and hits are common.
            rules in prop::collection::vec((0u32..64, 0u8..40), 0..80),
            probes in prop::collection::vec(0u32..96, 0..40),
            mask: u32,
        ) {
            let v4: Vec<_> = rules.iter().enumerate().map(|(i, &(n, p))| v4_rule(n, p, i + 1)).collect();
            let v6: Vec<_> = rules.iter().enumerate().map(|(i, &(n, p))| v6_rule(n, p, i + 1)).collect();
            let t = EmTables::new(eal(), 16, 0, &v4, &v6, |p| mask & (1 << p) != 0).unwrap();
            let map = model(&v4, mask);
            let expected: Vec<Option<u16>> = probes
                .iter()
                .map(|&n| map.get(&Ipv4Key::from(&v4_rule(n, 0, 0).tuple)).map(|&p| p.into()))
                .collect();
            let k4: Vec<_> = probes.iter().map(|&n| Ipv4Key::from(&v4_rule(n, 0, 0).tuple)).collect();
            let k6: Vec<_> = probes.iter().map(|&n| Ipv6Key::from(&v6_rule(n, 0, 0).tuple)).collect();
            prop_assert_eq!(lookup_v4(&t, &k4), expected.clone());
            prop_assert_eq!(lookup_v6(&t, &k6), expected);
        }
    }
}
