//! EM rule files, as l3fwd's `--rule_ipv4` / `--rule_ipv6` read them in
//! exact-match mode.
//!
//! Mirrors `em_route_parse.c` of DPDK 22.11: one rule per line,
//! `R<dst> <src> <dst port> <src port> <proto> <out port>`, fields separated
//! by spaces or tabs; lines starting with `#` and blank lines are skipped;
//! anything else is an error, and so is a file without any rule. Numbers are
//! read like C's `strtoul(s, &end, 0)` with the whole field consumed, so the
//! default files' protocol `0x11` is UDP.
//!
//! As in C, fields after the out port are ignored (`... 0x11 1 # web`);
//! unlike C, Windows line endings are accepted. The file is read as bytes
//! (see the `rulefile` crate: comments may hold any byte, a NUL ends a line).

use std::fmt;
use std::net::{Ipv4Addr, Ipv6Addr};
use std::path::Path;
use std::str::FromStr;

use rulefile::{number, Line, NumberError};

use crate::key::FiveTuple;

/// One rule of a rule file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rule<A> {
    /// What the rule matches.
    pub tuple: FiveTuple<A>,
    /// Output port id (`if_out`).
    pub port: u8,
    /// 1-based line number in the file, for messages about this rule.
    pub line: usize,
}

/// The fields of a rule line after the `R`, in order.
const FIELDS: [&str; 6] = [
    "destination address",
    "source address",
    "destination port",
    "source port",
    "protocol",
    "output port",
];

/// Why one line of a rule file was rejected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LineProblem {
    /// The line is neither a comment, blank, nor starts with `R`.
    NotARule,
    /// Fewer than six fields after `R`.
    MissingFields {
        /// How many there are.
        found: usize,
    },
    /// An address that does not parse as one of the file's family.
    BadAddress {
        /// Which field (`"source address"`, ...).
        field: &'static str,
        /// The field as written.
        text: String,
    },
    /// A port, protocol or output port that is not a number, or larger
    /// than its field allows.
    Number(NumberError),
}

impl fmt::Display for LineProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NotARule => write!(f, "a rule must start with 'R'"),
            Self::MissingFields { found } => write!(
                f,
                "expected 6 fields 'R<dst> <src> <dst port> <src port> <proto> <port>', found {found}"
            ),
            Self::BadAddress { field, text } => write!(f, "{field} '{text}' is not a valid address"),
            Self::Number(e) => write!(f, "{e}"),
        }
    }
}

/// A rule file that could not be read or parsed.
pub type RuleError = rulefile::Error<LineProblem>;

impl rulefile::Problem for LineProblem {
    const RULES: &'static str = "rules ('R<dst> <src> <dst port> <src port> <proto> <port>' lines)";
}

/// Parses an IPv4 rule file's text; `origin` (usually the path) names it in errors.
pub fn parse_v4(text: impl AsRef<[u8]>, origin: &str) -> Result<Vec<Rule<Ipv4Addr>>, RuleError> {
    rulefile::parse(text, origin, rule)
}

/// Parses an IPv6 rule file's text; `origin` (usually the path) names it in errors.
pub fn parse_v6(text: impl AsRef<[u8]>, origin: &str) -> Result<Vec<Rule<Ipv6Addr>>, RuleError> {
    rulefile::parse(text, origin, rule)
}

/// Reads and parses an IPv4 rule file.
pub fn load_v4(path: impl AsRef<Path>) -> Result<Vec<Rule<Ipv4Addr>>, RuleError> {
    rulefile::load(path, rule)
}

/// Reads and parses an IPv6 rule file.
pub fn load_v6(path: impl AsRef<Path>) -> Result<Vec<Rule<Ipv6Addr>>, RuleError> {
    rulefile::load(path, rule)
}

