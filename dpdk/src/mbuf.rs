//! Packet buffers: owned mbufs and fixed-size arrays of them, with data
//! access bounded by the first segment's `data_len`.

use std::ptr::NonNull;

use crate::sys;

/// One packet buffer, owned: dropping it returns it to its mempool.
#[repr(transparent)]
pub struct Mbuf(NonNull<sys::rte_mbuf>);

// SAFETY: an mbuf is owned by exactly one Mbuf at a time; moving that
// ownership to another lcore is how DPDK hands packets between threads.
unsafe impl Send for Mbuf {}

impl Mbuf {
    /// The packet bytes in the first segment (`data_len` of them).
    #[inline(always)]
    pub fn data(&self) -> &[u8] {
        // SAFETY: we own the mbuf; buf_addr + data_off starts data_len
        // initialised bytes inside the buffer (DPDK's mbuf invariant), and
        // nothing else accesses them while we hold &self.
        unsafe {
            let m = self.0.as_ref();
            let p = (m.buf_addr as *const u8).add(m.data_off as usize);
            std::slice::from_raw_parts(p, m.data_len as usize)
        }
    }

    /// The packet bytes in the first segment, writable.
    #[inline(always)]
    pub fn data_mut(&mut self) -> &mut [u8] {
        // SAFETY: as in `data`, and &mut self makes the access exclusive
        // (mbufs from RX have refcnt 1: no other owner can see the bytes).
        unsafe {
            let m = self.0.as_ref();
            let p = (m.buf_addr as *mut u8).add(m.data_off as usize);
            std::slice::from_raw_parts_mut(p, m.data_len as usize)
        }
    }

    /// Asks the CPU to fetch the start of the packet into L1.
    #[inline(always)]
    pub fn prefetch_data(&self) {
        // SAFETY: reads two fields of an mbuf we own; computes an address
        // without dereferencing it.
        let p = unsafe {
            let m = self.0.as_ref();
            (m.buf_addr as *const u8).wrapping_add(m.data_off as usize)
        };
        prefetch(p);
    }

    /// The port the packet was received on.
    pub fn port(&self) -> u16 {
        // SAFETY: reads a field of an mbuf we own.
        unsafe { self.0.as_ref().port }
    }
}

impl Drop for Mbuf {
    fn drop(&mut self) {
        // SAFETY: we own the mbuf; it is not used after this.
        unsafe { sys::l3fwd_pktmbuf_free(self.0.as_ptr()) }
    }
}

/// Hints the CPU to load the cache line at `p`; never faults.
#[inline(always)]
pub fn prefetch(p: *const u8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: PREFETCHT0 is a hint: it does not dereference in the language
    // sense and never faults, whatever the address.
    unsafe {
        core::arch::x86_64::_mm_prefetch::<{ core::arch::x86_64::_MM_HINT_T0 }>(p as *const i8)
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// Up to `N` owned mbufs in order: an RX burst or a TX buffer. Dropping it
/// frees what it still holds.
pub struct MbufArray<const N: usize> {
    slots: [Option<Mbuf>; N],
    len: usize,
}

impl<const N: usize> Default for MbufArray<N> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const N: usize> MbufArray<N> {
    /// An empty array.
    pub fn new() -> Self {
        Self {
            slots: std::array::from_fn(|_| None),
            len: 0,
        }
    }

    /// Number of packets held.
    #[inline(always)]
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when no packet is held.
    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// True when `N` packets are held.
    #[inline(always)]
    pub fn is_full(&self) -> bool {
        self.len == N
    }

    /// Appends a packet; hands it back when the array is full.
    #[inline(always)]
    pub fn push(&mut self, m: Mbuf) -> Result<(), Mbuf> {
        if self.len == N {
            return Err(m);
        }
        self.slots[self.len] = Some(m);
        self.len += 1;
        Ok(())
    }

    /// The held packets, in order.
    #[inline(always)]
    pub fn as_slice(&self) -> &[Mbuf] {
        let held = &self.slots[..self.len];
        // SAFETY: Option<Mbuf> has Mbuf's layout (NonNull niche) and the
        // first `len` slots are all Some.
        unsafe { std::slice::from_raw_parts(held.as_ptr() as *const Mbuf, held.len()) }
    }

    /// The held packets, in order, writable.
    #[inline(always)]
    pub fn as_mut_slice(&mut self) -> &mut [Mbuf] {
        let held = &mut self.slots[..self.len];
        // SAFETY: as in `as_slice`, with exclusive access through &mut self.
        unsafe { std::slice::from_raw_parts_mut(held.as_mut_ptr() as *mut Mbuf, held.len()) }
    }

    /// Takes every packet out, in order, leaving the array empty.
    #[inline(always)]
    pub fn drain(&mut self) -> impl Iterator<Item = Mbuf> + '_ {
        let n = std::mem::take(&mut self.len);
        self.slots[..n].iter_mut().filter_map(Option::take)
    }

    /// Frees every held packet; returns how many.
    pub fn free_all(&mut self) -> usize {
        let n = self.len;
        if n > 0 {
            // SAFETY: the first `len` slots hold owned mbuf pointers (the
            // Option layout is a pointer); they are forgotten below so each
            // is freed exactly once.
            unsafe { sys::rte_pktmbuf_free_bulk(self.raw_ptrs(), n as u32) };
            self.forget_first(n);
        }
        n
    }

    /// Raw pointers of the held packets for a burst call.
    #[inline(always)]
    pub(crate) fn raw_ptrs(&mut self) -> *mut *mut sys::rte_mbuf {
        self.slots.as_mut_ptr() as *mut *mut sys::rte_mbuf
    }

    /// Raw pointer to the first free slot, for RX to fill.
    #[inline(always)]
    pub(crate) fn raw_free_slots(&mut self) -> (*mut *mut sys::rte_mbuf, usize) {
        let p = self.slots[self.len..].as_mut_ptr() as *mut *mut sys::rte_mbuf;
        (p, N - self.len)
    }

    /// Records that RX wrote `n` owned mbufs after the held ones.
    #[inline(always)]
    pub(crate) fn grow(&mut self, n: usize) {
        debug_assert!(self.len + n <= N);
        self.len += n;
    }

    /// Drops ownership of the first `n` packets without freeing them (the
    /// driver took them) and moves the rest to the front.
    #[inline(always)]
    pub(crate) fn forget_first(&mut self, n: usize) {
        for s in &mut self.slots[..n] {
            std::mem::forget(s.take());
        }
        self.slots[..self.len].rotate_left(n);
        self.len -= n;
    }
}

impl<const N: usize> Drop for MbufArray<N> {
    fn drop(&mut self) {
        self.free_all();
    }
}
