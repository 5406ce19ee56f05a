//! rte_fib (IPv4, DIR-24-8) and rte_fib6 (IPv6, a trie of 8-bit levels
//! below a 24-bit first level) forwarding tables.
//!
//! Unlike rte_lpm, a FIB keeps its routes in a RIB (a binary tree) beside
//! the lookup tables, so adding a route costs a tree insert rather than a
//! scan of every rule of its depth, and a lookup answers a configured
//! default next hop on a miss. Here the default is a value no route can
//! carry, so lookups answer None on a miss. Built through `&mut self` on
//! one thread, then shared read-only (`&self`): lookups only read.
//!
//! rte_fib and rte_fib6 have no one-address lookup, only bulk calls
//! through a function pointer. [`Fib::lookup`] and [`Fib6::lookup`] read
//! their tables themselves instead, as [`crate::LpmTable::lookup`] does
//! rte_lpm's.
//!
//! From 24.11 (IPv4) and 25.11 (IPv6) a FIB also changes in place while
//! lcores read it: see [`LiveFib`].

mod live;

pub use live::{FibReader, FibTable, LiveFib, Tbl8Use};

use std::ffi::{c_void, CString};
use std::ptr::{addr_of, NonNull};
use std::sync::atomic::{AtomicU32, Ordering};

use crate::eal::Eal;
use crate::error::{clear_errno, DpdkError, Result};
use crate::lpm::dir24_8_memory;
use crate::lpm::in_chunks;
use crate::sys;

/// The next hop a lookup answers when no route matches: the largest a
/// 4-byte next hop can be (one bit of each entry is the library's), above
/// any next hop [`Fib::add`] and [`Fib6::add`] take.
const NO_ROUTE: u64 = (1 << 31) - 1;

fn c_name(name: &str) -> Result<CString> {
    CString::new(name).map_err(|_| DpdkError::invalid("FIB name", "contains a NUL byte"))
}

/// EAL memory an rte_fib (DIR-24-8) or rte_fib6 (trie) takes (DPDK
/// 22.11's dir24_8.c, trie.c, rte_rib): the tables with one group more
/// than asked and a 4-byte index per group, and two RIB nodes per route,
/// each 128 bytes in its mempool (header and node, each cache-line
/// aligned).
fn eal_memory(max_routes: u32, tbl8s: u32) -> u64 {
    const RIB_NODE: u64 = 128;
    dir24_8_memory(tbl8s.saturating_add(1)) + 4 * u64::from(tbl8s) + 2 * RIB_NODE * u64::from(max_routes)
}

fn check_hop(next_hop: u64) -> Result<()> {
    if next_hop < NO_ROUTE {
        Ok(())
    } else {
        Err(DpdkError::invalid(format!("next hop {next_hop}"), "too large"))
    }
}

fn hop(raw: u64) -> Option<u64> {
    (raw != NO_ROUTE).then_some(raw)
}

/// The head of rte_fib's DIR-24-8 tables, what `rte_fib_get_dp` points
/// at: `struct dir24_8_tbl` of DPDK's private `lib/fib/dir24_8.h`, which
/// gained [`RcuPointers`] (and its mode) in 24.11 (`cfg(dpdk_ge_2411)`, the build's DPDK
/// release: `build/version.rs`). Being private, it may differ in a release
/// not yet read: [`Dir24_8::of`] checks the head and [`Fib::new`] a
/// probe's lookups before anything relies on it, and a mismatch falls back
/// to DPDK's own lookup.
///
/// An entry (4 bytes here) holds a value shifted left by one above the ext
/// bit: in `tbl24`, with the bit clear, the /24's next hop; with it set,
/// the number of the /24's group of 256 entries in `tbl8`, whose entries
/// hold next hops (and the ext bit, which lookups ignore).
#[repr(C)]
struct Dir24_8 {
    number_tbl8s: u32,
    rsvd_tbl8s: u32,
    cur_tbl8s: u32,
    nh_sz: sys::rte_fib_dir24_8_nh_sz,
    #[cfg(dpdk_ge_2411)]
    rcu_mode: u32,
    #[cfg(dpdk_ge_2411)]
    rcu: RcuPointers,
    def_nh: u64,
    tbl8: *const u32,
    tbl8_idxes: *const u64,
    /// 2^24 entries, one per /24, from the next cache line on.
    tbl24: CacheAligned<[u32; 0]>,
}

/// The RCU fields rte_fib's private heads gained with
/// `rte_fib_rcu_qsbr_add` (DIR-24-8 in 24.11, the trie in 25.11): the mode
/// enum (a field of the head, packed after the field before it) and then
/// these, the QSBR variable and defer queue pointers.
#[cfg(dpdk_ge_2411)]
#[repr(C)]
struct RcuPointers {
    v: *const c_void,
    dq: *const c_void,
}

#[cfg(dpdk_ge_2411)]
impl RcuPointers {
    /// No RCU attached (`mode` 0, pointers null), as in a FIB just created.
    fn is_unset(&self, mode: u32) -> bool {
        mode == 0 && self.v.is_null() && self.dq.is_null()
    }

