//! How big an rte_lpm / rte_lpm6 table a list of routes needs, counted the
//! way the libraries allocate: one rule per distinct prefix (a duplicate
//! only changes the next hop), and tbl8 groups for prefixes longer than the
//! 24 bits the first-level table covers:
//! - rte_lpm (IPv4): one group per /24 holding a longer prefix;
//! - rte_lpm6: one group per 8-bit level past the first 24 bits on each
//!   prefix's path, shared by the prefixes whose paths pass through it
//!   (a /48 needs the groups below its /24, /32 and /40).

use std::collections::HashSet;
use std::hash::Hash;

use ipnet::{Ipv4Net, Ipv6Net};

use crate::rules::Route;

/// Bits the first-level table (tbl24) of both libraries covers.
const TBL24_BITS: u8 = 24;
/// Bits each tbl8 level covers.
const TBL8_BITS: u8 = 8;

/// Sizes given instead of the computed ones (`--lpm-max-rules`,
/// `--lpm-tbl8s`); each applies to the IPv4 and the IPv6 table.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Limits {
    /// Rules per table (`--lpm-max-rules`); `None`: one per distinct prefix
    /// of the table's routes.
    pub max_rules: Option<u32>,
    /// tbl8 groups per table (`--lpm-tbl8s`), capped at the library's
    /// maximum; `None`: as many as the table's routes need.
    pub tbl8s: Option<u32>,
}

/// The size of one table: at least 1 of each, since the libraries refuse
/// empty tables.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Size {
    /// Rules (rte_lpm6's `max_rules`): one per distinct prefix. The IPv4
    /// table, filled in one pass, keeps no rule list, but its routes are
    /// held to this number all the same.
    pub rules: u32,
    /// tbl8 groups (`number_tbl8s`), for the prefixes longer than /24.
    pub tbl8s: u32,
}

/// What a table lacks for a route.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shortage {
    /// The route would be rule `limit + 1`.
    Rules {
        /// The number of rules the table has (`--lpm-max-rules`).
        limit: u32,
    },
    /// The route would need tbl8 group `limit + 1`.
    Tbl8s {
        /// The number of tbl8 groups the table has.
        limit: u32,
        /// Whether `limit` is the library's own maximum (2^24 groups for
        /// rte_lpm, 2^21 for rte_lpm6) rather than `--lpm-tbl8s`, so that
        /// raising the option would not help.
        library_max: bool,
    },
}

/// An address family as its library lays out its tables.
pub(crate) trait Family {
    /// rte_lpm's or rte_lpm6's largest number of tbl8 groups.
    const MAX_TBL8S: u32;
    /// Identifies a rule: the prefix's network and depth.
    type Rule: Hash + Eq;
    /// Identifies a tbl8 group: the leading bits that lead to it, and how many.
    type Group: Hash + Eq;
    fn depth(&self) -> u8;
    fn rule(&self) -> Self::Rule;
    /// The tbl8 groups on the prefix's path.
    fn groups(&self) -> impl Iterator<Item = Self::Group>;
}

impl Family for Ipv4Net {
    const MAX_TBL8S: u32 = 1 << 24;
    type Rule = (u32, u8);
    type Group = u32;

    fn depth(&self) -> u8 {
        self.prefix_len()
    }

    fn rule(&self) -> (u32, u8) {
        (self.network().into(), self.prefix_len())
    }

    fn groups(&self) -> impl Iterator<Item = u32> {
        let long = self.prefix_len() > TBL24_BITS;
        long.then(|| u32::from(self.network()) >> (32 - TBL24_BITS)).into_iter()
    }
}

impl Family for Ipv6Net {
    /// RTE_LPM6_TBL8_MAX_NUM_GROUPS (private to rte_lpm6.c).
    const MAX_TBL8S: u32 = 1 << 21;
    type Rule = (u128, u8);
    type Group = (u128, u8);

    fn depth(&self) -> u8 {
        self.prefix_len()
    }

    fn rule(&self) -> (u128, u8) {
        (self.network().into(), self.prefix_len())
    }

    fn groups(&self) -> impl Iterator<Item = (u128, u8)> {
        let network = u128::from(self.network());
        let depth = self.prefix_len();
        // The group of each level is reached through the bits above it.
        (TBL24_BITS..depth)
            .step_by(TBL8_BITS.into())
            .map(move |lead| (network & !(u128::MAX >> lead), lead))
    }
}

