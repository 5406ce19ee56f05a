//! Exact match on the 5-tuple: the keys of the burst's IPv4 and IPv6
//! TCP/UDP packets go to rte_hash together (one bulk lookup per family and
//! burst), or one by one with `sequential`. Each key is taken from the frame once
//! and serves both hashing and comparison.
//!
//! Which frames are looked up follows the sample's `em_parse_ptype`: IPv4
//! with a 20-byte header (IHL 5; the version nibble is not looked at) and
//! IPv6 whose next header is TCP or UDP. Its burst code
//! (`l3fwd_em_process_packets`) looks a group of 8 up in bulk only if all 8
//! carry the same such type, and otherwise one by one with the same test,
//! so each frame's fate depends on that test alone. Everything else matches
//! nothing. Unlike the sample, no byte past the frame is read: a frame too
//! short for the ports its key ends with is a runt.

use std::error::Error;
use std::net::{Ipv4Addr, Ipv6Addr};
use std::sync::Arc;

use dpdk::{Eal, Qsbr};
use em::rules::Rule;
use em::{Batching, EmTables, EmWriter, Ipv4Key, Ipv6Key};

use l3fwd_modes::{self as info, ModeInfo};
use super::{check_port, five_tuple, l4_ports, line_error, InPlace, LiveBuild, Mode, RuleChange, TableCount};
use crate::cli::mode_args::EmArgs;
use crate::dataplane::lookup::{answer, Gather, Lookup, Route};
use crate::dataplane::packet::{ipv4_tuple, ipv6_tuple, L3};
use crate::cli::plan::Plan;
use crate::cli::portmask::PortMask;
use crate::cli::rule_files::{self, BuiltIn};
use crate::MAX_BURST;

/// `--lookup=em` (`-E`).
pub struct Em;

impl Mode for Em {
    const INFO: ModeInfo = info::EM;
    type Rules = (EmFile<Ipv4Addr>, EmFile<Ipv6Addr>);
    type Lookup = EmLookup;
    type Options = EmArgs;

    fn load(options: &EmArgs) -> Result<Self::Rules, Box<dyn Error>> {
        let [v4, v6] = rule_files::sources(&options.rules, &DEFAULT_FLOWS);
        fn file<A>(origin: &str, rules: Vec<Rule<A>>) -> EmFile<A> {
            EmFile {
                origin: origin.to_owned(),
                rules,
            }
        }
        let v4 = v4.read(
            |p| Ok(file(&p.display().to_string(), em::rules::load_v4(p)?)),
            |t, o| Ok::<_, em::rules::RuleError>(file(o, em::rules::parse_v4(t, o)?)),
        )?;
        let v6 = v6.read(
            |p| Ok(file(&p.display().to_string(), em::rules::load_v6(p)?)),
            |t, o| Ok::<_, em::rules::RuleError>(file(o, em::rules::parse_v6(t, o)?)),
        )?;
        check_em_ports(&v4, options.portmask)?;
        check_em_ports(&v6, options.portmask)?;
        Ok((v4, v6))
    }

    fn build(eal: &Eal, socket: u32, plan: &Plan, options: &EmArgs, (v4, v6): Self::Rules) -> Result<EmLookup, Box<dyn Error>> {
        let (mut v4, mut v6) = (v4.rules, v6.rules);
        // As in the C sample, exact match populates one family only: IPv6
        // with --ipv6, IPv4 without; the other family's packets all miss.
        if options.ipv6 {
            v4.clear();
        } else {
            v6.clear();
        }
        let entries = options.hash_entries.unwrap_or(em::DEFAULT_HASH_ENTRIES);
        let tables = EmTables::new(eal, entries, socket as i32, &v4, &v6, |p| plan.loads_routes_to(p.into()))?;
        Ok(EmLookup {
            tables,
            batching: batching(options),
        })
    }

