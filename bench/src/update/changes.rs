//! What `bench update` sends through `l3fwd-ctl -`: an endless stream of
//! table changes, and the pacing that holds it at a rate.

use serde::{Deserialize, Serialize};
use std::time::Duration;

/// The table the changes go to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
pub enum Target {
    /// IPv4 routes in LPM mode.
    LpmV4,
    /// IPv6 routes in LPM mode.
    LpmV6,
    /// IPv4 routes in FIB mode.
    FibV4,
    /// IPv6 routes in FIB mode.
    FibV6,
    /// IPv4 flows in exact-match mode.
    Em,
    /// IPv4 deny rules in ACL mode.
    Acl,
}

impl Target {
    pub const ALL: [Target; 6] = [
        Target::LpmV4,
        Target::LpmV6,
        Target::FibV4,
        Target::FibV6,
        Target::Em,
        Target::Acl,
    ];

    /// `--lookup=NAME`.
    pub fn mode(self) -> &'static str {
        match self {
            Target::LpmV4 | Target::LpmV6 => "lpm",
            Target::FibV4 | Target::FibV6 => "fib",
            Target::Em => "em",
            Target::Acl => "acl",
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            Target::LpmV4 => "LPM IPv4 routes",
            Target::LpmV6 => "LPM IPv6 routes",
            Target::FibV4 => "FIB IPv4 routes",
            Target::FibV6 => "FIB IPv6 routes",
            Target::Em => "EM flows",
            Target::Acl => "ACL rules",
        }
    }
}

/// Change lines for `target`: `span` entries of their own (outside the
/// generated tables' traffic: 100.64.0.0/10, 2001:db8::/32) added one by
/// one, to ports 0 and 1 in turn, then deleted in the same order, and
/// again; so the table never holds more than `span` entries beyond its
/// rules, and every delete names an entry that is there.
pub struct Changes {
    target: Target,
    span: u32,
    next: u64,
}

impl Changes {
    pub fn new(target: Target, span: u32) -> Changes {
        Changes {
            target,
            span: span.max(1),
            next: 0,
        }
    }
}

impl Iterator for Changes {
    type Item = String;

    fn next(&mut self) -> Option<String> {
        let span = u64::from(self.span);
        let (i, add) = ((self.next % span) as u32, self.next % (2 * span) < span);
        let port = i % 2;
        self.next += 1;
        let v4 = std::net::Ipv4Addr::from(u32::from(std::net::Ipv4Addr::new(100, 64, 0, 0)) + i);
        Some(match (self.target, add) {
            (Target::LpmV4 | Target::FibV4, true) => format!("route add {v4}/32 {port}"),
            (Target::LpmV4 | Target::FibV4, false) => format!("route del {v4}/32"),
            (Target::LpmV6 | Target::FibV6, true) => {
                format!("route add 2001:db8:{:x}:{:x}::/64 {port}", i >> 16, i & 0xffff)
            }
            (Target::LpmV6 | Target::FibV6, false) => format!("route del 2001:db8:{:x}:{:x}::/64", i >> 16, i & 0xffff),
            (Target::Em, true) => format!("flow add R{v4} {v4} 9 9 0x11 {port}"),
            (Target::Em, false) => format!("flow del R{v4} {v4} 9 9 0x11 0"),
            // Sources the traffic never has: the rules change, the
            // forwarding does not.
            (Target::Acl, add) => {
                let verb = if add { "add" } else { "del" };
                format!("acl {verb} @{v4}/32 0.0.0.0/0 0 : 65535 0 : 65535 0x00/0x00")
            }
        })
    }
}

/// A rate of changes: so many per second, or as fast as `l3fwd-ctl -`
/// takes them.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub enum Rate {
    PerSecond(u32),
    Max,
}

impl Rate {
    /// `0`, `1000`, `10K`, `max`.
    pub fn parse(s: &str) -> Result<Rate, String> {
        let s = s.trim();
        if s.eq_ignore_ascii_case("max") {
            return Ok(Rate::Max);
        }
        let (digits, scale) = match s.strip_suffix(['K', 'k']) {
            Some(d) => (d, 1000),
            None => (s, 1),
        };
        digits
            .parse::<u32>()
            .ok()
            .and_then(|n| n.checked_mul(scale))
            .map(Rate::PerSecond)
            .ok_or_else(|| format!("'{s}' is not a change rate: a number per second (10K = 10000) or max"))
    }

    pub fn label(self) -> String {
        match self {
            Rate::PerSecond(n) => n.to_string(),
            Rate::Max => "max".into(),
        }
    }

    /// How many changes should have been sent `elapsed` into a run; None:
    /// no limit (the pipe to `l3fwd-ctl` sets the pace).
    pub fn due(self, elapsed: Duration) -> Option<u64> {
        match self {
            Rate::PerSecond(n) => Some((f64::from(n) * elapsed.as_secs_f64()) as u64),
            Rate::Max => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn changes_add_a_span_then_delete_it_in_order() {
        let lines: Vec<String> = Changes::new(Target::LpmV4, 3).take(7).collect();
        assert_eq!(
            lines,
            [
                "route add 100.64.0.0/32 0",
                "route add 100.64.0.1/32 1",
                "route add 100.64.0.2/32 0",
                "route del 100.64.0.0/32",
                "route del 100.64.0.1/32",
                "route del 100.64.0.2/32",
                "route add 100.64.0.0/32 0",
            ]
        );
        let v6: Vec<String> = Changes::new(Target::LpmV6, 70_000).skip(65_537).take(1).collect();
        assert_eq!(v6, ["route add 2001:db8:1:1::/64 1"]);
        let em: Vec<String> = Changes::new(Target::Em, 1).take(2).collect();
        assert_eq!(
            em,
            [
                "flow add R100.64.0.0 100.64.0.0 9 9 0x11 0",
                "flow del R100.64.0.0 100.64.0.0 9 9 0x11 0"
            ]
        );
        let acl: Vec<String> = Changes::new(Target::Acl, 1).take(2).collect();
        assert_eq!(
            acl,
            [
                "acl add @100.64.0.0/32 0.0.0.0/0 0 : 65535 0 : 65535 0x00/0x00",
                "acl del @100.64.0.0/32 0.0.0.0/0 0 : 65535 0 : 65535 0x00/0x00"
            ]
        );
    }

    #[test]
    fn every_change_parses_as_the_control_protocol() {
        for target in Target::ALL {
            for line in Changes::new(target, 5).take(20) {
                let parsed = line.parse::<l3fwd_rs::control::protocol::Command>();
                assert!(parsed.is_ok(), "{line}: {parsed:?}");
            }
        }
    }

    #[test]
    fn rates_parse_and_pace() {
        assert_eq!(Rate::parse("10K"), Ok(Rate::PerSecond(10_000)));
        assert_eq!(Rate::parse("0"), Ok(Rate::PerSecond(0)));
        assert_eq!(Rate::parse("MAX"), Ok(Rate::Max));
        assert!(Rate::parse("fast").is_err());
        assert!(Rate::parse("5000000K").is_err());
        let ms = Duration::from_millis;
        assert_eq!(Rate::PerSecond(1000).due(ms(2500)), Some(2500));
        assert_eq!(Rate::PerSecond(100_000).due(ms(1)), Some(100));
        assert_eq!(Rate::PerSecond(0).due(ms(5000)), Some(0));
        assert_eq!(Rate::Max.due(ms(5000)), None);
    }
}
