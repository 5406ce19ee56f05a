//! rte_lpm, IPv4's longest-prefix-match table, and what every DIR-24-8
//! table here shares (bulk lookups, the tbl8 groups of a live table).
//!
//! rte_lpm is DIR-24-8: a 2^24-entry first-level table indexed by the top
//! 24 bits of the address answers most lookups with one memory read; a
//! prefix longer than /24 sends its /24 to a 256-entry "tbl8" group, a
//! second read. rte_lpm6 chains such groups 8 bits at a time past the first
//! 24. Sizing a table is choosing `max_rules` and the number of tbl8
//! groups; the `lpm` crate counts both from the rule files.
//!
//! Three kinds of IPv4 table, told apart by type:
//! - [`Lpm`]: built route by route with `rte_lpm_add`, then only read;
//! - [`FrozenLpm`]: written whole by [`Lpm::filled`] (no rule list), never
//!   changed;
//! - [`LiveLpm`]: written whole as a [`FrozenLpm`] is, then changed in
//!   place, entry by entry, by the control thread while lcores read it
//!   through [`LpmReader`]s; its freed tbl8 groups wait for RCU QSBR grace
//!   periods (see [`LiveLpm`]).
//!
//! IPv6: [`crate::Lpm6`] and [`crate::LiveLpm6`].

use std::cell::Cell;
use std::collections::VecDeque;
use std::ffi::CString;
use std::marker::PhantomData;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

use crate::eal::Eal;
use crate::error::{clear_errno, DpdkError, Result};
use crate::rcu::Qsbr;
use crate::sys;

/// Bit rte_lpm sets in a bulk-lookup result when the address matched.
const LPM_LOOKUP_SUCCESS: u32 = 0x0100_0000;
/// Mask of the next hop in an rte_lpm result.
const LPM_NEXT_HOP_MASK: u32 = 0x00ff_ffff;
/// Valid and group bits of an rte_lpm entry: it refers to a tbl8 group.
const LPM_VALID_GROUP: u32 = 0x0300_0000;
/// The group bit of a tbl8 group's first entry: the group is allocated.
const LPM_GROUP: u32 = 0x0200_0000;
/// Entries of a tbl8 group.
const TBL8_GROUP_ENTRIES: u32 = sys::RTE_LPM_TBL8_GROUP_NUM_ENTRIES;

/// Most results one bulk call (rte_lpm, rte_lpm6, rte_fib, rte_fib6)
/// writes here: bulk lookups go through a stack buffer of this many.
const BULK: usize = 64;

/// The loop of every bulk lookup here: `call` looks up one chunk of at
/// most [`BULK`] `items`, writing one raw result per item into a slice
/// exactly as long as the chunk (the length its unsafe call relies on);
/// `each` then gets each item's index in `items` and its raw result.
#[inline(always)]
pub(crate) fn in_chunks<T, R: Copy + Default>(
    items: &[T],
    mut call: impl FnMut(&[T], &mut [R]),
    mut each: impl FnMut(usize, R),
) {
    let mut raw = [R::default(); BULK];
    for (chunk, items) in items.chunks(BULK).enumerate() {
        let raw = &mut raw[..items.len()];
        call(items, raw);
        for (i, &r) in raw.iter().enumerate() {
            each(chunk * BULK + i, r);
        }
    }
}

/// The lookups of an IPv4 LPM table, shared by [`Lpm`] (built route by
/// route) and [`FrozenLpm`] (written whole, lookups only), which both
/// dereference to it, and by [`LpmReader`].
pub struct LpmTable {
    raw: NonNull<sys::rte_lpm>,
    _eal: Eal,
}

// SAFETY: lookups only read the tables, which rte_lpm supports from any
// number of threads, with atomic loads (see `lookup_entry`); changes need
// &mut (through Lpm) or the one LiveLpm, whose writes are atomic stores.
unsafe impl Send for LpmTable {}
// SAFETY: as above: &LpmTable only allows lookups.
unsafe impl Sync for LpmTable {}

/// How rte_lpm's entries keep a group, a hop and whether they hold one,
/// for the vector lookups.
#[cfg(target_arch = "x86_64")]
struct LpmEntry;

#[cfg(target_arch = "x86_64")]
impl crate::simd::Dir24_8Entry for LpmEntry {
    const GROUP_BITS: u32 = LPM_VALID_GROUP;
    const GROUP_SHIFT: u32 = 0;
    const GROUP_MASK: u32 = LPM_NEXT_HOP_MASK;
    const FOUND_BITS: u32 = LPM_LOOKUP_SUCCESS;
    const ABSENT: u32 = 0;
    const HOP_SHIFT: u32 = 0;
}