    /// `flow add/del` change the tables in place: rte_hash is lock-free
    /// for the lcores (a `reload` builds new ones from the rule files).
    fn build_live(
        eal: &Eal,
        socket: u32,
        plan: &Plan,
        options: &EmArgs,
        rules: Self::Rules,
        qsbr: &Arc<Qsbr>,
    ) -> Result<LiveBuild<Self>, Box<dyn Error>> {
        let mut lookup = Self::build(eal, socket, plan, options, rules)?;
        let writer = FlowsInPlace {
            writer: lookup.tables.writer(qsbr)?,
            plan: plan.clone(),
            ipv6: options.ipv6,
        };
        Ok((lookup, Some(Box::new(writer))))
    }

    fn counts((v4, v6): &Self::Rules, plan: &Plan, options: &EmArgs) -> Vec<TableCount> {
        fn loaded<A>(rules: &[Rule<A>], plan: &Plan) -> usize {
            rules.iter().filter(|r| plan.loads_routes_to(r.port.into())).count()
        }
        // One family is loaded: IPv6 with --ipv6, else IPv4.
        let both = [
            (!options.ipv6).then(|| loaded(&v4.rules, plan)),
            options.ipv6.then(|| loaded(&v6.rules, plan)),
        ];
        TableCount::both("flows", both.map(Option::unwrap_or_default))
    }

    /// The flow's key and the rule-file line of the same key, in the
    /// family this run loads; flows `flow add` made are in no file.
    fn explain((v4, v6): &Self::Rules, options: &EmArgs, frame: &[u8]) -> String {
        fn line<A>(file: &EmFile<A>, key: impl Fn(&Rule<A>) -> bool, loaded: bool) -> String {
            match file.rules.iter().rev().find(|r| key(r)) {
                Some(r) if loaded => format!("port {} ({} line {})", r.port, file.origin, r.line),
                _ if loaded => "in no rule file".into(),
                _ => "family not loaded (EM loads IPv6 with --ipv6, else IPv4)".into(),
            }
        }
        // The key ends with the TCP/UDP ports.
        let ports = |t: &[u8]| l4_ports([t[t.len() - 4], t[t.len() - 3], t[t.len() - 2], t[t.len() - 1]]);
        match crate::dataplane::packet::parse(frame) {
            L3::Ipv4(h) if h.ihl == 5 => match ipv4_tuple(frame) {
                Some(t) => {
                    let key = Ipv4Key::from_header(t);
                    let [s, d] = [4, 8].map(|i| Ipv4Addr::from([t[i], t[i + 1], t[i + 2], t[i + 3]]));
                    let rule = line(v4, |r| Ipv4Key::from(&r.tuple) == key, !options.ipv6);
                    format!("{}: {rule}", five_tuple(s, d, t[1], ports(t)))
                }
                None => "runt: ends before the ports".into(),
            },
            L3::Ipv6(h) if matches!(h.next_header, 6 | 17) => match ipv6_tuple(frame) {
                Some(t) => {
                    let key = Ipv6Key::from_header(t);
                    let addr = |i: usize| Ipv6Addr::from(<[u8; 16]>::try_from(&t[i..i + 16]).unwrap_or_default());
                    let rule = line(v6, |r| Ipv6Key::from(&r.tuple) == key, options.ipv6);
                    format!("{}: {rule}", five_tuple(addr(4), addr(20), t[2], ports(t)))
                }
                None => "runt: ends before the ports".into(),
            },
            L3::Runt => "runt: nothing looked up".into(),
            _ => "neither IPv4 without options nor IPv6 TCP/UDP: nothing looked up".into(),
        }
    }
}

/// EM's writer: every flow change goes to the live hash tables.
struct FlowsInPlace {
    writer: EmWriter,
    plan: Plan,
    /// `--ipv6`: the family the tables hold.
    ipv6: bool,
}

impl InPlace<<Em as Mode>::Rules> for FlowsInPlace {
    fn takes(&self, change: &RuleChange) -> bool {
        matches!(change, RuleChange::AddFlow(_) | RuleChange::DelFlow(_))
    }

    /// `flow add LINE` and `flow del LINE`, in the family EM loads (see
    /// `build`).
    fn apply(&mut self, change: &RuleChange) -> Result<(), String> {
        let writer = &mut self.writer;
        match flow_change(change, &self.plan, self.ipv6)? {
            FlowChange::V4(r, true) => writer.add_v4(&r.tuple, r.port),
            FlowChange::V4(r, false) => writer.del_v4(&r.tuple),
            FlowChange::V6(r, true) => writer.add_v6(&r.tuple, r.port),
            FlowChange::V6(r, false) => writer.del_v6(&r.tuple),
        }
    }

