//! IPv6 routes changed in place in a live rte_lpm6 table
//! ([`dpdk::LiveLpm6`]), or any table laid out as rte_lpm6's: which entries
//! a change writes, which tbl8 groups it links and which it lets go.
//!
//! rte_lpm6 is a tbl24 indexed by the first 3 address bytes, then tbl8
//! groups of 256 entries, one group per further byte a longer route needs
//! (13 at most). An entry is a route (its next hop and depth), no route,
//! or a link to a group ([`dpdk::lpm6_entry`]). Each route entry holds the longest
//! route covering its addresses, written at the level where the route's
//! depth ends, and the lookup follows links until it meets one.
//!
//! A change writes only entries, one store each, so a lookup racing it
//! sees each entry before or after, never half. A new group is filled
//! before it is linked; a group no longer needed (its 256 entries are one
//! route's, or none) is unlinked, its parent entry taking its one value,
//! and handed to [`Table6::retire`], which frees it only once no lookup
//! can still be inside it. The routes are in one hash map per depth, as
//! [`crate::LiveRoutes`] keeps IPv4's.

use dpdk::lpm6_entry::{self as encoding, depth as depth_of, is_link, is_valid};
use ipnet::Ipv6Net;

use crate::route_index::RouteIndex;

/// Address bits the tbl24 covers; each group covers 8 more.
const TBL24_BITS: u8 = 24;

/// Where an entry is: the tbl24's entry for the first 3 address bytes, or
/// entry `byte` of a tbl8 group.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    /// An entry of the tbl24.
    Tbl24(u32),
    /// Entry `.1` of group `.0`.
    Group(u32, u8),
}

/// What the writer needs of a table laid out as rte_lpm6's; the groups
/// are its to hand out.
pub trait Table6 {
    /// The entry at `place`.
    fn get(&self, place: Place) -> u32;
    /// Stores `entry` at `place` in one store, releasing what was
    /// written before (a group is filled before the link to it).
    fn set(&mut self, place: Place, entry: u32);
    /// A group no lookup can reach, its 256 entries set to `fill`; `None`
    /// if every group is taken.
    fn new_group(&mut self, fill: u32) -> Option<u32>;
    /// How many groups [`Table6::new_group`] can give now.
    fn free_groups(&self) -> usize;
    /// `group`, just unlinked, is free once no lookup can be inside it.
    fn retire(&mut self, group: u32);
}

impl Table6 for dpdk::LiveLpm6 {
    fn get(&self, place: Place) -> u32 {
        match place {
            Place::Tbl24(i) => self.tbl24_entry(i),
            Place::Group(group, byte) => self.group_entry(group, byte),
        }
    }
    fn set(&mut self, place: Place, entry: u32) {
        match place {
            Place::Tbl24(i) => self.set_tbl24_entry(i, entry),
            Place::Group(group, byte) => self.set_group_entry(group, byte, entry),
        }
    }
    fn new_group(&mut self, fill: u32) -> Option<u32> {
        dpdk::LiveLpm6::new_group(self, fill)
    }
    fn free_groups(&self) -> usize {
        dpdk::LiveLpm6::free_groups(self)
    }
    fn retire(&mut self, group: u32) {
        dpdk::LiveLpm6::retire(self, group)
    }
}

fn tbl24_index(bytes: &[u8; 16]) -> u32 {
    u32::from_be_bytes([0, bytes[0], bytes[1], bytes[2]])
}

/// The entries a route holds, in the table or group where its depth ends:
/// reached from its tbl24 entry through the group of each byte of `path`,
/// then `count` entries from there.
struct Span {
    tbl24: u32,
    /// The address bytes after the first three, down to the one holding
    /// the route's last bit (none for a route of 24 bits or fewer).
    path: Vec<u8>,
    count: u32,
}

impl Span {
    fn of(prefix: Ipv6Net) -> Span {
        let bytes = prefix.network().octets();
        let depth = prefix.prefix_len();
        let (path, covered) = match depth {
            ..=TBL24_BITS => (Vec::new(), TBL24_BITS),
            _ => {
                let last = usize::from((depth - 1) / 8);
                (bytes[3..=last].to_vec(), (last as u8 + 1) * 8)
            }
        };
        Span {
            tbl24: tbl24_index(&bytes),
            path,
            count: 1 << (covered - depth),
        }
    }
}

/// The places of `count` entries from `first`, in its table.
fn places(first: Place, count: u32) -> impl Iterator<Item = Place> {
    (0..count).map(move |i| match first {
        Place::Tbl24(t) => Place::Tbl24(t + i),
        Place::Group(g, b) => Place::Group(g, b + i as u8),
    })
}

