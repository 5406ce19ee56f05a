//! LPM rule files, as l3fwd's `--rule_ipv4` / `--rule_ipv6` read them.
//!
//! Mirrors `lpm_route_parse.c` of DPDK 22.11: one route per line,
//! `R<prefix>/<depth> <port>`, fields separated by spaces or tabs; lines
//! starting with `#` and blank lines are skipped; anything else is an error,
//! and so is a file without any route. Numbers (depth, port) are read like C's
//! `strtoul(s, &end, 0)` with the whole field consumed, so `0x18` is a depth of 24.
//!
//! As in C, fields after the port are ignored (`R10.0.0.0/8 1 # core`);
//! unlike C, Windows line endings are accepted. The file is read as bytes
//! (see the `rulefile` crate: comments may hold any byte, a NUL ends a line).

/// The prefix types of IPv4 and IPv6 routes.
pub use ipnet::{IpNet, Ipv4Net, Ipv6Net};
use rulefile::{number, Line, NumberError};
use std::fmt;
use std::net::{Ipv4Addr, Ipv6Addr};
use std::path::Path;
use std::str::FromStr;

/// One route of a rule file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Route<N> {
    /// The prefix as written: host bits are kept, since rte_lpm masks them
    /// itself (use `prefix.trunc()` for the network).
    pub prefix: N,
    /// Output port id.
    pub port: u8,
    /// 1-based line number in the file, for messages about this route.
    pub line: usize,
}

/// The routes of one rule file, and the file's name for messages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RouteFile<N> {
    /// The file (its path, usually).
    pub origin: String,
    /// Its routes, in file order.
    pub routes: Vec<Route<N>>,
}

/// Why one line of a rule file was rejected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LineProblem {
    /// The line is neither a comment, blank, nor starts with `R`.
    NotARoute,
    /// Fewer than two fields after `R`.
    MissingField,
    /// The prefix has no `/<depth>`.
    MissingDepth,
    /// The address does not parse as an address of the file's family.
    BadAddress(String),
    /// The depth or the port is not a number, or too large: the depth for
    /// the family's address length, the port for a `u8` (l3fwd's `if_out`).
    Number(NumberError),
}

impl fmt::Display for LineProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NotARoute => write!(f, "a route must start with 'R'"),
            Self::MissingField => write!(f, "expected 'R<prefix>/<depth> <port>'"),
            Self::MissingDepth => write!(f, "prefix has no '/<depth>'"),
            Self::BadAddress(addr) => write!(f, "'{addr}' is not a valid address"),
            Self::Number(e) => write!(f, "{e}"),
        }
    }
}

impl From<NumberError> for LineProblem {
    fn from(e: NumberError) -> Self {
        Self::Number(e)
    }
}

/// A rule file that could not be read or parsed.
pub type RuleError = rulefile::Error<LineProblem>;

impl rulefile::Problem for LineProblem {
    const RULES: &'static str = "routes ('R<prefix>/<depth> <port>' lines)";
}

/// What the parser needs to know about one address family.
trait Prefix: Sized {
    type Addr: FromStr;
    /// Largest depth: the address length in bits.
    const MAX_DEPTH: u8;
    /// The prefix of `depth` bits (at most [`Prefix::MAX_DEPTH`]) of `addr`.
    fn new(addr: Self::Addr, depth: u8) -> Self;
}

impl Prefix for Ipv4Net {
    type Addr = Ipv4Addr;
    const MAX_DEPTH: u8 = 32;
    fn new(addr: Ipv4Addr, depth: u8) -> Self {
        Ipv4Net::new_assert(addr, depth)
    }
}

impl Prefix for Ipv6Net {
    type Addr = Ipv6Addr;
    const MAX_DEPTH: u8 = 128;
    fn new(addr: Ipv6Addr, depth: u8) -> Self {
        Ipv6Net::new_assert(addr, depth)
    }
}

