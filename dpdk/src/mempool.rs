//! Packet mempools.

use std::ffi::{CStr, CString};
use std::ptr::NonNull;
use std::sync::Arc;

use crate::eal::Eal;
use crate::error::{clear_errno, DpdkError, Result};
use crate::sys;

/// A pool of packet buffers (`rte_pktmbuf_pool_create_by_ops`), always
/// with multi-producer, multi-consumer ops: mbufs are `Send`, so any thread
/// may return one to the pool, and several lcores take from it.
///
/// A handle: clones share the pool. Each RX queue set up with it keeps a
/// clone, so the pool outlives every port that fills its rings from it.
/// When the last handle goes, the pool is freed if every mbuf is back in
/// it and no worker lcore is running a job (see below); if some mbufs are
/// still out (held by a forgotten burst, say), the pool and EAL are kept
/// for the rest of the process, so that no mbuf can ever point into freed
/// memory.
///
/// Every mbuf back is not enough: an lcore returning an mbuf counts it back
/// (its per-lcore cache grows) before it has written the cache, which lives
/// in the pool's memory. So a pool whose last handle goes on the main lcore
/// while every worker has been waited for is freed at once; one whose last
/// handle goes elsewhere, or while a worker's job may still run, is freed
/// at EAL cleanup, after `rte_eal_mp_wait_lcore`.
///
/// ```
/// let eal = dpdk::Eal::for_tests(&["--lcores", "0@0,1@0"])?;
/// let main = eal.main_lcore_token()?;
/// let (go, wait_for_go) = std::sync::mpsc::channel::<()>();
/// main.launch(1, move || wait_for_go.recv().map_or(1, |()| 0))?;
///
/// // A worker runs (it could be returning mbufs): the pool is kept, its
/// // name still taken.
/// drop(dpdk::Mempool::create(eal, "doc_kept", 1024, 32, 0)?);
/// assert!(dpdk::Mempool::create(eal, "doc_kept", 1024, 32, 0).is_err());
///
/// go.send(()).unwrap();
/// assert_eq!(main.wait(1)?, 0);
/// // Every worker waited for: the pool is freed as its last handle goes.
/// drop(dpdk::Mempool::create(eal, "doc_freed", 1024, 32, 0)?);
/// assert!(dpdk::Mempool::create(eal, "doc_freed", 1024, 32, 0).is_ok());
/// # Ok::<(), dpdk::DpdkError>(())
/// ```
#[derive(Clone)]
pub struct Mempool(Arc<Pool>);

struct Pool {
    raw: NonNull<sys::rte_mempool>,
    name: String,
    eal: Eal,
}

// SAFETY: the pool's ops are multi-producer/multi-consumer (Mempool::create
// chooses only such ops); the handle is only used for thread-safe calls
// (counts) and for passing to queue setup.
unsafe impl Send for Pool {}
// SAFETY: as above: no call through &Pool mutates anything unsynchronised.
unsafe impl Sync for Pool {}

impl Mempool {
    /// Creates a pool of `n` mbufs with DPDK's default buffer size and a
    /// per-lcore cache of `cache` buffers on `socket`.
    ///
    /// Its ops are the ones EAL would choose (`--mbuf-pool-ops-name`, else
    /// the platform's, else `ring_mp_mc`) if they are among
    /// [`Mempool::MP_MC_OPS`]; otherwise `ring_mp_mc`, with a warning: a
    /// single-producer or single-consumer pool shared by lcores would
    /// corrupt its ring.
    ///
    /// ```
    /// let eal = dpdk::Eal::for_tests(&["--mbuf-pool-ops-name=ring_sp_sc"])?;
    /// let pool = dpdk::Mempool::create(eal, "doc_pool", 1024, 32, 0)?;
    /// assert_eq!(pool.in_use(), 0);
    /// assert_eq!(pool.ops_name(), "ring_mp_mc"); // not the single-thread ring asked for
    /// # Ok::<(), dpdk::DpdkError>(())
    /// ```
    ///
    /// ```
    /// let eal = dpdk::Eal::for_tests(&["--mbuf-pool-ops-name=stack"])?;
    /// let pool = dpdk::Mempool::create(eal, "doc_stack", 1024, 32, 0)?;
    /// assert_eq!(pool.ops_name(), "stack"); // multi-thread safe: as asked
    /// # Ok::<(), dpdk::DpdkError>(())
    /// ```
    pub fn create(eal: &Eal, name: &str, n: u32, cache: u32, socket: i32) -> Result<Mempool> {
        let cname = CString::new(name).map_err(|_| DpdkError::invalid("mempool name", "contains a NUL byte"))?;
        let data_room = (sys::RTE_MBUF_DEFAULT_DATAROOM + sys::RTE_PKTMBUF_HEADROOM) as u16;
        let ops = pool_ops();
        clear_errno();
        // SAFETY: cname and ops are valid C strings for the call; the other
        // arguments are plain values.
        let p = unsafe {
            sys::rte_pktmbuf_pool_create_by_ops(cname.as_ptr(), n, cache, 0, data_room, socket, ops.as_ptr())
        };
        let raw = NonNull::new(p).ok_or_else(|| {
            let bytes = u64::from(n) * u64::from(mbuf_size(data_room));
            DpdkError::from_allocation(format_args!("cannot create mempool {name} of {n} mbufs"), bytes)
        })?;
        Ok(Mempool(Arc::new(Pool {
            raw,
            name: name.to_owned(),
            eal: eal.clone(),
        })))
    }