/// rte_lpm_lookup, which C inlines from `rte_lpm.h`, written here: one read
/// of the /24's entry and, for a /24 holding longer prefixes, one of its
/// tbl8 group, with no call. Each read is one atomic load (a plain `mov`
/// on x86), since a [`LiveLpm`] is written while it is read: the tbl24
/// load acquires what [`LiveLpm::link_group`] released when it linked a
/// filled group.
///
/// # Safety
/// `lpm` is a live rte_lpm table, which stays alive during the call.
#[inline(always)]
unsafe fn lookup_entry(lpm: *const sys::rte_lpm, ip: u32) -> Option<u32> {
    // SAFETY: tbl24 holds 2^24 entries and `ip >> 8` is below that; an
    // entry with both the valid and the group bit names a tbl8 group below
    // the table's count (rte_lpm_add keeps that invariant, the fills refuse
    // any other entry through Tbl24, and LiveLpm links only groups of its
    // own below the count), so the group entry read is
    // inside tbl8, whose memory lives as long as the table (a group is
    // reused, never freed). Entries are 4-byte bitfields read as u32, as
    // rte_lpm does, aligned to 4.
    let entry = unsafe {
        let tbl24 = std::ptr::addr_of!((*lpm).tbl24).cast::<AtomicU32>();
        let entry = (*tbl24.add((ip >> 8) as usize)).load(Ordering::Acquire);
        if entry & LPM_VALID_GROUP == LPM_VALID_GROUP {
            let index = (entry & LPM_NEXT_HOP_MASK) * TBL8_GROUP_ENTRIES + (ip & (TBL8_GROUP_ENTRIES - 1));
            (*(*lpm).tbl8.cast::<AtomicU32>().add(index as usize)).load(Ordering::Relaxed)
        } else {
            entry
        }
    };
    (entry & LPM_LOOKUP_SUCCESS != 0).then_some(entry & LPM_NEXT_HOP_MASK)
}

/// [`lookup_entry`] of each of `dsts`, eight at a time with the vector
/// path `simd` names: the low 16 bits of each next hop found (the
/// port, as the tables hold ports), or `miss`, into `out`, for as many as
/// the shorter of the two has.
///
/// # Safety
/// As [`lookup_entry`].
#[inline(always)]
unsafe fn lookup_entries(lpm: *const sys::rte_lpm, simd: crate::Simd, dsts: &[u32], miss: u16, out: &mut [u16]) {
    let n = dsts.len().min(out.len());
    #[cfg(target_arch = "x86_64")]
    // SAFETY: the table is alive (the caller's word), its tbl24 2^24
    // entries long and an entry with both the valid and the group bit
    // names a group inside tbl8 (as in lookup_entry); both slices hold n.
    let done = unsafe {
        let (tbl24, tbl8) = (
            std::ptr::addr_of!((*lpm).tbl24).cast::<i32>(),
            (*lpm).tbl8.cast::<i32>(),
        );
        simd.dir24_8_lookup::<LpmEntry>(tbl24, tbl8, &dsts[..n], miss, &mut out[..n])
    };
    #[cfg(not(target_arch = "x86_64"))]
    let done = {
        let _ = simd;
        0
    };
    for (o, &dst) in out[done..n].iter_mut().zip(&dsts[done..n]) {
        // SAFETY: as above.
        *o = unsafe { lookup_entry(lpm, dst) }.map_or(miss, |hop| hop as u16);
    }
}

/// EAL memory of a first level of 2^24 4-byte entries and `tbl8s` groups
/// of 256 more: the bulk of rte_lpm, rte_lpm6, rte_fib and rte_fib6 (4-byte
/// next hops; DPDK 22.11).
pub(crate) fn dir24_8_memory(tbl8s: u32) -> u64 {
    const ENTRY: u64 = 4;
    ((1 << 24) + 256 * u64::from(tbl8s)) * ENTRY
}

pub(crate) fn c_name(name: &str) -> Result<CString> {
    CString::new(name).map_err(|_| DpdkError::invalid("table name", "contains a NUL byte"))
}

