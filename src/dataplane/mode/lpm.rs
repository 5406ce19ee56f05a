//! Longest-prefix match. IPv4 destinations are looked up with rte_lpm's
//! inline lookup (one or two table reads, no call): as each packet is
//! parsed, which is the faster while the reads hit the caches, or after the
//! batch is parsed, in one tight loop, so that many reads that miss are in
//! flight at once (C's vector path gets four from `rte_lpm_lookupx4`). Each
//! lcore times both on its traffic and keeps the faster ([`FasterOfTwo`]).
//! The IPv6 destinations of a burst go to rte_lpm6 in one bulk call, unless
//! `sequential` asks for one lookup per packet.

use std::collections::{HashMap, HashSet};
use std::error::Error;
use std::net::IpAddr;
use std::sync::Arc;

use dpdk::{Eal, Qsbr};
use ipnet::{IpNet, Ipv4Net, Ipv6Net};
use lpm::rules::RouteFile;
use lpm::LpmTables;

use l3fwd_modes::{self as info, ModeInfo};
use super::{Listing, TableCount, check_port, InPlace, LiveBuild, Mode, RuleChange};
use crate::cli::mode_args::{RouteArgs, RuleFiles};
use crate::cli::Ipv4Lookup;
use crate::dataplane::lookup::{answer, FasterOfTwo, Gather, Lookup, Route, VectorPorts};
use crate::dataplane::packet::L3;
use crate::cli::plan::Plan;
use crate::cli::rule_files::{self, BuiltIn};
use crate::MAX_BURST;

/// `--lookup=lpm` (`-L`), the default.
pub struct Lpm;

impl Mode for Lpm {
    const INFO: ModeInfo = info::LPM;
    type Rules = Routes;
    type Lookup = LpmLookup;
    type Options = RouteArgs;

    fn load(options: &RouteArgs) -> Result<Routes, Box<dyn Error>> {
        routes(&options.rules)
    }

    fn build(eal: &Eal, socket: u32, plan: &Plan, options: &RouteArgs, (v4, v6): Routes) -> Result<LpmLookup, Box<dyn Error>> {
        let enabled = |p: u8| plan.loads_routes_to(p.into());
        let (tables, report) = LpmTables::build(eal, &super::table_name(), socket as i32, &v4, &v6, route_limits(options), enabled)?;
        log_routes("LPM", &report);
        Ok(lookup(tables, options))
    }

    fn build_live(
        eal: &Eal,
        socket: u32,
        plan: &Plan,
        options: &RouteArgs,
        (v4, v6): Routes,
        qsbr: &Arc<Qsbr>,
    ) -> Result<LiveBuild<Self>, Box<dyn Error>> {
        let enabled = |p: u8| plan.loads_routes_to(p.into());
        let name = super::table_name();
        let (tables, writer, report) =
            LpmTables::build_live(eal, &name, socket as i32, &v4, &v6, route_limits(options), enabled, qsbr)?;
        log_routes("LPM", &report);
        let writer = Box::new(RoutesInPlace {
            routes: writer,
            plan: plan.clone(),
            made_v4: HashMap::new(),
            made_v6: HashMap::new(),
        });
        Ok((lookup(tables, options), Some(writer as Box<dyn InPlace<Routes>>)))
    }

    fn route_get(lookup: &LpmLookup, dst: IpAddr) -> Result<Option<u16>, String> {
        let t = &lookup.tables;
        Ok(route_get(dst, |a| t.lookup_v4(a), |a| t.lookup_v6(a)))
    }

    fn change_rules(rules: &mut Routes, plan: &Plan, options: &RouteArgs, change: &RuleChange) -> Result<(), String> {
        let mut one = Self::change_rules_in_turn(rules, plan, options, &[change]);
        one.pop().unwrap_or(Ok(()))
    }

    fn change_rules_in_turn(rules: &mut Routes, plan: &Plan, _options: &RouteArgs, changes: &[&RuleChange]) -> Vec<Result<(), String>> {
        change_routes::<Self>(rules, plan, changes)
    }

    fn counts(rules: &Routes, plan: &Plan, _options: &RouteArgs) -> Vec<TableCount> {
        route_counts(rules, plan)
    }

    fn explain(rules: &Routes, _options: &RouteArgs, frame: &[u8]) -> String {
        explain_route(rules, frame, false)
    }

