//! ACL rule files, as l3fwd's `--rule_ipv4` / `--rule_ipv6` read them in
//! ACL mode: ClassBench lines, as `l3fwd_acl.c` of DPDK 22.11 parses them.
//!
//! ```text
//! @<src>/<len> <dst>/<len> <sport lo> : <sport hi> <dport lo> : <dport hi> <proto>/<mask>
//! R<src>/<len> <dst>/<len> <sport lo> : <sport hi> <dport lo> : <dport hi> <proto>/<mask> <port>
//! ```
//!
//! `@` lines deny, `R` lines route to `<port>`. Earlier lines win: a rule's
//! priority is its position in the file, as in C. IPv6 addresses are
//! written in full, eight groups of hex digits (C reads them group by
//! group). Numbers are C's `strtoul` forms (`0x06/0xff`). Fields after the
//! last are ignored; lines starting with `#` and blank lines are skipped;
//! a file must hold at least one route. As with the other rule files, the
//! file is read as bytes and Windows line endings are accepted (see the
//! `rulefile` crate).

use std::fmt;
use std::net::Ipv4Addr;
use std::ops::RangeInclusive;
use std::path::Path;

use ipnet::{Ipv4Net, Ipv6Net};
use rulefile::{number, parse_c_ulong, Line, NumberError};

/// What a matching packet gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// Dropped (`@`).
    Deny,
    /// Sent out of this port (`R`).
    Route(u32),
}

/// One rule of an ACL rule file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rule<N> {
    pub action: Action,
    /// Source prefix (host bits as written: rte_acl masks them).
    pub src: N,
    pub dst: N,
    pub src_ports: RangeInclusive<u16>,
    pub dst_ports: RangeInclusive<u16>,
    /// Protocol value and bit mask: a packet's protocol `p` matches when
    /// `p & proto_mask == proto` (rte_acl's bit-mask field).
    pub proto: u8,
    pub proto_mask: u8,
    /// 1-based line number in the file.
    pub line: usize,
}

/// The rules of one file, in file order (highest priority first), and the
/// file's name for messages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuleFile<N> {
    pub origin: String,
    pub rules: Vec<Rule<N>>,
}

/// The fields of a rule line after its lead character, in order.
const FIELDS: [&str; 10] = [
    "source address",
    "destination address",
    "source port low",
    "source port range ':'",
    "source port high",
    "destination port low",
    "destination port range ':'",
    "destination port high",
    "protocol",
    "output port",
];
const FORM: &str = "<src>/<len> <dst>/<len> <lo> : <hi> <lo> : <hi> <proto>/<mask>";

/// Why one line of a rule file was rejected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LineProblem {
    /// The line starts with neither `@` nor `R`.
    NotARule,
    /// Fewer fields than the rule needs.
    MissingFields { found: usize, route: bool },
    /// An address or prefix that does not parse.
    BadAddress { field: &'static str, text: String },
    /// A number that does not parse, or a separator that is not `:`.
    BadField { field: &'static str, text: String },
    /// A number larger than its field allows.
    OutOfRange { field: &'static str, value: u64, max: u64 },
    /// A port range whose low end is above its high end.
    EmptyRange { field: &'static str, low: u16, high: u16 },
}

impl fmt::Display for LineProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NotARule => write!(f, "an ACL rule line must start with '@' (deny) or 'R' (route)"),
            Self::MissingFields { found, route } => {
                let (lead, want, port) = if *route { ('R', 10, " <port>") } else { ('@', 9, "") };
                write!(f, "expected {want} fields '{lead}{FORM}{port}', found {found}")
            }
            Self::BadAddress { field, text } => write!(f, "{field} '{text}' is not a valid address/length"),
            Self::BadField { field, text } => write!(f, "{field}: '{text}' is not valid"),
            Self::OutOfRange { field, value, max } => write!(f, "{field} {value} out of range 0..={max}"),
            Self::EmptyRange { field, low, high } => write!(f, "{field} range {low} : {high} is empty (low > high)"),
        }
    }
}

impl rulefile::Problem for LineProblem {
    const RULES: &'static str =
        "routes ('R<src>/<len> <dst>/<len> <lo> : <hi> <lo> : <hi> <proto>/<mask> <port>' lines)";
}

/// A rule file that could not be read or parsed.
pub type RuleError = rulefile::Error<LineProblem>;

/// An address family's prefixes as ACL rule files write them.
pub trait Prefix: Sized {
    fn parse_prefix(text: &str) -> Option<Self>;
    /// The prefix as a rule file writes it (what `parse_prefix` reads).
    fn rule_text(&self) -> String;
}

