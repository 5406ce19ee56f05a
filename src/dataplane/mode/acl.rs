//! ACL mode (`--lookup=acl`): deny and route rules on the 5-tuple in
//! rte_acl, each family's packets of a burst classified in one call, as
//! C's `acl_main_loop` does. As in C before 24.07, a burst's IPv4 packets
//! are sent before its IPv6 ones when built on such a DPDK; from 24.07 on,
//! C sends them in the order received, and so do we. Packets that match
//! no rule, or are not IP, are dropped. rte_acl has no one-packet classify, so
//! `--sequential-lookup` changes nothing here.

use std::error::Error;

use acl::{AclTables, RuleFile, Verdict, V4_INPUT, V6_INPUT};
use dpdk::Eal;
use ipnet::{Ipv4Net, Ipv6Net};

use l3fwd_modes::{self as info, ModeInfo};
use super::{five_tuple, l4_ports, Listing, Mode, TableCount};
use crate::cli::mode_args::AclArgs;
use crate::dataplane::lookup::{answer_route, Gather, Lookup, Miss, Route};
use crate::dataplane::packet::{ipv4_from_proto, ipv6_from_next_header, L3};
use crate::cli::plan::Plan;
use crate::MAX_BURST;

/// `--lookup=acl`.
pub struct Acl;

impl Mode for Acl {
    const INFO: ModeInfo = info::ACL;
    const RSS_L4: bool = true;
    type Rules = (RuleFile<Ipv4Net>, RuleFile<Ipv6Net>);
    type Lookup = AclLookup;
    type Options = AclArgs;

    /// ACL mode has no built-in rules: both files are required, as C
    /// requires them.
    fn load(options: &AclArgs) -> Result<Self::Rules, Box<dyn Error>> {
        match (&options.rules.ipv4, &options.rules.ipv6) {
            (Some(v4), Some(v6)) => Ok((acl::rules::load(v4)?, acl::rules::load(v6)?)),
            (v4, _) => {
                let missing = if v4.is_none() { "--rule_ipv4" } else { "--rule_ipv6" };
                Err(format!(
                    "ACL mode needs --rule_ipv4 and --rule_ipv6 \
                     (it has no built-in rules; C requires both too): {missing} missing"
                )
                .into())
            }
        }
    }

    fn build(eal: &Eal, socket: u32, _plan: &Plan, options: &AclArgs, (v4, v6): Self::Rules) -> Result<AclLookup, Box<dyn Error>> {
        // C checks routes against the port mask itself, not the ports found.
        let enabled = |p: u32| u16::try_from(p).is_ok_and(|p| options.portmask.contains(p));
        let tables = AclTables::build(eal, &super::table_name(), socket as i32, &v4, &v6, options.alg, enabled)?;
        Ok(AclLookup { tables })
    }

    /// The rules of both files, IPv4 then IPv6, in file order (priority).
    fn list((v4, v6): &Self::Rules, _plan: &Plan, _options: &AclArgs, what: &Listing) -> Result<Vec<String>, String> {
        match what {
            Listing::AclRules => Ok(v4.rules.iter().map(|r| r.line()).chain(v6.rules.iter().map(|r| r.line())).collect()),
            _ => Err(what.not_in(Self::INFO.name)),
        }
    }

    /// Every rule: one routing to a port the portmask does not enable
    /// fails the build.
    fn counts((v4, v6): &Self::Rules, _plan: &Plan, _options: &AclArgs) -> Vec<TableCount> {
        TableCount::both("rules", [v4.rules.len(), v6.rules.len()])
    }