    fn list(rules: &Routes, plan: &Plan, _options: &RouteArgs, what: &Listing) -> Result<Vec<String>, String> {
        match what {
            Listing::Routes(within) => Ok(list_routes(rules, plan, *within)),
            _ => Err(what.not_in(Self::INFO.name)),
        }
    }

    fn route_depths(rules: &Routes, plan: &Plan) -> Result<Vec<String>, String> {
        Ok(route_depths(rules, plan))
    }
}

/// `route stats` in LPM and FIB mode: each family's routes to ports
/// `plan` loads, one per prefix as the tables keep them, by depth.
pub(super) fn route_depths((v4, v6): &Routes, plan: &Plan) -> Vec<String> {
    fn line<N: Ord + Copy>(family: &str, file: &RouteFile<N>, plan: &Plan, net: fn(&N) -> N, depth: fn(&N) -> u8) -> String {
        let loaded = file.routes.iter().filter(|r| plan.loads_routes_to(r.port.into()));
        let prefixes: std::collections::BTreeSet<N> = loaded.map(|r| net(&r.prefix)).collect();
        let mut depths = std::collections::BTreeMap::<u8, usize>::new();
        for prefix in &prefixes {
            *depths.entry(depth(prefix)).or_default() += 1;
        }
        let by_depth: Vec<String> = depths.iter().map(|(d, n)| format!("/{d}: {n}")).collect();
        format!("{family} routes: {} ({})", prefixes.len(), by_depth.join(", "))
    }
    vec![
        line("IPv4", v4, plan, Ipv4Net::trunc, Ipv4Net::prefix_len),
        line("IPv6", v6, plan, Ipv6Net::trunc, Ipv6Net::prefix_len),
    ]
}

/// `route list [PREFIX]` in LPM and FIB mode: the routes to ports `plan`
/// loads (of a prefix written twice, the last, as the tables keep it),
/// inside PREFIX if given, covering prefixes first, IPv4 then IPv6.
pub(super) fn list_routes((v4, v6): &Routes, plan: &Plan, within: Option<IpNet>) -> Vec<String> {
    fn lines<N: Ord + Copy + std::fmt::Display>(
        file: &RouteFile<N>,
        plan: &Plan,
        net: fn(&N) -> N,
        inside: impl Fn(&N) -> bool,
    ) -> Vec<String> {
        // Last in the file first, so that the stable sort and dedup keep it.
        let mut routes: Vec<(N, u8)> = (file.routes.iter().rev())
            .filter(|r| plan.loads_routes_to(r.port.into()) && inside(&net(&r.prefix)))
            .map(|r| (net(&r.prefix), r.port))
            .collect();
        routes.sort_by_key(|&(prefix, _)| prefix);
        routes.dedup_by_key(|&mut (prefix, _)| prefix);
        routes.into_iter().map(|(prefix, port)| format!("R{prefix} {port}")).collect()
    }
    let (in4, in6) = match within {
        None => (true, true),
        Some(IpNet::V4(_)) => (true, false),
        Some(IpNet::V6(_)) => (false, true),
    };
    let mut all = Vec::new();
    if in4 {
        all.extend(lines(v4, plan, Ipv4Net::trunc, |p| within.is_none_or(|w| w.contains(&IpNet::V4(*p)))));
    }
    if in6 {
        all.extend(lines(v6, plan, Ipv6Net::trunc, |p| within.is_none_or(|w| w.contains(&IpNet::V6(*p)))));
    }
    all
}

/// What LPM and FIB tables built from `rules` hold: the routes to ports
/// `plan` loads.
pub(super) fn route_counts((v4, v6): &Routes, plan: &Plan) -> Vec<TableCount> {
    fn loaded<N>(file: &RouteFile<N>, plan: &Plan) -> usize {
        file.routes.iter().filter(|r| plan.loads_routes_to(r.port.into())).count()
    }
    TableCount::both("routes", [loaded(v4, plan), loaded(v6, plan)])
}

