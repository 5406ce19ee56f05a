//! FIB mode (`--lookup=fib`): the LPM route files in rte_fib (IPv4) and
//! rte_fib6 (IPv6), read inline (as LPM mode reads rte_lpm's) where C's
//! `fib_send_packets` makes a bulk call per family per burst. IPv4 is
//! looked up as each packet is parsed; IPv6 destinations are gathered and
//! looked up in one tight loop per batch: a trie walk is a chain of
//! dependent reads (one per address byte past the third), and interleaved
//! with parsing it measured ~5% slower than the loop, whose walks the CPU
//! overlaps. `--sequential-lookup` changes nothing here.
//!
//! As in C (`fib_parse_packet`), every frame that is not IPv4 is looked up
//! as IPv6: a non-IP frame's bytes where an IPv6 destination would be are
//! looked up too, and it goes where they match (usually nowhere: back out
//! of its input port). C reads those bytes past the end of a shorter
//! frame; here such a frame is a runt.

use std::collections::HashMap;
use std::error::Error;
use std::net::IpAddr;
use std::sync::Arc;

use dpdk::{Eal, Qsbr};
use ipnet::{IpNet, Ipv4Net, Ipv6Net};
use lpm::{FibRefused, FibTables, LiveFibRoutes};

use super::lpm::{change_routes, route_depths, explain_route, list_routes, log_routes, route_counts, no_route, route_change, route_get, route_limits, routes, write_made, Routes};
use l3fwd_modes::{self as info, ModeInfo};
use super::{Family, Listing, TableCount, InPlace, LiveBuild, Mode, RuleChange};
use crate::cli::mode_args::RouteArgs;
use crate::dataplane::lookup::{answer, Gather, Lookup, Route, VectorPorts};
use crate::dataplane::packet::{ipv6_dst_bytes, L3};
use crate::cli::plan::Plan;
use crate::MAX_BURST;

/// `--lookup=fib`.
pub struct Fib;

impl Mode for Fib {
    const INFO: ModeInfo = info::FIB;
    type Rules = Routes;
    type Lookup = FibLookup;
    type Options = RouteArgs;

    fn load(options: &RouteArgs) -> Result<Routes, Box<dyn Error>> {
        routes(&options.rules)
    }

    fn build(eal: &Eal, socket: u32, plan: &Plan, options: &RouteArgs, (v4, v6): Routes) -> Result<FibLookup, Box<dyn Error>> {
        let enabled = |p: u8| plan.loads_routes_to(p.into());
        let (tables, report) = FibTables::build(eal, &super::table_name(), socket as i32, &v4, &v6, route_limits(options), enabled)?;
        log_routes("FIB", &report);
        Ok(FibLookup { tables })
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
            FibTables::build_live(eal, &name, socket as i32, &v4, &v6, route_limits(options), enabled, qsbr)?;
        log_routes("FIB", &report);
        let writer = writer.map(|routes| {
            Box::new(FibInPlace {
                routes,
                plan: plan.clone(),
                made_v4: HashMap::new(),
                made_v6: HashMap::new(),
            }) as Box<dyn InPlace<Routes>>
        });
        Ok((FibLookup { tables }, writer))
    }

    /// The family that changed, where it changes by a rebuild.
    fn rebuild_family(
        eal: &Eal,
        socket: u32,
        plan: &Plan,
        options: &RouteArgs,
        (v4, v6): &Routes,
        live: &FibLookup,
        family: Family,
    ) -> Option<Result<FibLookup, Box<dyn Error>>> {
        let enabled = |p: u8| plan.loads_routes_to(p.into());
        let (name, limits, ipv6) = (super::table_name(), route_limits(options), family == Family::Ipv6);
        let rebuilt = live.tables.with_rebuilt(eal, &name, socket as i32, (v4, v6), limits, enabled, ipv6)?;
        log::info!("FIB: {family:?} rebuilt beside the other family's table in use");
        Some(rebuilt.map(|tables| FibLookup { tables }).map_err(Into::into))
    }

    fn route_depths(rules: &Routes, plan: &Plan) -> Result<Vec<String>, String> {
        Ok(route_depths(rules, plan))
    }

    fn route_get(lookup: &FibLookup, dst: IpAddr) -> Result<Option<u16>, String> {
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
        explain_route(rules, frame, true)
    }