    /// The defer queue, if the fields read back `qsbr` attached in
    /// defer-queue mode (0 in both libraries' mode enums).
    fn queue_of(&self, mode: u32, qsbr: *const sys::rte_rcu_qsbr) -> Option<NonNull<sys::rte_rcu_qsbr_dq>> {
        (mode == 0 && self.v == qsbr.cast()).then_some(())?;
        NonNull::new(self.dq.cast_mut().cast())
    }
}

// Where DPDK's dir24_8.h and trie.h put the pointers (x86-64).
#[cfg(dpdk_ge_2411)]
const _: () = assert!(std::mem::offset_of!(Dir24_8, rcu) == 24);
#[cfg(dpdk_ge_2511)]
const _: () = assert!(std::mem::offset_of!(Trie, rcu) == 56);

#[repr(C, align(64))]
struct CacheAligned<T>(T);

const _: () = assert!(std::mem::align_of::<CacheAligned<()>>() == sys::RTE_CACHE_LINE_SIZE as usize);

/// Where tbl24 starts in a head `T`: the cache line after its fields,
/// which is `T`'s size as its tail is the cache-aligned `tbl24`.
const fn tbl24_offset<T>() -> usize {
    std::mem::size_of::<T>()
}

const _: () = assert!(std::mem::offset_of!(Dir24_8, tbl24) == tbl24_offset::<Dir24_8>());

/// The ext bit of a DIR-24-8 or trie entry.
const EXT_ENT: u32 = 1;
/// How rte_fib's DIR-24-8 entries keep a group (above the ext bit), a hop
/// (likewise; NO_ROUTE where none), for the vector lookups.
#[cfg(target_arch = "x86_64")]
struct FibEntry;

#[cfg(target_arch = "x86_64")]
impl crate::simd::Dir24_8Entry for FibEntry {
    const GROUP_BITS: u32 = EXT_ENT;
    const GROUP_SHIFT: u32 = 1;
    const GROUP_MASK: u32 = u32::MAX >> 1;
    const FOUND_BITS: u32 = !EXT_ENT;
    const ABSENT: u32 = (NO_ROUTE as u32) << 1;
    const HOP_SHIFT: u32 = 1;
}

/// Entries of a tbl8 group.
const TBL8_GROUP_ENTRIES: usize = 256;

/// `dp` as a `T`, the mirror of its head, if `matches` accepts the head
/// and the first tbl24 entry as read through `T`.
///
/// # Safety
///
/// `dp` is null or what `rte_fib_get_dp` / `rte_fib6_get_dp` gave for a
/// FIB with 4-byte next hops that nobody else uses yet: one cache-aligned
/// allocation of DPDK's head and 2^24 tbl24 entries of 4 bytes or more.
/// `T` is a `repr(C)` struct of integers and raw pointers ending in its
/// cache-aligned `tbl24` ([`tbl24_offset`]).
unsafe fn recognise<T>(dp: *mut c_void, matches: impl FnOnce(&T, u32) -> bool) -> Option<NonNull<T>> {
    let dp = NonNull::new(dp.cast::<T>())?;
    // SAFETY: whatever the head's real layout, the first cache line and
    // the entry after it are inside the allocation, aligned for T and u32,
    // and any bits are valid for T's integers and pointers (the caller's
    // word). Nothing writes the new FIB meanwhile.
    let (head, first) = unsafe {
        let p = dp.as_ptr();
        (p.read(), p.cast::<u8>().add(tbl24_offset::<T>()).cast::<u32>().read())
    };
    matches(&head, first).then_some(dp)
}

impl Dir24_8 {
    /// No RCU attached (always so before 24.11, which has none).
    fn rcu_unset(&self) -> bool {
        #[cfg(dpdk_ge_2411)]
        return self.rcu.is_unset(self.rcu_mode);
        #[cfg(not(dpdk_ge_2411))]
        true
    }

    /// The tables of `fib`, just created with `tbl8s` groups, if their
    /// head reads back that configuration (DPDK rounds the groups up to a
    /// multiple of 64, the slabs of its bitmap of free groups) and the
    /// first tbl24 entry is the default next hop.
    fn of(fib: NonNull<sys::rte_fib>, tbl8s: u32) -> Option<NonNull<Dir24_8>> {
        // SAFETY: fib is alive and new, made with 4-byte next hops;
        // rte_fib_get_dp only reads it. Dir24_8 is as recognise wants it
        // (the asserts above).
        unsafe {
            recognise(sys::rte_fib_get_dp(fib.as_ptr()), |head: &Dir24_8, first| {
                head.number_tbl8s == tbl8s.next_multiple_of(64)
                    && (head.rsvd_tbl8s, head.cur_tbl8s) == (0, 0)
                    && head.nh_sz == sys::rte_fib_dir24_8_nh_sz_RTE_FIB_DIR24_8_4B
                    && head.def_nh == NO_ROUTE
                    && !head.tbl8.is_null()
                    && !head.tbl8_idxes.is_null()
                    && head.rcu_unset()
                    && u64::from(first) == NO_ROUTE << 1
            })
        }
    }
}

