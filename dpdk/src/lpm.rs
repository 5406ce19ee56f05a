//! rte_lpm (IPv4) and rte_lpm6 (IPv6) longest-prefix-match tables.
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
//! - [`LiveLpm`]: changed in place by the control thread while lcores read
//!   it through [`LpmReader`]s, under RCU QSBR (see [`LiveLpm`]).
//!
//! rte_lpm6 tables are built through `&mut self` on one thread, then shared
//! read-only (`&self`) by every lcore.

use std::cell::Cell;
use std::ffi::CString;
use std::marker::PhantomData;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

use crate::eal::Eal;
use crate::error::{clear_errno, DpdkError, Result};
use crate::hash;
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
    /// The QSBR variable of a [`LiveLpm`]'s defer queue, which the table
    /// uses until it is freed (dropped after it: fields drop after `drop`).
    _rcu: Option<Arc<Qsbr>>,
    _eal: Eal,
}

// SAFETY: lookups only read the tables, which rte_lpm supports from any
// number of threads, with atomic loads (see `lookup_entry`); changes need
// &mut (through Lpm) or the one LiveLpm, whose rte_lpm writes are atomic
// stores.
unsafe impl Send for LpmTable {}
// SAFETY: as above: &LpmTable only allows lookups.
unsafe impl Sync for LpmTable {}

/// rte_lpm_lookup, which C inlines from `rte_lpm.h`, written here: one read
/// of the /24's entry and, for a /24 holding longer prefixes, one of its
/// tbl8 group, with no call. Each read is one atomic load (a plain `mov`
/// on x86), since a [`LiveLpm`] is written while it is read: the tbl24
/// load acquires what rte_lpm_add released when it linked a filled group.
///
/// # Safety
/// `lpm` is a live rte_lpm table, which stays alive during the call.
#[inline(always)]
unsafe fn lookup_entry(lpm: *const sys::rte_lpm, ip: u32) -> Option<u32> {
    // SAFETY: tbl24 holds 2^24 entries and `ip >> 8` is below that; an
    // entry with both the valid and the group bit names a tbl8 group below
    // the table's count (rte_lpm_add keeps that invariant, and Lpm::filled
    // refuses any other entry through Tbl24), so the group entry read is
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

/// EAL memory of a first level of 2^24 4-byte entries and `tbl8s` groups
/// of 256 more: the bulk of rte_lpm, rte_lpm6, rte_fib and rte_fib6 (4-byte
/// next hops; DPDK 22.11).
pub(crate) fn dir24_8_memory(tbl8s: u32) -> u64 {
    const ENTRY: u64 = 4;
    ((1 << 24) + 256 * u64::from(tbl8s)) * ENTRY
}

fn c_name(name: &str) -> Result<CString> {
    CString::new(name).map_err(|_| DpdkError::invalid("table name", "contains a NUL byte"))
}

impl LpmTable {
    fn create(eal: &Eal, name: &str, socket: i32, max_rules: u32, tbl8s: u32) -> Result<LpmTable> {
        let cname = c_name(name)?;
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
            DpdkError::from_allocation(
                format_args!("cannot create LPM table {name} of {max_rules} rules and {tbl8s} tbl8 groups"),
                bytes,
            )
        })?;
        Ok(LpmTable {
            raw,
            _rcu: None,
            _eal: eal.clone(),
        })
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
    /// # let eal = dpdk::Eal::for_tests(256, &[])?;
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
/// let eal = dpdk::Eal::for_tests(256, &[])?;
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
/// # let eal = dpdk::Eal::for_tests(256, &[]).unwrap();
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
        LpmTable::create(eal, name, socket, max_rules, tbl8s).map(Lpm)
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
    /// let eal = dpdk::Eal::for_tests(256, &[])?;
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
        const TBL24_ENTRIES: usize = 1 << 24;
        const GROUP_ENTRIES: usize = sys::RTE_LPM_TBL8_GROUP_NUM_ENTRIES as usize;
        let table = LpmTable::create(eal, name, socket, 1, tbl8s)?;
        let raw = table.raw.as_ptr();
        // SAFETY: rte_lpm_create allocated (and zeroed) the 2^24 tbl24
        // entries inside the table and `tbl8s` groups of tbl8 entries behind
        // its tbl8 pointer; entries are 4-byte bitfields, for which any u32
        // is valid (rte_lpm's own lookups read them as u32s). The table is
        // not shared yet: nothing else touches it while the slices live, and
        // they end before `table` is returned or dropped.
        let (entries, tbl8) = unsafe {
            (
                std::slice::from_raw_parts_mut(std::ptr::addr_of_mut!((*raw).tbl24).cast::<u32>(), TBL24_ENTRIES),
                std::slice::from_raw_parts_mut((*raw).tbl8.cast::<u32>(), tbl8s as usize * GROUP_ENTRIES),
            )
        };
        let mut tbl24 = Tbl24 {
            entries,
            tbl8s,
            refused: false,
        };
        fill(&mut tbl24, tbl8);
        if tbl24.refused {
            return Err(DpdkError::invalid(
                format!("LPM table {name}"),
                "a tbl24 entry points past the tbl8 groups",
            ));
        }
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

/// The first-level table of an [`Lpm`] being filled by [`Lpm::filled`]
/// (one entry per /24, in the format described there).
/// Lookups index the tbl8 groups with what an entry holds, so every write
/// is checked to keep group references inside the table (checking on write
/// rather than scanning all 2^24 entries afterwards leaves the untouched
/// pages of a sparse table unmapped).
pub struct Tbl24<'a> {
    entries: &'a mut [u32],
    tbl8s: u32,
    refused: bool,
}