    fn list(rules: &Routes, plan: &Plan, _options: &RouteArgs, what: &Listing) -> Result<Vec<String>, String> {
        match what {
            Listing::Routes(within) => Ok(list_routes(rules, plan, *within)),
            _ => Err(what.not_in(Self::INFO.name)),
        }
    }
}

/// FIB mode's tables changed in place where DPDK lets them (rte_fib from
/// 24.11, rte_fib6 from 25.11): `route add/del` go straight to
/// `rte_fib_add` / `rte_fib_delete`, which hand an unlinked tbl8 group
/// back only after the lcores' grace period.
struct FibInPlace {
    routes: LiveFibRoutes,
    plan: Plan,
    /// The changes since the last flush, per family: each prefix's port,
    /// or None for a deleted one.
    made_v4: HashMap<Ipv4Net, Option<u8>>,
    made_v6: HashMap<Ipv6Net, Option<u8>>,
}

impl InPlace<Routes> for FibInPlace {
    fn takes(&self, change: &RuleChange) -> bool {
        match change {
            RuleChange::AddRoute(prefix, _) | RuleChange::DelRoute(prefix) => self.routes.takes(prefix),
            _ => false,
        }
    }

    fn apply(&mut self, change: &RuleChange) -> Result<(), String> {
        let (prefix, port) = route_change::<Fib>(&self.plan, change)?;
        let family = if matches!(prefix, IpNet::V4(_)) { "IPv4" } else { "IPv6" };
        let made = match port {
            Some(port) => self.routes.add(prefix, port),
            None => self.routes.delete(prefix),
        };
        made.map_err(|e| match e {
            FibRefused::NoRoute => no_route(prefix),
            FibRefused::Dpdk(e) if e.is_out_of_space() => format!(
                "{family} FIB table full: its routes or tbl8 groups are used up \
                 (raise --lpm-max-rules or --lpm-tbl8s)"
            ),
            FibRefused::Dpdk(e) => e.to_string(),
            FibRefused::NotLive => format!("the {family} FIB does not change in place here"),
        })?;
        match prefix {
            IpNet::V4(p) => self.made_v4.insert(p.trunc(), port),
            IpNet::V6(p) => self.made_v6.insert(p.trunc(), port),
        };
        Ok(())
    }

    fn flush(&mut self, (v4, v6): &mut Routes) {
        write_made(&mut v4.routes, Ipv4Net::trunc, &mut self.made_v4);
        write_made(&mut v6.routes, Ipv6Net::trunc, &mut self.made_v6);
    }

    fn stats(&mut self) -> Option<String> {
        Some(self.routes.stats())
    }
}

/// FIB mode.
pub struct FibLookup {
    pub tables: FibTables,
}

/// IPv6 destinations of one batch, and the ports of its IPv4 ones when
/// looked up eight at a time.
#[derive(Default)]
pub struct FibScratch {
    v6: Gather<[u8; 16]>,
    ports: VectorPorts,
}

impl Lookup for FibLookup {
    type Scratch = FibScratch;

    #[inline(always)]
    fn add(&self, scratch: &mut FibScratch, _defer: bool, index: usize, l3: &L3, frame: &[u8]) -> Route {
        let dst = match l3 {
            L3::Ipv4(h) => return Route::from_table(self.tables.lookup_v4(h.dst)),
            L3::Ipv6(h) => h.dst,
            L3::Other => match ipv6_dst_bytes(frame) {
                Some(dst) => dst,
                None => return Route::RUNT,
            },
            L3::Runt => return Route::RUNT,
        };
        scratch.v6.push(index, dst);
        Route::NO_MATCH
    }

    const VECTOR_IPV4: bool = true;

    #[inline(always)]
    fn route_ipv4s(&self, simd: dpdk::Simd, scratch: &mut FibScratch, dsts: &[u32], routes: &mut [Route]) {
        (scratch.ports).route(dsts, routes, |dsts, miss, ports| self.tables.lookup_v4_simd(simd, dsts, miss, ports));
    }

    #[inline(always)]
    fn resolve(&self, scratch: &mut FibScratch, routes: &mut [Route; MAX_BURST]) {
        let (dsts, from) = scratch.v6.take();
        for (i, dst) in dsts.iter().enumerate() {
            answer(from, routes, i, self.tables.lookup_v6(dst));
        }
    }
}
