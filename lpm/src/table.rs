//! The forwarding tables of LPM mode: rte_lpm for IPv4, rte_lpm6 for IPv6,
//! loaded from route rules with the rules to disabled ports left out.

use ipnet::{Ipv4Net, Ipv6Net};

use crate::rules::Route;

/// Smallest sizes, as the C sample's compile-time tables (1024 rules,
/// 256 IPv4 tbl8 groups); larger rule sets get larger tables.
const MIN_RULES: u32 = 1024;
const MIN_TBL8S: u32 = 256;

/// IPv4 and IPv6 route tables, read-only once built.
pub struct LpmTables {
    v4: dpdk::Lpm,
    v6: dpdk::Lpm6,
}

/// How many rules went into the tables.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LoadReport {
    /// IPv4 routes added.
    pub v4_added: usize,
    /// IPv6 routes added.
    pub v6_added: usize,
    /// Routes skipped because their port is not enabled.
    pub skipped: usize,
}

impl LpmTables {
    /// Builds the tables on `socket` from `v4` and `v6`, adding only the
    /// routes whose port `enabled` accepts (so a less specific route to an
    /// enabled port may match instead, as in the C sample).
    pub fn build(
        name: &str,
        socket: i32,
        v4: &[Route<Ipv4Net>],
        v6: &[Route<Ipv6Net>],
        enabled: impl Fn(u8) -> bool,
    ) -> dpdk::Result<(LpmTables, LoadReport)> {
        let total = v4.len() + v6.len();
        let v4: Vec<_> = v4.iter().filter(|r| enabled(r.port)).collect();
        let v6: Vec<_> = v6.iter().filter(|r| enabled(r.port)).collect();
        let tbl8s_v4 = v4.iter().filter(|r| r.prefix.prefix_len() > 24).count();
        // Each IPv6 level past the first 24 bits needs at most one new group.
        let tbl8s_v6: usize = v6
            .iter()
            .map(|r| (r.prefix.prefix_len().saturating_sub(24) as usize).div_ceil(8))
            .sum();
        let mut t4 = dpdk::Lpm::new(
            &format!("{name}_v4"),
            socket,
            at_least(MIN_RULES, v4.len()),
            at_least(MIN_TBL8S, tbl8s_v4),
        )?;
        let mut t6 = dpdk::Lpm6::new(
            &format!("{name}_v6"),
            socket,
            at_least(MIN_RULES, v6.len()),
            at_least(MIN_TBL8S, tbl8s_v6),
        )?;
        for r in &v4 {
            t4.add(u32::from(r.prefix.addr()), r.prefix.prefix_len(), r.port as u32)?;
        }
        for r in &v6 {
            t6.add(&r.prefix.addr().octets(), r.prefix.prefix_len(), r.port as u32)?;
        }
        let report = LoadReport {
            v4_added: v4.len(),
            v6_added: v6.len(),
            skipped: total - v4.len() - v6.len(),
        };
        Ok((LpmTables { v4: t4, v6: t6 }, report))
    }

    /// Next hops of IPv4 destinations (host order); `default` on a miss.
    #[inline(always)]
    pub fn lookup_v4_bulk(&self, dsts: &[u32], hops: &mut [u32], default: u32) {
        self.v4.lookup_bulk(dsts, hops, default);
    }

    /// Next hops of IPv6 destinations; `default` on a miss.
    #[inline(always)]
    pub fn lookup_v6_bulk(&self, dsts: &[[u8; 16]], hops: &mut [u32], default: u32) {
        self.v6.lookup_bulk(dsts, hops, default);
    }

    /// Next hop of one IPv4 destination (host order).
    #[inline(always)]
    pub fn lookup_v4(&self, dst: u32) -> Option<u32> {
        self.v4.lookup(dst)
    }

    /// Next hop of one IPv6 destination.
    #[inline(always)]
    pub fn lookup_v6(&self, dst: &[u8; 16]) -> Option<u32> {
        self.v6.lookup(dst)
    }
}

fn at_least(min: u32, n: usize) -> u32 {
    min.max(u32::try_from(n).unwrap_or(u32::MAX))
}