fn rule<A: FromStr>(line: Line<'_>) -> Result<Rule<A>, LineProblem> {
    let body = line.text.strip_prefix('R').ok_or(LineProblem::NotARule)?;
    let mut fields = body.split_ascii_whitespace();
    let mut f = [""; FIELDS.len()];
    for (found, slot) in f.iter_mut().enumerate() {
        *slot = fields.next().ok_or(LineProblem::MissingFields { found })?;
    }
    // Fields after the port are ignored, as C's strtok-based parser does
    // (they are often comments: `R10.0.0.0/8 1 # core`).
    let tuple = FiveTuple {
        dst: address(f[0], FIELDS[0])?,
        src: address(f[1], FIELDS[1])?,
        dst_port: number(f[2], FIELDS[2], u16::MAX.into())? as u16,
        src_port: number(f[3], FIELDS[3], u16::MAX.into())? as u16,
        proto: number(f[4], FIELDS[4], u8::MAX.into())? as u8,
    };
    Ok(Rule {
        tuple,
        port: number(f[5], FIELDS[5], u8::MAX.into())? as u8,
        line: line.number,
    })
}

fn address<A: FromStr>(text: &str, field: &'static str) -> Result<A, LineProblem> {
    text.parse().map_err(|_| LineProblem::BadAddress {
        field,
        text: rulefile::quote(text),
    })
}