    /// The mempool ops [`Mempool::create`] may use: those whose get and put
    /// are safe from several threads at once.
    pub const MP_MC_OPS: [&'static str; 3] = ["ring_mp_mc", "stack", "lf_stack"];

    /// Mbufs currently taken from the pool (in queues, buffers, caches).
    pub fn in_use(&self) -> u32 {
        self.0.in_use()
    }

    /// Mbufs the pool was made with.
    pub fn size(&self) -> u32 {
        // SAFETY: reads a field set at creation of a live pool.
        unsafe { (*self.as_ptr()).size }
    }

    /// The name of the pool's ops (`ring_mp_mc`, `stack`, ...).
    pub fn ops_name(&self) -> String {
        // SAFETY: the pool is alive; the shim returns the name of its ops,
        // a NUL-terminated string in DPDK's static ops table, copied at once.
        unsafe { CStr::from_ptr(sys::shim_mempool_ops_name(self.as_ptr())) }
            .to_string_lossy()
            .into_owned()
    }

    /// The raw pool, for queue setup.
    pub(crate) fn as_ptr(&self) -> *mut sys::rte_mempool {
        self.0.raw.as_ptr()
    }
}

impl Pool {
    fn in_use(&self) -> u32 {
        // SAFETY: the pool is alive; the count only reads its rings.
        let n = unsafe { sys::rte_mempool_in_use_count(self.raw.as_ptr()) };
        // What the threads that put mbufs back did happens before what we
        // do next (the count read their ring's tail, stored with release).
        std::sync::atomic::fence(std::sync::atomic::Ordering::Acquire);
        n
    }
}

/// The ops to create a pool with: EAL's choice if it is in
/// [`Mempool::MP_MC_OPS`], else `ring_mp_mc`.
fn pool_ops() -> CString {
    // SAFETY: returns a pointer to a NUL-terminated string EAL keeps (the
    // --mbuf-pool-ops-name argument, the platform's choice or a constant);
    // copied at once.
    let best = unsafe { CStr::from_ptr(sys::rte_mbuf_best_mempool_ops()) }
        .to_string_lossy()
        .into_owned();
    if Mempool::MP_MC_OPS.contains(&best.as_str()) {
        return CString::new(best).unwrap_or_else(|_| c"ring_mp_mc".to_owned());
    }
    log::warn!("mempool ops {best} are not multi-producer/multi-consumer: using ring_mp_mc");
    c"ring_mp_mc".to_owned()
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
        if !self.eal.all_lcores_idle() {
            // A job may be between counting an mbuf back into its lcore's
            // cache and writing the cache: free after waiting for it.
            self.eal.defer_pool_free(self.raw);
            return;
        }
        // SAFETY: the last handle is gone (no queue can allocate from the
        // pool) and every mbuf is back in it. No lcore is returning one: we
        // are the main lcore and every worker is idle (all_lcores_idle).
        // Threads that are not lcores have no cache: their put ends with the
        // ring's tail store, which the count above has seen.
        unsafe { sys::rte_mempool_free(self.raw.as_ptr()) }
    }
}