/// `trace` in LPM and FIB mode: the destination looked up and its longest
/// route (the last written, of equal ones, as the tables keep it).
/// `other_as_v6`: every frame that is not IPv4 is looked up as IPv6 (FIB).
pub(super) fn explain_route((v4, v6): &Routes, frame: &[u8], other_as_v6: bool) -> String {
    fn longest<N: Copy + std::fmt::Display>(
        file: &RouteFile<N>,
        holds: impl Fn(&N) -> bool,
        len: impl Fn(&N) -> u8,
    ) -> String {
        let best = file.routes.iter().filter(|r| holds(&r.prefix)).max_by_key(|r| len(&r.prefix));
        match best {
            Some(r) => format!("route {} port {} ({} line {})", r.prefix, r.port, file.origin, r.line),
            None => "no route".into(),
        }
    }
    let v6_dst = |dst: [u8; 16]| {
        let dst = std::net::Ipv6Addr::from(dst);
        format!("dst {dst}: {}", longest(v6, |p| p.contains(&dst), Ipv6Net::prefix_len))
    };
    match crate::dataplane::packet::parse(frame) {
        L3::Ipv4(h) => {
            let dst = std::net::Ipv4Addr::from(h.dst);
            format!("dst {dst}: {}", longest(v4, |p| p.contains(&dst), Ipv4Net::prefix_len))
        }
        L3::Ipv6(h) => v6_dst(h.dst),
        _ if other_as_v6 => match crate::dataplane::packet::ipv6_dst_bytes(frame) {
            Some(dst) => v6_dst(dst),
            None => "runt: nothing looked up".into(),
        },
        L3::Runt => "runt: nothing looked up".into(),
        L3::Other => "not IP: nothing looked up".into(),
    }
}

/// `route get` in LPM and FIB mode, with the tables' `v4` and `v6` lookups.
pub(super) fn route_get(
    dst: IpAddr,
    v4: impl Fn(u32) -> Option<u16>,
    v6: impl Fn(&[u8; 16]) -> Option<u16>,
) -> Option<u16> {
    match dst {
        IpAddr::V4(a) => v4(a.into()),
        IpAddr::V6(a) => v6(&a.octets()),
    }
}

/// `route add` and `route del` on the routes of LPM and FIB mode (`M`),
/// each in turn as if it came alone. A prefix is the same whatever its
/// host bits (rte_lpm masks them): adding one that is there replaces its
/// port; deleting one that is not there is refused and changes nothing.
/// One pass over each family's routes for them all: an index of the
/// prefixes there, made if a delete needs it, then [`write_made`].
pub(super) fn change_routes<M: Mode>((v4, v6): &mut Routes, plan: &Plan, changes: &[&RuleChange]) -> Vec<Result<(), String>> {
    /// One family's changes so far, and the prefixes its routes had.
    struct Made<N> {
        ports: HashMap<N, Option<u8>>,
        there: Option<HashSet<N>>,
    }
    impl<N: Copy + Eq + std::hash::Hash> Made<N> {
        /// Whether the change is made: a delete needs the prefix there.
        fn change(&mut self, routes: &[lpm::rules::Route<N>], net: fn(&N) -> N, prefix: N, port: Option<u8>) -> bool {
            let prefix = net(&prefix);
            let there = match (port, self.ports.get(&prefix)) {
                (Some(_), _) => true,
                (None, Some(made)) => made.is_some(),
                (None, None) => {
                    let there = self.there.get_or_insert_with(|| routes.iter().map(|r| net(&r.prefix)).collect());
                    there.contains(&prefix)
                }
            };
            if there {
                self.ports.insert(prefix, port);
            }
            there
        }
    }
    let (mut made4, mut made6) = (
        Made { ports: HashMap::new(), there: None },
        Made { ports: HashMap::new(), there: None },
    );
    let results = changes
        .iter()
        .map(|change| {
            let (prefix, port) = route_change::<M>(plan, change)?;
            let made = match prefix {
                IpNet::V4(p) => made4.change(&v4.routes, Ipv4Net::trunc, p, port),
                IpNet::V6(p) => made6.change(&v6.routes, Ipv6Net::trunc, p, port),
            };
            made.then_some(()).ok_or_else(|| no_route(prefix))
        })
        .collect();
    write_made(&mut v4.routes, Ipv4Net::trunc, &mut made4.ports);
    write_made(&mut v6.routes, Ipv6Net::trunc, &mut made6.ports);
    results
}

