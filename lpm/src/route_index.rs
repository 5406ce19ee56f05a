//! The routes of a table changed in place, either family: one hash map per
//! depth, so that a change finds its own route and the longest shorter one
//! covering it in a few map lookups, whatever the table's size.

use std::hash::Hash;
use std::ops::Shr;

use rustc_hash::FxHashMap;

/// An address as an integer (`u32` for IPv4, `u128` for IPv6).
pub(crate) trait Address: Copy + Eq + Hash + Shr<u32, Output = Self> {
    /// Its bits: the deepest route.
    const BITS: u8;
}

impl Address for u32 {
    const BITS: u8 = 32;
}

impl Address for u128 {
    const BITS: u8 = 128;
}

/// The routes, each `prefix -> V` (a port, a next hop), at most
/// `max_rules` of them.
pub(crate) struct RouteIndex<A: Address, V> {
    /// The routes of each depth (the index, 0 unused): [`key`] to value.
    by_depth: Vec<FxHashMap<A, V>>,
    routes: usize,
    max_rules: u32,
}

/// The key of the route of `depth` (1 to `A::BITS`) covering `addr`: its
/// prefix's bits, right-aligned. Networks themselves would make poor keys:
/// FxHash multiplies, so the zeros of their host bits stay the low bits of
/// the hash, which pick the bucket (all IPv4 /24s in 1/256 of the buckets).
fn key<A: Address>(addr: A, depth: u8) -> A {
    addr >> u32::from(A::BITS - depth)
}

impl<A: Address, V: Copy> RouteIndex<A, V> {
    /// No routes, room for `max_rules`.
    pub(crate) fn new(max_rules: u32) -> Self {
        RouteIndex {
            by_depth: vec![FxHashMap::default(); usize::from(A::BITS) + 1],
            routes: 0,
            max_rules,
        }
    }

    /// How many routes there are.
    pub(crate) fn len(&self) -> usize {
        self.routes
    }

    /// Whether the route `net/depth` (depth 1 or more) may be set: it is
    /// there already (a replacement takes no rule) or a rule is free; else
    /// the number of rules.
    pub(crate) fn room_for(&self, net: A, depth: u8) -> Result<(), u32> {
        let there = self.by_depth[usize::from(depth)].contains_key(&key(net, depth));
        match there || self.routes < self.max_rules as usize {
            true => Ok(()),
            false => Err(self.max_rules),
        }
    }

    /// Sets the route `net/depth` (depth 1 or more) to `value`.
    pub(crate) fn insert(&mut self, net: A, depth: u8, value: V) {
        if self.by_depth[usize::from(depth)]
            .insert(key(net, depth), value)
            .is_none()
        {
            self.routes += 1;
        }
    }

    /// Removes the route `net/depth`; false if there was none.
    pub(crate) fn remove(&mut self, net: A, depth: u8) -> bool {
        let removed = depth != 0 && self.by_depth[usize::from(depth)].remove(&key(net, depth)).is_some();
        self.routes -= usize::from(removed);
        removed
    }

    /// The longest route shorter than `depth` that covers `net`: its depth
    /// and value.
    pub(crate) fn covering(&self, net: A, depth: u8) -> Option<(u8, V)> {
        (1..depth)
            .rev()
            .find_map(|d| self.by_depth[usize::from(d)].get(&key(net, d)).map(|&v| (d, v)))
    }
}