impl<N: PartialEq> Rule<N> {
    /// Whether `other` matches the same packets (its action aside).
    pub fn same_match(&self, other: &Rule<N>) -> bool {
        (
            &self.src,
            &self.dst,
            &self.src_ports,
            &self.dst_ports,
            self.proto,
            self.proto_mask,
        ) == (
            &other.src,
            &other.dst,
            &other.src_ports,
            &other.dst_ports,
            other.proto,
            other.proto_mask,
        )
    }
}

impl<N: Prefix> Rule<N> {
    /// The rule as a line of a rule file: [`parse`] reads it back.
    pub fn line(&self) -> String {
        let (lead, port) = match self.action {
            Action::Deny => ('@', String::new()),
            Action::Route(port) => ('R', format!(" {port}")),
        };
        format!(
            "{lead}{} {} {} : {} {} : {} {:#04x}/{:#04x}{port}",
            self.src.rule_text(),
            self.dst.rule_text(),
            self.src_ports.start(),
            self.src_ports.end(),
            self.dst_ports.start(),
            self.dst_ports.end(),
            self.proto,
            self.proto_mask
        )
    }
}

impl Prefix for Ipv4Net {
    /// `a.b.c.d/len`, the address as `inet_pton` takes it.
    fn parse_prefix(text: &str) -> Option<Self> {
        let (addr, len) = text.split_once('/')?;
        let addr: Ipv4Addr = addr.parse().ok()?;
        Ipv4Net::new(addr, u8::try_from(parse_c_ulong(len, 0)?).ok()?).ok()
    }

    fn rule_text(&self) -> String {
        self.to_string()
    }
}

impl Prefix for Ipv6Net {
    /// Eight groups of hex digits and a length, as C's `parse_ipv6_net`
    /// reads them: no `::` shorthand.
    fn parse_prefix(text: &str) -> Option<Self> {
        let (addr, len) = text.split_once('/')?;
        let mut groups = [0u16; 8];
        let mut parts = addr.split(':');
        for g in groups.iter_mut() {
            *g = u16::try_from(parse_c_ulong(parts.next()?, 16)?).ok()?;
        }
        if parts.next().is_some() {
            return None;
        }
        Ipv6Net::new(groups.into(), u8::try_from(parse_c_ulong(len, 0)?).ok()?).ok()
    }

    /// In full, eight groups: what `parse_prefix` reads.
    fn rule_text(&self) -> String {
        let groups: Vec<String> = self.addr().segments().iter().map(|g| format!("{g:x}")).collect();
        format!("{}/{}", groups.join(":"), self.prefix_len())
    }
}

/// Parses an ACL rule file's text; `origin` (usually the path) names it.
pub fn parse<N: Prefix>(text: impl AsRef<[u8]>, origin: &str) -> Result<RuleFile<N>, RuleError> {
    with_routes(origin, rulefile::parse(text, origin, rule)?)
}

/// Reads and parses an ACL rule file.
pub fn load<N: Prefix>(path: impl AsRef<Path>) -> Result<RuleFile<N>, RuleError> {
    let origin = path.as_ref().display().to_string();
    with_routes(&origin, rulefile::load(path, rule)?)
}

/// Parses rule lines that are not a whole file (`l3fwd-ctl acl add`):
/// deny rules alone are rules too.
pub fn parse_lines<N: Prefix>(text: &str, origin: &str) -> Result<Vec<Rule<N>>, RuleError> {
    rulefile::parse(text, origin, rule)
}

/// C refuses a file without routes, even one with deny rules.
fn with_routes<N>(origin: &str, rules: Vec<Rule<N>>) -> Result<RuleFile<N>, RuleError> {
    if !rules.iter().any(|r| matches!(r.action, Action::Route(_))) {
        return Err(RuleError::NoRules {
            origin: origin.to_owned(),
        });
    }
    Ok(RuleFile {
        origin: origin.to_owned(),
        rules,
    })
}