/// Writes the changes made in place, `made` (each prefix's port, None for
/// a deleted one), into `routes` and empties it: one pass over the routes,
/// however many changes, with what [`change_routes`] does to each.
pub(super) fn write_made<N>(routes: &mut Vec<lpm::rules::Route<N>>, net: fn(&N) -> N, made: &mut HashMap<N, Option<u8>>)
where
    N: Copy + Eq + std::hash::Hash,
{
    if made.is_empty() {
        return;
    }
    // A prefix changed is one route after, as in the tables: of routes
    // the files wrote twice, the first keeps the new port.
    let mut changed = HashSet::new();
    routes.retain_mut(|r| match made.get(&net(&r.prefix)) {
        Some(Some(port)) => {
            r.port = *port;
            changed.insert(net(&r.prefix))
        }
        Some(None) => false,
        None => true,
    });
    // The prefixes left are new: the others' ports are set.
    for r in routes.iter() {
        made.remove(&net(&r.prefix));
    }
    let added = made.drain().filter_map(|(prefix, port)| port.map(|port| (prefix, port)));
    routes.extend(added.map(|(prefix, port)| lpm::rules::Route { prefix, port, line: 0 }));
}

/// The prefix of a `route add/del` and the port it adds (None: a delete),
/// checked: the port is one `plan` forwards to.
pub(super) fn route_change<M: Mode>(plan: &Plan, change: &RuleChange) -> Result<(IpNet, Option<u8>), String> {
    match *change {
        RuleChange::AddRoute(prefix, port) => {
            check_port(plan, port)?;
            let port = u8::try_from(port).map_err(|_| format!("port {port}: route files name ports below 256"))?;
            Ok((prefix, Some(port)))
        }
        RuleChange::DelRoute(prefix) => Ok((prefix, None)),
        _ => Err(change.not_in(M::INFO.name)),
    }
}

pub(super) fn no_route(prefix: IpNet) -> String {
    format!("no route {prefix} to delete")
}

/// LPM mode's tables, changed in place: `route add/del` go straight to
/// their entries.
struct RoutesInPlace {
    routes: lpm::LiveWriters,
    plan: Plan,
    /// The changes since the last flush, by family: each prefix's port, or
    /// None for a deleted one.
    made_v4: HashMap<Ipv4Net, Option<u8>>,
    made_v6: HashMap<Ipv6Net, Option<u8>>,
}

/// Why a table refused a route: `family`'s table is full (`what` is
/// taken), or its `library` takes no depth 0.
fn refusal(family: &str, library: &str, full: Option<String>) -> String {
    match full {
        Some(what) => format!("{family} LPM table full: {what}"),
        None => format!("{library} takes no depth 0 (split a default route into two /1 routes)"),
    }
}

fn rules_taken(n: u32) -> Option<String> {
    Some(format!("all {n} rules are taken (raise --lpm-max-rules)"))
}

impl InPlace<Routes> for RoutesInPlace {
    fn takes(&self, change: &RuleChange) -> bool {
        matches!(change, RuleChange::AddRoute(..) | RuleChange::DelRoute(_))
    }

    fn apply(&mut self, change: &RuleChange) -> Result<(), String> {
        let (prefix, port) = route_change::<Lpm>(&self.plan, change)?;
        let deleted = |found: bool| found.then_some(()).ok_or_else(|| no_route(prefix));
        match prefix {
            IpNet::V4(prefix) => {
                let v4 = &mut self.routes.v4;
                match port {
                    Some(port) => v4.add(prefix, port).map_err(|e| {
                        let full = match e {
                            lpm::Refused::Rules(n) => rules_taken(n),
                            lpm::Refused::Tbl8s(n) => Some(format!("all {n} tbl8 groups are taken (raise --lpm-tbl8s)")),
                            lpm::Refused::DefaultRoute => None,
                        };
                        refusal("IPv4", "rte_lpm", full)
                    }),
                    None => deleted(v4.delete(prefix)),
                }?;
                self.made_v4.insert(prefix.trunc(), port);
            }
            IpNet::V6(prefix) => {
                let v6 = &mut self.routes.v6;
                match port {
                    Some(port) => v6.add(prefix, port.into()).map_err(|e| {
                        let full = match e {
                            lpm::Refused6::Rules(n) => rules_taken(n),
                            lpm::Refused6::Tbl8s(n) => Some(format!(
                                "the route needs {n} new tbl8 groups, and fewer are free (raise --lpm-tbl8s)"
                            )),
                            lpm::Refused6::DefaultRoute => None,
                        };
                        refusal("IPv6", "rte_lpm6", full)
                    }),
                    None => deleted(v6.delete(prefix)),
                }?;
                self.made_v6.insert(prefix.trunc(), port);
            }
        }
        Ok(())
    }

