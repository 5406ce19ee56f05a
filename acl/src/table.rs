//! The two classifiers of ACL mode, one per address family, laid out as C
//! l3fwd's `ipv4_defs` / `ipv6_defs`: the input starts at the header's
//! protocol (next header) byte, and the TCP/UDP ports are read right after
//! a header of fixed size (C's ACL mode supports no IPv4 options or IPv6
//! extension headers, and neither does this: it reads the same bytes).

use std::fmt;
use std::num::NonZeroU32;
use std::sync::Arc;

use dpdk::{Acl, AclRule, ClassifyAlg, DpdkError, Eal, FieldDef, FieldKind, FieldValue};
use ipnet::{Ipv4Net, Ipv6Net};

use crate::rules::{Action, Rule, RuleFile};

/// Bytes of an IPv4 input, from the protocol byte: the last field read is
/// the destination port, 13 bytes on (rte_acl reads 4-byte words).
pub const V4_INPUT: usize = 17;
/// Bytes of an IPv6 input, from the next-header byte (destination port at 36).
pub const V6_INPUT: usize = 40;

/// What classify answers for one packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Forward(u16),
    /// A deny rule matched first.
    Deny,
    /// No rule matched.
    NoMatch,
}

/// The userdata of deny rules carries this bit, and their index below it,
/// as C's `ACL_DENY_SIGNATURE`; routes carry their port + 1 (0 is no match
/// to rte_acl).
const DENY: u32 = 0xf000_0000;

/// Routes to ports at or above this are refused: C tests them against a
/// 32-bit port mask, which cannot name them.
pub const MAX_PORTS: u32 = 32;

fn verdict(answer: Option<NonZeroU32>) -> Verdict {
    match answer.map(NonZeroU32::get) {
        None => Verdict::NoMatch,
        Some(u) if u & DENY != 0 => Verdict::Deny,
        Some(u) => Verdict::Forward((u - 1) as u16),
    }
}

const fn field(kind: FieldKind, size: u8, input_index: u8, offset: u32) -> FieldDef {
    FieldDef {
        kind,
        size,
        input_index,
        offset,
    }
}
use FieldKind::{Bitmask, Mask, Range};

/// C's `ipv4_defs`: protocol, source, destination, source and destination
/// port, at their offsets from the protocol byte of a 20-byte header.
const V4_FIELDS: [FieldDef; 5] = [
    field(Bitmask, 1, 0, 0),
    field(Mask, 4, 2, 12 - 9),
    field(Mask, 4, 3, 16 - 9),
    field(Range, 2, 4, 20 - 9),
    field(Range, 2, 4, 20 - 9 + 2),
];

/// C's `ipv6_defs`: next header, the source and destination addresses as
/// four 32-bit words each, source and destination port.
const V6_FIELDS: [FieldDef; 11] = [
    field(Bitmask, 1, 0, 0),
    field(Mask, 4, 1, 8 - 6),
    field(Mask, 4, 2, 8 - 6 + 4),
    field(Mask, 4, 3, 8 - 6 + 8),
    field(Mask, 4, 4, 8 - 6 + 12),
    field(Mask, 4, 5, 24 - 6),
    field(Mask, 4, 6, 24 - 6 + 4),
    field(Mask, 4, 7, 24 - 6 + 8),
    field(Mask, 4, 8, 24 - 6 + 12),
    field(Range, 2, 9, 40 - 6),
    field(Range, 2, 9, 40 - 6 + 2),
];

/// An address family's rules as rte_acl fields.
trait Fields<const N: usize>: Sized {
    fn fields(rule: &Rule<Self>) -> [FieldValue; N];
}

fn value(value: impl Into<u64>, mask_range: impl Into<u64>) -> FieldValue {
    FieldValue {
        value: value.into(),
        mask_range: mask_range.into(),
    }
}

fn ports_and_proto(rule: &Rule<impl Sized>) -> [FieldValue; 3] {
    [
        value(rule.proto, rule.proto_mask),
        value(*rule.src_ports.start(), *rule.src_ports.end()),
        value(*rule.dst_ports.start(), *rule.dst_ports.end()),
    ]
}

impl Fields<5> for Ipv4Net {
    fn fields(rule: &Rule<Self>) -> [FieldValue; 5] {
        let [proto, sport, dport] = ports_and_proto(rule);
        let net = |n: &Ipv4Net| value(u32::from(n.addr()), n.prefix_len());
        [proto, net(&rule.src), net(&rule.dst), sport, dport]
    }
}