    /// Nothing to keep: EM's tables are rebuilt only by a `reload`, from
    /// the rule files, which leaves out the flows `flow add` made.
    fn flush(&mut self, _rules: &mut <Em as Mode>::Rules) {}

    fn stats(&mut self) -> Option<String> {
        None
    }

    fn counts(&self) -> Option<Vec<TableCount>> {
        Some(TableCount::both("flows", self.writer.flows()))
    }

    fn list(&self) -> Option<Vec<String>> {
        Some(self.writer.flow_lines())
    }
}

/// A `flow add` (true) or `flow del` (false) of one rule, in the family
/// this run loads.
enum FlowChange {
    V4(Rule<Ipv4Addr>, bool),
    V6(Rule<Ipv6Addr>, bool),
}

/// Parses `change`'s line; an added flow's port must be forwarded to.
fn flow_change(change: &RuleChange, plan: &Plan, ipv6: bool) -> Result<FlowChange, String> {
    let (line, add) = match change {
        RuleChange::AddFlow(line) => (line, true),
        RuleChange::DelFlow(line) => (line, false),
        _ => return Err(change.not_in(Em::INFO.name)),
    };
    // The line itself, not a file position; the family hint only for a
    // flow of the family this run does not load.
    let why = |e: em::rules::RuleError, other_family: bool| {
        let what = line_error(e);
        let loaded = if ipv6 { "IPv6" } else { "IPv4" };
        match other_family {
            true => format!("{what} (this run loads {loaded} flows only: EM loads one family, IPv6 with --ipv6)"),
            false => what,
        }
    };
    let (v4, v6) = (em::rules::parse_v4(line, "flow"), em::rules::parse_v6(line, "flow"));
    fn one<A: Copy>(parsed: Vec<Rule<A>>, plan: &Plan, add: bool) -> Result<Rule<A>, String> {
        let [rule] = parsed[..] else {
            return Err("one flow per command".into());
        };
        if add {
            check_port(plan, rule.port.into())?;
        }
        // Line 0: from l3fwd-ctl, not from a file.
        Ok(Rule { line: 0, ..rule })
    }
    Ok(match ipv6 {
        true => FlowChange::V6(one(v6.map_err(|e| why(e, v4.is_ok()))?, plan, add)?, add),
        false => FlowChange::V4(one(v4.map_err(|e| why(e, v6.is_ok()))?, plan, add)?, add),
    })
}

/// How the options ask for keys to be handed to rte_hash.
fn batching(options: &EmArgs) -> Batching {
    match (options.sequential, options.lookup_group) {
        (true, _) => Batching::Sequential,
        (false, Some(group)) => Batching::Bulk { group: group.into() },
        (false, None) => Batching::WHOLE_BURST,
    }
}

/// The flow files' defaults (IPv4, IPv6): C's built-in tables.
pub const DEFAULT_FLOWS: [BuiltIn; 2] = [
    BuiltIn {
        name: "em_v4.cfg",
        text: include_str!("../../../configs/em_v4.cfg"),
    },
    BuiltIn {
        name: "em_v6.cfg",
        text: include_str!("../../../configs/em_v6.cfg"),
    },
];

/// Exact-match rules of one file, and the file's name for messages.
#[derive(Clone)]
pub struct EmFile<A> {
    pub origin: String,
    pub rules: Vec<Rule<A>>,
}

/// C tests a rule's port against the mask with `1 << port`, undefined for
/// ports of 32 and more (x86 tests bit `port % 32`); when that bit is
/// enabled, C goes on to query the port and exits. Such a rule is refused
/// with its line rather than silently never matching.
fn check_em_ports<A>(file: &EmFile<A>, portmask: PortMask) -> Result<(), String> {
    match file
        .rules
        .iter()
        .find(|r| r.port >= 32 && portmask.contains(u16::from(r.port % 32)))
    {
        Some(rule) => Err(format!(
            "{}:{}: output port {} is 32 or more, which the 32-bit port mask cannot enable \
             (C l3fwd tests bit {} instead, which -p {portmask:#x} enables, and exits)",
            file.origin,
            rule.line,
            rule.port,
            rule.port % 32
        )),
        None => Ok(()),
    }
}

