//! FIB mode (`--lookup=fib`): the LPM route files in rte_fib (IPv4) and
//! rte_fib6 (IPv6). Both families are looked up as each packet is parsed,
//! reading rte_fib's DIR-24-8 tables and rte_fib6's trie inline (as LPM
//! mode reads rte_lpm's), where C's `fib_send_packets` makes a bulk call
//! per family per burst. Lookups are one at a time already, so
//! `--sequential-lookup` changes nothing here.
//!
//! As in C (`fib_parse_packet`), every frame that is not IPv4 is looked up
//! as IPv6: a non-IP frame's bytes where an IPv6 destination would be are
//! looked up too, and it goes where they match (usually nowhere: back out
//! of its input port). C reads those bytes past the end of a shorter
//! frame; here such a frame is a runt.

use lpm::FibTables;

use super::{Lookup, Route};
use crate::packet::{ipv6_dst_bytes, L3};
use crate::MAX_BURST;

/// FIB mode.
pub struct FibLookup {
    pub tables: FibTables,
}

impl Lookup for FibLookup {
    /// Nothing is kept between `add` and `resolve`.
    type Scratch = ();

    #[inline(always)]
    fn add(&self, _: &mut (), _: usize, l3: &L3, frame: &[u8]) -> Route {
        let dst = match l3 {
            L3::Ipv4(h) => return Route::from_table(self.tables.lookup_v4(h.dst)),
            L3::Ipv6(h) => h.dst,
            L3::Other => match ipv6_dst_bytes(frame) {
                Some(dst) => dst,
                None => return Route::Runt,
            },
            L3::Runt => return Route::Runt,
        };
        Route::from_table(self.tables.lookup_v6(&dst))
    }

    #[inline(always)]
    fn resolve(&self, _: &mut (), _: &mut [Route; MAX_BURST]) {}
}