impl Fields<11> for Ipv6Net {
    fn fields(rule: &Rule<Self>) -> [FieldValue; 11] {
        let [proto, sport, dport] = ports_and_proto(rule);
        let mut f = [proto; 11];
        let (src, dst) = f[1..9].split_at_mut(4);
        for (words, net) in [(src, &rule.src), (dst, &rule.dst)] {
            // The prefix length spread over the four words, as C's
            // parse_ipv6_net does: 32 for each whole word, the rest, then 0.
            let octets = net.addr().octets();
            let len = u32::from(net.prefix_len());
            for (i, (w, o)) in words.iter_mut().zip(octets.chunks_exact(4)).enumerate() {
                let word = u32::from_be_bytes([o[0], o[1], o[2], o[3]]);
                *w = value(word, len.saturating_sub(32 * i as u32).min(32));
            }
        }
        f[9] = sport;
        f[10] = dport;
        f
    }
}

/// A rule file that cannot become a classifier.
#[derive(Debug)]
pub enum TableError {
    /// A route to a port not enabled (`-p`), which C refuses too.
    PortNotEnabled {
        origin: String,
        line: usize,
        port: u32,
    },
    Dpdk(DpdkError),
}

impl fmt::Display for TableError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::PortNotEnabled { origin, line, port } if *port >= MAX_PORTS => write!(
                f,
                "{origin}:{line}: route to port {port}: ports go up to {} (C tests the port against a 32-bit mask)",
                MAX_PORTS - 1
            ),
            Self::PortNotEnabled { origin, line, port } => {
                write!(
                    f,
                    "{origin}:{line}: route to port {port}, which the port mask (-p) does not enable"
                )
            }
            Self::Dpdk(e) => write!(f, "ACL: {e}"),
        }
    }
}

impl std::error::Error for TableError {}

impl From<DpdkError> for TableError {
    fn from(e: DpdkError) -> Self {
        TableError::Dpdk(e)
    }
}

/// rte_acl's rules for `file`: priorities by position (the first line
/// highest), deny rules numbered in their own order, as C numbers them.
fn acl_rules<N: Fields<F>, const F: usize>(
    file: &RuleFile<N>,
    enabled: &impl Fn(u32) -> bool,
) -> Result<Vec<AclRule<F>>, TableError> {
    let mut denies = 0;
    file.rules
        .iter()
        .enumerate()
        .map(|(position, rule)| {
            let userdata = match rule.action {
                Action::Route(port) if port < MAX_PORTS && enabled(port) => port + 1,
                Action::Route(port) => {
                    return Err(TableError::PortNotEnabled {
                        origin: file.origin.clone(),
                        line: rule.line,
                        port,
                    })
                }
                Action::Deny => {
                    denies += 1;
                    DENY + denies - 1
                }
            };
            Ok(AclRule {
                priority: dpdk::ACL_MAX_PRIORITY - position as i32,
                // Never 0: routes are port + 1, denies above DENY.
                userdata: NonZeroU32::new(userdata).unwrap_or(NonZeroU32::MIN),
                fields: N::fields(rule),
            })
        })
        .collect()
}

/// The IPv4 and IPv6 classifiers of ACL mode.
pub struct AclTables {
    /// Shared by the tables [`AclTables::with_rebuilt`] makes.
    v4: Arc<Acl<V4_INPUT>>,
    v6: Arc<Acl<V6_INPUT>>,
}

impl AclTables {
    /// Builds both classifiers from their rule files with classify method
    /// `alg` (None: the best available); routes must go to ports
    /// `enabled` accepts. `name` prefixes the rte_acl context names.
    pub fn build(
        eal: &Eal,
        name: &str,
        socket: i32,
        v4: &RuleFile<Ipv4Net>,
        v6: &RuleFile<Ipv6Net>,
        alg: Option<ClassifyAlg>,
        enabled: impl Fn(u32) -> bool,
    ) -> Result<AclTables, TableError> {
        let start = std::time::Instant::now();
        let (r4, r6) = (acl_rules(v4, &enabled)?, acl_rules(v6, &enabled)?);
        let tables = AclTables {
            v4: Arc::new(Acl::build(eal, &format!("{name}_v4"), socket, &V4_FIELDS, &r4, alg)?),
            v6: Arc::new(Acl::build(eal, &format!("{name}_v6"), socket, &V6_FIELDS, &r6, alg)?),
        };
        log::info!(
            "ACL: {} IPv4 and {} IPv6 rules built in {:.1?}",
            r4.len(),
            r6.len(),
            start.elapsed()
        );
        Ok(tables)
    }

