//! rte_fib (IPv4, DIR-24-8) and rte_fib6 (IPv6, a trie of 8-bit levels
//! below a 24-bit first level) forwarding tables.
//!
//! Unlike rte_lpm, a FIB keeps its routes in a RIB (a binary tree) beside
//! the lookup tables, so adding a route costs a tree insert rather than a
//! scan of every rule of its depth, and a lookup answers a configured
//! default next hop on a miss. Here the default is a value no route can
//! carry, so lookups answer None on a miss. Built through `&mut self` on
//! one thread, then shared read-only (`&self`): lookups only read.

use std::ffi::CString;
use std::ptr::NonNull;

use crate::eal::Eal;
use crate::error::{DpdkError, Result};
use crate::sys;

/// The next hop a lookup answers when no route matches: the largest a
/// 4-byte next hop can be (one bit of each entry is the library's), above
/// any next hop [`Fib::add`] and [`Fib6::add`] take.
const NO_ROUTE: u64 = (1 << 31) - 1;

/// Most addresses one bulk call takes here (a stack buffer of results).
const BULK: usize = 64;

fn c_name(name: &str) -> Result<CString> {
    CString::new(name).map_err(|_| DpdkError::invalid("FIB name", "contains a NUL byte"))
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

/// An IPv4 FIB (`RTE_FIB_DIR24_8`, 4-byte next hops).
///
/// ```
/// let eal = dpdk::Eal::for_tests(256, &[])?;
/// let mut fib = dpdk::Fib::new(eal, "doc_fib", 0, 16, 16)?;
/// fib.add(u32::from_be_bytes([198, 18, 0, 0]), 16, 1)?;
/// fib.add(u32::from_be_bytes([198, 18, 7, 128]), 25, 2)?;
/// let dsts = [[198, 18, 7, 200], [198, 18, 7, 1], [10, 0, 0, 1]].map(u32::from_be_bytes);
/// let mut hops = [None; 3];
/// fib.lookup_bulk(&dsts, |i, hop| hops[i] = hop);
/// assert_eq!(hops, [Some(2), Some(1), None]);
/// # Ok::<(), dpdk::DpdkError>(())
/// ```
pub struct Fib {
    raw: NonNull<sys::rte_fib>,
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
        // SAFETY: cname and conf are valid for the call.
        let p = unsafe { sys::rte_fib_create(cname.as_ptr(), socket, &mut conf) };
        let raw = NonNull::new(p).ok_or_else(|| DpdkError::from_errno(format!("cannot create FIB {name}")))?;
        Ok(Fib { raw, _eal: eal.clone() })
    }

    /// Adds `ip/depth -> next_hop` (ip in host order). Adding a prefix
    /// again replaces its next hop. Fails when `depth` is not 1..=32 or
    /// the FIB is out of routes or tbl8 groups.
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
        let mut raw = [0u64; BULK];
        for (chunk, ips) in ips.chunks(BULK).enumerate() {
            let raw = &mut raw[..ips.len()];
            // SAFETY: ips and raw hold ips.len() elements; rte_fib reads the
            // addresses without writing them despite the non-const pointer;
            // the FIB is alive and only read.
            unsafe {
                sys::rte_fib_lookup_bulk(
                    self.raw.as_ptr(),
                    ips.as_ptr() as *mut u32,
                    raw.as_mut_ptr(),
                    ips.len() as i32,
                )
            };
            for (i, &h) in raw.iter().enumerate() {
                each(chunk * BULK + i, hop(h));
            }
        }
    }

    /// Looks up one address (host order).
    pub fn lookup(&self, ip: u32) -> Option<u64> {
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

/// An IPv6 FIB (`RTE_FIB6_TRIE`, 4-byte next hops).
///
/// ```
/// let eal = dpdk::Eal::for_tests(256, &[])?;
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
        // SAFETY: cname and conf are valid for the call.
        let p = unsafe { sys::rte_fib6_create(cname.as_ptr(), socket, &mut conf) };
        let raw = NonNull::new(p).ok_or_else(|| DpdkError::from_errno(format!("cannot create FIB6 {name}")))?;
        Ok(Fib6 { raw, _eal: eal.clone() })
    }

    /// Adds `ip/depth -> next_hop` (`ip` in network order). Adding a
    /// prefix again replaces its next hop. Fails when `depth` is not
    /// 1..=128 or the FIB is out of routes or tbl8 groups.
    pub fn add(&mut self, ip: &[u8; 16], depth: u8, next_hop: u64) -> Result<()> {
        check_hop(next_hop)?;
        // SAFETY: ip points at 16 bytes; the FIB is alive and exclusive.
        let ret = unsafe { sys::rte_fib6_add(self.raw.as_ptr(), ip.as_ptr(), depth, next_hop) };
        if ret < 0 {
            return Err(DpdkError::from_code("cannot add IPv6 route", ret));
        }
        Ok(())
    }

    /// Looks up every address of `ips` in bulk calls, as
    /// [`Fib::lookup_bulk`].
    #[inline(always)]
    pub fn lookup_bulk(&self, ips: &[[u8; 16]], mut each: impl FnMut(usize, Option<u64>)) {
        let mut raw = [0u64; BULK];
        for (chunk, ips) in ips.chunks(BULK).enumerate() {
            let raw = &mut raw[..ips.len()];
            // SAFETY: ips and raw hold ips.len() elements; rte_fib6 reads the
            // addresses without writing them despite the non-const pointer;
            // the FIB is alive and only read.
            unsafe {
                sys::rte_fib6_lookup_bulk(
                    self.raw.as_ptr(),
                    ips.as_ptr() as *mut [u8; 16],
                    raw.as_mut_ptr(),
                    ips.len() as i32,
                )
            };
            for (i, &h) in raw.iter().enumerate() {
                each(chunk * BULK + i, hop(h));
            }
        }
    }

    /// Looks up one address.
    pub fn lookup(&self, ip: &[u8; 16]) -> Option<u64> {
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
