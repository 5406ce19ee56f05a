//! rte_lpm (IPv4) and rte_lpm6 (IPv6) longest-prefix-match tables.

use std::ffi::CString;
use std::ptr::NonNull;

use crate::error::{DpdkError, Result};
use crate::sys;

/// Bit rte_lpm sets in a bulk-lookup result when the address matched.
const LPM_LOOKUP_SUCCESS: u32 = 0x0100_0000;
/// Mask of the next hop in an rte_lpm result.
const LPM_NEXT_HOP_MASK: u32 = 0x00ff_ffff;

/// An IPv4 LPM table. Built on one thread, then only read.
pub struct Lpm(NonNull<sys::rte_lpm>);

// SAFETY: after building (which needs &mut), lookups only read the tables,
// which rte_lpm supports from any number of threads.
unsafe impl Send for Lpm {}
// SAFETY: as above: &Lpm only allows lookups.
unsafe impl Sync for Lpm {}

fn c_name(name: &str) -> Result<CString> {
    CString::new(name).map_err(|_| DpdkError::invalid("table name", "contains a NUL byte"))
}

impl Lpm {
    /// Creates an empty table for `max_rules` routes and `tbl8s` groups of
    /// second-level entries (one per /24 that holds longer prefixes).
    pub fn new(name: &str, socket: i32, max_rules: u32, tbl8s: u32) -> Result<Lpm> {
        let cname = c_name(name)?;
        let config = sys::rte_lpm_config {
            max_rules,
            number_tbl8s: tbl8s,
            flags: 0,
        };
        // SAFETY: cname and config are valid for the call.
        let p = unsafe { sys::rte_lpm_create(cname.as_ptr(), socket, &config) };
        NonNull::new(p)
            .map(Lpm)
            .ok_or_else(|| DpdkError::from_errno(format!("cannot create LPM table {name}")))
    }

    /// Adds `ip/depth -> next_hop` (ip in host order; rte_lpm masks it).
    pub fn add(&mut self, ip: u32, depth: u8, next_hop: u32) -> Result<()> {
        // SAFETY: the table is alive and &mut self excludes concurrent lookups.
        let ret = unsafe { sys::rte_lpm_add(self.0.as_ptr(), ip, depth, next_hop) };
        if ret < 0 {
            return Err(DpdkError::from_code("cannot add IPv4 route", ret));
        }
        Ok(())
    }

    /// Looks up every address of `ips` (host order) in one call; writes the
    /// next hop, or `default` on a miss, to `hops`.
    #[inline(always)]
    pub fn lookup_bulk(&self, ips: &[u32], hops: &mut [u32], default: u32) {
        let n = ips.len().min(hops.len());
        if n == 0 {
            return;
        }
        // SAFETY: ips and hops hold at least n elements; the table is alive
        // and only read.
        unsafe { sys::l3fwd_lpm_lookup_bulk(self.0.as_ptr(), ips.as_ptr(), hops.as_mut_ptr(), n as u32) };
        for h in &mut hops[..n] {
            *h = if *h & LPM_LOOKUP_SUCCESS != 0 {
                *h & LPM_NEXT_HOP_MASK
            } else {
                default
            };
        }
    }

    /// Looks up one address (host order).
    pub fn lookup(&self, ip: u32) -> Option<u32> {
        let mut hop = [0u32];
        self.lookup_bulk(&[ip], &mut hop, u32::MAX);
        (hop[0] != u32::MAX).then_some(hop[0])
    }
}

impl Drop for Lpm {
    fn drop(&mut self) {
        // SAFETY: the table is ours and no lookup can run (we hold &mut).
        unsafe { sys::rte_lpm_free(self.0.as_ptr()) }
    }
}

/// An IPv6 LPM table. Built on one thread, then only read.
pub struct Lpm6(NonNull<sys::rte_lpm6>);

// SAFETY: as for Lpm: lookups only read.
unsafe impl Send for Lpm6 {}
// SAFETY: as for Lpm.
unsafe impl Sync for Lpm6 {}

impl Lpm6 {
    /// Creates an empty table for `max_rules` routes and `tbl8s` groups.
    pub fn new(name: &str, socket: i32, max_rules: u32, tbl8s: u32) -> Result<Lpm6> {
        let cname = c_name(name)?;
        let config = sys::rte_lpm6_config {
            max_rules,
            number_tbl8s: tbl8s,
            flags: 0,
        };
        // SAFETY: cname and config are valid for the call.
        let p = unsafe { sys::rte_lpm6_create(cname.as_ptr(), socket, &config) };
        NonNull::new(p)
            .map(Lpm6)
            .ok_or_else(|| DpdkError::from_errno(format!("cannot create LPM6 table {name}")))
    }

    /// Adds `ip/depth -> next_hop`.
    pub fn add(&mut self, ip: &[u8; 16], depth: u8, next_hop: u32) -> Result<()> {
        // SAFETY: ip points at 16 bytes; the table is alive and exclusive.
        let ret = unsafe { sys::rte_lpm6_add(self.0.as_ptr(), ip.as_ptr(), depth, next_hop) };
        if ret < 0 {
            return Err(DpdkError::from_code("cannot add IPv6 route", ret));
        }
        Ok(())
    }

    /// Looks up every address of `ips` in one call; writes the next hop, or
    /// `default` on a miss, to `hops`.
    #[inline(always)]
    pub fn lookup_bulk(&self, ips: &[[u8; 16]], hops: &mut [u32], default: u32) {
        let n = ips.len().min(hops.len());
        if n == 0 {
            return;
        }
        // rte_lpm6 writes -1 for a miss into an i32 array of the same size.
        let out = hops.as_mut_ptr() as *mut i32;
        // SAFETY: ips and hops hold at least n elements (u32 and i32 share a
        // layout); rte_lpm6 reads the addresses without writing them despite
        // the non-const pointer type.
        unsafe { sys::rte_lpm6_lookup_bulk_func(self.0.as_ptr(), ips.as_ptr() as *mut [u8; 16], out, n as u32) };
        for h in &mut hops[..n] {
            if *h as i32 == -1 {
                *h = default;
            }
        }
    }

    /// Looks up one address.
    pub fn lookup(&self, ip: &[u8; 16]) -> Option<u32> {
        let mut hop = [0u32];
        self.lookup_bulk(std::slice::from_ref(ip), &mut hop, u32::MAX);
        (hop[0] != u32::MAX).then_some(hop[0])
    }
}

impl Drop for Lpm6 {
    fn drop(&mut self) {
        // SAFETY: the table is ours and no lookup can run (we hold &mut).
        unsafe { sys::rte_lpm6_free(self.0.as_ptr()) }
    }
}