impl Tbl24<'_> {
    /// The entry of /24 number `i`.
    pub fn get(&self, i: usize) -> u32 {
        self.entries[i]
    }

    /// Sets the entries of the /24s in `range` to `entry`; an entry that
    /// refers to a group the table does not have is refused (and makes
    /// [`Lpm::filled`] fail).
    pub fn fill(&mut self, range: std::ops::Range<usize>, entry: u32) {
        if entry & LPM_VALID_GROUP == LPM_VALID_GROUP && entry & LPM_NEXT_HOP_MASK >= self.tbl8s {
            self.refused = true;
            return;
        }
        self.entries[range].fill(entry);
    }

    /// Sets the entry of /24 number `i`, as [`Tbl24::fill`].
    pub fn set(&mut self, i: usize, entry: u32) {
        self.fill(i..i + 1, entry);
    }
}

/// An IPv4 table changed in place while lcores read it: the writer's
/// handle, for the control thread alone. The lcores get [`LpmReader`]s.
///
/// rte_lpm writes each entry with one atomic store, so a lookup sees an
/// entry before or after a change, never half of one; a change is visible
/// to lookups as soon as `add` or `delete` returns. What readers could
/// still be in the middle of is a tbl8 group a delete frees: rte_lpm puts
/// it in a defer queue on the lcores' QSBR variable (`rte_lpm_rcu_qsbr_add`,
/// DQ mode) and reuses it only after a grace period. The table holds an
/// `Arc` of that variable, which it uses until it is freed.
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
/// # let eal = dpdk::Eal::for_tests(256, &[]).unwrap();
/// # let qsbr = std::sync::Arc::new(dpdk::Qsbr::new(1).unwrap());
/// let lpm = dpdk::LiveLpm::new(eal, "doc_reader", 0, 16, 4, &qsbr).unwrap();
/// lpm.reader().add(0x0a00_0000, 8, 1); // no such method
/// ```
///
/// ```
/// let eal = dpdk::Eal::for_tests(256, &[])?;
/// let qsbr = std::sync::Arc::new(dpdk::Qsbr::new(1)?);
/// let mut lpm = dpdk::LiveLpm::new(eal, "doc_live", 0, 16, 4, &qsbr)?;
/// let reader = lpm.reader(); // what an lcore holds
/// let net = u32::from_be_bytes([198, 18, 7, 0]);
/// lpm.add(net, 25, 7)?;
/// assert_eq!(reader.lookup(net + 1), Some(7));
/// assert_eq!(lpm.tbl8_groups(), dpdk::Tbl8Groups { linked: 1, allocated: 1, total: 4 });
/// assert!(lpm.delete(net, 25)?);
/// assert!(!lpm.delete(net, 25)?); // not there any more
/// assert_eq!(reader.lookup(net + 1), None);
/// // The group waits in the defer queue until a grace period has passed.
/// assert_eq!(lpm.tbl8_groups().linked, 0);
/// # Ok::<(), dpdk::DpdkError>(())
/// ```
pub struct LiveLpm {
    table: Arc<LpmTable>,
    qsbr: Arc<Qsbr>,
    max_rules: u32,
    tbl8s: u32,
    _not_sync: PhantomData<Cell<()>>,
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
    /// Groups taken: the linked ones and those freed by deletes that wait
    /// in the defer queue for a grace period.
    pub allocated: u32,
    /// Groups the table has.
    pub total: u32,
}