/// Parses an IPv4 rule file's text; `origin` (usually the path) names it in errors.
///
/// ```
/// let text = "# port 1 gets 198.18.0.0/16\nR198.18.0.0/16 1\n\nR198.18.7.9/24\t0x2\n";
/// let routes = lpm::rules::parse_v4(text, "v4.cfg")?;
/// assert_eq!(routes.len(), 2);
/// assert_eq!((routes[1].port, routes[1].line), (2, 4));
/// // Host bits are kept as written; rte_lpm masks them.
/// assert_eq!(routes[1].prefix.to_string(), "198.18.7.9/24");
/// assert_eq!(routes[1].prefix.trunc().to_string(), "198.18.7.0/24");
///
/// // An error names the file, the line, its text and the problem.
/// let err = lpm::rules::parse_v4("R198.18.0.0/16 1\nR10.0.0.0/33 1\n", "v4.cfg").unwrap_err();
/// assert_eq!(err.to_string(), "v4.cfg:2: 'R10.0.0.0/33 1': depth 33 out of range 0..=32");
/// # Ok::<(), lpm::rules::RuleError>(())
/// ```
pub fn parse_v4(text: impl AsRef<[u8]>, origin: &str) -> Result<Vec<Route<Ipv4Net>>, RuleError> {
    rulefile::parse(text, origin, route)
}

/// Parses an IPv6 rule file's text; `origin` (usually the path) names it in errors.
pub fn parse_v6(text: impl AsRef<[u8]>, origin: &str) -> Result<Vec<Route<Ipv6Net>>, RuleError> {
    rulefile::parse(text, origin, route)
}

/// Reads and parses an IPv4 rule file.
pub fn load_v4(path: impl AsRef<Path>) -> Result<RouteFile<Ipv4Net>, RuleError> {
    load(path.as_ref())
}

/// Reads and parses an IPv6 rule file.
pub fn load_v6(path: impl AsRef<Path>) -> Result<RouteFile<Ipv6Net>, RuleError> {
    load(path.as_ref())
}

fn load<N: Prefix>(path: &Path) -> Result<RouteFile<N>, RuleError> {
    Ok(RouteFile {
        origin: path.display().to_string(),
        routes: rulefile::load(path, route)?,
    })
}

fn route<N: Prefix>(line: Line<'_>) -> Result<Route<N>, LineProblem> {
    let body = line.text.strip_prefix('R').ok_or(LineProblem::NotARoute)?;
    let mut fields = body.split_ascii_whitespace();
    let (Some(net), Some(port)) = (fields.next(), fields.next()) else {
        return Err(LineProblem::MissingField);
    };
    // Fields after the port are ignored, as C's strtok-based parser does
    // (they are often comments: `R10.0.0.0/8 1 # core`).
    Ok(Route {
        prefix: parse_prefix(net)?,
        port: parse_port(port)?,
        line: line.number,
    })
}

fn parse_prefix<N: Prefix>(net: &str) -> Result<N, LineProblem> {
    let (addr, depth) = net.split_once('/').ok_or(LineProblem::MissingDepth)?;
    let addr = addr
        .parse()
        .map_err(|_| LineProblem::BadAddress(rulefile::quote(addr)))?;
    let depth = number(depth, "depth", N::MAX_DEPTH.into())?;
    Ok(N::new(addr, depth as u8))
}

fn parse_port(port: &str) -> Result<u8, LineProblem> {
    Ok(number(port, "port", u8::MAX.into())? as u8)
}

/// A prefix written as a rule file writes one (`10.0.0.0/8`, an IPv6
/// one if it has a `:`, the depth in C's number forms): for commands that
/// name routes, so that they read them as the files do.
///
/// ```
/// assert_eq!(lpm::rules::prefix_of("10.0.0.0/0x8").unwrap().to_string(), "10.0.0.0/8");
/// assert!(lpm::rules::prefix_of("010.0.0.0/8").unwrap_err().contains("not a valid address"));
/// assert_eq!(lpm::rules::prefix_of("2001:db8::/32").unwrap().to_string(), "2001:db8::/32");
/// ```
pub fn prefix_of(text: &str) -> Result<IpNet, String> {
    let parsed = match text.contains(':') {
        true => parse_prefix::<Ipv6Net>(text).map(IpNet::V6),
        false => parse_prefix::<Ipv4Net>(text).map(IpNet::V4),
    };
    parsed.map_err(|e| e.to_string())
}