impl From<NumberError> for LineProblem {
    fn from(e: NumberError) -> Self {
        Self::Number(e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn v4_err(text: &str) -> String {
        parse_v4(text, "t.cfg").unwrap_err().to_string()
    }

    fn configs() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs")
    }

    #[test]
    fn default_files_parse() {
        let v4 = load_v4(configs().join("em_v4.cfg")).unwrap();
        let v6 = load_v6(configs().join("em_v6.cfg")).unwrap();
        assert_eq!((v4.len(), v6.len()), (16, 16));
        // The C sample's built-in ipv4_l3fwd_em_route_array, in file order.
        for (i, rule) in v4.iter().enumerate() {
            let expected = FiveTuple {
                dst: Ipv4Addr::new(198, 18, i as u8, 0),
                src: Ipv4Addr::new(198, 18, i as u8, 1),
                dst_port: 9,
                src_port: 9,
                proto: 17,
            };
            assert_eq!((rule.tuple, rule.port, rule.line), (expected, i as u8, i + 2));
        }
        let last = v6[15];
        assert_eq!(last.tuple.dst, "2001:200:0:f::".parse::<Ipv6Addr>().unwrap());
        assert_eq!(last.tuple.src, "2001:200:0:f::1".parse::<Ipv6Addr>().unwrap());
        assert_eq!((last.tuple.proto, last.port, last.line), (17, 15, 17));
    }

    #[test]
    fn numbers_take_c_forms() {
        let rule = parse_v4("R1.2.3.4 5.6.7.8 0x10 010 +6 0XfF\n", "t").unwrap()[0];
        let t = rule.tuple;
        assert_eq!((t.dst_port, t.src_port, t.proto, rule.port), (16, 8, 6, 255));
        assert_eq!((t.dst, t.src), (Ipv4Addr::new(1, 2, 3, 4), Ipv4Addr::new(5, 6, 7, 8)));
    }

    #[test]
    fn comments_blank_lines_tabs_and_crlf() {
        let text = "# c\r\n\r\n \t \nR1.1.1.1\t2.2.2.2 1 2 6 3\r\nR 1.1.1.2  2.2.2.2 1 2 17 4 \r\n";
        let rules = parse_v4(text, "t").unwrap();
        assert_eq!(
            rules.iter().map(|r| (r.port, r.line)).collect::<Vec<_>>(),
            [(3, 4), (4, 5)]
        );
    }

    #[test]
    fn errors_name_origin_line_text_and_problem() {
        let text = "R1.1.1.1 2.2.2.2 1 2 6 3\n\nR1.1.1.1 2.2.2.2 1 2 6 256\r\n";
        assert_eq!(
            parse_v4(text, "configs/x.cfg").unwrap_err().to_string(),
            "configs/x.cfg:3: 'R1.1.1.1 2.2.2.2 1 2 6 256': output port 256 out of range 0..=255"
        );
    }

    #[test]
    fn rejects_lines_not_starting_with_r() {
        assert!(v4_err("X1.1.1.1 2.2.2.2 1 2 6 3").ends_with("a rule must start with 'R'"));
        assert!(v4_err(" # indented comment").starts_with("t.cfg:1: "));
        assert!(v4_err("R1.1.1.1 2.2.2.2 1 2 6 3\n R1.1.1.1 2.2.2.2 1 2 6 3").contains("t.cfg:2: "));
    }

    #[test]
    fn rejects_wrong_field_counts() {
        assert!(v4_err("R1.1.1.1 2.2.2.2 1 2 6")
            .ends_with("expected 6 fields 'R<dst> <src> <dst port> <src port> <proto> <port>', found 5"));
        assert!(v4_err("R").ends_with("found 0"));
        let rule = parse_v4("R1.1.1.1 2.2.2.2 1 2 6 3 # x junk", "t.cfg").unwrap()[0];
        assert_eq!((rule.port, rule.tuple.proto), (3, 6));
    }

    #[test]
    fn rejects_bad_addresses() {
        assert!(
            v4_err("R1.1.1.256 2.2.2.2 1 2 6 3").ends_with("destination address '1.1.1.256' is not a valid address")
        );
        assert!(v4_err("R1.1.1.1 01.2.2.2 1 2 6 3").ends_with("source address '01.2.2.2' is not a valid address"));
        assert!(v4_err("R::1 2.2.2.2 1 2 6 3").ends_with("destination address '::1' is not a valid address"));
        let v6 = parse_v6("R::1 2.2.2.2 1 2 6 3", "t").unwrap_err().to_string();
        assert!(v6.ends_with("source address '2.2.2.2' is not a valid address"), "{v6}");
    }

    #[test]
    fn rejects_bad_ports_and_protocols() {
        let line = |f: [&str; 4]| format!("R1.1.1.1 2.2.2.2 {} {} {} {}", f[0], f[1], f[2], f[3]);
        assert!(v4_err(&line(["x", "2", "6", "3"])).ends_with("destination port 'x' is not a number"));
        assert!(v4_err(&line(["1", "65536", "6", "3"])).ends_with("source port 65536 out of range 0..=65535"));
        assert!(v4_err(&line(["1", "2", "0x100", "3"])).ends_with("protocol 256 out of range 0..=255"));
        assert!(v4_err(&line(["1", "2", "udp", "3"])).ends_with("protocol 'udp' is not a number"));
        assert!(v4_err(&line(["1", "2", "6", "-1"])).ends_with("output port '-1' is not a number"));
        let max = parse_v4(line(["65535", "0", "255", "255"]), "t").unwrap()[0];
        assert_eq!((max.tuple.dst_port, max.tuple.proto, max.port), (65535, 255, 255));
    }

    #[test]
    fn file_without_rules_is_an_error() {
        for text in ["", "# only a comment\n", "\n \n"] {
            assert!(
                matches!(parse_v4(text, "t"), Err(RuleError::NoRules { .. })),
                "{text:?}"
            );
        }
        assert_eq!(
            v4_err("#x\n"),
            "t.cfg: no rules ('R<dst> <src> <dst port> <src port> <proto> <port>' lines)"
        );
    }

    #[test]
    fn unreadable_file_names_path_and_os_error() {
        let err = load_v6("/nonexistent/em.cfg").unwrap_err();
        let msg = err.to_string();
        assert_eq!(
            msg,
            "cannot read /nonexistent/em.cfg: No such file or directory (os error 2)"
        );
        assert!(std::error::Error::source(&err).is_some());
    }
}