impl LpmTable {
    /// A table of `tbl8s` groups and a rule list of `rules`, or None for
    /// a table written whole, which keeps none (rte_lpm takes one rule).
    fn create(eal: &Eal, name: &str, socket: i32, rules: Option<u32>, tbl8s: u32) -> Result<LpmTable> {
        let cname = c_name(name)?;
        let max_rules = rules.unwrap_or(1);
        let config = sys::rte_lpm_config {
            max_rules,
            number_tbl8s: tbl8s,
            flags: 0,
        };
        clear_errno();
        // SAFETY: cname and config are valid for the call.
        let p = unsafe { sys::rte_lpm_create(cname.as_ptr(), socket, &config) };
        let raw = NonNull::new(p).ok_or_else(|| {
            // A rule is an address and a next hop, 8 bytes.
            let bytes = dir24_8_memory(tbl8s) + 8 * u64::from(max_rules);
            let rules = rules.map_or(String::new(), |n| format!("{n} rules and "));
            DpdkError::from_allocation(
                format_args!("cannot create LPM table {name} of {rules}{tbl8s} tbl8 groups"),
                bytes,
            )
        })?;
        Ok(LpmTable { raw, _eal: eal.clone() })
    }

    /// Lets `fill` write the zeroed tables of a table created for `tbl8s`
    /// groups and not shared yet, as [`Lpm::filled`] describes; returns
    /// which groups tbl24 links.
    fn fill(&mut self, name: &str, tbl8s: u32, fill: impl FnOnce(&mut Tbl24<'_>, &mut [u32])) -> Result<Vec<bool>> {
        const TBL24_ENTRIES: usize = 1 << 24;
        let raw = self.raw.as_ptr();
        // SAFETY: rte_lpm_create allocated (and zeroed) the 2^24 tbl24
        // entries inside the table and `tbl8s` groups of tbl8 entries behind
        // its tbl8 pointer; entries are 4-byte bitfields, for which any u32
        // is valid (rte_lpm's own lookups read them as u32s). The table is
        // not shared yet (&mut self): nothing else touches it while the
        // slices live, and they end with this call.
        let (entries, tbl8) = unsafe {
            (
                std::slice::from_raw_parts_mut(std::ptr::addr_of_mut!((*raw).tbl24).cast::<u32>(), TBL24_ENTRIES),
                std::slice::from_raw_parts_mut((*raw).tbl8.cast::<u32>(), tbl8s as usize * TBL8_GROUP_ENTRIES as usize),
            )
        };
        let mut tbl24 = Tbl24 {
            entries,
            linked: vec![false; tbl8s as usize],
            refused: false,
        };
        fill(&mut tbl24, tbl8);
        if tbl24.refused {
            return Err(DpdkError::invalid(
                format!("LPM table {name}"),
                "a tbl24 entry points past the tbl8 groups",
            ));
        }
        Ok(tbl24.linked)
    }

    /// Looks up every address of `ips` (host order) in bulk calls and
    /// hands `each` the index of the address and its next hop, or None for
    /// a miss.
    ///
    /// One call per burst instead of one per packet: the loop runs inside
    /// DPDK, and the independent reads of the group overlap in the CPU.
    /// l3fwd-rs passes a whole burst's IPv4 destinations here.
    ///
    /// ```
    /// # let eal = dpdk::Eal::for_tests(&[])?;
    /// # let mut lpm = dpdk::Lpm::new(eal, "doc_bulk", 0, 16, 4)?;
    /// # lpm.add(u32::from_be_bytes([198, 18, 1, 0]), 24, 1)?;
    /// # lpm.add(u32::from_be_bytes([198, 18, 2, 0]), 24, 2)?;
    /// // lpm holds 198.18.1.0/24 -> 1 and 198.18.2.0/24 -> 2.
    /// let dsts = [[198, 18, 2, 5], [10, 0, 0, 1], [198, 18, 1, 5]].map(u32::from_be_bytes);
    /// let mut hops = [None; 3];
    /// lpm.lookup_bulk(&dsts, |i, hop| hops[i] = hop);
    /// assert_eq!(hops, [Some(2), None, Some(1)]);
    /// # Ok::<(), dpdk::DpdkError>(())
    /// ```
    #[inline(always)]
    pub fn lookup_bulk(&self, ips: &[u32], mut each: impl FnMut(usize, Option<u32>)) {
        in_chunks(
            ips,
            |ips, raw: &mut [u32]| {
                // SAFETY: ips and raw hold ips.len() elements (in_chunks);
                // the table is alive and only read.
                unsafe {
                    sys::shim_lpm_lookup_bulk(self.raw.as_ptr(), ips.as_ptr(), raw.as_mut_ptr(), ips.len() as u32)
                };
            },
            |i, h| each(i, (h & LPM_LOOKUP_SUCCESS != 0).then_some(h & LPM_NEXT_HOP_MASK)),
        );
    }

    /// Looks up one address (host order): its next hop, or None on a miss.
    ///
    /// rte_lpm's inline lookup (see `lookup_entry`). Lookups of a burst's
    /// addresses in a loop overlap in the CPU as the bulk call's do. Same
    /// answers as [`LpmTable::lookup_bulk`], DPDK's own code (tested equal
    /// in the `lpm` crate).
    #[inline(always)]
    pub fn lookup(&self, ip: u32) -> Option<u32> {
        // SAFETY: the table is alive (we borrow it).
        unsafe { lookup_entry(self.raw.as_ptr(), ip) }
    }

    /// [`LpmTable::lookup`] of each of `dsts`, eight at a time with the
    /// vector path `simd` names: the low 16 bits of each next hop found, or `miss`, into
    /// `out`, for as many as the shorter of the two has.
    #[inline(always)]
    pub fn lookup_simd(&self, simd: crate::Simd, dsts: &[u32], miss: u16, out: &mut [u16]) {
        // SAFETY: the table is alive (we borrow it).
        unsafe { lookup_entries(self.raw.as_ptr(), simd, dsts, miss, out) }
    }
}

impl Drop for LpmTable {
    fn drop(&mut self) {
        // SAFETY: the table is ours and no lookup can run (we hold &mut).
        unsafe { sys::rte_lpm_free(self.raw.as_ptr()) }
    }
}

/// An IPv4 LPM table built route by route with `rte_lpm_add`, then only
/// read (it dereferences to [`LpmTable`] for lookups).
///
/// ```
/// let eal = dpdk::Eal::for_tests(&[])?;
/// let mut lpm = dpdk::Lpm::new(eal, "doc_v4", 0, 16, 4)?;
/// lpm.add(u32::from_be_bytes([198, 18, 0, 0]), 16, 1)?;
/// lpm.add(u32::from_be_bytes([198, 18, 7, 0]), 24, 7)?;
/// // The longest matching prefix wins.
/// assert_eq!(lpm.lookup(u32::from_be_bytes([198, 18, 7, 9])), Some(7));
/// assert_eq!(lpm.lookup(u32::from_be_bytes([198, 18, 8, 9])), Some(1));
/// assert_eq!(lpm.lookup(u32::from_be_bytes([10, 0, 0, 1])), None);
/// # Ok::<(), dpdk::DpdkError>(())
/// ```
pub struct Lpm(LpmTable);

/// An IPv4 LPM table written whole by [`Lpm::filled`]: lookups only (it
/// dereferences to [`LpmTable`]). It keeps no rule list, so it has no
/// `add`:
///
/// ```compile_fail
/// # let eal = dpdk::Eal::for_tests(&[]).unwrap();
/// let mut lpm = dpdk::Lpm::filled(eal, "frozen", 0, 1, |_, _| {}).unwrap();
/// lpm.add(0x0a00_0000, 8, 1); // no such method
/// ```
pub struct FrozenLpm(LpmTable);

impl std::ops::Deref for Lpm {
    type Target = LpmTable;
    fn deref(&self) -> &LpmTable {
        &self.0
    }
}

impl std::ops::Deref for FrozenLpm {
    type Target = LpmTable;
    fn deref(&self) -> &LpmTable {
        &self.0
    }
}

impl Lpm {
    /// Creates an empty table for `max_rules` routes and `tbl8s` groups of
    /// second-level entries (one per /24 that holds longer prefixes), in
    /// the memory of NUMA `socket`. `name` must be unique in the process
    /// (DPDK keeps a list of tables by name).
    pub fn new(eal: &Eal, name: &str, socket: i32, max_rules: u32, tbl8s: u32) -> Result<Lpm> {
        LpmTable::create(eal, name, socket, Some(max_rules), tbl8s).map(Lpm)
    }