    fn flush(&mut self, (v4, v6): &mut Routes) {
        write_made(&mut v4.routes, Ipv4Net::trunc, &mut self.made_v4);
        write_made(&mut v6.routes, Ipv6Net::trunc, &mut self.made_v6);
    }

    fn stats(&mut self) -> Option<String> {
        let line = |family: &str, g: dpdk::Tbl8Groups| {
            format!(
                "{family} tbl8 groups: {} in use, {} awaiting reclaim, {} free, of {}",
                g.linked,
                g.allocated - g.linked,
                g.total - g.allocated,
                g.total
            )
        };
        let v4 = line("IPv4", self.routes.v4.tbl8_groups());
        let v6 = line("IPv6", self.routes.v6.table().tbl8_groups());
        Some(format!("{v4}; {v6}"))
    }
}

/// The IPv4 and IPv6 routes of LPM and FIB mode.
pub(super) type Routes = (RouteFile<Ipv4Net>, RouteFile<Ipv6Net>);

/// The route files' defaults (IPv4, IPv6): C's built-in tables.
pub const DEFAULT_ROUTES: [BuiltIn; 2] = [
    BuiltIn {
        name: "lpm_v4.cfg",
        text: include_str!("../../../configs/lpm_v4.cfg"),
    },
    BuiltIn {
        name: "lpm_v6.cfg",
        text: include_str!("../../../configs/lpm_v6.cfg"),
    },
];

/// The routes of this run (LPM and FIB mode).
pub(super) fn routes(files: &RuleFiles) -> Result<Routes, Box<dyn Error>> {
    let [v4, v6] = rule_files::sources(files, &DEFAULT_ROUTES);
    fn file<N>(origin: &str, routes: Vec<lpm::rules::Route<N>>) -> RouteFile<N> {
        RouteFile {
            origin: origin.to_owned(),
            routes,
        }
    }
    Ok((
        v4.read(
            |p| lpm::rules::load_v4(p),
            |t, o| Ok(file(o, lpm::rules::parse_v4(t, o)?)),
        )?,
        v6.read(
            |p| lpm::rules::load_v6(p),
            |t, o| Ok(file(o, lpm::rules::parse_v6(t, o)?)),
        )?,
    ))
}

/// `--lpm-max-rules` and `--lpm-tbl8s` (LPM and FIB mode).
pub(super) fn route_limits(options: &RouteArgs) -> lpm::Limits {
    lpm::Limits {
        max_rules: options.max_rules,
        tbl8s: options.tbl8s,
    }
}

pub(super) fn log_routes(kind: &str, report: &lpm::LoadReport) {
    log::info!(
        "{kind}: {} IPv4 and {} IPv6 routes added, {} to disabled ports skipped",
        report.v4_added,
        report.v6_added,
        report.skipped
    );
}

/// LPM mode.
pub struct LpmLookup {
    pub tables: LpmTables,
    pub sequential: bool,
    pub ipv4_lookup: Ipv4Lookup,
}

fn lookup(tables: LpmTables, options: &RouteArgs) -> LpmLookup {
    LpmLookup {
        tables,
        sequential: options.sequential,
        ipv4_lookup: options.ipv4_lookup,
    }
}

/// IPv4 (when gathered) and IPv6 destinations of one batch in LPM mode.
#[derive(Default)]
pub struct LpmScratch {
    v4: Gather<u32>,
    v6: Gather<[u8; 16]>,
    /// Whether IPv4 destinations are gathered and looked up after the
    /// parse (the second way) or as each packet is parsed. Traffic spread
    /// over a large table reads tbl24 lines (and pages) no cache holds, and
    /// parsing between two such reads keeps only two or three in flight:
    /// there the gather wins (+11-17% at 1M routes and 64K flows); where the
    /// reads hit the caches it costs 10-14% (docs/BENCHMARKS.md).
    v4_after_parse: FasterOfTwo,
    ports: VectorPorts,
}

impl Lookup for LpmLookup {
    type Scratch = LpmScratch;

    #[inline(always)]
    fn add(&self, scratch: &mut LpmScratch, defer: bool, index: usize, l3: &L3, _frame: &[u8]) -> Route {
        match l3 {
            L3::Ipv4(h) if defer => {
                scratch.v4.push(index, h.dst);
                Route::NO_MATCH
            }
            L3::Ipv4(h) => Route::from_table(self.tables.lookup_v4(h.dst)),
            L3::Ipv6(h) if self.sequential => Route::from_table(self.tables.lookup_v6(&h.dst)),
            L3::Ipv6(h) => {
                scratch.v6.push(index, h.dst);
                Route::NO_MATCH
            }
            L3::Other => Route::NO_MATCH,
            L3::Runt => Route::RUNT,
        }
    }