/// An IPv4 FIB (`RTE_FIB_DIR24_8`, 4-byte next hops).
///
/// ```
/// let eal = dpdk::Eal::for_tests(&[])?;
/// let mut fib = dpdk::Fib::new(eal, "doc_fib", 0, 16, 16)?;
/// fib.add(u32::from_be_bytes([198, 18, 0, 0]), 16, 1)?;
/// fib.add(u32::from_be_bytes([198, 18, 7, 128]), 25, 2)?;
/// let dsts = [[198, 18, 7, 200], [198, 18, 7, 1], [10, 0, 0, 1]].map(u32::from_be_bytes);
/// let mut hops = [None; 3];
/// fib.lookup_bulk(&dsts, |i, hop| hops[i] = hop);
/// assert_eq!(hops, [Some(2), Some(1), None]);
/// assert_eq!(dsts.map(|dst| fib.lookup(dst)), hops);
/// # Ok::<(), dpdk::DpdkError>(())
/// ```
pub struct Fib {
    raw: NonNull<sys::rte_fib>,
    /// Its tables, for [`Fib::lookup`]; None if their layout is not the
    /// one [`Dir24_8`] mirrors.
    tables: Option<NonNull<Dir24_8>>,
    _eal: Eal,
}

// SAFETY: lookups only read the tables, which rte_fib supports from any
// number of threads; changes need &mut.
unsafe impl Send for Fib {}
// SAFETY: as above: &Fib only allows lookups.
unsafe impl Sync for Fib {}

impl Fib {
    /// Creates an empty FIB for `max_routes` routes and `tbl8s` groups of
    /// second-level entries (one per /24 holding longer prefixes) on
    /// `socket`. `name` must be unique in the process.
    pub fn new(eal: &Eal, name: &str, socket: i32, max_routes: u32, tbl8s: u32) -> Result<Fib> {
        let cname = c_name(name)?;
        let mut conf = sys::rte_fib_conf {
            type_: sys::rte_fib_type_RTE_FIB_DIR24_8,
            default_nh: NO_ROUTE,
            max_routes: i32::try_from(max_routes).unwrap_or(i32::MAX),
            rib_ext_sz: 0,
            ..Default::default()
        };
        conf.__bindgen_anon_1.dir24_8.nh_sz = sys::rte_fib_dir24_8_nh_sz_RTE_FIB_DIR24_8_4B;
        conf.__bindgen_anon_1.dir24_8.num_tbl8 = tbl8s;
        clear_errno();
        // SAFETY: cname and conf are valid for the call.
        let p = unsafe { sys::rte_fib_create(cname.as_ptr(), socket, &mut conf) };
        let raw = NonNull::new(p).ok_or_else(|| {
            DpdkError::from_allocation_or_einval(
                format_args!("cannot create FIB {name} of {max_routes} routes and {tbl8s} tbl8 groups"),
                eal_memory(max_routes, tbl8s),
            )
        })?;
        let tables = Dir24_8::of(raw, tbl8s);
        let mut fib = Fib {
            raw,
            tables,
            _eal: eal.clone(),
        };
        if fib.tables.is_some() && !fib.probe_agrees(Fib::lookup) {
            fib.tables = None;
        }
        if fib.tables.is_none() {
            log::warn!("FIB {name}: unknown DIR-24-8 layout, lookups go through rte_fib_lookup_bulk");
        }
        Ok(fib)
    }

    /// Whether `inline` answers as rte_fib_lookup_bulk with a probe's
    /// routes in (a /16 in tbl24, a /25 in a tbl8 group if there is one):
    /// the head check alone cannot see a tbl8 group or an entry laid out
    /// otherwise. The FIB is empty again after.
    fn probe_agrees(&mut self, inline: impl Fn(&Fib, u32) -> Option<u64>) -> bool {
        let routes =
            [([198, 18, 0, 0], 16, 1), ([198, 18, 7, 128], 25, 2)].map(|(a, d, h)| (u32::from_be_bytes(a), d, h));
        let ips = [[198, 18, 7, 200], [198, 18, 7, 1], [198, 19, 0, 1]].map(u32::from_be_bytes);
        // A route that does not fit (no tbl8 group) is left out.
        let added: Vec<_> = routes
            .into_iter()
            .filter(|&(ip, d, h)| self.add(ip, d, h).is_ok())
            .collect();
        let mut agree = true;
        self.lookup_bulk(&ips, |i, by_dpdk| agree &= inline(self, ips[i]) == by_dpdk);
        for (ip, depth, _) in added {
            // SAFETY: the FIB is alive and &mut self excludes lookups.
            let ret = unsafe { sys::rte_fib_delete(self.raw.as_ptr(), ip, depth) };
            agree &= ret == 0;
        }
        agree
    }

