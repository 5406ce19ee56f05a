//! Event vectors: the RX adapter packs up to `size` packets of one RX
//! queue into one event (a vector from a pool the device owns), sent once
//! it is full or `timeout_ns` after its first packet. A worker takes a
//! dequeued vector's packets out, forwards them, and puts those it keeps
//! back into the same vector, which goes to the TX adapter as one event.
//!
//! A dequeued vector is owned by one [`EventVector`]: its packets are
//! either forwarded (with [`EventPort::forward_vector`](crate::EventPort::forward_vector),
//! which takes the vector) or freed with it.

use std::ffi::CString;
use std::ptr::NonNull;

use crate::error::{DpdkError, Result};
use crate::mbuf::MbufArray;
use crate::sys;

/// How the RX adapter makes vectors of a queue's packets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VectorConfig {
    /// Most packets in one vector.
    pub size: u16,
    /// Longest a vector waits for more packets, from its first.
    pub timeout_ns: u64,
}

/// The vectors the RX adapter can make from one ethdev port
/// (`rte_event_eth_rx_adapter_vector_limits_get`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VectorLimits {
    pub min_size: u16,
    pub max_size: u16,
    /// Sizes must be powers of 2.
    pub power_of_2: bool,
    pub min_timeout_ns: u64,
    pub max_timeout_ns: u64,
    /// The adapter is DPDK's software one (a service, no
    /// `RTE_EVENT_ETH_RX_ADAPTER_CAP_INTERNAL_PORT`), which in 22.11 writes
    /// the vector events it makes outside the live part of its event
    /// buffer: after its first flush they are lost (with their packets)
    /// and stale entries are enqueued instead.
    pub software: bool,
}

impl VectorLimits {
    /// Whether RX adapter capabilities `caps` include event vectors;
    /// without them, one line naming the port:
    ///
    /// ```
    /// let error = dpdk::VectorLimits::supported(0, 1).unwrap_err().to_string();
    /// assert_eq!(error, "event vectors from port 1: the event device's RX adapter makes none");
    /// assert!(dpdk::VectorLimits::supported(0x8, 1).is_ok());
    /// ```
    pub fn supported(caps: u32, eth_port: u16) -> Result<()> {
        if caps & sys::RTE_EVENT_ETH_RX_ADAPTER_CAP_EVENT_VECTOR == 0 {
            return Err(DpdkError::invalid(
                format!("event vectors from port {eth_port}"),
                "the event device's RX adapter makes none",
            ));
        }
        Ok(())
    }
}

/// The pool of vectors (`rte_event_vector_pool_create`), kept by the
/// device until it is closed: a vector may be inside it until then.
pub(crate) struct VectorPool {
    raw: NonNull<sys::rte_mempool>,
}

// SAFETY: a mempool is shared by every lcore by design (its get and put
// are thread-safe); the handle only frees it, once, when dropped.
unsafe impl Send for VectorPool {}
// SAFETY: as above.
unsafe impl Sync for VectorPool {}

impl VectorPool {
    /// `count` vectors of `size` packets each.
    pub(crate) fn create(count: u32, size: u16) -> Result<VectorPool> {
        let name = CString::new("event_vectors").map_err(|_| DpdkError::invalid("vector pool name", "NUL"))?;
        // SAFETY: name is NUL-terminated; the pool is created on socket 0
        // (l3fwd-rs runs on one). No per-lcore cache (C's has 32): a
        // vector carries many packets, and without one the vectors in use
        // are exactly those not back, which the shutdown check counts.
        let raw = unsafe { sys::rte_event_vector_pool_create(name.as_ptr(), count, 0, size, 0) };
        NonNull::new(raw)
            .map(|raw| VectorPool { raw })
            .ok_or_else(|| DpdkError::from_errno(format!("cannot create a pool of {count} event vectors of {size}")))
    }

    pub(crate) fn as_ptr(&self) -> *mut sys::rte_mempool {
        self.raw.as_ptr()
    }

    /// Vectors not back in the pool.
    pub(crate) fn in_use(&self) -> u32 {
        // SAFETY: a valid pool; the count is a snapshot.
        unsafe { sys::rte_mempool_in_use_count(self.raw.as_ptr()) }
    }
}

impl Drop for VectorPool {
    fn drop(&mut self) {
        // SAFETY: the device is closed (its DevLife owns this pool and
        // closes first): no vector is in use by DPDK any more.
        unsafe { sys::rte_mempool_free(self.raw.as_ptr()) }
    }
}

