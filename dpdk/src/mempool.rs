//! Packet mempools.

use std::ffi::CString;
use std::ptr::NonNull;

use crate::error::{DpdkError, Result};
use crate::sys;

/// A pool of packet buffers (`rte_pktmbuf_pool_create`). Free it only after
/// the ports whose RX queues use it are closed.
pub struct Mempool(NonNull<sys::rte_mempool>);

// SAFETY: DPDK mempools are multi-producer/multi-consumer; the handle is only
// used for thread-safe calls (counts) and for passing to queue setup.
unsafe impl Send for Mempool {}
// SAFETY: as above: no call through &Mempool mutates anything unsynchronised.
unsafe impl Sync for Mempool {}

impl Mempool {
    /// Creates a pool of `n` mbufs with DPDK's default buffer size and a
    /// per-lcore cache of `cache` buffers on `socket`.
    pub fn create(name: &str, n: u32, cache: u32, socket: i32) -> Result<Mempool> {
        let cname = CString::new(name).map_err(|_| DpdkError::invalid("mempool name", "contains a NUL byte"))?;
        let data_room = (sys::RTE_MBUF_DEFAULT_DATAROOM + sys::RTE_PKTMBUF_HEADROOM) as u16;
        // SAFETY: cname is a valid C string for the call; the other arguments
        // are plain values.
        let p = unsafe { sys::rte_pktmbuf_pool_create(cname.as_ptr(), n, cache, 0, data_room, socket) };
        NonNull::new(p).map(Mempool).ok_or_else(|| {
            // The size tells whether EAL memory (-m, hugepages) is the
            // reason, the usual one.
            let mib = (u64::from(n) * u64::from(mbuf_size(data_room))).div_ceil(1 << 20);
            DpdkError::from_errno(format!(
                "cannot create mempool {name} of {n} mbufs ({mib} MiB of EAL memory)"
            ))
        })
    }

    /// Mbufs currently taken from the pool (in queues, buffers, caches).
    pub fn in_use(&self) -> u32 {
        // SAFETY: the pool is alive; the count only reads its rings.
        unsafe { sys::rte_mempool_in_use_count(self.0.as_ptr()) }
    }

    /// The raw pool, for queue setup.
    pub(crate) fn as_ptr(&self) -> *mut sys::rte_mempool {
        self.0.as_ptr()
    }
}

/// Bytes one mbuf with `data_room` bytes of buffer takes in its pool.
fn mbuf_size(data_room: u16) -> u32 {
    let elt = std::mem::size_of::<sys::rte_mbuf>() as u32 + u32::from(data_room);
    // SAFETY: a pure computation; a NULL `sz` asks for the total only.
    unsafe { sys::rte_mempool_calc_obj_size(elt, 0, std::ptr::null_mut()) }
}

impl Drop for Mempool {
    fn drop(&mut self) {
        // SAFETY: the pool is ours and, by the type's contract, no queue uses
        // it any more.
        unsafe { sys::rte_mempool_free(self.0.as_ptr()) }
    }
}