    /// Creates a table for lookups only, with `tbl8s` groups, and lets
    /// `fill` write its two tables directly: `tbl24` (2^24 entries, one per
    /// /24, through [`Tbl24`], which keeps every group reference inside the
    /// table) and `tbl8` (`tbl8s` groups of 256 entries, one per address of
    /// a /24). Both start all zero (no route). Entries are in rte_lpm's
    /// format:
    /// - bits 0-23: the next hop, or, with the group bit, a tbl8 group number;
    /// - bit 24: valid (an entry without it is a miss);
    /// - bit 25: group: in `tbl24`, the entry refers to a tbl8 group; in a
    ///   group's first `tbl8` entry, the group is in use;
    /// - bits 26-31: the depth of the route the entry holds.
    ///
    /// This is for large tables: rte_lpm_add keeps a rule list whose inserts
    /// scan every rule of the same depth (minutes for 1M routes). The table
    /// has no rule list, hence the [`FrozenLpm`], which cannot be added to.
    /// Fails if DPDK cannot create the table or `fill` wrote a `tbl24`
    /// entry referring to a group past `tbl8s`.
    ///
    /// ```
    /// let eal = dpdk::Eal::for_tests(&[])?;
    /// const VALID: u32 = 1 << 24;
    /// const GROUP: u32 = 1 << 25;
    /// let depth = |d: u32| d << 26;
    /// // 198.18.0.0/16 -> 1, and 198.18.7.128/25 -> 2 through tbl8 group 0.
    /// let lpm = dpdk::Lpm::filled(eal, "doc_filled", 0, 1, |tbl24, tbl8| {
    ///     let slash24 = |a: [u8; 4]| (u32::from_be_bytes(a) >> 8) as usize;
    ///     let first = slash24([198, 18, 0, 0]);
    ///     tbl24.fill(first..first + 256, VALID | depth(16) | 1);
    ///     tbl8[..256].fill(tbl24.get(slash24([198, 18, 7, 0]))); // the /16 covers the rest
    ///     tbl8[128..256].fill(VALID | depth(25) | 2);
    ///     tbl8[0] |= GROUP; // group 0 in use
    ///     tbl24.set(slash24([198, 18, 7, 0]), VALID | GROUP | 0);
    /// })?;
    /// assert_eq!(lpm.lookup(u32::from_be_bytes([198, 18, 7, 200])), Some(2));
    /// assert_eq!(lpm.lookup(u32::from_be_bytes([198, 18, 7, 1])), Some(1));
    /// assert_eq!(lpm.lookup(u32::from_be_bytes([10, 0, 0, 1])), None);
    /// # Ok::<(), dpdk::DpdkError>(())
    /// ```
    pub fn filled(
        eal: &Eal,
        name: &str,
        socket: i32,
        tbl8s: u32,
        fill: impl FnOnce(&mut Tbl24<'_>, &mut [u32]),
    ) -> Result<FrozenLpm> {
        let mut table = LpmTable::create(eal, name, socket, None, tbl8s)?;
        table.fill(name, tbl8s, fill)?;
        Ok(FrozenLpm(table))
    }

    /// Adds `ip/depth -> next_hop` (ip in host order; rte_lpm masks it).
    /// Adding a prefix again replaces its next hop. Next hops are 24-bit
    /// values in rte_lpm. Fails when `depth` is not 1..=32 or the table is
    /// out of rules or tbl8 groups.
    pub fn add(&mut self, ip: u32, depth: u8, next_hop: u32) -> Result<()> {
        // SAFETY: the table is alive and &mut self excludes concurrent lookups.
        let ret = unsafe { sys::rte_lpm_add(self.0.raw.as_ptr(), ip, depth, next_hop) };
        if ret < 0 {
            return Err(DpdkError::from_code("cannot add IPv4 route", ret));
        }
        Ok(())
    }
}

/// The first-level table of a table being filled by [`Lpm::filled`] or
/// [`LiveLpm::filled`] (one entry per /24, in the format described there).
/// Lookups index the tbl8 groups with what an entry holds, so every write
/// is checked to keep group references inside the table (checking on write
/// rather than scanning all 2^24 entries afterwards leaves the untouched
/// pages of a sparse table unmapped).
pub struct Tbl24<'a> {
    entries: &'a mut [u32],
    /// Which groups an entry refers to (one per group of the table).
    linked: Vec<bool>,
    refused: bool,
}

impl Tbl24<'_> {
    /// The entry of /24 number `i`.
    pub fn get(&self, i: usize) -> u32 {
        self.entries[i]
    }

