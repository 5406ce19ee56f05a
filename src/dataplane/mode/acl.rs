//! ACL mode (`--lookup=acl`): deny and route rules on the 5-tuple in
//! rte_acl, each family's packets of a burst classified in one call, as
//! C's `acl_main_loop` does. As in C before 24.07, a burst's IPv4 packets
//! are sent before its IPv6 ones when built on such a DPDK; from 24.07 on,
//! C sends them in the order received, and so do we. Packets that match
//! no rule, or are not IP, are dropped. rte_acl has no one-packet classify, so
//! `--sequential-lookup` changes nothing here.

use std::error::Error;

use acl::rules::Prefix;
use acl::{Action, AclTables, RuleFile, Verdict, V4_INPUT, V6_INPUT};
use dpdk::Eal;
use ipnet::{Ipv4Net, Ipv6Net};

use l3fwd_modes::{self as info, ModeInfo};
use super::{acl_line_family, check_port, five_tuple, l4_ports, line_error, Family, Listing, Mode, RuleChange, TableCount};
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
        let enabled = enabled_ports(options);
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

    /// `acl add LINE`, `acl del LINE`: the family is the line's (an IPv6
    /// address has colons). Every change is made by a rebuild beside the
    /// live tables (rte_acl has no change in place).
    fn change_rules((v4, v6): &mut Self::Rules, plan: &Plan, _options: &AclArgs, change: &RuleChange) -> Result<(), String> {
        let (line, add) = match change {
            RuleChange::AddAcl(line) => (line, true),
            RuleChange::DelAcl(line) => (line, false),
            _ => return Err(change.not_in(Self::INFO.name)),
        };
        match acl_line_family(line) {
            Family::Ipv6 => change_file(v6, line, add, plan),
            Family::Ipv4 => change_file(v4, line, add, plan),
        }
    }

    fn rebuild_family(
        eal: &Eal,
        socket: u32,
        _plan: &Plan,
        options: &AclArgs,
        (v4, v6): &Self::Rules,
        live: &AclLookup,
        family: Family,
    ) -> Option<Result<AclLookup, Box<dyn Error>>> {
        let enabled = enabled_ports(options);
        let (name, ipv6) = (super::table_name(), family == Family::Ipv6);
        let rebuilt = live.tables.with_rebuilt(eal, &name, socket as i32, (v4, v6), options.alg, enabled, ipv6);
        Some(rebuilt.map(|tables| AclLookup { tables }).map_err(Into::into))
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
                    match r.line {
                        0 => format!("rule {action} (added by l3fwd-ctl)"),
                        n => format!("rule {action} ({} line {n})", file.origin),
                    }
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

/// The ports ACL routes may go to: C checks them against the port mask
/// itself, not the ports found.
fn enabled_ports(options: &AclArgs) -> impl Fn(u32) -> bool + '_ {
    |p: u32| u16::try_from(p).is_ok_and(|p| options.portmask.contains(p))
}

/// Adds the rule of `line` before every rule of `file`, in place of any
/// that matches the same packets, or deletes the rule of `line`.
fn change_file<N: Prefix + PartialEq>(file: &mut RuleFile<N>, line: &str, add: bool, plan: &Plan) -> Result<(), String> {
    let parsed = acl::rules::parse_lines::<N>(line, "acl").map_err(line_error)?;
    let [rule] = <[_; 1]>::try_from(parsed).map_err(|_| "one rule per command")?;
    if add {
        if let Action::Route(port) = rule.action {
            check_port(plan, u16::try_from(port).unwrap_or(u16::MAX))?;
        }
        file.rules.retain(|r| !r.same_match(&rule));
        // Line 0: from l3fwd-ctl, not from a file.
        file.rules.insert(0, acl::Rule { line: 0, ..rule });
        return Ok(());
    }
    let before = file.rules.len();
    file.rules.retain(|r| !(r.same_match(&rule) && r.action == rule.action));
    match file.rules.len() < before {
        true => Ok(()),
        false => Err(format!("no such rule '{line}' (acl list shows the rules)")),
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
    fn add(&self, scratch: &mut AclScratch, _defer: bool, index: usize, l3: &L3, frame: &[u8]) -> Route {
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Ports 0 and 1 forwarded to.
    fn plan() -> Plan {
        Plan::forwarding_to(&[0, 1])
    }

    fn lines(file: &RuleFile<impl Prefix>) -> Vec<String> {
        file.rules.iter().map(|r| r.line()).collect()
    }

    #[test]
    fn added_rules_come_first_in_place_of_their_match_and_go_as_listed() {
        let v4 = "R0.0.0.0/0 198.18.0.0/16 0 : 65535 0 : 65535 0x00/0x00 0\n";
        let v6 = "R0:0:0:0:0:0:0:0/0 2001:db8:0:0:0:0:0:0/32 0 : 65535 0 : 65535 0x00/0x00 0\n";
        let mut rules = (acl::rules::parse(v4, "v4").unwrap(), acl::rules::parse(v6, "v6").unwrap());
        let options = AclArgs {
            rules: Default::default(),
            portmask: crate::cli::portmask::PortMask::from_bits(0x3),
            alg: None,
        };
        let change = |rules: &mut <Acl as Mode>::Rules, change| Acl::change_rules(rules, &plan(), &options, &change);
        let deny = "@198.18.9.1/32 0.0.0.0/0 0 : 65535 0 : 65535 0x00/0x00";
        change(&mut rules, RuleChange::AddAcl(deny.into())).unwrap();
        assert_eq!(lines(&rules.0), [deny, v4.trim()]);
        // The same match routed instead: one rule for it, still first.
        let route = "R198.18.9.1/32 0.0.0.0/0 0 : 65535 0 : 65535 0x00/0x00 1";
        change(&mut rules, RuleChange::AddAcl(route.into())).unwrap();
        assert_eq!(lines(&rules.0), [route, v4.trim()]);
        let v6_deny = "@0:0:0:0:0:0:0:0/0 2001:db8:0:0:0:0:0:1/128 0 : 65535 80 : 80 0x06/0xff";
        change(&mut rules, RuleChange::AddAcl(v6_deny.into())).unwrap();
        assert_eq!(lines(&rules.1), [v6_deny, v6.trim()]);

        // Refused, and nothing changed: a deny is not the route there, a
        // port not forwarded to, a line that does not parse, another mode's.
        let before = rules.clone();
        for (refused, why) in [
            (RuleChange::DelAcl(route.replacen('R', "@", 1).trim_end_matches(" 1").into()), "no such rule"),
            (RuleChange::AddAcl(route.replace(" 1", " 2")), "port 2 is not forwarded to"),
            (RuleChange::AddAcl("R198.18.9.1/33 0.0.0.0/0 0 : 65535 0 : 65535 0/0 1".into()), "source address"),
            (RuleChange::DelFlow("R198.18.0.0 198.18.0.1 9 9 0x11".into()), "no flows to change"),
        ] {
            let e = change(&mut rules, refused.clone()).unwrap_err();
            assert!(e.contains(why), "{refused:?}: {e}");
        }
        assert_eq!(rules, before);

        change(&mut rules, RuleChange::DelAcl(route.into())).unwrap();
        change(&mut rules, RuleChange::DelAcl(v6_deny.into())).unwrap();
        assert_eq!((lines(&rules.0), lines(&rules.1)), (vec![v4.trim().to_string()], vec![v6.trim().to_string()]));
    }
}
