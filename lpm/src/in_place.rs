//! IPv4 routes changed in place in a live rte_lpm table, whatever its size.
//!
//! rte_lpm_add and rte_lpm_delete keep their rules in one array, where an
//! insert or a delete scans every rule of the route's depth: a million
//! routes take minutes to add, and each change at that size takes
//! milliseconds. The routes here are in one hash map per depth instead, and
//! a change writes the entries rte_lpm's own would write, through
//! [`dpdk::LiveLpm`]: the same lookups (tested equal), in a table written
//! whole at start (see [`crate::dir24`]) and changed in microseconds.
//!
//! Each entry holds the longest route covering its addresses, and that
//! route's depth. So a route added takes the entries of its span that hold
//! no longer route, and a route deleted gives the entries it holds to the
//! longest route shorter than it that covers it, found in the maps.

use std::ops::RangeInclusive;

use dpdk::{LiveLpm, LpmReader, Slot, Tbl8Groups};
use ipnet::Ipv4Net;

use crate::dir24::{self, DEPTH_SHIFT};
use crate::route_index::RouteIndex;
use crate::rules::Route;

/// The IPv4 routes of a live table and the writer of its entries (for the
/// control thread; the lcores get [`LiveRoutes::reader`]s).
pub struct LiveRoutes {
    table: LiveLpm,
    /// The routes' ports.
    routes: RouteIndex<u32, u8>,
}

/// Why [`LiveRoutes::add`] refused a route; nothing changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refused {
    /// Every rule (this many) is taken.
    Rules(u32),
    /// Every tbl8 group (this many) is taken, even after a grace period.
    Tbl8s(u32),
    /// A route of depth 0, which rte_lpm takes neither.
    DefaultRoute,
}

/// The /24s whose entries `prefix` may hold, and the addresses of each:
/// all 256 for prefixes up to /24, else its own in its one /24.
fn span(prefix: Ipv4Net) -> (std::ops::Range<usize>, RangeInclusive<u8>) {
    match prefix.prefix_len() {
        ..=24 => {
            let (first, count) = dir24::span(prefix, 24);
            (first..first + count, 0..=255)
        }
        _ => {
            let (first, count) = dir24::span(prefix, 32);
            let slash24 = first >> 8;
            (slash24..slash24 + 1, first as u8..=(first + count - 1) as u8)
        }
    }
}

fn depth_of(entry: u32) -> u8 {
    (entry >> DEPTH_SHIFT) as u8
}

impl LiveRoutes {
    /// The writer of `table`, which holds `routes` (see [`dir24::fill`]),
    /// taking at most `max_rules` routes.
    pub(crate) fn new(table: LiveLpm, routes: &[&Route<Ipv4Net>], max_rules: u32) -> LiveRoutes {
        let mut index = RouteIndex::new(max_rules);
        for r in routes {
            index.insert(u32::from(r.prefix.network()), r.prefix.prefix_len(), r.port);
        }
        LiveRoutes { table, routes: index }
    }

    /// A handle for lookups.
    pub fn reader(&self) -> LpmReader {
        self.table.reader()
    }

    /// How the table's tbl8 groups are used.
    pub fn tbl8_groups(&self) -> Tbl8Groups {
        self.table.tbl8_groups()
    }

    /// Adds `prefix -> port`, or replaces the port of the prefix (host
    /// bits are ignored); lookups see it on return.
    pub fn add(&mut self, prefix: Ipv4Net, port: u8) -> Result<(), Refused> {
        let (net, depth) = (u32::from(prefix.network()), prefix.prefix_len());
        if depth == 0 {
            return Err(Refused::DefaultRoute);
        }
        self.routes.room_for(net, depth).map_err(Refused::Rules)?;
        let entry = dir24::hop(depth, port);
        // The entries of no longer route, or of none.
        let takes = |e: u32| depth_of(e) <= depth;
        let (slash24s, addresses) = span(prefix);
        for slash24 in slash24s {
            match self.table.slot(slash24) {
                Slot::Group(group) => self.write_group(group, addresses.clone(), takes, entry),
                Slot::Entry(e) if depth <= 24 => {
                    if takes(e) {
                        self.table.set_slot(slash24, entry);
                    }
                }
                // A /24's first route longer than /24: a group of what
                // covered the /24, with the route's own addresses.
                Slot::Entry(e) => {
                    let mut entries = [e; 256];
                    entries[usize::from(*addresses.start())..=usize::from(*addresses.end())].fill(entry);
                    self.table
                        .link_group(slash24, entries)
                        .map_err(|dpdk::Tbl8sFull(n)| Refused::Tbl8s(n))?;
                }
            }
        }
        self.routes.insert(net, depth, port);
        Ok(())
    }

    /// Deletes the route `prefix` (host bits ignored); `false` if there is
    /// none. Its addresses fall to the longest route that covers it.
    pub fn delete(&mut self, prefix: Ipv4Net) -> bool {
        let (net, depth) = (u32::from(prefix.network()), prefix.prefix_len());
        if !self.routes.remove(net, depth) {
            return false;
        }
        // The longest shorter route covering it, or a miss (entry 0).
        let heir = self
            .routes
            .covering(net, depth)
            .map_or(0, |(d, port)| dir24::hop(d, port));
        // The entries the route holds: no other route of its depth covers
        // its addresses.
        let held = |e: u32| depth_of(e) == depth;
        let (slash24s, addresses) = span(prefix);
        for slash24 in slash24s {
            match self.table.slot(slash24) {
                Slot::Entry(e) => {
                    if held(e) {
                        self.table.set_slot(slash24, heir);
                    }
                }
                Slot::Group(group) => {
                    self.write_group(group, addresses.clone(), held, heir);
                    // A /24 left with no route longer than /24 has the one
                    // route that covers it all: one entry, and the group
                    // is unlinked (free after a grace period).
                    if depth > 24 && (0..=255).all(|i| depth_of(self.table.group_entry(group, i)) <= 24) {
                        let covering = self.table.group_entry(group, 0);
                        self.table.set_slot(slash24, covering);
                    }
                }
            }
        }
        true
    }

    /// Sets to `entry` the entries of `addresses` in `group` that `takes`.
    fn write_group(&mut self, group: u32, addresses: RangeInclusive<u8>, takes: impl Fn(u32) -> bool, entry: u32) {
        for i in addresses {
            if takes(self.table.group_entry(group, i)) {
                self.table.set_group_entry(group, i, entry);
            }
        }
    }
}