    /// Sets the entries of the /24s in `range` to `entry`; an entry that
    /// refers to a group the table does not have is refused (and makes
    /// the fill fail).
    pub fn fill(&mut self, range: std::ops::Range<usize>, entry: u32) {
        if entry & LPM_VALID_GROUP == LPM_VALID_GROUP {
            match self.linked.get_mut((entry & LPM_NEXT_HOP_MASK) as usize) {
                Some(linked) => *linked = true,
                None => {
                    self.refused = true;
                    return;
                }
            }
        }
        self.entries[range].fill(entry);
    }

    /// Sets the entry of /24 number `i`, as [`Tbl24::fill`].
    pub fn set(&mut self, i: usize, entry: u32) {
        self.fill(i..i + 1, entry);
    }
}

/// What the tbl24 entry of a /24 holds in a [`LiveLpm`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Slot {
    /// An entry in rte_lpm's format (see [`Lpm::filled`]), valid or not.
    Entry(u32),
    /// The /24's addresses have their entries in this tbl8 group.
    Group(u32),
}

/// Every tbl8 group of the table (this many) is in use, even after a
/// grace period.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tbl8sFull(pub u32);

/// An IPv4 table changed in place while lcores read it: the writer's
/// handle, for the control thread alone. The lcores get [`LpmReader`]s.
///
/// The writer edits rte_lpm's two tables itself, entry by entry, as
/// rte_lpm_add and rte_lpm_delete would (the routes, and which entry
/// each one owns, are the caller's: the `lpm` crate keeps them). Every
/// store is atomic, so a lookup sees an entry before or after a change,
/// never half of one, and a change is visible to lookups as soon as the
/// call returns. The tbl8 groups are the writer's to hand out:
/// - [`LiveLpm::link_group`] fills a free group and only then links it,
///   with a release store that the lookup's acquire load pairs with;
/// - a group unlinked ([`LiveLpm::set_slot`] over it) may still be read by
///   an lcore in the middle of its poll round, so it waits for a grace
///   period of the lcores' QSBR variable before it is handed out again.
///
/// The writer is not `Sync`, and has no `Clone`: it cannot reach the lcores.
///
/// ```compile_fail
/// fn lcores_share<T: Sync>() {}
/// lcores_share::<dpdk::LiveLpm>();
/// ```
///
/// A reader has no writes:
///
/// ```compile_fail
/// # let eal = dpdk::Eal::for_tests(&[]).unwrap();
/// # let qsbr = std::sync::Arc::new(dpdk::Qsbr::new(1).unwrap());
/// let lpm = dpdk::LiveLpm::filled(eal, "doc_reader", 0, 4, &qsbr, |_, _| {}).unwrap();
/// lpm.reader().set_slot(0, 0); // no such method
/// ```
///
/// A group unlinked while an lcore is online waits for it:
///
/// ```
/// use std::sync::atomic::{AtomicBool, Ordering};
/// use std::sync::{mpsc, Arc};
/// use dpdk::{LiveLpm, Slot, Tbl8Groups};
/// let eal = dpdk::Eal::for_tests(&[])?;
/// let qsbr = Arc::new(dpdk::Qsbr::new(1)?);
/// let mut lpm = LiveLpm::filled(eal, "doc_live", 0, 1, &qsbr, |_, _| {})?; // one group
/// let reader = lpm.reader(); // what an lcore holds
/// let slash24 = (u32::from_be_bytes([198, 18, 7, 0]) >> 8) as usize;
/// let addr = u32::from_be_bytes([198, 18, 7, 130]);
/// let hop = |depth: u32, port: u32| 1 << 24 | depth << 26 | port;
/// // 198.18.7.128/25 -> 7; the rest of the /24 has no route.
/// let mut entries = [0; 256];
/// entries[128..].fill(hop(25, 7));
/// lpm.link_group(slash24, entries).unwrap();
/// assert_eq!((lpm.slot(slash24), reader.lookup(addr)), (Slot::Group(0), Some(7)));
///
/// // An lcore is online, in the middle of a poll round ...
/// let live = Arc::new(dpdk::Live::new(Arc::clone(&qsbr), ()));
/// let mut lcore = live.register(0)?;
/// let reported = Arc::new(AtomicBool::new(false));
/// let (online_tx, online_rx) = mpsc::channel();
/// let (go_tx, go_rx) = mpsc::channel();
/// let lcore_reported = Arc::clone(&reported);
/// let thread = std::thread::spawn(move || {
///     let mut online = lcore.online();
///     online_tx.send(()).unwrap();
///     go_rx.recv().unwrap();
///     std::thread::sleep(std::time::Duration::from_millis(100)); // still reading
///     lcore_reported.store(true, Ordering::SeqCst);
///     online.quiescent();
/// });
/// online_rx.recv().unwrap();
/// // ... when the /24 becomes one route: the group is unlinked at once,
/// lpm.set_slot(slash24, hop(24, 3)); // 198.18.7.0/24 -> 3
/// assert_eq!(reader.lookup(addr), Some(3));
/// assert_eq!(lpm.tbl8_groups(), Tbl8Groups { linked: 0, allocated: 1, total: 1 });
/// // but handed out again only after the lcore's quiescent state.
/// go_tx.send(()).unwrap();
/// lpm.link_group(slash24, entries).unwrap();
/// assert!(reported.load(Ordering::SeqCst));
/// thread.join().unwrap();
/// # Ok::<(), dpdk::DpdkError>(())
/// ```
pub struct LiveLpm {
    table: Arc<LpmTable>,
    groups: GroupPool,
    _not_sync: PhantomData<Cell<()>>,
}