/// Why [`LiveLpm::add`] refused a route.
#[derive(Debug)]
pub enum AddError {
    /// Every rule is taken.
    Rules(u32),
    /// Every tbl8 group is taken, even after a grace period.
    Tbl8s(u32),
    /// Any other refusal.
    Dpdk(DpdkError),
}

impl From<AddError> for DpdkError {
    fn from(e: AddError) -> DpdkError {
        match e {
            AddError::Rules(_) | AddError::Tbl8s(_) => {
                DpdkError::from_code("cannot add IPv4 route", -(sys::ENOSPC as i32))
            }
            AddError::Dpdk(e) => e,
        }
    }
}

impl LiveLpm {
    /// Creates an empty table, as [`Lpm::new`], whose freed tbl8 groups
    /// wait in a defer queue on `qsbr`, the variable of the lcores that
    /// read it, before they are reused.
    pub fn new(eal: &Eal, name: &str, socket: i32, max_rules: u32, tbl8s: u32, qsbr: &Arc<Qsbr>) -> Result<LiveLpm> {
        let mut table = LpmTable::create(eal, name, socket, max_rules, tbl8s)?;
        let mut config = sys::rte_lpm_rcu_config {
            v: qsbr.raw(),
            mode: sys::rte_lpm_qsbr_mode_RTE_LPM_QSBR_MODE_DQ,
            // 0: DPDK's defaults (a queue of number_tbl8s entries).
            dq_size: 0,
            // Reclaim at every free whatever a grace period has released.
            reclaim_thd: 0,
            reclaim_max: 0,
        };
        // SAFETY: the table is ours and not shared yet; the QSBR variable
        // is initialised and outlives the table (`_rcu` below).
        let rc = unsafe { sys::rte_lpm_rcu_qsbr_add(table.raw.as_ptr(), &mut config) };
        if rc != 0 {
            return Err(DpdkError::from_code(
                format!("cannot attach LPM table {name} to RCU"),
                rc,
            ));
        }
        table._rcu = Some(Arc::clone(qsbr));
        Ok(LiveLpm {
            table: Arc::new(table),
            qsbr: Arc::clone(qsbr),
            max_rules,
            tbl8s,
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

    /// Adds `ip/depth -> next_hop` (host order), or replaces the next hop
    /// of the prefix, in place: lookups see it on return. A refused route
    /// changes nothing. When the groups are used up, waits for one grace
    /// period (the groups of earlier deletes may be waiting for it) and
    /// tries once more.
    pub fn add(&mut self, ip: u32, depth: u8, next_hop: u32) -> std::result::Result<(), AddError> {
        let add = || {
            // SAFETY: the table is alive; this handle is its only writer
            // (&mut self, not Clone); rte_lpm's writes are atomic stores.
            unsafe { sys::rte_lpm_add(self.table.raw.as_ptr(), ip, depth, next_hop) }
        };
        let mut ret = add();
        if ret == -(sys::ENOSPC as i32) && self.needs_group(ip, depth) {
            self.qsbr.synchronize();
            ret = add();
        }
        match ret {
            0.. => Ok(()),
            ret if ret == -(sys::ENOSPC as i32) => {
                let out_of_groups = self.needs_group(ip, depth) && self.tbl8_groups().allocated == self.tbl8s;
                Err(match out_of_groups {
                    true => AddError::Tbl8s(self.tbl8s),
                    false => AddError::Rules(self.max_rules),
                })
            }
            ret => Err(AddError::Dpdk(DpdkError::from_code("cannot add IPv4 route", ret))),
        }
    }

    /// Deletes the route `ip/depth` (host order) in place; `false` if the
    /// table has no such route.
    pub fn delete(&mut self, ip: u32, depth: u8) -> Result<bool> {
        if !(1..=32).contains(&depth) {
            return Err(DpdkError::invalid(
                "cannot delete IPv4 route",
                format!("depth {depth} is not 1..=32"),
            ));
        }
        // SAFETY: as in `add`.
        match unsafe { sys::rte_lpm_delete(self.table.raw.as_ptr(), ip, depth) } {
            0 => Ok(true),
            // The depth is valid: rte_lpm found no such rule.
            ret if ret == -(sys::EINVAL as i32) => Ok(false),
            ret => Err(DpdkError::from_code("cannot delete IPv4 route", ret)),
        }
    }

    /// How the tbl8 groups are used, counted from the tables (a scan of
    /// tbl24, some milliseconds).
    pub fn tbl8_groups(&self) -> Tbl8Groups {
        let lpm = self.table.raw.as_ptr();
        let total = self.tbl8s;
        // SAFETY: the table is alive; its tbl24 holds 2^24 entries and tbl8
        // `total` groups, read as atomics as lookups do (this thread is the
        // only writer, so nothing changes during the scan anyway).
        let (tbl24, tbl8) = unsafe {
            (
                std::slice::from_raw_parts(std::ptr::addr_of!((*lpm).tbl24).cast::<AtomicU32>(), 1 << 24),
                std::slice::from_raw_parts((*lpm).tbl8.cast::<AtomicU32>(), (total * TBL8_GROUP_ENTRIES) as usize),
            )
        };
        let count = |it: &mut dyn Iterator<Item = bool>| it.filter(|&b| b).count() as u32;
        Tbl8Groups {
            linked: count(
                &mut tbl24
                    .iter()
                    .map(|e| e.load(Ordering::Relaxed) & LPM_VALID_GROUP == LPM_VALID_GROUP),
            ),
            allocated: count(
                &mut tbl8
                    .iter()
                    .step_by(TBL8_GROUP_ENTRIES as usize)
                    .map(|e| e.load(Ordering::Relaxed) & LPM_GROUP != 0),
            ),
            total,
        }
    }

    /// Whether a route `ip/depth` would take a new tbl8 group: longer than
    /// /24, in a /24 that has none.
    fn needs_group(&self, ip: u32, depth: u8) -> bool {
        let lpm = self.table.raw.as_ptr();
        // SAFETY: the table is alive; `ip >> 8` is below tbl24's 2^24 entries.
        let entry = unsafe {
            (*std::ptr::addr_of!((*lpm).tbl24)
                .cast::<AtomicU32>()
                .add((ip >> 8) as usize))
            .load(Ordering::Relaxed)
        };
        depth > 24 && entry & LPM_VALID_GROUP != LPM_VALID_GROUP
    }
}

/// An IPv6 LPM table. Built on one thread, then only read.
///
/// ```
/// let eal = dpdk::Eal::for_tests(256, &[])?;
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
        let ret = unsafe { sys::rte_lpm6_add(self.raw.as_ptr(), ip.as_ptr(), depth, next_hop) };
        if ret < 0 {
            return Err(DpdkError::from_code("cannot add IPv6 route", ret));
        }
        Ok(())
    }

    /// Looks up every address of `ips` in bulk calls and hands `each` the
    /// index of the address and its next hop, or None for a miss, as
    /// [`LpmTable::lookup_bulk`] does.
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
                        ips.as_ptr() as *mut [u8; 16],
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