    /// Adds `ip/depth -> next_hop` (ip in host order; depth 0 is a default
    /// route). Adding a prefix again replaces its next hop. Fails when
    /// `depth` is above 32 or the FIB is out of routes or tbl8 groups.
    pub fn add(&mut self, ip: u32, depth: u8, next_hop: u64) -> Result<()> {
        check_hop(next_hop)?;
        // SAFETY: the FIB is alive and &mut self excludes concurrent lookups.
        let ret = unsafe { sys::rte_fib_add(self.raw.as_ptr(), ip, depth, next_hop) };
        if ret < 0 {
            return Err(DpdkError::from_code("cannot add IPv4 route", ret));
        }
        Ok(())
    }

    /// Looks up every address of `ips` (host order) in bulk calls and
    /// hands `each` the index of the address and its next hop, or None for
    /// a miss.
    #[inline(always)]
    pub fn lookup_bulk(&self, ips: &[u32], mut each: impl FnMut(usize, Option<u64>)) {
        in_chunks(
            ips,
            |ips, raw: &mut [u64]| {
                // SAFETY: ips and raw hold ips.len() elements (in_chunks);
                // rte_fib reads the addresses without writing them despite
                // the non-const pointer; the FIB is alive and only read.
                unsafe {
                    sys::rte_fib_lookup_bulk(
                        self.raw.as_ptr(),
                        ips.as_ptr() as *mut u32,
                        raw.as_mut_ptr(),
                        ips.len() as i32,
                    )
                };
            },
            |i, h| each(i, hop(h)),
        );
    }

    /// Looks up one address (host order): its next hop, or None on a miss.
    ///
    /// The lookup of rte_fib's DIR-24-8 bulk functions, written here: one
    /// read of the /24's entry and, for a /24 holding longer prefixes, one
    /// of its tbl8 group, with no call. Lookups of a burst's addresses in a
    /// loop overlap in the CPU as the bulk call's do. Same answers as
    /// [`Fib::lookup_bulk`], DPDK's own code (tested equal below and in
    /// l3fwd-rs's `lpm_scale` test); a bulk call of one address if
    /// [`Fib::new`] did not recognise the tables.
    #[inline(always)]
    pub fn lookup(&self, ip: u32) -> Option<u64> {
        let Some(dp) = self.tables else {
            return self.lookup_by_dpdk(ip);
        };
        let dp = dp.as_ptr();
        // SAFETY: the FIB is alive; Dir24_8::of checked the layout: tbl24
        // holds 2^24 entries of 4 bytes and `ip >> 8` is below that; an
        // entry with the ext bit names a tbl8 group DPDK allocated, below
        // number_tbl8s (its bitmap of free groups has that many bits), and
        // tbl8 holds one group more, so the group entry read is inside
        // tbl8. Entries are read as atomics (plain loads on x86): a
        // LiveFib's writer may store them meanwhile, and the Acquire on
        // tbl24 sees a group's entries written before the entry linking it.
        let entry = unsafe {
            let tbl24 = addr_of!((*dp).tbl24).cast::<AtomicU32>();
            let entry = (*tbl24.add((ip >> 8) as usize)).load(Ordering::Acquire);
            if entry & EXT_ENT == 0 {
                entry
            } else {
                let index = (entry >> 1) as usize * TBL8_GROUP_ENTRIES + (ip & 0xff) as usize;
                (*(*dp).tbl8.cast::<AtomicU32>().add(index)).load(Ordering::Relaxed)
            }
        };
        hop(u64::from(entry >> 1))
    }

    /// [`Fib::lookup`] of each of `dsts`, eight at a time with the vector
    /// path `simd` names (one at a time where the tables were not
    /// recognised): the low 16 bits of each next hop found (the port, as
    /// the tables hold ports), or `miss`, into `out`, for as many as the
    /// shorter of the two has.
    #[inline(always)]
    pub fn lookup_simd(&self, simd: crate::Simd, dsts: &[u32], miss: u16, out: &mut [u16]) {
        let n = dsts.len().min(out.len());
        let done = match self.tables {
            #[cfg(target_arch = "x86_64")]
            // SAFETY: the tables are alive (we borrow the FIB) and laid
            // out as Dir24_8::of checked: tbl24 holds 2^24 entries and an
            // entry with the ext bit names a group inside tbl8 (as in
            // Fib::lookup); both slices hold n.
            Some(dp) => unsafe {
                let dp = dp.as_ptr();
                let (tbl24, tbl8) = (addr_of!((*dp).tbl24).cast::<i32>(), (*dp).tbl8.cast::<i32>());
                simd.dir24_8_lookup::<FibEntry>(tbl24, tbl8, &dsts[..n], miss, &mut out[..n])
            },
            _ => 0,
        };
        for (o, &dst) in out[done..n].iter_mut().zip(&dsts[done..n]) {
            *o = self.lookup(dst).map_or(miss, |hop| hop as u16);
        }
    }