/// The tbl8 groups of a table changed in place ([`LiveLpm`],
/// [`crate::LiveLpm6`]): which are free, and which were unlinked and wait
/// for a grace period of the lcores' QSBR variable before they are.
pub(crate) struct GroupPool {
    qsbr: Arc<Qsbr>,
    total: u32,
    /// Groups no entry refers to and no lcore can be reading.
    free: Vec<u32>,
    /// Groups unlinked, oldest first, each with the token of the grace
    /// period that must pass before it is free.
    retired: VecDeque<(u64, u32)>,
}

impl GroupPool {
    /// The `total` groups of a table read under `qsbr`, those of `free`
    /// free (handed out last first).
    pub(crate) fn new(qsbr: &Arc<Qsbr>, total: u32, free: Vec<u32>) -> GroupPool {
        GroupPool {
            qsbr: Arc::clone(qsbr),
            total,
            free,
            retired: VecDeque::new(),
        }
    }

    /// How many groups the table has.
    pub(crate) fn total(&self) -> u32 {
        self.total
    }

    /// How many groups [`GroupPool::take`] can give, some after a wait.
    pub(crate) fn available(&self) -> usize {
        self.free.len() + self.retired.len()
    }

    /// How the groups are used.
    pub(crate) fn usage(&self) -> Tbl8Groups {
        let allocated = self.total - self.free.len() as u32;
        Tbl8Groups {
            linked: allocated - self.retired.len() as u32,
            allocated,
            total: self.total,
        }
    }

