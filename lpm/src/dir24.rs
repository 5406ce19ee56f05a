//! rte_lpm's two tables written straight from the routes, through
//! [`dpdk::Lpm::filled`]: rte_lpm_add keeps a rule list whose inserts scan
//! every rule of the same depth, which takes minutes for a million routes;
//! this takes a fraction of a second and gives the same lookups.
//!
//! tbl24 has an entry per /24: the longest route of up to 24 bits covering
//! it, or a tbl8 group of 256 entries (one per address) when a longer route
//! lies inside it.

use std::collections::HashMap;

use dpdk::Tbl24;
use ipnet::Ipv4Net;

use crate::rules::Route;

/// Entries as rte_lpm lays them out: next hop (or tbl8 group) in bits
/// 0-23, then the valid bit, the group bit and the depth.
const VALID: u32 = 1 << 24;
const GROUP: u32 = 1 << 25;
pub(crate) const DEPTH_SHIFT: u32 = 26;
const GROUP_ENTRIES: usize = 256;

/// Writes the tables holding `routes` into the zeroed `tbl24` (2^24
/// entries) and `tbl8` (as many groups as the routes need, see
/// [`crate::sizing`]), with rte_lpm_add's outcome: the longest prefix wins
/// and, for the same prefix, the last route. Depths are 1..=32.
pub(crate) fn fill(routes: &[&Route<Ipv4Net>], tbl24: &mut Tbl24<'_>, tbl8: &mut [u32]) {
    // Shortest first, file order within a depth: what a later write
    // overwrites is what it takes precedence over.
    let mut routes = routes.to_vec();
    routes.sort_by_key(|r| r.prefix.prefix_len());
    let long = routes.partition_point(|r| r.prefix.prefix_len() <= 24);

    for r in &routes[..long] {
        let (first, count) = span(r.prefix, 24);
        tbl24.fill(first..first + count, entry(r));
    }

    let mut groups: HashMap<usize, usize> = HashMap::new();
    for r in &routes[long..] {
        let slash24 = (u32::from(r.prefix.network()) >> 8) as usize;
        let next = groups.len();
        let group = *groups.entry(slash24).or_insert_with(|| {
            // A new group starts as what covers its /24; like rte_lpm,
            // its first entry marks it in use.
            let entries = &mut tbl8[next * GROUP_ENTRIES..][..GROUP_ENTRIES];
            entries.fill(tbl24.get(slash24));
            entries[0] |= GROUP;
            next
        });
        let (first, count) = span(r.prefix, 32);
        let first = group * GROUP_ENTRIES + (first & (GROUP_ENTRIES - 1));
        for e in &mut tbl8[first..first + count] {
            *e = entry(r) | (*e & GROUP);
        }
    }
    for (slash24, group) in groups {
        tbl24.set(slash24, VALID | GROUP | group as u32);
    }
}

/// The entries of `prefix` (at most `bits` long) in a table indexed by the
/// first `bits` address bits: the first, and how many.
pub(crate) fn span(prefix: Ipv4Net, bits: u8) -> (usize, usize) {
    let first = u32::from(prefix.network()) >> (32 - bits);
    (first as usize, 1 << (bits - prefix.prefix_len()))
}

fn entry(r: &Route<Ipv4Net>) -> u32 {
    hop(r.prefix.prefix_len(), r.port)
}

/// The entry of a route of `depth` to `port`.
pub(crate) fn hop(depth: u8, port: u8) -> u32 {
    VALID | u32::from(depth) << DEPTH_SHIFT | u32::from(port)
}