const IPPROTO_TCP: u8 = 6;
const IPPROTO_UDP: u8 = 17;

/// Exact-match mode.
pub struct EmLookup {
    pub tables: EmTables,
    pub batching: Batching,
}

/// What exact match does with a frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EmKey {
    /// IPv4 with a 20-byte header carrying TCP or UDP: look this key up.
    V4(Ipv4Key),
    /// IPv6 whose next header is TCP or UDP: look this key up.
    V6(Ipv6Key),
    /// Not looked up: matches nothing.
    NotEligible,
    /// Shorter than its headers (under 14 bytes; IPv4 under 34, or 38 if
    /// eligible; IPv6 under 54, or 58 if eligible): dropped and counted.
    Runt,
}

/// The exact-match key of `frame`, parsed as `l3`, or why it has none.
#[inline(always)]
pub fn em_key(frame: &[u8], l3: &L3) -> EmKey {
    match l3 {
        L3::Ipv4(h) if h.ihl == 5 && is_tcp_or_udp(h.proto) => {
            ipv4_tuple(frame).map_or(EmKey::Runt, |t| EmKey::V4(Ipv4Key::from_header(t)))
        }
        L3::Ipv6(h) if is_tcp_or_udp(h.next_header) => {
            ipv6_tuple(frame).map_or(EmKey::Runt, |t| EmKey::V6(Ipv6Key::from_header(t)))
        }
        L3::Runt => EmKey::Runt,
        _ => EmKey::NotEligible,
    }
}

fn is_tcp_or_udp(proto: u8) -> bool {
    proto == IPPROTO_TCP || proto == IPPROTO_UDP
}

/// Keys of one burst in exact-match mode.
#[derive(Default)]
pub struct EmScratch {
    v4: Gather<Ipv4Key>,
    v6: Gather<Ipv6Key>,
}

impl Lookup for EmLookup {
    type Scratch = EmScratch;

    #[inline(always)]
    fn add(&self, scratch: &mut EmScratch, _defer: bool, index: usize, l3: &L3, frame: &[u8]) -> Route {
        match em_key(frame, l3) {
            EmKey::V4(k) => scratch.v4.push(index, k),
            EmKey::V6(k) => scratch.v6.push(index, k),
            EmKey::NotEligible => {}
            EmKey::Runt => return Route::RUNT,
        }
        Route::NO_MATCH
    }

