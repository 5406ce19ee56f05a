//! rte_lpm6, IPv6's longest-prefix-match table: a tbl24 indexed by the
//! first 3 address bytes, then tbl8 groups of 256 entries, one per further
//! byte a longer route needs. Two kinds, told apart by type:
//! - [`Lpm6`]: built route by route with `rte_lpm6_add` through `&mut`,
//!   then read by the lcores through [`Lpm6Reader`]s;
//! - [`LiveLpm6`]: created empty and then written only by its one writer,
//!   entry by entry, while lcores read it through [`Lpm6Reader`]s; its
//!   unlinked tbl8 groups wait for RCU QSBR grace periods.

use std::cell::Cell;
use std::marker::PhantomData;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

use crate::eal::Eal;
use crate::error::{clear_errno, DpdkError, Result};
use crate::hash;
use crate::lpm::{c_name, dir24_8_memory, in_chunks, GroupPool};
use crate::rcu::Qsbr;
use crate::{sys, Tbl8Groups};

/// An IPv6 LPM table. Built on one thread, then only read.
///
/// ```
/// let eal = dpdk::Eal::for_tests(&[])?;
/// let mut lpm = dpdk::Lpm6::new(eal, "doc_v6", 0, 16, 64)?;
/// let net: std::net::Ipv6Addr = "2001:200:0:3::".parse().unwrap();
/// lpm.add(&net.octets(), 64, 3)?;
///
/// let host: std::net::Ipv6Addr = "2001:200:0:3::9".parse().unwrap();
/// let other: std::net::Ipv6Addr = "2001:200:0:4::9".parse().unwrap();
/// assert_eq!(lpm.lookup(&host.octets()), Some(3));
/// let mut hops = [None; 2];
/// lpm.lookup_bulk(&[host.octets(), other.octets()], |i, hop| hops[i] = hop);
/// assert_eq!(hops, [Some(3), None]);
/// # Ok::<(), dpdk::DpdkError>(())
/// ```
pub struct Lpm6 {
    raw: NonNull<sys::rte_lpm6>,
    _eal: Eal,
}

// SAFETY: as for LpmTable: lookups only read; changes need &mut.
unsafe impl Send for Lpm6 {}
// SAFETY: as for LpmTable.
unsafe impl Sync for Lpm6 {}

impl Lpm6 {
    /// Creates an empty table for `max_rules` routes and `tbl8s` groups (a
    /// prefix longer than /24 needs one group per 8 bits past the 24th on
    /// its path, shared with the prefixes on the same path), in the memory
    /// of NUMA `socket`. `name` must be unique in the process.
    pub fn new(eal: &Eal, name: &str, socket: i32, max_rules: u32, tbl8s: u32) -> Result<Lpm6> {
        let cname = c_name(name)?;
        let config = sys::rte_lpm6_config {
            max_rules,
            number_tbl8s: tbl8s,
            flags: 0,
        };
        clear_errno();
        // SAFETY: cname and config are valid for the call.
        let p = unsafe { sys::rte_lpm6_create(cname.as_ptr(), socket, &config) };
        let raw = NonNull::new(p).ok_or_else(|| {
            // Per group, a 4-byte index and an 8-byte header besides its
            // entries; the rules are an rte_hash of 20-byte keys.
            let bytes = dir24_8_memory(tbl8s) + 12 * u64::from(tbl8s) + hash::eal_memory(max_rules, 20);
            DpdkError::from_allocation(
                format_args!("cannot create LPM6 table {name} of {max_rules} rules and {tbl8s} tbl8 groups"),
                bytes,
            )
        })?;
        Ok(Lpm6 { raw, _eal: eal.clone() })
    }

    /// Adds `ip/depth -> next_hop` (`ip` in network order, as
    /// [`std::net::Ipv6Addr::octets`] gives it). Adding a prefix again
    /// replaces its next hop. Fails when `depth` is not 1..=128 or the
    /// table is out of rules or tbl8 groups.
    pub fn add(&mut self, ip: &[u8; 16], depth: u8, next_hop: u32) -> Result<()> {
        // SAFETY: ip points at 16 bytes; the table is alive and exclusive.
        let ret = unsafe { sys::rte_lpm6_add(self.raw.as_ptr(), ip.as_ptr().cast(), depth, next_hop) };
        if ret < 0 {
            return Err(DpdkError::from_code("cannot add IPv6 route", ret));
        }
        Ok(())
    }