    /// [`Fib::lookup`] through rte_fib_lookup_bulk.
    #[cold]
    fn lookup_by_dpdk(&self, ip: u32) -> Option<u64> {
        let mut found = None;
        self.lookup_bulk(&[ip], |_, h| found = h);
        found
    }
}

impl Drop for Fib {
    fn drop(&mut self) {
        // SAFETY: the FIB is ours and no lookup can run (we hold &mut).
        unsafe { sys::rte_fib_free(self.raw.as_ptr()) }
    }
}

/// The head of rte_fib6's trie, what `rte_fib6_get_dp` points at: `struct
/// rte_trie_tbl` of DPDK's private `lib/fib/trie.h`, which gained
/// [`RcuPointers`] (and its mode) in 25.11. Checked by [`Trie::of`] and [`Fib6::new`] as
/// [`Dir24_8`] is.
///
/// Entries (4 bytes here) are as in [`Dir24_8`], but the levels go on: an
/// entry with the ext bit names a group of 256 entries in `tbl8` for the
/// next byte of the address, down to the 16th.
#[repr(C)]
struct Trie {
    number_tbl8s: u32,
    rsvd_tbl8s: u32,
    cur_tbl8s: u32,
    def_nh: u64,
    nh_sz: sys::rte_fib_trie_nh_sz,
    /// `uint64_t *` in C, read as 4-byte entries as DPDK's 4-byte lookup
    /// reads it.
    tbl8: *const u32,
    tbl8_pool: *const u32,
    tbl8_pool_pos: u32,
    #[cfg(dpdk_ge_2511)]
    rcu_mode: u32,
    #[cfg(dpdk_ge_2511)]
    rcu: RcuPointers,
    /// 2^24 entries, one per /24, from the next cache line on (`uint64_t`
    /// in C, read as 4-byte entries too).
    tbl24: CacheAligned<[u32; 0]>,
}

const _: () = assert!(std::mem::offset_of!(Trie, tbl24) == tbl24_offset::<Trie>());

impl Trie {
    /// No RCU attached (always so before 25.11, which has none).
    fn rcu_unset(&self) -> bool {
        #[cfg(dpdk_ge_2511)]
        return self.rcu.is_unset(self.rcu_mode);
        #[cfg(not(dpdk_ge_2511))]
        true
    }

    /// The tables of `fib`, just created with `tbl8s` groups, if their
    /// head reads back that configuration (the groups exactly, all in the
    /// free pool) and the first tbl24 entry is the default next hop.
    fn of(fib: NonNull<sys::rte_fib6>, tbl8s: u32) -> Option<NonNull<Trie>> {
        // SAFETY: as in Dir24_8::of, for rte_fib6.
        unsafe {
            recognise(sys::rte_fib6_get_dp(fib.as_ptr()), |head: &Trie, first| {
                head.number_tbl8s == tbl8s
                    && (head.rsvd_tbl8s, head.cur_tbl8s, head.tbl8_pool_pos) == (0, 0, 0)
                    && head.nh_sz == sys::rte_fib_trie_nh_sz_RTE_FIB6_TRIE_4B
                    && head.def_nh == NO_ROUTE
                    && !head.tbl8.is_null()
                    && !head.tbl8_pool.is_null()
                    && head.rcu_unset()
                    && u64::from(first) == NO_ROUTE << 1
            })
        }
    }
}

/// An IPv6 FIB (`RTE_FIB6_TRIE`, 4-byte next hops).
///
/// ```
/// let eal = dpdk::Eal::for_tests(&[])?;
/// let mut fib = dpdk::Fib6::new(eal, "doc_fib6", 0, 16, 64)?;
/// let net: std::net::Ipv6Addr = "2001:db8::".parse().unwrap();
/// fib.add(&net.octets(), 32, 3)?;
/// let host: std::net::Ipv6Addr = "2001:db8::9".parse().unwrap();
/// assert_eq!(fib.lookup(&host.octets()), Some(3));
/// assert_eq!(fib.lookup(&[0; 16]), None);
/// # Ok::<(), dpdk::DpdkError>(())
/// ```
pub struct Fib6 {
    raw: NonNull<sys::rte_fib6>,
    /// Its tables, for [`Fib6::lookup`]; None if their layout is not the
    /// one [`Trie`] mirrors.
    tables: Option<NonNull<Trie>>,
    /// The tbl8 groups it was created with.
    tbl8s: u32,
    _eal: Eal,
}

// SAFETY: as for Fib: lookups only read; changes need &mut.
unsafe impl Send for Fib6 {}
// SAFETY: as for Fib.
unsafe impl Sync for Fib6 {}