    /// An unlinked group, free once the lcores online now have each
    /// reported a quiescent state: until then one may be reading it.
    pub(crate) fn retire(&mut self, group: u32) {
        self.retired.push_back((self.qsbr.start(), group));
    }

    /// A group no entry refers to and no lcore reads: a free one, or else
    /// one whose grace period has passed (waiting for it if none has).
    pub(crate) fn take(&mut self) -> Option<u32> {
        if self.free.is_empty() {
            // Tokens grow: the groups retired first are free first.
            let mut due = self.retired.iter().take_while(|(t, _)| self.qsbr.passed(*t)).count();
            if let (0, Some(&(last, _))) = (due, self.retired.back()) {
                self.qsbr.wait_for_readers_from(last);
                due = self.retired.len();
            }
            self.free.extend(self.retired.drain(..due).map(|(_, g)| g));
        }
        self.free.pop()
    }
}

/// A lookup handle of a [`LiveLpm`] or a [`FrozenLpm`], for the lcores:
/// lookups only. Keeps the table alive.
#[derive(Clone)]
pub struct LpmReader {
    /// The table's pointer, copied out of `table`: one load less per
    /// lookup than going through the `Arc`.
    raw: NonNull<sys::rte_lpm>,
    table: Arc<LpmTable>,
}

// SAFETY: lookups only (LpmTable is Send + Sync; `raw` is its pointer).
unsafe impl Send for LpmReader {}
// SAFETY: as for Send.
unsafe impl Sync for LpmReader {}

impl LpmReader {
    /// As [`LpmTable::lookup`].
    #[inline(always)]
    pub fn lookup(&self, ip: u32) -> Option<u32> {
        // SAFETY: `table` keeps the table alive.
        unsafe { lookup_entry(self.raw.as_ptr(), ip) }
    }

    /// As [`LpmTable::lookup_simd`].
    #[inline(always)]
    pub fn lookup_simd(&self, simd: crate::Simd, dsts: &[u32], miss: u16, out: &mut [u16]) {
        // SAFETY: `table` keeps the table alive.
        unsafe { lookup_entries(self.raw.as_ptr(), simd, dsts, miss, out) }
    }

    /// The table, for bulk lookups.
    pub fn table(&self) -> &LpmTable {
        &self.table
    }
}

impl From<FrozenLpm> for LpmReader {
    fn from(frozen: FrozenLpm) -> LpmReader {
        let table = Arc::new(frozen.0);
        LpmReader { raw: table.raw, table }
    }
}

/// The tbl8 groups of a [`LiveLpm`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tbl8Groups {
    /// Groups tbl24 refers to: those the routes use.
    pub linked: u32,
    /// Groups taken: the linked ones and those unlinked that wait for a
    /// grace period.
    pub allocated: u32,
    /// Groups the table has.
    pub total: u32,
}