/// Why [`LiveRoutes6::add`] refused a route; nothing changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refused6 {
    /// Every rule (this many) is taken.
    Rules(u32),
    /// The route needs this many tbl8 groups, and fewer are free.
    Tbl8s(usize),
    /// A route of depth 0, which rte_lpm6 takes neither.
    DefaultRoute,
}

/// The IPv6 routes of a table and the writer of its entries (for the
/// control thread alone).
pub struct LiveRoutes6<T: Table6 = dpdk::LiveLpm6> {
    table: T,
    /// The routes' next hops.
    routes: RouteIndex<u128, u32>,
}

impl<T: Table6> LiveRoutes6<T> {
    /// The writer of `table`, which holds no route, taking at most
    /// `max_rules` routes.
    pub fn new(table: T, max_rules: u32) -> Self {
        LiveRoutes6 {
            table,
            routes: RouteIndex::new(max_rules),
        }
    }

    /// The table.
    pub fn table(&self) -> &T {
        &self.table
    }

    /// How many routes it holds.
    pub fn len(&self) -> usize {
        self.routes.len()
    }

    /// Whether it holds no route.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Adds `prefix -> hop`, or replaces the hop of the prefix (host bits
    /// ignored); lookups see it on return.
    pub fn add(&mut self, prefix: Ipv6Net, hop: u32) -> Result<(), Refused6> {
        let prefix = prefix.trunc();
        let (net, depth) = (u128::from(prefix.network()), prefix.prefix_len());
        if depth == 0 {
            return Err(Refused6::DefaultRoute);
        }
        self.routes.room_for(net, depth).map_err(Refused6::Rules)?;
        let span = Span::of(prefix);
        let (reached, links) = self.walk(&span);
        let needed = span.path.len() - links.len();
        if needed > self.table.free_groups() {
            return Err(Refused6::Tbl8s(needed));
        }
        let mut place = reached;
        for &byte in &span.path[links.len()..] {
            // What covered the place covers the new group, all of it; the
            // group is linked once filled.
            let covering = self.table.get(place);
            let Some(group) = self.table.new_group(covering) else {
                unreachable!("{needed} free groups were counted")
            };
            self.table.set(place, encoding::link(group));
            place = Place::Group(group, byte);
        }
        let entry = encoding::route(depth, hop);
        // The entries of no longer route, or of none, there and in the
        // groups linked from there.
        self.write(place, span.count, &|e| !is_valid(e) || depth_of(e) <= depth, entry);
        self.routes.insert(net, depth, hop);
        Ok(())
    }

    /// Deletes the route `prefix` (host bits ignored); `false` if there is
    /// none. Its addresses fall to the longest route that covers it.
    pub fn delete(&mut self, prefix: Ipv6Net) -> bool {
        let prefix = prefix.trunc();
        let (net, depth) = (u128::from(prefix.network()), prefix.prefix_len());
        if !self.routes.remove(net, depth) {
            return false;
        }
        // The longest shorter route covering it, or no route (entry 0).
        let heir = self
            .routes
            .covering(net, depth)
            .map_or(0, |(d, hop)| encoding::route(d, hop));
        let span = Span::of(prefix);
        let (place, links) = self.walk(&span);
        // Every group on the way is there while the route is (no group
        // holding a longer route than its parent covers is let go).
        debug_assert_eq!(links.len(), span.path.len(), "the groups of {prefix}");
        if links.len() == span.path.len() {
            // The entries the route holds: no other route of its depth
            // covers its addresses.
            self.write(place, span.count, &|e| is_valid(e) && depth_of(e) == depth, heir);
            self.let_go(&links);
        }
        true
    }

    /// Walks from the tbl24 down `span`'s path as far as its links go:
    /// the place reached (the span's first entry, if every link is
    /// there) and the places of the links followed.
    fn walk(&self, span: &Span) -> (Place, Vec<Place>) {
        let mut place = Place::Tbl24(span.tbl24);
        let mut links = Vec::with_capacity(span.path.len());
        for &byte in &span.path {
            let entry = self.table.get(place);
            if !is_link(entry) {
                break;
            }
            links.push(place);
            place = Place::Group(encoding::value(entry), byte);
        }
        (place, links)
    }