impl Fib6 {
    /// Creates an empty IPv6 FIB for `max_routes` routes and `tbl8s` groups
    /// on `socket`. `name` must be unique in the process.
    pub fn new(eal: &Eal, name: &str, socket: i32, max_routes: u32, tbl8s: u32) -> Result<Fib6> {
        let cname = c_name(name)?;
        let mut conf = sys::rte_fib6_conf {
            type_: sys::rte_fib6_type_RTE_FIB6_TRIE,
            default_nh: NO_ROUTE,
            max_routes: i32::try_from(max_routes).unwrap_or(i32::MAX),
            rib_ext_sz: 0,
            ..Default::default()
        };
        conf.__bindgen_anon_1.trie.nh_sz = sys::rte_fib_trie_nh_sz_RTE_FIB6_TRIE_4B;
        conf.__bindgen_anon_1.trie.num_tbl8 = tbl8s;
        clear_errno();
        // SAFETY: cname and conf are valid for the call.
        let p = unsafe { sys::rte_fib6_create(cname.as_ptr(), socket, &mut conf) };
        let raw = NonNull::new(p).ok_or_else(|| {
            DpdkError::from_allocation_or_einval(
                format_args!("cannot create FIB6 {name} of {max_routes} routes and {tbl8s} tbl8 groups"),
                eal_memory(max_routes, tbl8s),
            )
        })?;
        let tables = Trie::of(raw, tbl8s);
        let mut fib = Fib6 {
            raw,
            tables,
            tbl8s,
            _eal: eal.clone(),
        };
        if fib.tables.is_some() && !fib.probe_agrees(Fib6::lookup) {
            fib.tables = None;
        }
        if fib.tables.is_none() {
            log::warn!("FIB6 {name}: unknown trie layout, lookups go through rte_fib6_lookup_bulk");
        }
        Ok(fib)
    }

    /// The tbl8 groups it was created with.
    pub fn tbl8s(&self) -> u32 {
        self.tbl8s
    }

    /// As [`Fib::probe_agrees`]: a /16 in tbl24 and a /40 two tbl8 levels
    /// below it, if there are groups for it.
    fn probe_agrees(&mut self, inline: impl Fn(&Fib6, &[u8; 16]) -> Option<u64>) -> bool {
        let at = |ip: u128| ip.to_be_bytes();
        let routes = [(at(0x2001_0db8 << 96), 16, 1), (at(0x2001_0db8_0700 << 80), 40, 2)];
        let ips = [0x2001_0db8_0700_0001 << 64, 0x2001_0db8_0800 << 80, 0x2002 << 112].map(at);
        // A route that does not fit (no tbl8 group) is left out.
        let added: Vec<_> = routes
            .into_iter()
            .filter(|(ip, d, h)| self.add(ip, *d, *h).is_ok())
            .collect();
        let mut agree = true;
        self.lookup_bulk(&ips, |i, by_dpdk| agree &= inline(self, &ips[i]) == by_dpdk);
        for (ip, depth, _) in added {
            // SAFETY: ip points at 16 bytes; the FIB is alive and exclusive.
            let ret = unsafe { sys::rte_fib6_delete(self.raw.as_ptr(), ip.as_ptr().cast(), depth) };
            agree &= ret == 0;
        }
        agree
    }

    /// Adds `ip/depth -> next_hop` (`ip` in network order; depth 0 is a
    /// default route). Adding a prefix again replaces its next hop. Fails
    /// when `depth` is above 128 or the FIB is out of routes or tbl8
    /// groups.
    pub fn add(&mut self, ip: &[u8; 16], depth: u8, next_hop: u64) -> Result<()> {
        check_hop(next_hop)?;
        // SAFETY: ip points at 16 bytes; the FIB is alive and exclusive.
        let ret = unsafe { sys::rte_fib6_add(self.raw.as_ptr(), ip.as_ptr().cast(), depth, next_hop) };
        if ret < 0 {
            return Err(DpdkError::from_code("cannot add IPv6 route", ret));
        }
        Ok(())
    }

    /// Looks up every address of `ips` in bulk calls, as
    /// [`Fib::lookup_bulk`].
    #[inline(always)]
    pub fn lookup_bulk(&self, ips: &[[u8; 16]], mut each: impl FnMut(usize, Option<u64>)) {
        in_chunks(
            ips,
            |ips, raw: &mut [u64]| {
                // SAFETY: ips and raw hold ips.len() elements (in_chunks);
                // rte_fib6 reads the addresses without writing them despite
                // the non-const pointer; the FIB is alive and only read.
                unsafe {
                    sys::rte_fib6_lookup_bulk(
                        self.raw.as_ptr(),
                        ips.as_ptr().cast_mut().cast(),
                        raw.as_mut_ptr(),
                        ips.len() as i32,
                    )
                };
            },
            |i, h| each(i, hop(h)),
        );
    }