fn rule<N: Prefix>(line: Line<'_>) -> Result<Rule<N>, LineProblem> {
    let (route, body) = match line.text.as_bytes().first() {
        Some(b'R') => (true, &line.text[1..]),
        Some(b'@') => (false, &line.text[1..]),
        _ => return Err(LineProblem::NotARule),
    };
    let want = if route { FIELDS.len() } else { FIELDS.len() - 1 };
    let mut tokens = body.split_ascii_whitespace();
    let mut f = [""; FIELDS.len()];
    for (found, slot) in f.iter_mut().take(want).enumerate() {
        *slot = tokens.next().ok_or(LineProblem::MissingFields { found, route })?;
    }
    let prefix = |i: usize| {
        N::parse_prefix(f[i]).ok_or_else(|| LineProblem::BadAddress {
            field: FIELDS[i],
            text: rulefile::quote(f[i]),
        })
    };
    let (src, dst) = (prefix(0)?, prefix(1)?);
    let src_ports = port_range(&f, 2)?;
    let dst_ports = port_range(&f, 5)?;
    let (proto, proto_mask) = f[8].split_once('/').ok_or_else(|| LineProblem::BadField {
        field: "protocol '<value>/<mask>'",
        text: rulefile::quote(f[8]),
    })?;
    let action = if route {
        Action::Route(number(f[9], FIELDS[9], u32::MAX.into())? as u32)
    } else {
        Action::Deny
    };
    Ok(Rule {
        action,
        src,
        dst,
        src_ports,
        dst_ports,
        proto: number(proto, "protocol", u8::MAX.into())? as u8,
        proto_mask: number(proto_mask, "protocol mask", u8::MAX.into())? as u8,
        line: line.number,
    })
}

/// `<low> : <high>` from fields `at..at + 3`.
fn port_range(f: &[&str; FIELDS.len()], at: usize) -> Result<RangeInclusive<u16>, LineProblem> {
    let low = number(f[at], FIELDS[at], u16::MAX.into())? as u16;
    let high = number(f[at + 2], FIELDS[at + 2], u16::MAX.into())? as u16;
    if f[at + 1] != ":" {
        return Err(LineProblem::BadField {
            field: FIELDS[at + 1],
            text: rulefile::quote(f[at + 1]),
        });
    }
    if low > high {
        return Err(LineProblem::EmptyRange {
            field: if at == 2 { "source port" } else { "destination port" },
            low,
            high,
        });
    }
    Ok(low..=high)
}