    #[inline(always)]
    fn resolve(&self, scratch: &mut EmScratch, routes: &mut [Route; MAX_BURST]) {
        let EmScratch { v4, v6 } = scratch;
        let (keys4, from4) = v4.take();
        let (keys6, from6) = v6.take();
        self.tables
            .lookup_v4(keys4, self.batching, |i, port| answer(from4, routes, i, port));
        self.tables
            .lookup_v6(keys6, self.batching, |i, port| answer(from6, routes, i, port));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dataplane::packet::parse;
    use crate::cli::rule_files::tests::args;

    fn options(line: &str) -> EmArgs {
        EmArgs::from(&args(line))
    }

    #[test]
    fn built_in_flows_are_the_files_in_configs() {
        for default in &DEFAULT_FLOWS {
            let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("configs")
                .join(default.name);
            assert_eq!(std::fs::read_to_string(path).unwrap(), default.text);
        }
        let (v4, v6) = Em::load(&options("")).unwrap();
        assert_eq!((v4.rules.len(), v6.rules.len()), (16, 16));
        // One file alone is ignored, as in C: it is not even read.
        let (_, v6) = Em::load(&options("--rule_ipv6 /nonexistent.cfg")).unwrap();
        assert_eq!(v6.origin, "built-in em_v6.cfg");
    }

    #[test]
    fn batching_follows_the_options() {
        assert_eq!(batching(&options("")), Batching::WHOLE_BURST);
        assert_eq!(batching(&options("--em-lookup-group 8")), Batching::Bulk { group: 8 });
        assert_eq!(batching(&options("--sequential-lookup")), Batching::Sequential);
    }

    #[test]
    fn em_rule_to_port_32_or_more_is_refused_when_c_would_test_an_enabled_bit() {
        let file = |port| EmFile::<Ipv4Addr> {
            origin: "em.cfg".into(),
            rules: em::rules::parse_v4(
                format!("R1.1.1.1 2.2.2.2 1 2 6 0\nR1.1.1.2 2.2.2.2 1 2 6 {port}\n"),
                "em.cfg",
            )
            .unwrap(),
        };
        let mask = PortMask::from_bits(0x3);
        let error = check_em_ports(&file(33), mask).unwrap_err();
        assert!(error.starts_with("em.cfg:2: output port 33 is 32 or more"), "{error}");
        assert!(error.contains("tests bit 1 instead, which -p 0x3 enables"), "{error}");
        // Bit 34 % 32 = 2 is not enabled: C skips the rule, and so do we.
        assert!(check_em_ports(&file(34), mask).is_ok());
        assert!(check_em_ports(&file(31), mask).is_ok());
    }
    use em::FiveTuple;
    use std::net::{Ipv4Addr, Ipv6Addr};

    const ETHER_TYPE_IPV4: [u8; 2] = [0x08, 0x00];
    const ETHER_TYPE_IPV6: [u8; 2] = [0x86, 0xdd];
    /// Frame lengths a key needs: it ends with the two TCP/UDP ports.
    const V4_MIN_LEN: usize = 14 + 20 + 4;
    const V6_MIN_LEN: usize = 14 + 40 + 4;

    /// The key the EM lookup takes from `frame`, through the one parse.
    fn key_of(frame: &[u8]) -> EmKey {
        em_key(frame, &parse(frame))
    }

    /// An Ethernet + IPv4 + UDP/TCP-ports frame with every per-hop field set.
    fn ipv4_frame(version_ihl: u8, proto: u8) -> Vec<u8> {
        let mut f = vec![0xee; 12]; // MACs
        f.extend_from_slice(&ETHER_TYPE_IPV4);
        f.extend_from_slice(&[version_ihl, 0x00, 0x00, 0x2e]); // ver/IHL, TOS, total length
        f.extend_from_slice(&[0x12, 0x34, 0x40, 0x00]); // id, flags/fragment
        f.extend_from_slice(&[64, proto, 0xbe, 0xef]); // TTL, proto, checksum
        f.extend_from_slice(&[10, 0, 0, 1, 198, 18, 3, 0]); // src, dst
        f.extend_from_slice(&[0x30, 0x39, 0x00, 0x09]); // sport 12345, dport 9
        f.extend_from_slice(&[0xaa; 18]); // rest of L4 + payload
        f
    }

    fn ipv6_frame(next_header: u8) -> Vec<u8> {
        let mut f = vec![0xee; 12];
        f.extend_from_slice(&ETHER_TYPE_IPV6);
        f.extend_from_slice(&[0x60, 0x00, 0x00, 0x00, 0x00, 0x1a, next_header, 64]);
        f.extend_from_slice(&"2001:200::1".parse::<Ipv6Addr>().unwrap().octets());
        f.extend_from_slice(&"2001:200:0:3::".parse::<Ipv6Addr>().unwrap().octets());
        f.extend_from_slice(&[0x30, 0x39, 0x00, 0x09]);
        f.extend_from_slice(&[0xaa; 22]);
        f
    }

    #[test]
    fn ipv4_udp_and_tcp_frames_give_the_rule_key() {
        for proto in [IPPROTO_UDP, IPPROTO_TCP] {
            let rule = FiveTuple {
                dst: Ipv4Addr::new(198, 18, 3, 0),
                src: Ipv4Addr::new(10, 0, 0, 1),
                dst_port: 9,
                src_port: 12345,
                proto,
            };
            assert_eq!(key_of(&ipv4_frame(0x45, proto)), EmKey::V4(Ipv4Key::from(&rule)));
        }
    }

    #[test]
    fn ipv4_key_is_the_masked_header_bytes() {
        let EmKey::V4(key) = key_of(&ipv4_frame(0x45, IPPROTO_UDP)) else {
            panic!("not a v4 key")
        };
        #[rustfmt::skip]
        assert_eq!(key.as_ref(), &[
            0, 17, 0, 0, 10, 0, 0, 1, 198, 18, 3, 0, 0x30, 0x39, 0x00, 0x09,
        ]);
    }

    #[test]
    fn ipv6_udp_and_tcp_frames_give_the_rule_key() {
        for nh in [IPPROTO_UDP, IPPROTO_TCP] {
            let rule = FiveTuple {
                dst: "2001:200:0:3::".parse().unwrap(),
                src: "2001:200::1".parse().unwrap(),
                dst_port: 9,
                src_port: 12345,
                proto: nh,
            };
            assert_eq!(key_of(&ipv6_frame(nh)), EmKey::V6(Ipv6Key::from(&rule)));
        }
    }

    #[test]
    fn only_the_header_length_not_the_version_decides_ipv4() {
        // em_parse_ptype reads IHL only; the forwarder's RFC 1812 check
        // drops a bad version later.
        assert!(matches!(key_of(&ipv4_frame(0x65, IPPROTO_UDP)), EmKey::V4(_)));
        assert_eq!(key_of(&ipv4_frame(0x46, IPPROTO_UDP)), EmKey::NotEligible);
        assert_eq!(key_of(&ipv4_frame(0x44, IPPROTO_UDP)), EmKey::NotEligible);
    }

    #[test]
    fn other_protocols_and_ethertypes_are_not_looked_up() {
        assert_eq!(key_of(&ipv4_frame(0x45, 1)), EmKey::NotEligible);
        assert_eq!(key_of(&ipv6_frame(58)), EmKey::NotEligible);
        assert_eq!(key_of(&ipv6_frame(0)), EmKey::NotEligible); // hop-by-hop extension
        let mut arp = ipv4_frame(0x45, IPPROTO_UDP);
        arp[12..14].copy_from_slice(&[0x08, 0x06]);
        assert_eq!(key_of(&arp), EmKey::NotEligible);
        let mut vlan = ipv4_frame(0x45, IPPROTO_UDP);
        vlan[12..14].copy_from_slice(&[0x81, 0x00]);
        assert_eq!(key_of(&vlan), EmKey::NotEligible);
        assert_eq!(key_of(&[0; 14]), EmKey::NotEligible);
    }

    #[test]
    fn short_frames_are_runts_at_exact_boundaries() {
        let v4 = ipv4_frame(0x45, IPPROTO_UDP);
        assert!(matches!(key_of(&v4[..V4_MIN_LEN]), EmKey::V4(_)));
        assert_eq!(key_of(&v4[..V4_MIN_LEN - 1]), EmKey::Runt);
        let icmp = ipv4_frame(0x45, 1);
        assert_eq!(key_of(&icmp[..34]), EmKey::NotEligible);
        assert_eq!(key_of(&icmp[..33]), EmKey::Runt);
        let v6 = ipv6_frame(IPPROTO_TCP);
        assert!(matches!(key_of(&v6[..V6_MIN_LEN]), EmKey::V6(_)));
        assert_eq!(key_of(&v6[..V6_MIN_LEN - 1]), EmKey::Runt);
        let icmp6 = ipv6_frame(58);
        assert_eq!(key_of(&icmp6[..54]), EmKey::NotEligible);
        assert_eq!(key_of(&icmp6[..53]), EmKey::Runt);
        for len in 0..14 {
            assert_eq!(key_of(&v4[..len]), EmKey::Runt, "{len}");
        }
    }

    #[test]
    fn bytes_after_the_ports_do_not_change_the_key() {
        let a = ipv6_frame(IPPROTO_UDP);
        let mut b = a.clone();
        b[V6_MIN_LEN..].fill(0x55);
        b[18..20].copy_from_slice(&[0xff, 0xff]); // payload length
        b[21] = 1; // hop limit
        assert_eq!(key_of(&a), key_of(&b));
    }
}
