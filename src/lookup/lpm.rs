//! Longest-prefix match. IPv4 destinations are looked up as each packet is
//! parsed, with rte_lpm's inline lookup (one or two table reads, no call:
//! the reads of a burst overlap in the CPU, as C's vector path gets from
//! `rte_lpm_lookupx4`). The IPv6 destinations of a burst go to rte_lpm6 in
//! one bulk call, unless `sequential` asks for one lookup per packet.

use lpm::LpmTables;

use super::{answer, Gather, Lookup, Route};
use crate::packet::L3;
use crate::MAX_BURST;

/// LPM mode.
pub struct LpmLookup {
    pub tables: LpmTables,
    pub sequential: bool,
}

/// IPv6 destinations of one burst in LPM mode.
#[derive(Default)]
pub struct LpmScratch {
    v6: Gather<[u8; 16]>,
}

impl Lookup for LpmLookup {
    type Scratch = LpmScratch;

    #[inline(always)]
    fn add(&self, scratch: &mut LpmScratch, index: usize, l3: &L3, _frame: &[u8]) -> Route {
        match l3 {
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
        let (dsts, from) = scratch.v6.take();
        self.tables
            .lookup_v6_bulk(dsts, |i, port| answer(from, routes, i, port));
    }
}