    /// The 5-tuple classified and the first rule, in file order (rte_acl's
    /// priority), that matches it.
    fn explain((v4, v6): &Self::Rules, _options: &AclArgs, frame: &[u8]) -> String {
        // As the classify reads them: ports as if no IPv4 options, zeros
        // past the frame's end.
        let byte = |i: usize| frame.get(i).copied().unwrap_or(0);
        let bytes = |at: usize| -> [u8; 16] { std::array::from_fn(|i| byte(at + i)) };
        let ports = |at: usize| [byte(at), byte(at + 1), byte(at + 2), byte(at + 3)];
        fn first<N: Copy>(file: &RuleFile<N>, holds: impl Fn(&N, &N) -> bool, sport: u16, dport: u16, proto: u8) -> String {
            let hit = file.rules.iter().find(|r| {
                holds(&r.src, &r.dst)
                    && r.src_ports.contains(&sport)
                    && r.dst_ports.contains(&dport)
                    && proto & r.proto_mask == r.proto & r.proto_mask
            });
            match hit {
                Some(r) => {
                    let action = match r.action {
                        acl::Action::Deny => "deny".to_string(),
                        acl::Action::Route(port) => format!("port {port}"),
                    };
                    format!("rule {action} ({} line {})", file.origin, r.line)
                }
                None => "no rule".into(),
            }
        }
        match crate::dataplane::packet::parse(frame) {
            L3::Ipv4(h) => {
                let [s, d] = [26, 30].map(|i| std::net::Ipv4Addr::from([byte(i), byte(i + 1), byte(i + 2), byte(i + 3)]));
                let (sport, dport) = l4_ports(ports(34));
                let rule = first(v4, |rs, rd| rs.contains(&s) && rd.contains(&d), sport, dport, h.proto);
                format!("{}: {rule}", five_tuple(s, d, h.proto, (sport, dport)))
            }
            L3::Ipv6(h) => {
                let [s, d] = [22, 38].map(|i| std::net::Ipv6Addr::from(bytes(i)));
                let (sport, dport) = l4_ports(ports(54));
                let rule = first(v6, |rs, rd| rs.contains(&s) && rd.contains(&d), sport, dport, h.next_header);
                format!("{}: {rule}", five_tuple(s, d, h.next_header, (sport, dport)))
            }
            L3::Runt => "runt: nothing classified".into(),
            L3::Other => "not IP: nothing classified".into(),
        }
    }
}

/// ACL mode.
pub struct AclLookup {
    pub tables: AclTables,
}

/// Classify inputs of one burst: each packet's header bytes from its
/// protocol field on, copied (rte_acl then never reads past a frame).
pub struct AclScratch {
    v4: Gather<[u8; V4_INPUT]>,
    v6: Gather<[u8; V6_INPUT]>,
}

impl Default for AclScratch {
    fn default() -> Self {
        AclScratch {
            v4: Gather::filled([0; V4_INPUT]),
            v6: Gather::filled([0; V6_INPUT]),
        }
    }
}

fn route(verdict: Verdict) -> Route {
    match verdict {
        Verdict::Forward(port) => Route::port(port),
        Verdict::Deny => Route::DENIED,
        Verdict::NoMatch => Route::NO_MATCH,
    }
}

impl Lookup for AclLookup {
    type Scratch = AclScratch;
    const MISS: Miss = Miss::Drop;
    const IPV4_FIRST: bool = dpdk::RELEASE < 2407;

    #[inline(always)]
    fn add(&self, scratch: &mut AclScratch, index: usize, l3: &L3, frame: &[u8]) -> Route {
        match l3 {
            L3::Ipv4(_) => scratch.v4.push_with(index, |key| ipv4_from_proto(frame, key)),
            L3::Ipv6(_) => scratch.v6.push_with(index, |key| ipv6_from_next_header(frame, key)),
            L3::Other => {}
            L3::Runt => return Route::RUNT,
        }
        Route::NO_MATCH
    }

    #[inline(always)]
    fn resolve(&self, scratch: &mut AclScratch, routes: &mut [Route; MAX_BURST]) {
        let (inputs, from) = scratch.v4.take();
        self.tables
            .classify_v4(inputs, |i, v| answer_route(from, routes, i, route(v)));
        let (inputs, from) = scratch.v6.take();
        self.tables
            .classify_v6(inputs, |i, v| answer_route(from, routes, i, route(v)));
    }
}