/// The size `routes` need, checked against `limits` and the library's
/// maximum. `Err` names the line of the first route that does not fit.
pub(crate) fn size<N: Family>(routes: &[&Route<N>], limits: Limits) -> Result<Size, (usize, Shortage)> {
    let tbl8_limit = limits.tbl8s.map_or(N::MAX_TBL8S, |n| n.min(N::MAX_TBL8S));
    let mut rules = HashSet::with_capacity(routes.len());
    let mut groups = HashSet::new();
    for route in routes {
        if rules.insert(route.prefix.rule()) && exceeds(rules.len(), limits.max_rules) {
            let limit = limits.max_rules.unwrap_or_default();
            return Err((route.line, Shortage::Rules { limit }));
        }
        for group in route.prefix.groups() {
            if groups.insert(group) && exceeds(groups.len(), Some(tbl8_limit)) {
                let library_max = limits.tbl8s.is_none_or(|n| n > N::MAX_TBL8S);
                let shortage = Shortage::Tbl8s {
                    limit: tbl8_limit,
                    library_max,
                };
                return Err((route.line, shortage));
            }
        }
    }
    // Both libraries refuse empty tables.
    let at_least_one = |n: usize| u32::try_from(n.max(1)).unwrap_or(u32::MAX);
    Ok(Size {
        rules: limits.max_rules.unwrap_or_else(|| at_least_one(rules.len())),
        tbl8s: limits.tbl8s.map_or_else(|| at_least_one(groups.len()), |_| tbl8_limit),
    })
}

fn exceeds(count: usize, limit: Option<u32>) -> bool {
    limit.is_some_and(|limit| count > limit as usize)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn routes<N: std::str::FromStr>(prefixes: &[&str]) -> Vec<Route<N>>
    where
        N::Err: std::fmt::Debug,
    {
        let route = |(i, p): (usize, &&str)| Route {
            prefix: p.parse().unwrap(),
            port: 0,
            line: i + 1,
        };
        prefixes.iter().enumerate().map(route).collect()
    }

    fn size_of<N: Family>(routes: &[Route<N>], limits: Limits) -> Result<Size, (usize, Shortage)> {
        size(&routes.iter().collect::<Vec<_>>(), limits)
    }

    const NONE: Limits = Limits {
        max_rules: None,
        tbl8s: None,
    };

    #[test]
    fn ipv4_needs_a_group_per_slash24_holding_a_longer_prefix() {
        let v4 = routes::<Ipv4Net>(&[
            "10.0.0.0/8",
            "10.1.1.0/25",
            "10.1.1.128/26", // same /24 as the /25
            "10.1.2.7/32",
            "10.1.2.0/24",
            "10.1.1.5/25", // the /25 again (host bits differ): no new rule
        ]);
        assert_eq!(size_of(&v4, NONE), Ok(Size { rules: 5, tbl8s: 2 }));
    }

    #[test]
    fn ipv6_needs_a_group_per_level_on_each_path() {
        let v6 = routes::<Ipv6Net>(&[
            "2001:db8::/32",     // 1 group: below 2001:d/24
            "2001:db8:1::/48",   // + below 2001:db8::/32 and 2001:db8::/40
            "2001:db8:2::/48",   // same /40 as the previous: no new group
            "2001:db8:100::/48", // another /40: 1 new group
            "2001:db9::/24",     // tbl24 only
            "2001:db8:1:2::/64", // + below /48 and /56
        ]);
        assert_eq!(size_of(&v6, NONE), Ok(Size { rules: 6, tbl8s: 6 }));
    }

    #[test]
    fn empty_tables_get_one_of_each() {
        assert_eq!(size_of::<Ipv4Net>(&[], NONE), Ok(Size { rules: 1, tbl8s: 1 }));
    }

    #[test]
    fn limits_name_the_first_route_that_does_not_fit() {
        let v4 = routes::<Ipv4Net>(&["1.0.0.0/8", "1.0.0.0/8", "2.0.0.0/8", "3.0.0.0/8"]);
        let two = Limits {
            max_rules: Some(2),
            tbl8s: None,
        };
        assert_eq!(size_of(&v4, two), Err((4, Shortage::Rules { limit: 2 })));
        let three = Limits {
            max_rules: Some(3),
            tbl8s: Some(7),
        };
        assert_eq!(size_of(&v4, three), Ok(Size { rules: 3, tbl8s: 7 }));

        let long = routes::<Ipv4Net>(&["1.0.0.0/25", "1.0.0.128/25", "1.0.1.0/25"]);
        let one = Limits {
            max_rules: None,
            tbl8s: Some(1),
        };
        let shortage = Shortage::Tbl8s {
            limit: 1,
            library_max: false,
        };
        assert_eq!(size_of(&long, one), Err((3, shortage)));
    }

    #[test]
    fn tbl8s_are_capped_at_the_librarys_maximum() {
        let big = Limits {
            max_rules: None,
            tbl8s: Some(u32::MAX),
        };
        let v6 = routes::<Ipv6Net>(&["2001:db8::/32"]);
        assert_eq!(size_of(&v6, big).unwrap().tbl8s, Ipv6Net::MAX_TBL8S);
    }
}