/// A numeric field [`number`] refused, in this parser's words.
impl From<NumberError> for LineProblem {
    fn from(e: NumberError) -> Self {
        match e {
            NumberError::NotANumber { field, text } => Self::BadField { field, text },
            NumberError::OutOfRange { field, value, max } => Self::OutOfRange { field, value, max },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const V4: &str = "\
# deny TCP to 198.18.0.0/25, route the rest
@0.0.0.0/0 198.18.0.0/25 0 : 65535 0 : 65535 0x06/0xff
R0.0.0.0/0\t198.18.0.0/24 0 : 65535 1024 : 0xffff 0/0 1 trailing fields ignored
";

    #[test]
    fn a_rule_written_as_a_line_reads_back_the_same() {
        let v4 = parse::<Ipv4Net>(V4, "t").unwrap();
        let v6 = parse::<Ipv6Net>(
            "R2001:db8:0:0:0:0:0:0/32 0:0:0:0:0:0:0:1/128 1 : 2 3 : 4 0x11/0xff 3\n",
            "t",
        )
        .unwrap();
        assert_eq!(
            v6.rules[0].line(),
            "R2001:db8:0:0:0:0:0:0/32 0:0:0:0:0:0:0:1/128 1 : 2 3 : 4 0x11/0xff 3"
        );
        for rule in &v4.rules {
            assert_eq!(
                parse::<Ipv4Net>(rule.line() + "\nR0.0.0.0/0 0.0.0.0/0 0 : 0 0 : 0 0/0 0\n", "t")
                    .unwrap()
                    .rules[0],
                Rule {
                    line: 1,
                    ..rule.clone()
                }
            );
        }
    }

    fn v4_err(text: &str) -> String {
        parse::<Ipv4Net>(text, "t.rules").unwrap_err().to_string()
    }

    fn v6_err(text: &str) -> String {
        parse::<Ipv6Net>(text, "t6.rules").unwrap_err().to_string()
    }

    #[test]
    fn deny_and_route_lines_parse_in_file_order() {
        let file = parse::<Ipv4Net>(V4, "t.rules").unwrap();
        let [deny, route] = &file.rules[..] else {
            panic!("{file:?}")
        };
        assert_eq!(
            (deny.action, deny.line, deny.proto, deny.proto_mask),
            (Action::Deny, 2, 6, 0xff)
        );
        assert_eq!(deny.dst, "198.18.0.0/25".parse::<Ipv4Net>().unwrap());
        assert_eq!((route.action, route.line), (Action::Route(1), 3));
        assert_eq!(
            (route.src_ports.clone(), route.dst_ports.clone()),
            (0..=65535, 1024..=65535)
        );
        assert_eq!((route.proto, route.proto_mask), (0, 0));
    }

    #[test]
    fn ipv6_addresses_are_eight_groups() {
        let text = "R2001:0db8:0:0:0:0:0:1/128 2001:db8:0:0:0:0:0:0/0x20 0 : 65535 0 : 65535 17/0xff 0\n";
        let file = parse::<Ipv6Net>(text, "t6").unwrap();
        assert_eq!(file.rules[0].src, "2001:db8::1/128".parse::<Ipv6Net>().unwrap());
        assert_eq!(file.rules[0].dst.prefix_len(), 32);
        let short = "R2001:db8::/32 0:0:0:0:0:0:0:0/0 0 : 65535 0 : 65535 0/0 0\n";
        assert!(
            v6_err(short).contains("source address '2001:db8::/32' is not a valid"),
            "{}",
            v6_err(short)
        );
        let nine = "R1:2:3:4:5:6:7:8:9/64 0:0:0:0:0:0:0:0/0 0 : 65535 0 : 65535 0/0 0\n";
        assert!(v6_err(nine).contains("source address"));
        let big = "R0:0:0:0:0:0:0:0/129 0:0:0:0:0:0:0:0/0 0 : 65535 0 : 65535 0/0 0\n";
        assert!(v6_err(big).contains("t6.rules:1:"));
    }

    #[test]
    fn malformed_rules_name_the_line_and_field() {
        let ok = "R1.2.3.0/24 0.0.0.0/0 0 : 65535 0 : 65535 6/0xff 1";
        let cases = [
            (
                "R1.2.3/24 0.0.0.0/0 0 : 65535 0 : 65535 6/0xff 1",
                "source address '1.2.3/24'",
            ),
            (
                "R1.2.3.0/33 0.0.0.0/0 0 : 65535 0 : 65535 6/0xff 1",
                "source address '1.2.3.0/33'",
            ),
            (
                "R1.2.3.0/24 0.0.0.0 0 : 65535 0 : 65535 6/0xff 1",
                "destination address '0.0.0.0'",
            ),
            (
                "R1.2.3.0/24 0.0.0.0/0 9 : 8 0 : 65535 6/0xff 1",
                "source port range 9 : 8 is empty",
            ),
            (
                "R1.2.3.0/24 0.0.0.0/0 0 : 65535 7 : 3 6/0xff 1",
                "destination port range 7 : 3",
            ),
            (
                "R1.2.3.0/24 0.0.0.0/0 0 - 65535 0 : 65535 6/0xff 1",
                "source port range ':': '-'",
            ),
            (
                "R1.2.3.0/24 0.0.0.0/0 0 : 65536 0 : 65535 6/0xff 1",
                "source port high 65536 out of range",
            ),
            (
                "R1.2.3.0/24 0.0.0.0/0 0 : 65535 0 : 65535 6 1",
                "protocol '<value>/<mask>': '6'",
            ),
            (
                "R1.2.3.0/24 0.0.0.0/0 0 : 65535 0 : 65535 256/0xff 1",
                "protocol 256 out of range",
            ),
            (
                "R1.2.3.0/24 0.0.0.0/0 0 : 65535 0 : 65535 6/0x1ff 1",
                "protocol mask 511 out of range",
            ),
            ("R1.2.3.0/24 0.0.0.0/0 0 : 65535 0 : 65535 6/0xff", "expected 10 fields"),
            ("R1.2.3.0/24 0.0.0.0/0 0 : 65535 0 : 65535 6/0xff x", "output port: 'x'"),
            ("@1.2.3.0/24 0.0.0.0/0 0 : 65535 0 :", "expected 9 fields '@"),
            ("X1.2.3.0/24", "must start with '@' (deny) or 'R' (route)"),
        ];
        for (line, want) in cases {
            let err = v4_err(&format!("{ok}\n{line}\n"));
            assert!(err.starts_with("t.rules:2: '"), "{line}: {err}");
            assert!(err.contains(want), "{line}: {err}");
        }
    }

    #[test]
    fn a_file_needs_a_route() {
        let deny_only = "@0.0.0.0/0 0.0.0.0/0 0 : 65535 0 : 65535 0/0\n";
        assert!(
            v4_err(deny_only).starts_with("t.rules: no routes ('R"),
            "{}",
            v4_err(deny_only)
        );
        assert!(v4_err("# nothing\n").starts_with("t.rules: no routes"));
    }
}
