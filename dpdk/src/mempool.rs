//! Packet mempools.

use std::ffi::CString;
use std::ptr::NonNull;
use std::sync::Arc;

use crate::eal::Eal;
use crate::error::{DpdkError, Result};
use crate::sys;

/// A pool of packet buffers (`rte_pktmbuf_pool_create`).
///
/// A handle: clones share the pool. Each RX queue set up with it keeps a
/// clone, so the pool outlives every port that fills its rings from it.
/// When the last handle goes, the pool is freed if every mbuf is back in
/// it; if some are still out (held by a forgotten burst, say), the pool and
/// EAL are kept for the rest of the process, so that no mbuf can ever point
/// into freed memory.
#[derive(Clone)]
pub struct Mempool(Arc<Pool>);

struct Pool {
    raw: NonNull<sys::rte_mempool>,
    name: String,
    eal: Eal,
}

// SAFETY: DPDK mempools are multi-producer/multi-consumer; the handle is only
// used for thread-safe calls (counts) and for passing to queue setup.
unsafe impl Send for Pool {}
// SAFETY: as above: no call through &Pool mutates anything unsynchronised.
unsafe impl Sync for Pool {}

impl Mempool {
    /// Creates a pool of `n` mbufs with DPDK's default buffer size and a
    /// per-lcore cache of `cache` buffers on `socket`.
    ///
    /// ```
    /// let eal = dpdk::Eal::for_tests(256, &[])?;
    /// let pool = dpdk::Mempool::create(eal, "doc_pool", 1024, 32, 0)?;
    /// assert_eq!(pool.in_use(), 0);
    /// # Ok::<(), dpdk::DpdkError>(())
    /// ```
    pub fn create(eal: &Eal, name: &str, n: u32, cache: u32, socket: i32) -> Result<Mempool> {
        let cname = CString::new(name).map_err(|_| DpdkError::invalid("mempool name", "contains a NUL byte"))?;
        let data_room = (sys::RTE_MBUF_DEFAULT_DATAROOM + sys::RTE_PKTMBUF_HEADROOM) as u16;
        // SAFETY: cname is a valid C string for the call; the other arguments
        // are plain values.
        let p = unsafe { sys::rte_pktmbuf_pool_create(cname.as_ptr(), n, cache, 0, data_room, socket) };
        let raw = NonNull::new(p).ok_or_else(|| {
            // The size tells whether EAL memory (-m, hugepages) is the
            // reason, the usual one.
            let mib = (u64::from(n) * u64::from(mbuf_size(data_room))).div_ceil(1 << 20);
            DpdkError::from_errno(format!(
                "cannot create mempool {name} of {n} mbufs ({mib} MiB of EAL memory)"
            ))
        })?;
        Ok(Mempool(Arc::new(Pool {
            raw,
            name: name.to_owned(),
            eal: eal.clone(),
        })))
    }

    /// Mbufs currently taken from the pool (in queues, buffers, caches).
    pub fn in_use(&self) -> u32 {
        self.0.in_use()
    }

    /// The raw pool, for queue setup.
    pub(crate) fn as_ptr(&self) -> *mut sys::rte_mempool {
        self.0.raw.as_ptr()
    }
}

impl Pool {
    fn in_use(&self) -> u32 {
        // SAFETY: the pool is alive; the count only reads its rings.
        unsafe { sys::rte_mempool_in_use_count(self.raw.as_ptr()) }
    }
}

/// Bytes one mbuf with `data_room` bytes of buffer takes in its pool.
fn mbuf_size(data_room: u16) -> u32 {
    let elt = std::mem::size_of::<sys::rte_mbuf>() as u32 + u32::from(data_room);
    // SAFETY: a pure computation; a NULL `sz` asks for the total only.
    unsafe { sys::rte_mempool_calc_obj_size(elt, 0, std::ptr::null_mut()) }
}

impl Drop for Pool {
    fn drop(&mut self) {
        let out = self.in_use();
        if out > 0 {
            log::warn!("mempool {}: {out} mbufs never came back; the pool is kept", self.name);
            // The mbufs still out point into the pool and EAL's memory:
            // neither may go while they exist.
            std::mem::forget(self.eal.clone());
            return;
        }
        // SAFETY: the last handle is gone (no queue can allocate from the
        // pool) and every mbuf is back in it (none can be freed into it).
        unsafe { sys::rte_mempool_free(self.raw.as_ptr()) }
    }
}