    /// Looks up every address of `ips` in bulk calls and hands `each` the
    /// index of the address and its next hop, or None for a miss, as
    /// [`crate::LpmTable::lookup_bulk`] does.
    #[inline(always)]
    pub fn lookup_bulk(&self, ips: &[[u8; 16]], mut each: impl FnMut(usize, Option<u32>)) {
        in_chunks(
            ips,
            |ips, raw: &mut [i32]| {
                // SAFETY: ips and raw hold ips.len() elements (in_chunks);
                // rte_lpm6 reads the addresses without writing them despite
                // the non-const pointer type; the table is alive and only
                // read.
                unsafe {
                    sys::rte_lpm6_lookup_bulk_func(
                        self.raw.as_ptr(),
                        ips.as_ptr().cast_mut().cast(),
                        raw.as_mut_ptr(),
                        ips.len() as u32,
                    )
                };
            },
            // rte_lpm6 writes -1 for a miss.
            |i, h| each(i, u32::try_from(h).ok()),
        );
    }

    /// Looks up one address: its next hop, or None on a miss.
    pub fn lookup(&self, ip: &[u8; 16]) -> Option<u32> {
        let mut hop = None;
        self.lookup_bulk(std::slice::from_ref(ip), |_, h| hop = h);
        hop
    }
}

impl Drop for Lpm6 {
    fn drop(&mut self) {
        // SAFETY: the table is ours and no lookup can run (we hold &mut).
        unsafe { sys::rte_lpm6_free(self.raw.as_ptr()) }
    }
}

/// Entries of rte_lpm6's tbl24 and of one tbl8 group (`rte_lpm6.c`, which
/// keeps its constants private).
const TBL24_ENTRIES: usize = 1 << 24;
const GROUP_ENTRIES: usize = 256;

/// rte_lpm6's entry encoding (`rte_lpm6.c` keeps it private): the next
/// hop, or the linked group, in bits 0-20, the depth in 21-28, then the
/// valid, valid-group and external (link) flags. [`LiveLpm6::new`]'s
/// layout check reads a route and a link that rte_lpm6_add wrote and
/// compares them with [`route`](lpm6_entry::route) and
/// [`link`](lpm6_entry::link), so a writer that uses these writes what
/// rte_lpm6_add would.
pub mod lpm6_entry {
    const VALUE_MASK: u32 = 0x001f_ffff;
    const DEPTH_SHIFT: u32 = 21;
    const VALID: u32 = 1 << 29;
    const VALID_GROUP: u32 = 1 << 30;
    const EXT: u32 = 1 << 31;

    /// The entry of a route of `depth` to `hop`.
    pub const fn route(depth: u8, hop: u32) -> u32 {
        VALID | VALID_GROUP | (depth as u32) << DEPTH_SHIFT | (hop & VALUE_MASK)
    }

    /// A link to tbl8 group `group` (depth 0).
    pub const fn link(group: u32) -> u32 {
        VALID | VALID_GROUP | EXT | (group & VALUE_MASK)
    }

    /// Whether `entry` holds a route or a link (0 holds neither).
    pub const fn is_valid(entry: u32) -> bool {
        entry & VALID != 0
    }

    /// Whether `entry` links a group.
    pub const fn is_link(entry: u32) -> bool {
        entry & EXT != 0
    }

    /// The depth of the route `entry` holds.
    pub const fn depth(entry: u32) -> u8 {
        (entry >> DEPTH_SHIFT) as u8
    }

    /// A route's next hop, or the group a link links.
    pub const fn value(entry: u32) -> u32 {
        entry & VALUE_MASK
    }
}

const fn round_up(n: usize, to: usize) -> usize {
    n.div_ceil(to) * to
}

