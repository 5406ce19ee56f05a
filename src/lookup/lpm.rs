//! Longest-prefix match: the IPv4 destinations of a burst go to rte_lpm in
//! one bulk call and the IPv6 ones to rte_lpm6 in another, unless
//! `sequential` asks for one lookup per packet.

use dpdk::Mbuf;
use lpm::LpmTables;

use super::{Gather, Lookup, Route};
use crate::packet::L3;

/// LPM mode.
pub struct LpmLookup {
    pub tables: LpmTables,
    pub sequential: bool,
}

/// Destinations of one burst in LPM mode.
#[derive(Default)]
pub struct LpmScratch {
    v4: Gather<u32>,
    v6: Gather<[u8; 16]>,
}

impl Lookup for LpmLookup {
    type Scratch = LpmScratch;

    #[inline(always)]
    fn route(&self, scratch: &mut LpmScratch, _pkts: &[Mbuf], headers: &[L3], routes: &mut [Route]) {
        if self.sequential {
            for (r, h) in routes.iter_mut().zip(headers) {
                *r = match h {
                    L3::Ipv4(v4) => Route::from_table(self.tables.lookup_v4(v4.dst)),
                    L3::Ipv6(v6) => Route::from_table(self.tables.lookup_v6(&v6.dst)),
                    L3::Other => Route::NoMatch,
                    L3::Runt => Route::Runt,
                };
            }
            return;
        }
        let LpmScratch { v4, v6 } = scratch;
        v4.clear();
        v6.clear();
        for (i, (r, h)) in routes.iter_mut().zip(headers).enumerate() {
            *r = match h {
                L3::Ipv4(h) => {
                    v4.push(i, h.dst);
                    Route::NoMatch
                }
                L3::Ipv6(h) => {
                    v6.push(i, h.dst);
                    Route::NoMatch
                }
                L3::Other => Route::NoMatch,
                L3::Runt => Route::Runt,
            };
        }
        self.tables
            .lookup_v4_bulk(v4.keys(), |i, port| v4.answer(routes, i, port));
        self.tables
            .lookup_v6_bulk(v6.keys(), |i, port| v6.answer(routes, i, port));
    }
}
