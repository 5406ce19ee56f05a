//! ACL mode (`--lookup=acl`): deny and route rules on the 5-tuple in
//! rte_acl, each family's packets of a burst classified in one call, as
//! C's `acl_main_loop` does. As in C, a burst's IPv4 packets are sent
//! before its IPv6 ones, and packets that match no rule, or are not IP,
//! are dropped. rte_acl has no one-packet classify, so
//! `--sequential-lookup` changes nothing here.

use acl::{AclTables, Verdict, V4_INPUT, V6_INPUT};

use super::{answer_route, Gather, Lookup, Miss, Route};
use crate::packet::{ipv4_from_proto, ipv6_from_next_header, L3};
use crate::MAX_BURST;

/// ACL mode.
pub struct AclLookup {
    pub tables: AclTables,
}

/// Classify inputs of one burst: each packet's header bytes from its
/// protocol field on, copied (rte_acl then never reads past a frame).
pub struct AclScratch {
    v4: Gather<[u8; V4_INPUT]>,
    v6: Gather<[u8; V6_INPUT]>,
}

impl Default for AclScratch {
    fn default() -> Self {
        AclScratch {
            v4: Gather::filled([0; V4_INPUT]),
            v6: Gather::filled([0; V6_INPUT]),
        }
    }
}

fn route(verdict: Verdict) -> Route {
    match verdict {
        Verdict::Forward(port) => Route::Port(port),
        Verdict::Deny => Route::Denied,
        Verdict::NoMatch => Route::NoMatch,
    }
}

impl Lookup for AclLookup {
    type Scratch = AclScratch;
    const MISS: Miss = Miss::Drop;
    const IPV4_FIRST: bool = true;

    #[inline(always)]
    fn add(&self, scratch: &mut AclScratch, index: usize, l3: &L3, frame: &[u8]) -> Route {
        match l3 {
            L3::Ipv4(_) => scratch.v4.push(index, ipv4_from_proto(frame)),
            L3::Ipv6(_) => scratch.v6.push(index, ipv6_from_next_header(frame)),
            L3::Other => {}
            L3::Runt => return Route::Runt,
        }
        Route::NoMatch
    }

    #[inline(always)]
    fn resolve(&self, scratch: &mut AclScratch, routes: &mut [Route; MAX_BURST]) {
        let (inputs, from) = scratch.v4.take();
        self.tables
            .classify_v4(inputs, |i, v| answer_route(from, routes, i, route(v)));
        let (inputs, from) = scratch.v6.take();
        self.tables
            .classify_v6(inputs, |i, v| answer_route(from, routes, i, route(v)));
    }
}