/// Where the tables are in `struct rte_lpm6`, which DPDK keeps private
/// (`rte_lpm6.c`, the same in 22.11, 24.11 and 25.11): its name, three
/// u32 counts and the rules' hash pointer, then the cache-aligned tbl24;
/// after it two pointers and a u32 (the free-group pool, its position,
/// the group headers), then the cache-aligned tbl8 groups.
/// [`LiveLpm6::new`] checks both against entries rte_lpm6_add writes.
const TBL24_OFFSET: usize = round_up(round_up(sys::RTE_LPM6_NAMESIZE as usize + 3 * 4, 8) + 8, CACHE_LINE);
const TBL8_OFFSET: usize = round_up(TBL24_OFFSET + 4 * TBL24_ENTRIES + 3 * 8, CACHE_LINE);
const CACHE_LINE: usize = sys::RTE_CACHE_LINE_SIZE as usize;

/// A lookup handle of an IPv6 table, a built [`Lpm6`] or a [`LiveLpm6`]'s,
/// for the lcores: lookups only (no `rte_lpm6_add` on a table another
/// writes). Keeps the table alive.
///
/// ```compile_fail
/// # let eal = dpdk::Eal::for_tests(&[]).unwrap();
/// # let qsbr = std::sync::Arc::new(dpdk::Qsbr::new(1).unwrap());
/// let live = dpdk::LiveLpm6::new(eal, "doc_reader6", 0, 1, &qsbr).unwrap();
/// live.reader().add(&[0x20; 16], 8, 1); // no such method
/// ```
#[derive(Clone)]
pub struct Lpm6Reader(Arc<Lpm6>);

impl Lpm6Reader {
    /// As [`Lpm6::lookup_bulk`].
    #[inline(always)]
    pub fn lookup_bulk(&self, ips: &[[u8; 16]], each: impl FnMut(usize, Option<u32>)) {
        self.0.lookup_bulk(ips, each)
    }

    /// As [`Lpm6::lookup`].
    pub fn lookup(&self, ip: &[u8; 16]) -> Option<u32> {
        self.0.lookup(ip)
    }
}

impl From<Lpm6> for Lpm6Reader {
    fn from(table: Lpm6) -> Lpm6Reader {
        Lpm6Reader(Arc::new(table))
    }
}

/// An IPv6 table changed in place while lcores read it: the writer's
/// handle, for the control thread alone (not `Sync`, no `Clone`); the
/// lcores get [`Lpm6Reader`]s.
///
/// rte_lpm6 has no way to change a table that lcores read (its groups are
/// reused at once, and it writes entries field by field). So the table is
/// created empty and this writer is the only one ever to write it, entry
/// by entry in rte_lpm6's format, each with one atomic store that a
/// lookup sees whole, before or after. Which entries to write is the
/// caller's (the `lpm` crate writes what rte_lpm6_add would, tested
/// equal); the tbl8 groups are this writer's to hand out:
/// - [`LiveLpm6::new_group`] fills a group no lookup can reach, which the
///   caller links next with a release store;
/// - a group the caller unlinks and hands to [`LiveLpm6::retire`] may
///   still be read by an lcore in the middle of its poll round, so it
///   waits for a grace period of the lcores' QSBR variable.
///
/// A link names a group of the table (else a lookup would read past it):
/// the setters panic on any other.
///
/// ```
/// use std::sync::Arc;
/// let eal = dpdk::Eal::for_tests(&[])?;
/// let qsbr = Arc::new(dpdk::Qsbr::new(1)?);
/// let mut live = dpdk::LiveLpm6::new(eal, "doc_live6", 0, 2, &qsbr)?;
/// let reader = live.reader();
/// // 2001:db8::/32 -> 7: a route of depth 32 to hop 7 in 2001:0d's group.
/// let route = 1 << 30 | 1 << 29 | 32 << 21 | 7;
/// let group = live.new_group(0).unwrap();
/// live.set_group_entry(group, 0xb8, route);
/// live.set_tbl24_entry(0x20010d, 1 << 31 | 1 << 30 | 1 << 29 | group);
/// let host: std::net::Ipv6Addr = "2001:db8::1".parse().unwrap();
/// assert_eq!(reader.lookup(&host.octets()), Some(7));
/// # Ok::<(), dpdk::DpdkError>(())
/// ```
pub struct LiveLpm6 {
    table: Arc<Lpm6>,
    groups: GroupPool,
    _not_sync: PhantomData<Cell<()>>,
}