/// A port written as a rule file writes one (C's number forms: `010` is
/// 8), at most 255.
pub fn port_of(text: &str) -> Result<u8, String> {
    parse_port(text).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn v4(text: &str) -> Result<Vec<Route<Ipv4Net>>, RuleError> {
        parse_v4(text, "t.cfg")
    }

    fn v6(text: &str) -> Result<Vec<Route<Ipv6Net>>, RuleError> {
        parse_v6(text, "t.cfg")
    }

    fn net4(s: &str) -> Ipv4Net {
        s.parse().unwrap()
    }

    /// The one-line message of a rejected IPv4 file.
    fn v4_err(text: &str) -> String {
        v4(text).unwrap_err().to_string()
    }

    #[test]
    fn a_long_field_is_quoted_cut() {
        let field = "1".repeat(10_000_000);
        for line in [
            format!("R{field}/24 1"),
            format!("R10.0.0.0/{field} 1"),
            format!("R10.0.0.0/8 {field}"),
        ] {
            let message = v4_err(&line);
            assert!(message.len() < 300, "{} bytes", message.len());
            assert!(message.contains("... (10000000 characters)"), "{message}");
        }
    }

    #[test]
    fn parses_v4_routes_with_line_numbers() {
        let routes = v4("# header\nR10.0.0.0/8 1\n\nR192.168.1.7/24 255\n").unwrap();
        assert_eq!(
            routes,
            vec![
                Route {
                    prefix: net4("10.0.0.0/8"),
                    port: 1,
                    line: 2
                },
                Route {
                    prefix: net4("192.168.1.7/24"),
                    port: 255,
                    line: 4
                },
            ]
        );
    }

    #[test]
    fn keeps_host_bits_as_written() {
        let route = v4("R10.1.2.3/8 0").unwrap()[0];
        assert_eq!(route.prefix.addr(), Ipv4Addr::new(10, 1, 2, 3));
        assert_eq!(route.prefix.trunc(), net4("10.0.0.0/8"));
    }

    #[test]
    fn depth_and_port_accept_c_number_forms() {
        let route = v4("R10.0.0.0/0x18 010").unwrap()[0];
        assert_eq!(route.prefix.prefix_len(), 24);
        assert_eq!(route.port, 8);
    }

    #[test]
    fn depth_limits() {
        assert_eq!(v4("R0.0.0.0/0 3").unwrap()[0].prefix.prefix_len(), 0);
        assert_eq!(v4("R1.2.3.4/32 3").unwrap()[0].prefix.prefix_len(), 32);
        assert_eq!(v6("R::/0 3").unwrap()[0].prefix.prefix_len(), 0);
        assert_eq!(v6("R::1/128 3").unwrap()[0].prefix.prefix_len(), 128);
    }

    #[test]
    fn tabs_crlf_and_blank_lines() {
        let text = "# c\r\n\r\n \t \r\nR10.0.0.0/8\t 1\r\nR 11.0.0.0/8  2 \r\n";
        let routes = v4(text).unwrap();
        assert_eq!(routes.len(), 2);
        assert_eq!((routes[0].port, routes[0].line), (1, 4));
        assert_eq!((routes[1].prefix, routes[1].line), (net4("11.0.0.0/8"), 5));
    }

    #[test]
    fn error_names_origin_line_text_and_problem() {
        assert_eq!(
            parse_v4("R10.0.0.0/8 1\n\nR10.0.0.0/33 1\r\n", "configs/x.cfg")
                .unwrap_err()
                .to_string(),
            "configs/x.cfg:3: 'R10.0.0.0/33 1': depth 33 out of range 0..=32"
        );
    }

    #[test]
    fn rejects_lines_not_starting_with_r() {
        assert!(v4_err("X10.0.0.0/8 1").ends_with("a route must start with 'R'"));
        // Only first-column '#' is a comment, as in C.
        assert!(v4_err(" # indented").contains("t.cfg:1:"));
        assert!(v4_err(" R10.0.0.0/8 1").contains("must start with 'R'"));
    }

    #[test]
    fn rejects_missing_fields_and_ignores_extra_ones() {
        assert!(v4_err("R10.0.0.0/8").ends_with("expected 'R<prefix>/<depth> <port>'"));
        assert!(v4_err("R").ends_with("expected 'R<prefix>/<depth> <port>'"));
        let route = v4("R10.0.0.0/8 1 # core é").unwrap()[0];
        assert_eq!((route.prefix, route.port), (net4("10.0.0.0/8"), 1));
    }

    #[test]
    fn rejects_bad_prefixes() {
        assert!(v4_err("R10.0.0.0 1").ends_with("prefix has no '/<depth>'"));
        assert!(v4_err("R10.0.0.256/8 1").ends_with("'10.0.0.256' is not a valid address"));
        assert!(v4_err("R::1/8 1").ends_with("'::1' is not a valid address"));
        assert!(v4_err("R10.0.0.0/x 1").ends_with("depth 'x' is not a number"));
        assert!(v4_err("R10.0.0.0/ 1").ends_with("depth '' is not a number"));
        assert!(v4_err("R10.0.0.0/-1 1").ends_with("depth '-1' is not a number"));
        assert!(v4_err("R10.0.0.0/300 1").ends_with("depth 300 out of range 0..=32"));
        let v6_msg = v6("R::/129 1").unwrap_err().to_string();
        assert!(v6_msg.ends_with("depth 129 out of range 0..=128"), "{v6_msg}");
        let v6_msg = v6("R10.0.0.0/8 1").unwrap_err().to_string();
        assert!(v6_msg.ends_with("'10.0.0.0' is not a valid address"), "{v6_msg}");
    }

    #[test]
    fn rejects_bad_ports() {
        assert!(v4_err("R10.0.0.0/8 x").ends_with("port 'x' is not a number"));
        assert!(v4_err("R10.0.0.0/8 256").ends_with("port 256 out of range 0..=255"));
        assert!(v4_err("R10.0.0.0/8 0x100").ends_with("port 256 out of range 0..=255"));
    }

    #[test]
    fn file_without_routes_is_an_error() {
        for text in ["", "# only a comment\n", "\n \n"] {
            assert!(matches!(v4(text), Err(RuleError::NoRules { .. })), "{text:?}");
        }
        assert_eq!(v4_err("#x\n"), "t.cfg: no routes ('R<prefix>/<depth> <port>' lines)");
    }

    #[test]
    fn unreadable_file_names_path_and_os_error() {
        let err = load_v4("/nonexistent/lpm.cfg").unwrap_err();
        assert!(matches!(err, RuleError::Io { .. }));
        let msg = err.to_string();
        assert!(msg.starts_with("cannot read /nonexistent/lpm.cfg: "), "{msg}");
        assert!(std::error::Error::source(&err).is_some());
    }

    #[test]
    fn default_config_files_parse() {
        let configs = Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs");
        let routes4 = load_v4(configs.join("lpm_v4.cfg")).unwrap().routes;
        let routes6 = load_v6(configs.join("lpm_v6.cfg")).unwrap().routes;
        assert_eq!(routes4.len(), 16);
        assert_eq!(routes6.len(), 16);
        assert_eq!(routes4[15].prefix, net4("198.18.15.0/24"));
        assert_eq!(routes4[15].port, 15);
        assert_eq!(routes6[1].prefix, "2001:200:0:1::/64".parse().unwrap());
        assert_eq!(routes6[1].port, 1);
    }

    proptest! {
        #[test]
        fn v4_route_round_trips(addr: u32, depth in 0u8..=32, port: u8, tab: bool) {
            let sep = if tab { "\t" } else { " " };
            let text = format!("R{}/{depth}{sep}{port}\n", Ipv4Addr::from(addr));
            let route = v4(&text).unwrap()[0];
            prop_assert_eq!(route.prefix, Ipv4Net::new(addr.into(), depth).unwrap());
            prop_assert_eq!(route.port, port);
        }

        #[test]
        fn v6_route_round_trips(addr: u128, depth in 0u8..=128, port: u8) {
            let text = format!("R{}/{depth} {port}\r\n", Ipv6Addr::from(addr));
            let route = v6(&text).unwrap()[0];
            prop_assert_eq!(route.prefix, Ipv6Net::new(addr.into(), depth).unwrap());
            prop_assert_eq!(route.port, port);
        }
    }
}