    /// These classifiers with one family's rebuilt (IPv6 if `ipv6`) from
    /// its file as [`AclTables::build`] builds it, the other family's
    /// shared: a change of one family's rules rebuilds no classifier of
    /// the other.
    #[allow(clippy::too_many_arguments)]
    pub fn with_rebuilt(
        &self,
        eal: &Eal,
        name: &str,
        socket: i32,
        (v4, v6): (&RuleFile<Ipv4Net>, &RuleFile<Ipv6Net>),
        alg: Option<ClassifyAlg>,
        enabled: impl Fn(u32) -> bool,
        ipv6: bool,
    ) -> Result<AclTables, TableError> {
        let start = std::time::Instant::now();
        let (tables, rules) = match ipv6 {
            false => {
                let rules = acl_rules(v4, &enabled)?;
                let v4 = Acl::build(eal, &format!("{name}_v4"), socket, &V4_FIELDS, &rules, alg)?;
                let v6 = Arc::clone(&self.v6);
                (AclTables { v4: Arc::new(v4), v6 }, rules.len())
            }
            true => {
                let rules = acl_rules(v6, &enabled)?;
                let v6 = Acl::build(eal, &format!("{name}_v6"), socket, &V6_FIELDS, &rules, alg)?;
                let v4 = Arc::clone(&self.v4);
                (AclTables { v4, v6: Arc::new(v6) }, rules.len())
            }
        };
        let family = if ipv6 { "IPv6" } else { "IPv4" };
        log::info!(
            "ACL: {rules} {family} rules built in {:.1?}, beside the other family's in use",
            start.elapsed()
        );
        Ok(tables)
    }

    /// Classifies IPv4 inputs (each from its header's protocol byte on).
    #[inline(always)]
    pub fn classify_v4(&self, inputs: &[[u8; V4_INPUT]], mut each: impl FnMut(usize, Verdict)) {
        self.v4.classify(inputs, |i, a| each(i, verdict(a)));
    }