impl LiveLpm6 {
    /// Creates an empty table of `tbl8s` groups (one at least), as [`Lpm6::new`] does, to
    /// be changed in place; its unlinked groups wait for grace periods of
    /// `qsbr`, the variable of the lcores that read it. Fails if this
    /// DPDK's rte_lpm6 is not laid out as this writer expects.
    pub fn new(eal: &Eal, name: &str, socket: i32, tbl8s: u32, qsbr: &Arc<Qsbr>) -> Result<LiveLpm6> {
        // The writer keeps the routes: rte_lpm6's rule list is never used
        // but for the layout check's probe route.
        if tbl8s == 0 {
            return Err(DpdkError::invalid(
                format!("IPv6 table {name}"),
                "rte_lpm6 takes no table of 0 tbl8 groups",
            ));
        }
        let mut table = Lpm6::new(eal, name, socket, 1, tbl8s)?;
        check_layout(&mut table)?;
        Ok(LiveLpm6 {
            table: Arc::new(table),
            groups: GroupPool::new(qsbr, tbl8s, (0..tbl8s).rev().collect()),
            _not_sync: PhantomData,
        })
    }

    /// A handle for the lcores' lookups.
    pub fn reader(&self) -> Lpm6Reader {
        Lpm6Reader(Arc::clone(&self.table))
    }

    /// The tbl24's entries and the groups', as the lookups read them.
    fn tables(&self) -> (&[AtomicU32], &[AtomicU32]) {
        // SAFETY: the table is alive (`self.table`) and laid out as
        // TBL24_OFFSET and TBL8_OFFSET say (checked by `new`); AtomicU32
        // has u32's layout, and while lcores read, every access to the
        // entries is a lookup's load or this writer's atomic store.
        unsafe { lpm6_tables(self.table.raw, self.groups.total()) }
    }

    /// Entry `i` (below 2^24) of the tbl24.
    pub fn tbl24_entry(&self, i: u32) -> u32 {
        self.tables().0[i as usize].load(Ordering::Relaxed)
    }

    /// Sets entry `i` of the tbl24 to `entry`, releasing what was written
    /// before it (a group is filled before it is linked).
    ///
    /// # Panics
    /// If `entry` links a group the table does not have.
    pub fn set_tbl24_entry(&mut self, i: u32, entry: u32) {
        self.check_link(entry);
        self.tables().0[i as usize].store(entry, Ordering::Release);
    }

    /// Entry `byte` of tbl8 group `group` (below the table's count).
    pub fn group_entry(&self, group: u32, byte: u8) -> u32 {
        self.tables().1[group as usize * GROUP_ENTRIES + usize::from(byte)].load(Ordering::Relaxed)
    }

    /// Sets entry `byte` of tbl8 group `group` to `entry`, as
    /// [`LiveLpm6::set_tbl24_entry`] does.
    ///
    /// # Panics
    /// If `entry` links a group the table does not have.
    pub fn set_group_entry(&mut self, group: u32, byte: u8, entry: u32) {
        self.check_link(entry);
        self.tables().1[group as usize * GROUP_ENTRIES + usize::from(byte)].store(entry, Ordering::Release);
    }

    fn check_link(&self, entry: u32) {
        let linked = lpm6_entry::value(entry);
        let total = self.groups.total();
        assert!(
            !(lpm6_entry::is_valid(entry) && lpm6_entry::is_link(entry)) || linked < total,
            "an rte_lpm6 entry links group {linked} of {total}"
        );
    }

    /// A free group, no lookup inside it, its 256 entries set to `fill`;
    /// None if every group is taken, even after a grace period.
    pub fn new_group(&mut self, fill: u32) -> Option<u32> {
        self.check_link(fill);
        let group = self.groups.take()?;
        let entries = &self.tables().1[group as usize * GROUP_ENTRIES..][..GROUP_ENTRIES];
        for entry in entries {
            entry.store(fill, Ordering::Relaxed);
        }
        Some(group)
    }

    /// How many groups [`LiveLpm6::new_group`] can give.
    pub fn free_groups(&self) -> usize {
        self.groups.available()
    }

