//! Longest-prefix match. IPv4 destinations are looked up with rte_lpm's
//! inline lookup (one or two table reads, no call): on small tables as each
//! packet is parsed, where the reads hit the caches; on large ones after the
//! batch is parsed, in one tight loop, so that many reads that miss are in
//! flight at once (C's vector path gets four from `rte_lpm_lookupx4`). The
//! IPv6 destinations of a burst go to rte_lpm6 in one bulk call, unless
//! `sequential` asks for one lookup per packet.

use lpm::LpmTables;

use super::{answer, Gather, Lookup, Route};
use crate::packet::L3;
use crate::MAX_BURST;

/// LPM mode.
pub struct LpmLookup {
    pub tables: LpmTables,
    pub sequential: bool,
    /// Look IPv4 destinations up after the batch is parsed ([`gathers_v4`]).
    pub gather_v4: bool,
}

/// Whether a table of `routes` IPv4 routes is looked up after the batch is
/// parsed. Past a few tens of thousands of routes, traffic spread over them
/// reads tbl24 lines (and their 4 KB pages) no cache holds; parsing between
/// two such reads keeps only two or three in flight. Measured at 1M routes:
/// see the README's sweep section.
pub fn gathers_v4(routes: usize) -> bool {
    routes > 1 << 16
}

/// IPv4 (when gathered) and IPv6 destinations of one batch in LPM mode.
#[derive(Default)]
pub struct LpmScratch {
    v4: Gather<u32>,
    v6: Gather<[u8; 16]>,
}

impl Lookup for LpmLookup {
    type Scratch = LpmScratch;

    #[inline(always)]
    fn add(&self, scratch: &mut LpmScratch, index: usize, l3: &L3, _frame: &[u8]) -> Route {
        match l3 {
            L3::Ipv4(h) if self.gather_v4 => {
                scratch.v4.push(index, h.dst);
                Route::NoMatch
            }
            L3::Ipv4(h) => Route::from_table(self.tables.lookup_v4(h.dst)),
            L3::Ipv6(h) if self.sequential => Route::from_table(self.tables.lookup_v6(&h.dst)),
            L3::Ipv6(h) => {
                scratch.v6.push(index, h.dst);
                Route::NoMatch
            }
            L3::Other => Route::NoMatch,
            L3::Runt => Route::Runt,
        }
    }

    #[inline(always)]
    fn resolve(&self, scratch: &mut LpmScratch, routes: &mut [Route; MAX_BURST]) {
        let (dsts, from) = scratch.v4.take();
        for (i, &dst) in dsts.iter().enumerate() {
            answer(from, routes, i, self.tables.lookup_v4(dst));
        }
        let (dsts, from) = scratch.v6.take();
        self.tables
            .lookup_v6_bulk(dsts, |i, port| answer(from, routes, i, port));
    }
}