    /// Classifies IPv6 inputs (each from its header's next-header byte on).
    #[inline(always)]
    pub fn classify_v6(&self, inputs: &[[u8; V6_INPUT]], mut each: impl FnMut(usize, Verdict)) {
        self.v6.classify(inputs, |i, a| each(i, verdict(a)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::parse;

    const V4: &str = "\
@0.0.0.0/0 198.18.0.0/25 0 : 65535 0 : 65535 6/0xff
@198.18.9.0/24 0.0.0.0/0 0 : 65535 0 : 1023 0/0
R0.0.0.0/0 198.18.1.0/25 0 : 65535 0 : 65535 0/0 0
R0.0.0.0/0 198.18.1.0/24 0 : 65535 0 : 65535 0/0 1
R0.0.0.0/0 198.18.0.0/16 32768 : 65535 0 : 65535 17/0xff 1
R0.0.0.0/0 198.18.0.0/16 0 : 65535 0 : 65535 0/0 0
";
    const V6: &str = "\
@0:0:0:0:0:0:0:0/0 2001:200:0:0:0:0:0:0/64 0 : 65535 80 : 80 6/0xff
R0:0:0:0:0:0:0:0/0 2001:200:0:1:8000:0:0:0/65 0 : 65535 0 : 65535 0/0 0
R0:0:0:0:0:0:0:0/0 2001:200:0:0:0:0:0:0/48 0 : 65535 0 : 65535 0/0 1
";

    /// An IPv4 input as classify takes it: from the protocol byte.
    fn v4_input(proto: u8, src: [u8; 4], dst: [u8; 4], sport: u16, dport: u16) -> [u8; V4_INPUT] {
        let mut h = [0u8; V4_INPUT];
        h[0] = proto;
        h[3..7].copy_from_slice(&src);
        h[7..11].copy_from_slice(&dst);
        h[11..13].copy_from_slice(&sport.to_be_bytes());
        h[13..15].copy_from_slice(&dport.to_be_bytes());
        h
    }

    fn v6_input(proto: u8, dst: std::net::Ipv6Addr, dport: u16) -> [u8; V6_INPUT] {
        let mut h = [0u8; V6_INPUT];
        h[0] = proto;
        h[18..34].copy_from_slice(&dst.octets());
        h[36..38].copy_from_slice(&dport.to_be_bytes());
        h
    }

    fn tables(eal: &Eal, name: &str, alg: Option<ClassifyAlg>) -> AclTables {
        let (v4, v6) = (parse(V4, "v4").unwrap(), parse(V6, "v6").unwrap());
        AclTables::build(eal, name, 0, &v4, &v6, alg, |p| p < 2).unwrap()
    }

    #[test]
    fn earlier_rules_win_and_every_field_counts() {
        let eal = Eal::for_tests(&[]).unwrap();
        let t = tables(eal, "t_order", None);
        let src = [10, 0, 0, 1];
        let cases = [
            (v4_input(6, src, [198, 18, 0, 5], 1, 2), Verdict::Deny),
            (v4_input(17, src, [198, 18, 0, 5], 1, 2), Verdict::Forward(0)),
            (v4_input(17, src, [198, 18, 1, 5], 1, 2), Verdict::Forward(0)),
            (v4_input(17, src, [198, 18, 1, 200], 1, 2), Verdict::Forward(1)),
            (v4_input(17, src, [198, 18, 5, 5], 40000, 2), Verdict::Forward(1)),
            (v4_input(6, src, [198, 18, 5, 5], 40000, 2), Verdict::Forward(0)),
            (v4_input(17, [198, 18, 9, 1], [198, 18, 5, 5], 1, 1023), Verdict::Deny),
            (
                v4_input(17, [198, 18, 9, 1], [198, 18, 5, 5], 1, 1024),
                Verdict::Forward(0),
            ),
            (v4_input(17, src, [10, 1, 2, 3], 1, 2), Verdict::NoMatch),
        ];
        let inputs: Vec<_> = cases.iter().map(|c| c.0).collect();
        let mut got = vec![Verdict::NoMatch; cases.len()];
        t.classify_v4(&inputs, |i, v| got[i] = v);
        assert_eq!(got, cases.map(|c| c.1));

        let net = |s: &str| s.parse::<std::net::Ipv6Addr>().unwrap();
        let cases6 = [
            (v6_input(6, net("2001:200::9"), 80), Verdict::Deny),
            (v6_input(17, net("2001:200::9"), 80), Verdict::Forward(1)),
            (v6_input(17, net("2001:200:0:1:8000::1"), 80), Verdict::Forward(0)),
            (v6_input(17, net("2001:200:0:1:7fff::1"), 80), Verdict::Forward(1)),
            (v6_input(17, net("2001:201::1"), 80), Verdict::NoMatch),
        ];
        let inputs: Vec<_> = cases6.iter().map(|c| c.0).collect();
        let mut got = vec![Verdict::NoMatch; cases6.len()];
        t.classify_v6(&inputs, |i, v| got[i] = v);
        assert_eq!(got, cases6.map(|c| c.1));
    }

    /// The methods that must build here: scalar everywhere, and on x86
    /// the ones whose CPU flag rte_acl checks (SSE4.1, AVX2) is present.
    /// The others may be refused, by the CPU or by EAL's SIMD width.
    fn required(alg: ClassifyAlg) -> bool {
        match alg {
            ClassifyAlg::Scalar => true,
            #[cfg(target_arch = "x86_64")]
            ClassifyAlg::Sse => std::arch::is_x86_feature_detected!("sse4.1"),
            #[cfg(target_arch = "x86_64")]
            ClassifyAlg::Avx2 => std::arch::is_x86_feature_detected!("avx2"),
            _ => false,
        }
    }

    #[test]
    fn every_method_the_cpu_has_answers_alike() {
        let eal = Eal::for_tests(&[]).unwrap();
        let reference = tables(eal, "t_ref", Some(ClassifyAlg::Scalar));
        let inputs: Vec<_> = (0..300u32)
            .map(|i| {
                v4_input(
                    [6, 17, 1][i as usize % 3],
                    [198, 18, 9, i as u8],
                    [198, 18, (i % 3) as u8, (i * 7) as u8],
                    (i * 331) as u16,
                    (i * 13) as u16,
                )
            })
            .collect();
        let mut want = vec![Verdict::NoMatch; inputs.len()];
        reference.classify_v4(&inputs, |i, v| want[i] = v);
        for (name, alg) in ClassifyAlg::ALL {
            let (v4, v6) = (parse(V4, "v4").unwrap(), parse(V6, "v6").unwrap());
            let t = match AclTables::build(eal, &format!("t_{name}"), 0, &v4, &v6, Some(alg), |p| p < 2) {
                Ok(t) => t,
                Err(e) if !required(alg) => {
                    eprintln!("{name}: not on this CPU ({e})");
                    continue;
                }
                Err(e) => panic!("{name} must build here: {e}"),
            };
            let mut got = vec![Verdict::NoMatch; inputs.len()];
            t.classify_v4(&inputs, |i, v| got[i] = v);
            assert_eq!(got, want, "{name}");
        }
    }

    #[test]
    fn routes_to_disabled_ports_are_refused() {
        let eal = Eal::for_tests(&[]).unwrap();
        let (v4, v6) = (parse(V4, "v4.rules").unwrap(), parse(V6, "v6").unwrap());
        let err = AclTables::build(eal, "t_port", 0, &v4, &v6, None, |p| p == 0)
            .err()
            .unwrap();
        assert_eq!(
            err.to_string(),
            "v4.rules:4: route to port 1, which the port mask (-p) does not enable"
        );
        let far = parse("R0.0.0.0/0 0.0.0.0/0 0 : 65535 0 : 65535 0/0 33\n", "far").unwrap();
        let err = AclTables::build(eal, "t_far", 0, &far, &v6, None, |_| true)
            .err()
            .unwrap();
        assert!(
            err.to_string()
                .starts_with("far:1: route to port 33: ports go up to 31"),
            "{err}"
        );
    }
}