    /// `group`, which the caller has just unlinked, is free once no
    /// lookup can be inside it.
    pub fn retire(&mut self, group: u32) {
        self.groups.retire(group);
    }

    /// How the tbl8 groups are used.
    pub fn tbl8_groups(&self) -> Tbl8Groups {
        self.groups.usage()
    }
}

/// The tbl24 and the `tbl8s` groups of rte_lpm6 table `lpm`.
///
/// # Safety
/// `lpm` is alive, has `tbl8s` groups, and is laid out as TBL24_OFFSET and
/// TBL8_OFFSET say; every access to the entries while the slices live is
/// atomic, or there is none but the caller's.
unsafe fn lpm6_tables<'a>(lpm: NonNull<sys::rte_lpm6>, tbl8s: u32) -> (&'a [AtomicU32], &'a [AtomicU32]) {
    let base = lpm.as_ptr().cast::<u8>();
    // SAFETY: the caller's: both tables are inside the table's memory, at
    // these offsets, of 4-byte entries aligned to their cache line.
    unsafe {
        (
            std::slice::from_raw_parts(base.add(TBL24_OFFSET).cast::<AtomicU32>(), TBL24_ENTRIES),
            std::slice::from_raw_parts(
                base.add(TBL8_OFFSET).cast::<AtomicU32>(),
                tbl8s as usize * GROUP_ENTRIES,
            ),
        )
    }
}

/// Checks that `table` (just created, empty, of one group or more) is laid
/// out as TBL24_OFFSET and TBL8_OFFSET say: a probe route written by
/// rte_lpm6_add is where they say, as the writer would write it; then
/// zeroes the entries it wrote, so that lookups find the table empty again.
/// rte_lpm6's own books (its rule list, its free groups) keep the probe:
/// nothing but rte_lpm6_free reads them again, and `rte_lpm6_delete_all`
/// would clear every entry of a table that may be hundreds of MB.
fn check_layout(table: &mut Lpm6) -> Result<()> {
    // 102:304::/32 -> 0x1abcd: a link to group 0 (the first rte_lpm6
    // hands out) at tbl24 entry 0x010203, the route at the group's entry 4.
    let probe = [1, 2, 3, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];
    let hop = 0x1abcd;
    let expected = [lpm6_entry::link(0), lpm6_entry::route(32, hop)];
    table.add(&probe, 32, hop)?;
    // SAFETY: `table` is borrowed mutably, so no lookup runs. If the
    // offsets are wrong, the reads are still inside the table's memory
    // (more than 64 MB of tbl24, then a KB or more of groups: the probe's
    // group is the first KB past them), and nothing is written.
    let (tbl24, group) = unsafe { lpm6_tables(table.raw, 1) };
    let probe_entry = &tbl24[0x01_0203];
    let found = [probe_entry.load(Ordering::Relaxed), group[4].load(Ordering::Relaxed)];
    if found != expected {
        return Err(DpdkError::invalid(
            "rte_lpm6 table",
            format!(
                "not laid out as l3fwd-rs expects (tbl24 at byte {TBL24_OFFSET}, tbl8 at {TBL8_OFFSET}): \
                 a probe route's entries read {found:#x?}, not {expected:#x?}"
            ),
        ));
    }
    // The only entries rte_lpm6_add wrote: the tbl24's and the group's.
    probe_entry.store(0, Ordering::Relaxed);
    for entry in group {
        entry.store(0, Ordering::Relaxed);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The probe route of the layout check leaves no entry behind; a
    /// table of no group is refused (rte_lpm6_create cannot make one).
    #[test]
    fn a_live_table_starts_empty() {
        let eal = Eal::for_tests(&[]).unwrap();
        let qsbr = Arc::new(Qsbr::new(1).unwrap());
        let live = LiveLpm6::new(eal, "empty", 0, 1, &qsbr).unwrap();
        assert_eq!(live.tbl24_entry(0x01_0203), 0);
        assert!((0..=255).all(|b| live.group_entry(0, b) == 0));
        let refused = LiveLpm6::new(eal, "no_group", 0, 0, &qsbr).err().unwrap();
        assert!(refused.to_string().contains("0 tbl8 groups"), "{refused}");
    }
}