impl LiveLpm {
    /// Creates a table of `tbl8s` groups written first by `fill`, as
    /// [`Lpm::filled`] describes, to be changed in place. Its unlinked
    /// groups wait for grace periods of `qsbr`, the variable of the lcores
    /// that read it.
    pub fn filled(
        eal: &Eal,
        name: &str,
        socket: i32,
        tbl8s: u32,
        qsbr: &Arc<Qsbr>,
        fill: impl FnOnce(&mut Tbl24<'_>, &mut [u32]),
    ) -> Result<LiveLpm> {
        let mut table = LpmTable::create(eal, name, socket, None, tbl8s)?;
        let linked = table.fill(name, tbl8s, fill)?;
        Ok(LiveLpm {
            table: Arc::new(table),
            groups: GroupPool::new(qsbr, tbl8s, (0..tbl8s).rev().filter(|&g| !linked[g as usize]).collect()),
            _not_sync: PhantomData,
        })
    }

    /// A handle for lookups.
    pub fn reader(&self) -> LpmReader {
        LpmReader {
            raw: self.table.raw,
            table: Arc::clone(&self.table),
        }
    }

    /// tbl24's 2^24 entries and tbl8's groups, as the lookups read them.
    fn tables(&self) -> (&[AtomicU32], &[AtomicU32]) {
        let lpm = self.table.raw.as_ptr();
        // SAFETY: the table is alive (`self.table`); its tbl24 holds 2^24
        // entries and tbl8 `tbl8s` groups; AtomicU32 has u32's layout, and
        // every access to the entries while lcores read is atomic (their
        // lookups, this writer's stores).
        unsafe {
            (
                std::slice::from_raw_parts(std::ptr::addr_of!((*lpm).tbl24).cast::<AtomicU32>(), 1 << 24),
                std::slice::from_raw_parts(
                    (*lpm).tbl8.cast::<AtomicU32>(),
                    self.groups.total() as usize * TBL8_GROUP_ENTRIES as usize,
                ),
            )
        }
    }

    /// What /24 number `slash24` (below 2^24) holds.
    pub fn slot(&self, slash24: usize) -> Slot {
        match self.tables().0[slash24].load(Ordering::Relaxed) {
            e if e & LPM_VALID_GROUP == LPM_VALID_GROUP => Slot::Group(e & LPM_NEXT_HOP_MASK),
            e => Slot::Entry(e),
        }
    }

    /// Sets /24 number `slash24` to `entry` (its group bit ignored). A
    /// group the /24 had is unlinked, to be free after a grace period.
    pub fn set_slot(&mut self, slash24: usize, entry: u32) {
        self.replace_slot(slash24, entry & !LPM_GROUP);
    }

    /// Stores `entry` into /24 number `slash24`, releasing what was
    /// written before it; a group the /24 had is retired.
    fn replace_slot(&mut self, slash24: usize, entry: u32) {
        let old = self.tables().0[slash24].swap(entry, Ordering::Release);
        if old & LPM_VALID_GROUP == LPM_VALID_GROUP {
            self.groups.retire(old & LPM_NEXT_HOP_MASK);
        }
    }

    /// Entry `i` of tbl8 group `group` (below the table's count).
    pub fn group_entry(&self, group: u32, i: u8) -> u32 {
        self.group_cell(group, i).load(Ordering::Relaxed) & !LPM_GROUP
    }

    /// Sets entry `i` of tbl8 group `group`, a group a /24 links (the
    /// group's in-use bit, in its first entry, is kept).
    pub fn set_group_entry(&mut self, group: u32, i: u8, entry: u32) {
        let cell = self.group_cell(group, i);
        let in_use = cell.load(Ordering::Relaxed) & LPM_GROUP;
        cell.store(entry & !LPM_GROUP | in_use, Ordering::Relaxed);
    }

    fn group_cell(&self, group: u32, i: u8) -> &AtomicU32 {
        &self.tables().1[(group * TBL8_GROUP_ENTRIES) as usize + usize::from(i)]
    }

    /// Puts the entries of /24 number `slash24`, one per address, into a
    /// free group, marked in use as rte_lpm marks its groups, and links it
    /// from the /24 (a group the /24 had is unlinked). When every group is
    /// taken, waits for the grace period of those unlinked, if any.
    pub fn link_group(&mut self, slash24: usize, entries: [u32; 256]) -> std::result::Result<(), Tbl8sFull> {
        let group = self.groups.take().ok_or(Tbl8sFull(self.groups.total()))?;
        let cells = &self.tables().1[(group * TBL8_GROUP_ENTRIES) as usize..][..entries.len()];
        for (cell, &entry) in cells.iter().zip(&entries) {
            cell.store(entry & !LPM_GROUP, Ordering::Relaxed);
        }
        cells[0].fetch_or(LPM_GROUP, Ordering::Relaxed);
        self.replace_slot(slash24, LPM_VALID_GROUP | group);
        Ok(())
    }

    /// How the tbl8 groups are used.
    pub fn tbl8_groups(&self) -> Tbl8Groups {
        self.groups.usage()
    }
}