    const VECTOR_IPV4: bool = true;

    #[inline(always)]
    fn route_ipv4s(&self, simd: dpdk::Simd, scratch: &mut LpmScratch, dsts: &[u32], routes: &mut [Route]) {
        (scratch.ports).route(dsts, routes, |dsts, miss, ports| self.tables.lookup_v4_simd(simd, dsts, miss, ports));
    }

    #[inline(always)]
    fn resolve(&self, scratch: &mut LpmScratch, routes: &mut [Route; MAX_BURST]) {
        let (dsts, from) = scratch.v4.take();
        for (i, &dst) in dsts.iter().enumerate() {
            answer(from, routes, i, self.tables.lookup_v4(dst));
        }
        let (dsts, from) = scratch.v6.take();
        self.tables
            .lookup_v6_bulk(dsts, |i, port| answer(from, routes, i, port));
    }

    #[inline(always)]
    fn defers(&self, scratch: &LpmScratch) -> bool {
        scratch.v4_after_parse.second()
    }

    #[inline(always)]
    fn timed(&self, scratch: &mut LpmScratch, cycles: u64, packets: u64) {
        match self.ipv4_lookup {
            Ipv4Lookup::Timed => scratch.v4_after_parse.timed(cycles, packets),
            Ipv4Lookup::Parse => scratch.v4_after_parse = FasterOfTwo::only(false),
            Ipv4Lookup::Batch => scratch.v4_after_parse = FasterOfTwo::only(true),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;
    use std::sync::OnceLock;

    use super::*;
    use crate::cli::rule_files::tests::args;
    use proptest::prelude::*;

    fn files(line: &str) -> RuleFiles {
        RuleFiles::from(&args(line))
    }

    #[test]
    fn built_in_routes_are_the_files_in_configs() {
        for default in &DEFAULT_ROUTES {
            let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("configs").join(default.name);
            assert_eq!(std::fs::read_to_string(path).unwrap(), default.text);
        }
        let (v4, v6) = routes(&files("")).unwrap();
        assert_eq!((v4.routes.len(), v6.routes.len()), (16, 16));
        assert_eq!(v4.origin, "built-in lpm_v4.cfg");
    }

    #[test]
    fn one_route_file_alone_is_ignored_as_in_c() {
        // The file does not exist: it is not even read.
        let (v4, _) = routes(&files("--rule_ipv4 /nonexistent.cfg")).unwrap();
        assert_eq!(v4.origin, "built-in lpm_v4.cfg");
        let error = routes(&files("--rule_ipv4 /nonexistent.cfg --rule_ipv6 /x.cfg")).unwrap_err();
        assert!(error.to_string().contains("cannot read /nonexistent.cfg"), "{error}");
    }

    /// A change of one of a few prefixes, nested and with host bits set:
    /// an add to port 0, 1 or 2 (not forwarded to), or a delete.
    fn route_changes() -> impl Strategy<Value = Vec<RuleChange>> {
        let prefixes = [
            "10.0.0.0/8",
            "10.1.0.0/16",
            "10.1.2.3/16",
            "10.1.2.0/24",
            "2001:db8::/32",
            "2001:db8::1/32",
            "2001:db8:1::/48",
        ];
        let change = (0..prefixes.len(), proptest::option::of(0..3u16)).prop_map(move |(p, port)| {
            let prefix: IpNet = prefixes[p].parse().unwrap();
            match port {
                Some(port) => RuleChange::AddRoute(prefix, port),
                None => RuleChange::DelRoute(prefix),
            }
        });
        proptest::collection::vec(change, 0..40)
    }

    /// The routes as the tables take them: each prefix (host bits off)
    /// with its port, in order.
    fn tables_of((v4, v6): &Routes) -> Vec<(IpNet, u8)> {
        let v4 = v4.routes.iter().map(|r| (IpNet::V4(r.prefix.trunc()), r.port));
        let v6 = v6.routes.iter().map(|r| (IpNet::V6(r.prefix.trunc()), r.port));
        let mut routes: Vec<(IpNet, u8)> = v4.chain(v6).collect();
        routes.sort();
        routes
    }

    /// Routes nested in 10.0.0.0/14 at every depth (so that /24s hold
    /// tbl8 groups too), and one IPv6 route.
    fn nested_route_files() -> Routes {
        let v4: String = (0u32..400)
            .map(|i| {
                let addr = std::net::Ipv4Addr::from(0x0a00_0000 | (i.wrapping_mul(2_654_435_761) >> 14));
                format!("R{addr}/{} {}\n", 8 + i % 25, i % 4)
            })
            .collect();
        let v4 = RouteFile { origin: "v4".into(), routes: lpm::rules::parse_v4(&v4, "v4").unwrap() };
        let v6 = RouteFile { origin: "v6".into(), routes: lpm::rules::parse_v6("R2001:db8::/32 1\n", "v6").unwrap() };
        (v4, v6)
    }

    /// An LPM lookup over routes nested in 10.0.0.0/14 at every depth (so
    /// that /24s hold tbl8 groups too) and one IPv6 route, built once.
    fn nested_routes() -> &'static LpmLookup {
        static LOOKUP: OnceLock<LpmLookup> = OnceLock::new();
        LOOKUP.get_or_init(|| {
            let eal = dpdk::Eal::for_tests(&[]).expect("EAL");
            let (v4, v6) = nested_route_files();
            let limits = lpm::Limits::default();
            let (tables, _) = LpmTables::build(eal, &super::super::table_name(), 0, &v4, &v6, limits, |_| true).unwrap();
            LpmLookup { tables, sequential: false, ipv4_lookup: Ipv4Lookup::Timed }
        })
    }

    /// A 64-byte frame: IPv4 to `dst`, or IPv6 to 2001:db8::`dst` if `v6`.
    fn frame(dst: u32, v6: bool) -> Vec<u8> {
        let mut f = vec![0u8; 64];
        if v6 {
            f[12..14].copy_from_slice(&[0x86, 0xdd]);
            f[38..42].copy_from_slice(&[0x20, 0x01, 0x0d, 0xb8]);
            f[50..54].copy_from_slice(&dst.to_be_bytes());
        } else {
            f[12..14].copy_from_slice(&[0x08, 0x00]);
            f[14] = 0x45;
            f[30..34].copy_from_slice(&dst.to_be_bytes());
        }
        f
    }

    /// The routes of `frames`, IPv4 looked up after the parse or as each
    /// frame is parsed.
    fn routes_of<L: Lookup>(lookup: &L, frames: &[Vec<u8>], after_parse: bool) -> Vec<Route> {
        let mut scratch = L::Scratch::default();
        let mut routes = [Route::NO_MATCH; MAX_BURST];
        for (i, f) in frames.iter().enumerate() {
            routes[i] = crate::dataplane::packet::parse_then(f, |l3| lookup.add(&mut scratch, after_parse, i, &l3, f));
        }
        lookup.resolve(&mut scratch, &mut routes);
        routes[..frames.len()].to_vec()
    }

    proptest! {
        /// Both ways of looking IPv4 up, which each lcore picks between by
        /// timing them, route every packet alike, in bursts that mix IPv4
        /// and IPv6.
        #[test]
        fn ipv4_after_the_parse_routes_as_while_parsing(
            dsts in proptest::collection::vec((0x0a00_0000u32..0x0a04_0000, proptest::bool::weighted(0.2)), 1..MAX_BURST)
        ) {
            let lookup = nested_routes();
            let frames: Vec<Vec<u8>> = dsts.iter().map(|&(dst, v6)| frame(dst, v6)).collect();
            let while_parsing = routes_of(lookup, &frames, false);
            prop_assert_eq!(&routes_of(lookup, &frames, true), &while_parsing);
            let v4 = frames.iter().zip(&while_parsing).filter(|(f, _)| f[12] == 0x08);
            for (f, route) in v4 {
                let dst = u32::from_be_bytes(f[30..34].try_into().unwrap());
                prop_assert_eq!(*route, Route::from_table(lookup.tables.lookup_v4(dst)));
            }
        }
    }

    /// A 64-byte IPv4 frame to `dst`, cut to `len` bytes.
    fn ipv4_cut(dst: u32, len: usize) -> Vec<u8> {
        let mut f = frame(dst, false);
        f.truncate(len);
        f
    }

    proptest! {
        /// Each vector parse this CPU runs routes every packet of a batch
        /// as the scalar parse does: IPv4 frames to addresses that meet tbl8 groups, of
        /// every length around the 34 bytes a header needs, among IPv6,
        /// ARP and runts, in every position of a group of eight and after
        /// the last group.
        #[test]
        fn each_vector_parse_routes_as_the_scalar_one(
            kinds in proptest::collection::vec((0x0a00_0000u32..0x0a04_0000, 0u8..8), 1..MAX_BURST)
        ) {
            let frames: Vec<Vec<u8>> = kinds
                .iter()
                .map(|&(dst, kind)| match kind {
                    0 => frame(dst, true),
                    1 => ipv4_cut(dst, 33),
                    2 => ipv4_cut(dst, 34),
                    3 => ipv4_cut(dst, 13),
                    4 => {
                        let mut arp = frame(dst, false);
                        arp[12..14].copy_from_slice(&[0x08, 0x06]);
                        arp
                    }
                    _ => frame(dst, false),
                })
                .collect();
            static POOL: OnceLock<dpdk::Mempool> = OnceLock::new();
            let pool = POOL.get_or_init(|| {
                dpdk::Mempool::create(dpdk::Eal::for_tests(&[]).expect("EAL"), "test_lpm_simd", 2 * MAX_BURST as u32, 0, 0).expect("pool")
            });
            let pkts: Vec<dpdk::Mbuf> = frames.iter().map(|f| dpdk::Mbuf::from_frame(pool, f).expect("an mbuf")).collect();
            for simd in dpdk::Simd::available() {
                prop_assert_eq!(simd_routes(simd, nested_routes(), &pkts), routes_of(nested_routes(), &frames, false), "{}", simd.name());
                prop_assert_eq!(simd_routes(simd, nested_fib(), &pkts), routes_of(nested_fib(), &frames, false), "{}", simd.name());
            }
        }
    }

    /// The routes the vector parse `simd` gives `pkts`, `lookup` looking up.
    fn simd_routes<L: Lookup>(simd: dpdk::Simd, lookup: &L, pkts: &[dpdk::Mbuf]) -> Vec<Route> {
        let mut scratch = L::Scratch::default();
        let mut routes = [Route::DENIED; MAX_BURST];
        let (mut dsts, mut ipv4) = ([0; MAX_BURST], [0; MAX_BURST / 8]);
        crate::dataplane::forward::parse_simd(simd, pkts, lookup, &mut scratch, &mut routes, &mut dsts, &mut ipv4);
        lookup.resolve(&mut scratch, &mut routes);
        routes[..pkts.len()].to_vec()
    }

    /// FIB mode's lookup of the routes of [`nested_routes`], built once.
    fn nested_fib() -> &'static crate::dataplane::mode::fib::FibLookup {
        static LOOKUP: OnceLock<crate::dataplane::mode::fib::FibLookup> = OnceLock::new();
        LOOKUP.get_or_init(|| {
            let eal = dpdk::Eal::for_tests(&[]).expect("EAL");
            let (v4, v6) = nested_route_files();
            let (tables, _) = lpm::FibTables::build(eal, &super::super::table_name(), 0, &v4, &v6, lpm::Limits::default(), |_| true).unwrap();
            crate::dataplane::mode::fib::FibLookup { tables }
        })
    }

    proptest! {
        /// A batch of changes in one pass answers and ends as the same
        /// changes made one at a time, on routes that repeat a prefix.
        #[test]
        fn route_changes_in_one_pass_are_the_changes_one_by_one(changes in route_changes()) {
            let text = ("R10.1.0.0/16 0\nR10.1.0.0/16 1\nR10.0.0.0/8 1\n", "R2001:db8::/32 0\n");
            let mut batch = (
                RouteFile { origin: "v4".into(), routes: lpm::rules::parse_v4(text.0, "v4").unwrap() },
                RouteFile { origin: "v6".into(), routes: lpm::rules::parse_v6(text.1, "v6").unwrap() },
            );
            let mut one_by_one = batch.clone();
            let plan = Plan::forwarding_to(&[0, 1]);
            let all: Vec<&RuleChange> = changes.iter().collect();
            let answers = change_routes::<Lpm>(&mut batch, &plan, &all);
            let alone: Vec<Result<(), String>> =
                changes.iter().flat_map(|c| change_routes::<Lpm>(&mut one_by_one, &plan, &[c])).collect();
            prop_assert_eq!(answers, alone);
            prop_assert_eq!(tables_of(&batch), tables_of(&one_by_one));
        }
    }
}