    /// Looks up one address: its next hop, or None on a miss.
    ///
    /// The lookup of rte_fib6's trie bulk functions, written here as
    /// [`Fib::lookup`] is: the /24's entry, then while an entry has the ext
    /// bit, one entry of its tbl8 group per further byte of the address.
    /// Same answers as [`Fib6::lookup_bulk`] (tested equal below and in
    /// l3fwd-rs's `lpm_scale` test); a bulk call of one address if
    /// [`Fib6::new`] did not recognise the tables.
    #[inline(always)]
    pub fn lookup(&self, ip: &[u8; 16]) -> Option<u64> {
        let Some(dp) = self.tables else {
            return self.lookup_by_dpdk(ip);
        };
        let dp = dp.as_ptr();
        let index = u32::from_be_bytes([0, ip[0], ip[1], ip[2]]) as usize;
        // SAFETY: the FIB is alive. Trie::of checked the layout: tbl24
        // holds 2^24 entries of 4 bytes, index is below that; an entry with
        // the ext bit names a tbl8 group DPDK took from its pool of
        // number_tbl8s, and tbl8 holds one group more, so the group entry
        // read is inside tbl8. Atomic loads as in Fib::lookup: each level's
        // Acquire sees the group it links written.
        let entry = unsafe {
            let tbl24 = addr_of!((*dp).tbl24).cast::<AtomicU32>();
            let tbl8 = (*dp).tbl8.cast::<AtomicU32>();
            let mut entry = (*tbl24.add(index)).load(Ordering::Acquire);
            // DPDK reads on while the ext bit is set; a /128 ends at the
            // 16th byte, whose entries never have it.
            let mut next = 3;
            while entry & EXT_ENT != 0 && next < ip.len() {
                let index = (entry >> 1) as usize * TBL8_GROUP_ENTRIES + usize::from(ip[next]);
                entry = (*tbl8.add(index)).load(Ordering::Acquire);
                next += 1;
            }
            entry
        };
        hop(u64::from(entry >> 1))
    }

    /// [`Fib6::lookup`] through rte_fib6_lookup_bulk.
    #[cold]
    fn lookup_by_dpdk(&self, ip: &[u8; 16]) -> Option<u64> {
        let mut found = None;
        self.lookup_bulk(std::slice::from_ref(ip), |_, h| found = h);
        found
    }
}