    /// Sets to `entry` the entries from `first` on (`count` of them) that
    /// `takes`, and those of the groups they link to.
    fn write(&mut self, first: Place, count: u32, takes: &dyn Fn(u32) -> bool, entry: u32) {
        for place in places(first, count) {
            let e = self.table.get(place);
            if is_link(e) {
                self.write(Place::Group(encoding::value(e), 0), 256, takes, entry);
            } else if takes(e) {
                self.table.set(place, entry);
            }
        }
    }

    /// Lets go of the groups at the end of `links` (the links followed to a
    /// deleted route's entries, tbl24 first) that no longer tell their
    /// addresses apart: their 256 entries one route no longer than the
    /// link covers, or none. The link takes that entry; the group is
    /// retired.
    fn let_go(&mut self, links: &[Place]) {
        for (level, &link) in links.iter().enumerate().rev() {
            // Bits the link's own table covers.
            let covered = TBL24_BITS + 8 * level as u8;
            let group = encoding::value(self.table.get(link));
            let first = self.table.get(Place::Group(group, 0));
            let one_entry = !is_link(first)
                && (!is_valid(first) || depth_of(first) <= covered)
                && places(Place::Group(group, 1), 255).all(|p| self.table.get(p) == first);
            if !one_entry {
                return;
            }
            self.table.set(link, first);
            self.table.retire(group);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::{BTreeMap, HashMap};
    use std::net::Ipv6Addr;

    use super::*;
    use proptest::prelude::*;

    /// A table as rte_lpm6 lays it out, in a map (a real tbl24 is 64 MB):
    /// missing entries are 0, no route.
    #[derive(Default)]
    struct Model {
        tbl24: HashMap<u32, u32>,
        groups: Vec<[u32; 256]>,
        free: Vec<u32>,
        /// Retired groups: free at once, as if the grace period had passed.
        retired: usize,
        limit: usize,
    }

    impl Model {
        fn with_groups(limit: usize) -> Model {
            Model {
                limit,
                ..Model::default()
            }
        }

        fn groups_in_use(&self) -> usize {
            self.groups.len() - self.free.len()
        }
    }

    impl Table6 for Model {
        fn get(&self, place: Place) -> u32 {
            match place {
                Place::Tbl24(i) => self.tbl24.get(&i).copied().unwrap_or(0),
                Place::Group(g, b) => self.groups[g as usize][usize::from(b)],
            }
        }
        fn set(&mut self, place: Place, entry: u32) {
            match place {
                Place::Tbl24(i) => {
                    self.tbl24.insert(i, entry);
                }
                Place::Group(g, b) => self.groups[g as usize][usize::from(b)] = entry,
            }
        }
        fn new_group(&mut self, fill: u32) -> Option<u32> {
            let group = match self.free.pop() {
                Some(g) => g,
                None if self.groups.len() < self.limit => {
                    self.groups.push([0; 256]);
                    self.groups.len() as u32 - 1
                }
                None => return None,
            };
            self.groups[group as usize] = [fill; 256];
            Some(group)
        }
        fn free_groups(&self) -> usize {
            self.free.len() + self.limit - self.groups.len()
        }
        fn retire(&mut self, group: u32) {
            self.groups[group as usize] = [0xdead_beef; 256];
            self.free.push(group);
            self.retired += 1;
        }
    }

    /// rte_lpm6's lookup (`lookup_step`): follow links, one byte each.
    fn lookup(table: &Model, addr: Ipv6Addr) -> Option<u32> {
        let bytes = addr.octets();
        let mut entry = table.get(Place::Tbl24(tbl24_index(&bytes)));
        for &byte in &bytes[3..] {
            if !is_link(entry) {
                break;
            }
            entry = table.get(Place::Group(encoding::value(entry), byte));
        }
        (is_valid(entry) && !is_link(entry)).then_some(encoding::value(entry))
    }

    /// Longest-prefix match by the book, over the routes added.
    fn longest(routes: &BTreeMap<Ipv6Net, u32>, addr: Ipv6Addr) -> Option<u32> {
        routes
            .iter()
            .filter(|(p, _)| p.contains(&addr))
            .max_by_key(|(p, _)| p.prefix_len())
            .map(|(_, &hop)| hop)
    }

    fn net(addr: u128, depth: u8) -> Ipv6Net {
        Ipv6Net::new(Ipv6Addr::from(addr), depth).unwrap().trunc()
    }

    #[test]
    fn a_long_route_links_a_group_per_byte_and_its_delete_lets_them_go() {
        let mut routes = LiveRoutes6::new(Model::with_groups(64), 100);
        let addr: u128 = 0x2001_0db8_0001_0002_0003_0004_0005_0006;
        routes.add(net(addr, 16), 1).unwrap();
        routes.add(net(addr, 128), 2).unwrap();
        // Bytes 3 to 15, a group each.
        assert_eq!(routes.table().groups_in_use(), 13);
        assert_eq!(lookup(routes.table(), Ipv6Addr::from(addr)), Some(2));
        assert_eq!(lookup(routes.table(), Ipv6Addr::from(addr ^ 1)), Some(1));
        assert!(routes.delete(net(addr, 128)));
        assert_eq!(routes.table().groups_in_use(), 0);
        assert_eq!(lookup(routes.table(), Ipv6Addr::from(addr)), Some(1));
        assert!(!routes.delete(net(addr, 128)), "deleted already");
    }

    #[test]
    fn a_route_that_needs_more_groups_than_are_free_changes_nothing() {
        let mut routes = LiveRoutes6::new(Model::with_groups(4), 100);
        let addr: u128 = 0x2001_0db8 << 96;
        assert_eq!(routes.add(net(addr, 64), 1), Err(Refused6::Tbl8s(5)));
        assert_eq!((routes.len(), routes.table().groups_in_use()), (0, 0));
        routes.add(net(addr, 56), 1).unwrap();
        assert_eq!(routes.add(net(addr, 0), 1), Err(Refused6::DefaultRoute));
        let mut full = LiveRoutes6::new(Model::with_groups(4), 1);
        full.add(net(addr, 8), 1).unwrap();
        assert_eq!(full.add(net(addr, 9), 1), Err(Refused6::Rules(1)));
        full.add(net(addr, 8), 2).unwrap(); // a replacement takes no rule
    }

    /// Prefixes inside a few /20s, so that routes nest and share groups.
    fn prefix() -> impl Strategy<Value = Ipv6Net> {
        let bases = [0x2001_0db0u128 << 96, 0x2001_0db8u128 << 96, 0xfd00u128 << 112];
        // Depths from 12: a shorter route writes more than 4096 tbl24
        // entries, slow in a map (the tests on rte_lpm6 take every depth).
        (
            0..bases.len(),
            any::<u128>(),
            prop_oneof![12..=24u8, 25..=72u8, 73..=128u8],
        )
            .prop_map(move |(b, bits, depth)| net(bases[b] | bits >> 20, depth))
    }

    #[derive(Debug, Clone)]
    enum Change {
        Add(Ipv6Net, u32),
        Delete(Ipv6Net),
    }

    fn change() -> impl Strategy<Value = Change> {
        prop_oneof![
            3 => (prefix(), 0..4u32).prop_map(|(p, hop)| Change::Add(p, hop)),
            1 => prefix().prop_map(Change::Delete),
        ]
    }

    /// The addresses to look up: each route's first and last, and one
    /// past each.
    fn probes(routes: &[Ipv6Net]) -> Vec<Ipv6Addr> {
        routes
            .iter()
            .flat_map(|p| {
                let (first, last) = (u128::from(p.network()), u128::from(p.broadcast()));
                [first, last, first.wrapping_sub(1), last.wrapping_add(1)]
            })
            .map(Ipv6Addr::from)
            .collect()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// Any sequence of adds, replacements and deletes leaves the
        /// lookups of longest-prefix match over the routes, and deleting
        /// every route leaves no group in use and no entry set.
        #[test]
        fn changes_in_place_look_up_as_longest_prefix_match(changes in proptest::collection::vec(change(), 1..60)) {
            let mut live = LiveRoutes6::new(Model::with_groups(100_000), 1_000);
            let mut routes = BTreeMap::new();
            let mut seen = Vec::new();
            for change in &changes {
                match *change {
                    Change::Add(p, hop) => {
                        live.add(p, hop).unwrap();
                        routes.insert(p, hop);
                        seen.push(p);
                    }
                    Change::Delete(p) => {
                        prop_assert_eq!(live.delete(p), routes.remove(&p).is_some());
                    }
                }
                prop_assert_eq!(live.len(), routes.len());
                for addr in probes(&seen) {
                    prop_assert_eq!(lookup(live.table(), addr), longest(&routes, addr), "{} after {:?}", addr, change);
                }
            }
            for p in routes.keys().copied().collect::<Vec<_>>() {
                prop_assert!(live.delete(p));
            }
            prop_assert_eq!(live.table().groups_in_use(), 0);
            prop_assert!(live.table().tbl24.values().all(|&e| e == 0));
        }
    }
}
