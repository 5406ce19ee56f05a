//! Lookup modes: given a parsed burst, where each packet goes. A mode only
//! answers [`Route::Port`] or [`Route::NoMatch`] (or [`Route::Runt`] for a
//! frame too short for what its lookup reads); what happens to a packet
//! that matched nothing — back out of its input port, as in C — is decided
//! once, by the forwarder.

mod em;
mod lpm;

pub use em::{em_key, EmKey, EmLookup};
pub use lpm::LpmLookup;

use dpdk::Mbuf;

use crate::packet::L3;
use crate::BURST;

/// Where a lookup sends one packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Route {
    /// Out of this port.
    Port(u16),
    /// No rule matched, or the mode looks nothing up for this kind of
    /// frame (non-IP): the forwarder's miss policy applies.
    NoMatch,
    /// Shorter than what the lookup reads: dropped and counted.
    Runt,
}

impl Route {
    /// A table's answer: its port, or no match.
    #[inline(always)]
    pub fn from_table(port: Option<u16>) -> Route {
        port.map_or(Route::NoMatch, Route::Port)
    }
}

/// Decides where every packet of a burst goes.
pub trait Lookup: Send + Sync + 'static {
    /// Per-lcore working memory, made once and reused for every burst (no
    /// per-burst initialisation of key arrays).
    type Scratch: Default + Send;

    /// Writes to `routes[i]` where `pkts[i]`, parsed as `headers[i]`, goes.
    fn route(&self, scratch: &mut Self::Scratch, pkts: &[Mbuf], headers: &[L3], routes: &mut [Route]);
}

/// Keys of one address family gathered from a burst, with the index of the
/// packet each came from, so one bulk lookup serves them all.
struct Gather<K: Copy + Default> {
    keys: [K; BURST],
    from: [u8; BURST],
    len: usize,
}

impl<K: Copy + Default> Default for Gather<K> {
    fn default() -> Self {
        Self {
            keys: [K::default(); BURST],
            from: [0; BURST],
            len: 0,
        }
    }
}

impl<K: Copy + Default> Gather<K> {
    /// Forgets the previous burst's keys (without touching them).
    #[inline(always)]
    fn clear(&mut self) {
        self.len = 0;
    }

    /// Adds the key of packet `index`.
    #[inline(always)]
    fn push(&mut self, index: usize, key: K) {
        if self.len < BURST {
            self.keys[self.len] = key;
            self.from[self.len] = index as u8;
            self.len += 1;
        }
    }

    #[inline(always)]
    fn keys(&self) -> &[K] {
        &self.keys[..self.len]
    }

    /// Sets the route of the packet whose key is number `key`.
    #[inline(always)]
    fn answer(&self, routes: &mut [Route], key: usize, port: Option<u16>) {
        if let Some(r) = self.from.get(key).and_then(|&i| routes.get_mut(usize::from(i))) {
            *r = Route::from_table(port);
        }
    }
}