impl Drop for Fib6 {
    fn drop(&mut self) {
        // SAFETY: the FIB is ours and no lookup can run (we hold &mut).
        unsafe { sys::rte_fib6_free(self.raw.as_ptr()) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every address of `ips`: the inline lookup against rte_fib's bulk
    /// one. Returns how many missed.
    fn check_equal(fib: &Fib, ips: &[u32]) -> usize {
        let mut misses = 0;
        fib.lookup_bulk(ips, |i, by_dpdk| {
            assert_eq!(fib.lookup(ips[i]), by_dpdk, "{}", std::net::Ipv4Addr::from(ips[i]));
            misses += usize::from(by_dpdk.is_none());
        });
        // Each vector lookup, in every position of a group and in the
        // tail after the last.
        let available = crate::Simd::available();
        if available.is_empty() {
            eprintln!("this CPU has no vector path: no vector lookup is tested here");
        }
        for simd in available {
            for ips in [ips, &ips[3..]] {
                let mut ports = vec![0; ips.len()];
                fib.lookup_simd(simd, ips, u16::MAX, &mut ports);
                for (&ip, &port) in ips.iter().zip(&ports) {
                    let inline = fib.lookup(ip).map_or(u16::MAX, |hop| hop as u16);
                    assert_eq!(port, inline, "{}: {}", simd.name(), std::net::Ipv4Addr::from(ip));
                }
            }
        }
        misses
    }

    #[test]
    fn the_probe_refuses_an_inline_lookup_that_answers_otherwise() {
        let eal = Eal::for_tests(&[]).expect("EAL init");
        let mut fib = Fib::new(eal, "fib_probe", 0, 16, 64).unwrap();
        assert!(fib.tables.is_some(), "DIR-24-8 layout not recognised");
        assert!(fib.probe_agrees(Fib::lookup));
        assert!(!fib.probe_agrees(|f, ip| f.lookup(ip).map(|h| h + 1)));
        assert!(!fib.probe_agrees(|_, _| None));
        let mut fib6 = Fib6::new(eal, "fib6_probe", 0, 16, 64).unwrap();
        assert!(fib6.tables.is_some(), "trie layout not recognised");
        assert!(fib6.probe_agrees(Fib6::lookup));
        assert!(!fib6.probe_agrees(|f, ip| f.lookup(ip).map(|h| h + 1)));
        assert!(!fib6.probe_agrees(|_, _| None));
        // The probes' routes are gone.
        let ips = [[198, 18, 7, 200], [198, 18, 7, 1]].map(u32::from_be_bytes);
        fib.lookup_bulk(&ips, |i, hop| assert_eq!(hop, None, "{i}"));
        let ips6 = [0x2001_0db8_0700_0001_u128 << 64, 0x2001_0db8_0800 << 80].map(u128::to_be_bytes);
        fib6.lookup_bulk(&ips6, |i, hop| assert_eq!(hop, None, "{i}"));
    }

    #[test]
    fn inline_lookup_answers_as_rte_fib_lookup_bulk() {
        let eal = Eal::for_tests(&[]).expect("EAL init");
        let mut fib = Fib::new(eal, "fib_inline", 0, 1024, 100).unwrap();
        assert!(fib.tables.is_some(), "DIR-24-8 layout not recognised");
        assert!(Dir24_8::of(fib.raw, 164).is_none(), "another configuration recognised");
        // Nested routes, /1 to /32, on one address (the longer ones
        // through a tbl8 group), and a few beside them.
        let base = u32::from_be_bytes([198, 18, 7, 131]);
        let mut routes: Vec<(u32, u8, u64)> = (1..=32).map(|d| (base, d, u64::from(d))).collect();
        routes.extend(
            [
                ([10, 0, 0, 0], 8, 40),
                ([10, 1, 2, 0], 25, 41),
                ([10, 1, 2, 77], 32, 42),
            ]
            .map(|(a, d, h)| (u32::from_be_bytes(a), d, h)),
        );
        for &(ip, depth, hop) in &routes {
            fib.add(ip, depth, hop).unwrap();
        }
        // Each route's edges, and random addresses: anywhere, and in the
        // /16s of the routes (xorshift; the bits do not matter).
        let mut edges = Vec::new();
        for &(ip, depth, _) in &routes {
            let size = 1u64 << (32 - depth);
            let first = ip & !((size - 1) as u32);
            let last = first.wrapping_add((size - 1) as u32);
            edges.extend([first.wrapping_sub(1), first, last, last.wrapping_add(1)]);
        }
        let mut x = 0x2545_f491_u32;
        let mut random = || {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            x
        };
        let mut ips = edges;
        for _ in 0..100_000 {
            let r = random();
            ips.extend([r, base & 0xffff_0000 | r >> 16, 0x0a01_0000 | r & 0xffff]);
        }
        let misses = check_equal(&fib, &ips);
        assert!(misses > 0 && misses < ips.len() / 2, "{misses} misses");
        // A default route: no more misses.
        fib.add(0, 0, 50).unwrap();
        assert_eq!(check_equal(&fib, &ips), 0);
    }

    /// As check_equal, for IPv6.
    fn check_equal6(fib: &Fib6, ips: &[u128]) -> usize {
        let ips: Vec<[u8; 16]> = ips.iter().map(|ip| ip.to_be_bytes()).collect();
        let mut misses = 0;
        fib.lookup_bulk(&ips, |i, by_dpdk| {
            assert_eq!(fib.lookup(&ips[i]), by_dpdk, "{}", std::net::Ipv6Addr::from(ips[i]));
            misses += usize::from(by_dpdk.is_none());
        });
        misses
    }

    #[test]
    fn inline_lookup6_answers_as_rte_fib6_lookup_bulk() {
        let eal = Eal::for_tests(&[]).expect("EAL init");
        let mut fib = Fib6::new(eal, "fib6_inline", 0, 1024, 100).unwrap();
        assert!(fib.tables.is_some(), "trie layout not recognised");
        assert!(Trie::of(fib.raw, 101).is_none(), "another configuration recognised");
        // Nested routes, /1 to /128, on one address (through every tbl8
        // level), and a few beside them.
        let base = u128::from_be_bytes([
            0x20, 0x01, 0x0d, 0xb8, 0x85, 0xa3, 0x08, 0xd3, 0x13, 0x19, 0x8a, 0x2e, 0x03, 0x70, 0x73, 0x48,
        ]);
        let mut routes: Vec<(u128, u8, u64)> = (1..=128).map(|d| (base, d, u64::from(d))).collect();
        let fd = |tail: u128| 0xfd00_u128 << 112 | tail;
        routes.extend([
            (fd(0), 8, 140),
            (fd(1 << 80 | 2 << 64), 48, 141),
            (fd(1 << 80 | 2 << 64 | 0x77), 128, 142),
        ]);
        for &(ip, depth, hop) in &routes {
            fib.add(&ip.to_be_bytes(), depth, hop).unwrap();
        }
        // Each route's edges, and random addresses: anywhere, and in the
        // /48 and /112 of the nested routes (xorshift; the bits do not
        // matter).
        let mut ips = Vec::new();
        for &(ip, depth, _) in &routes {
            let host = u128::MAX.checked_shr(depth.into()).unwrap_or(0);
            let (first, last) = (ip & !host, ip | host);
            ips.extend([first.wrapping_sub(1), first, last, last.wrapping_add(1)]);
        }
        let mut x = 0x2545_f491_4f6c_dd1d_u64;
        let mut random = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            u128::from(x)
        };
        for _ in 0..100_000 {
            let r = random() << 64 | random();
            ips.extend([
                r,
                base & !(u128::MAX >> 48) | r >> 48,
                base & !(u128::MAX >> 112) | r >> 112,
            ]);
        }
        let misses = check_equal6(&fib, &ips);
        assert!(misses > 0 && misses < ips.len() / 2, "{misses} misses");
        // A default route: no more misses.
        fib.add(&[0; 16], 0, 150).unwrap();
        assert_eq!(check_equal6(&fib, &ips), 0);
    }
}