/// A dequeued vector's packets, owned. [`fill`](EventVector::fill) takes
/// them out in batches; [`refill`](EventVector::refill) puts back those
/// forwarded, each bound for an ethdev port, into the places the taken
/// ones left; [`EventPort::forward_vector`](crate::EventPort::forward_vector)
/// then sends the vector, taking it. Dropped, it frees the packets it still
/// holds and returns the vector to its pool. There is no second handle:
///
/// ```compile_fail
/// fn twin<T: Clone>(_: &T) {}
/// fn check(v: &dpdk::EventVector) { twin(v) } // EventVector is not Clone
/// ```
///
/// and none after it was forwarded:
///
/// ```compile_fail
/// fn check(port: &mut dpdk::EventPort, v: dpdk::EventVector) {
///     port.forward_vector(v);
///     let _ = v.len(); // use of moved value
/// }
/// ```
///
/// Used before, it is fine:
///
/// ```
/// fn check(port: &mut dpdk::EventPort, v: dpdk::EventVector) {
///     let _ = v.len();
///     port.forward_vector(v);
/// }
/// ```
pub struct EventVector {
    pub(crate) vec: NonNull<sys::rte_event_vector>,
    /// Its event's place in the dequeue round.
    pub(crate) slot: u8,
    /// The vector's packets: `[..kept]` forwarded and `[next..end]` not
    /// taken yet, both owned; the rest were taken out.
    mbufs: *mut *mut sys::rte_mbuf,
    pub(crate) kept: u16,
    next: u16,
    end: u16,
}

// SAFETY: the vector and its packets are owned by this handle alone.
unsafe impl Send for EventVector {}

impl EventVector {
    /// Takes ownership of the vector of a dequeued event.
    ///
    /// # Safety
    /// `vec` is a valid vector no one else owns.
    pub(crate) unsafe fn from_raw(vec: NonNull<sys::rte_event_vector>, slot: u8) -> EventVector {
        // SAFETY: the caller's guarantee; the shim reads the vector's
        // offset and length only.
        let (mbufs, end) = unsafe { (sys::shim_vector_mbufs(vec.as_ptr()), sys::shim_vector_len(vec.as_ptr())) };
        EventVector {
            vec,
            slot,
            mbufs,
            kept: 0,
            next: 0,
            end,
        }
    }

    /// Packets not taken out yet.
    pub fn len(&self) -> usize {
        usize::from(self.end - self.next)
    }

    /// True when every packet was taken out.
    pub fn is_empty(&self) -> bool {
        self.next == self.end
    }

    /// Moves packets not taken yet into `into`, as many as it has room
    /// for; returns how many.
    #[inline(always)]
    pub fn fill<const N: usize>(&mut self, into: &mut MbufArray<N>) -> usize {
        let (dst, room) = into.raw_free_slots();
        let n = room.min(self.len());
        // SAFETY: [next..next+n] are owned, valid mbuf pointers of the
        // vector, and dst has room for n; ownership moves to `into`.
        unsafe { std::ptr::copy_nonoverlapping(self.mbufs.add(usize::from(self.next)), dst, n) };
        into.grow(n);
        self.next += n as u16;
        n
    }

    /// Puts the packets of `from` back into the vector, each bound for
    /// ethdev port `eth_port` (TX queue 0), as many as there are places
    /// (one per packet taken out, never fewer than those taken and
    /// forwarded); returns how many. The rest stay in `from`.
    #[inline(always)]
    pub fn refill<const N: usize>(&mut self, from: &mut MbufArray<N>, eth_port: u16) -> usize {
        let n = usize::from(self.next - self.kept).min(from.len());
        let src = from.raw_ptrs();
        for i in 0..n {
            // SAFETY: i < from.len(): an owned mbuf; its place [kept+i] is
            // free (kept + n <= next); ownership moves to the vector.
            unsafe {
                let m = *src.add(i);
                sys::shim_mbuf_to_tx(m, eth_port);
                *self.mbufs.add(usize::from(self.kept) + i) = m;
            }
        }
        from.forget_first(n);
        self.kept += n as u16;
        n
    }

    /// Hands the vector over (to the round it goes back in), freeing the
    /// packets not taken out; its kept packets leave with it.
    pub(crate) fn into_kept(self) -> (NonNull<sys::rte_event_vector>, u8, u16) {
        let mut this = std::mem::ManuallyDrop::new(self);
        this.free_untaken();
        (this.vec, this.slot, this.kept)
    }

    fn free_untaken(&mut self) {
        for i in self.next..self.end {
            // SAFETY: [next..end] are owned mbufs; `next` moves past them.
            unsafe { sys::shim_pktmbuf_free(*self.mbufs.add(usize::from(i))) };
        }
        self.next = self.end;
    }
}

impl Drop for EventVector {
    fn drop(&mut self) {
        self.free_untaken();
        for i in 0..self.kept {
            // SAFETY: [..kept] are owned mbufs, freed once here.
            unsafe { sys::shim_pktmbuf_free(*self.mbufs.add(usize::from(i))) };
        }
        // SAFETY: the vector is owned and holds no packet any more.
        unsafe { sys::shim_vector_put(self.vec.as_ptr()) };
    }
}
