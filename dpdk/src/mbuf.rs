//! Packet buffers: owned mbufs and fixed-size arrays of them, with data
//! access bounded by the first segment's `data_len`.
//!
//! In C a burst is `struct rte_mbuf *pkts[32]` plus a count, and nothing
//! stops code from freeing a packet twice, sending it and then touching it,
//! or reading past its end. Here a packet is an owned [`Mbuf`] (dropped =
//! freed, sent = moved away) and a burst an [`MbufArray`]: the same array
//! of raw pointers the burst calls take, with ownership tracked by its
//! length. [`Mbuf::data`] is a slice of exactly `data_len` bytes, so a
//! parser that reads past a short frame gets `None` from `get`, not the
//! next packet's bytes.
//!
//! The crate-level example moves a burst from a `net_null` port's RX
//! queue to its TX queue.

use std::ptr::NonNull;
use std::sync::atomic::{AtomicU16, Ordering};

use crate::sys;

/// One packet buffer, owned: dropping it returns it to its mempool.
///
/// Mbufs come from an RX queue (inside an [`MbufArray`]) and leave through
/// a TX queue or by being dropped; there is no way to copy one, so a packet
/// is sent or freed exactly once. Only the first segment is reachable:
/// l3fwd never reads past the headers.
#[repr(transparent)]
pub struct Mbuf(NonNull<sys::rte_mbuf>);

// SAFETY: an mbuf is owned by exactly one Mbuf at a time; moving that
// ownership to another lcore is how DPDK hands packets between threads.
unsafe impl Send for Mbuf {}

impl Mbuf {
    /// The packet bytes in the first segment (`data_len` of them). Read
    /// headers with `get(range)` or slice patterns: a frame shorter than
    /// what it announces then shows as `None`, never as a read past its end.
    #[inline(always)]
    pub fn data(&self) -> &[u8] {
        // SAFETY: we own the mbuf; buf_addr + data_off starts data_len
        // initialised bytes inside the buffer (DPDK's mbuf invariant), and
        // nothing else accesses them while we hold &self.
        unsafe {
            let m = self.0.as_ref();
            let p = (m.buf_addr as *const u8).add(fields::data_off(m) as usize);
            std::slice::from_raw_parts(p, fields::data_len(m) as usize)
        }
    }

    /// The packet bytes in the first segment, writable, if no one else can
    /// see them ([`Mbuf::is_exclusive`]).
    #[inline(always)]
    pub fn try_data_mut(&mut self) -> Option<&mut [u8]> {
        if !self.is_exclusive() {
            return None;
        }
        // SAFETY: as in `data`; &mut self and is_exclusive (reference count
        // 1, the buffer its own or an external one no other mbuf shares)
        // make the access exclusive. The address is inside the mbuf's
        // buffer, so never null: told so, a caller matching on the Option
        // makes no null test per packet (2 instructions of LPM's 124).
        Some(unsafe {
            let m = self.0.as_ref();
            let p = (m.buf_addr as *mut u8).add(fields::data_off(m) as usize);
            std::hint::assert_unchecked(!p.is_null());
            std::slice::from_raw_parts_mut(p, fields::data_len(m) as usize)
        })
    }

    /// A fresh mbuf of `pool` holding a copy of `frame` in its first
    /// segment, as a driver would hand it out; None if the pool has no free
    /// mbuf or the frame is longer than an mbuf's room.
    pub fn from_frame(pool: &crate::Mempool, frame: &[u8]) -> Option<Mbuf> {
        let len = u16::try_from(frame.len()).ok()?;
        // SAFETY: the pool is alive; a fresh mbuf is ours alone (and freed
        // by the Mbuf if the append fails).
        let m = Mbuf(NonNull::new(unsafe { sys::shim_pktmbuf_alloc(pool.as_ptr()) })?);
        // SAFETY: appends to the empty data of an mbuf we own.
        let room = unsafe { sys::shim_pktmbuf_append(m.0.as_ptr(), len) };
        if room.is_null() {
            return None;
        }
        // SAFETY: the append made `len` bytes at `room` part of the frame,
        // inside the mbuf's buffer, which `frame` cannot overlap.
        unsafe { std::ptr::copy_nonoverlapping(frame.as_ptr(), room.cast::<u8>(), frame.len()) };
        Some(m)
    }

    /// Whether this handle alone reaches the packet bytes: the mbuf's
    /// reference count is 1, and its buffer is its own (a direct mbuf) or an
    /// external buffer attached to it alone. Not so for a clone
    /// (`rte_pktmbuf_clone`: an indirect mbuf, its bytes another's) or an
    /// mbuf whose count another holder raised. Mbufs from RX queues are
    /// exclusive; a driver could hand out others.
    #[inline(always)]
    pub fn is_exclusive(&self) -> bool {
        let m = self.0.as_ptr();
        // SAFETY: the mbuf is alive while we hold it; its reference count
        // is read atomically, as other holders update it atomically.
        let refcnt = unsafe { AtomicU16::from_ptr(fields::refcnt(m)).load(Ordering::Relaxed) };
        if refcnt != 1 {
            return false;
        }
        // Both flags sit in the top byte of ol_flags: read alone, it is one
        // byte test in memory per packet instead of a 64-bit constant and
        // a test.
        const ATTACHED: u64 = sys::RTE_MBUF_F_INDIRECT | sys::RTE_MBUF_F_EXTERNAL;
        const _: () = assert!(ATTACHED >> 56 << 56 == ATTACHED);
        const TOP: usize = if cfg!(target_endian = "little") { 7 } else { 0 };
        // SAFETY: with a count of 1 the mbuf header is ours alone; the byte
        // is inside ol_flags.
        let top = unsafe { *(std::ptr::addr_of!((*m).ol_flags) as *const u8).add(TOP) };
        top & (ATTACHED >> 56) as u8 == 0 || self.external_exclusive()
    }

    /// The rare case of [`Mbuf::is_exclusive`]: a count of 1 and a buffer
    /// that is not the mbuf's own.
    #[cold]
    #[inline(never)]
    fn external_exclusive(&self) -> bool {
        // SAFETY: as in is_exclusive: a count of 1, the header is ours.
        let flags = unsafe { (*self.0.as_ptr()).ol_flags };
        if flags & sys::RTE_MBUF_F_INDIRECT != 0 {
            return false;
        }
        // SAFETY: an mbuf with RTE_MBUF_F_EXTERNAL has a valid shinfo (DPDK
        // attaches both together); its count is read atomically.
        unsafe {
            let shinfo = (*self.0.as_ptr()).shinfo;
            AtomicU16::from_ptr(std::ptr::addr_of_mut!((*shinfo).refcnt)).load(Ordering::Relaxed) == 1
        }
    }

    /// Asks the CPU to fetch the start of the packet into L1.
    ///
    /// The forwarder calls this a few packets ahead of the one it parses,
    /// so that the header's cache miss is paid while earlier packets are
    /// being worked on. It reads only the mbuf's own fields (already in
    /// cache after RX) and never faults.
    #[inline(always)]
    pub fn prefetch_data(&self) {
        // SAFETY: reads two fields of an mbuf we own; computes an address
        // without dereferencing it.
        let p = unsafe {
            let m = self.0.as_ref();
            (m.buf_addr as *const u8).wrapping_add(fields::data_off(m) as usize)
        };
        prefetch(p);
    }

    /// The port the packet was received on (the `port` field the driver
    /// sets).
    pub fn port(&self) -> u16 {
        // SAFETY: reads a field of an mbuf we own.
        fields::port(unsafe { self.0.as_ref() })
    }
}

/// The mbuf fields the safe layer reads, wherever the DPDK built against
/// keeps them: since 24.07 they sit in anonymous unions (the RTE_MARKERs
/// went), which bindgen names `__bindgen_anon_N`. Both layouts are the
/// public `struct rte_mbuf` as bindgen read it from the installed headers,
/// so the offsets are DPDK's own.
pub(crate) mod fields {
    use crate::sys::rte_mbuf;

    /// Byte offsets of `buf_addr`, `data_off` and `data_len` in an mbuf,
    /// for the gathers of [`crate::simd`].
    pub const BUF_ADDR: usize = std::mem::offset_of!(rte_mbuf, buf_addr);
    #[cfg(not(dpdk_ge_2407))]
    pub const DATA_OFF: usize = std::mem::offset_of!(rte_mbuf, data_off);
    #[cfg(dpdk_ge_2407)]
    pub const DATA_OFF: usize = std::mem::offset_of!(rte_mbuf, __bindgen_anon_1.__bindgen_anon_1.data_off);
    #[cfg(not(dpdk_ge_2407))]
    pub const DATA_LEN: usize = std::mem::offset_of!(rte_mbuf, data_len);
    #[cfg(dpdk_ge_2407)]
    pub const DATA_LEN: usize = std::mem::offset_of!(rte_mbuf, __bindgen_anon_2.__bindgen_anon_1.data_len);

    /// Where the packet starts in the buffer.
    #[inline(always)]
    pub fn data_off(m: &rte_mbuf) -> u16 {
        #[cfg(not(dpdk_ge_2407))]
        return m.data_off;
        // SAFETY: a union of integers, any bits valid; the struct view is
        // the one DPDK's own code reads.
        #[cfg(dpdk_ge_2407)]
        return unsafe { m.__bindgen_anon_1.__bindgen_anon_1.data_off };
    }

    /// Bytes of the packet in this segment.
    #[inline(always)]
    pub fn data_len(m: &rte_mbuf) -> u16 {
        #[cfg(not(dpdk_ge_2407))]
        return m.data_len;
        // SAFETY: as in data_off.
        #[cfg(dpdk_ge_2407)]
        return unsafe { m.__bindgen_anon_2.__bindgen_anon_1.data_len };
    }

    /// The port the driver received the packet on.
    #[inline(always)]
    pub fn port(m: &rte_mbuf) -> u16 {
        #[cfg(not(dpdk_ge_2407))]
        return m.port;
        // SAFETY: as in data_off.
        #[cfg(dpdk_ge_2407)]
        return unsafe { m.__bindgen_anon_1.__bindgen_anon_1.port };
    }

    /// The reference count's address, for atomic access (other holders
    /// change it atomically). No reference to the mbuf is made.
    ///
    /// # Safety
    ///
    /// `m` points at a live mbuf.
    #[inline(always)]
    pub unsafe fn refcnt(m: *mut rte_mbuf) -> *mut u16 {
        #[cfg(not(dpdk_ge_2407))]
        // SAFETY: m is live (the caller's word); only an address is made.
        return unsafe { std::ptr::addr_of_mut!((*m).refcnt) };
        #[cfg(dpdk_ge_2407)]
        // SAFETY: as above.
        return unsafe { std::ptr::addr_of_mut!((*m).__bindgen_anon_1.__bindgen_anon_1.refcnt) };
    }
}

impl Drop for Mbuf {
    fn drop(&mut self) {
        // SAFETY: we own the mbuf; it is not used after this.
        unsafe { sys::shim_pktmbuf_free(self.0.as_ptr()) }
    }
}

/// Hints the CPU to load the cache line at `p`; never faults.
///
/// `rte_prefetch0`: a `PREFETCHT0` on x86_64, nothing elsewhere. Any
/// address is fine, even a dangling one: a prefetch is not a read.
///
/// ```
/// let table = vec![0u64; 1024];
/// // Warm the line an upcoming lookup will read.
/// dpdk::prefetch(table[512..].as_ptr() as *const u8);
/// dpdk::prefetch(std::ptr::null()); // harmless
/// ```
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
/// frees what it still holds. Kept as raw pointers, the layout burst calls
/// take, so RX and TX need no conversion and moving packets in and out costs
/// one pointer copy.
///
/// l3fwd-rs keeps one as the RX burst of each lcore and one per TX port as
/// that port's buffer: [`RxQueue::recv`](crate::RxQueue::recv) fills the
/// free room, [`TxQueue::send`](crate::TxQueue::send) removes what the
/// driver took and leaves the rest in order. An empty array needs no EAL:
///
/// ```
/// let mut burst = dpdk::MbufArray::<32>::new();
/// assert!(burst.is_empty() && !burst.is_full());
/// assert_eq!(burst.as_slice().len(), 0);
/// assert_eq!(burst.drain().count(), 0);
/// assert_eq!(burst.free_all(), 0);
/// ```
///
/// The [crate-level example](crate#a-burst-from-rx-to-tx) moves a real
/// burst from RX to TX.
pub struct MbufArray<const N: usize> {
    /// The first `len` are owned, non-null mbufs; the rest are stale.
    slots: [*mut sys::rte_mbuf; N],
    len: usize,
}

// SAFETY: the array owns its mbufs exclusively (as Mbuf does); moving it to
// another thread moves that ownership.
unsafe impl<const N: usize> Send for MbufArray<N> {}

impl<const N: usize> Default for MbufArray<N> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const N: usize> MbufArray<N> {
    /// An empty array (no allocation: `N` null pointers on the stack or in
    /// the owner's struct).
    pub fn new() -> Self {
        Self {
            slots: [std::ptr::null_mut(); N],
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

    /// Appends a packet and returns how many are now held; hands the
    /// packet back when the array is full, so a packet is never lost by a
    /// full buffer (the caller flushes and retries, or drops it, which
    /// frees it).
    #[inline(always)]
    pub fn push(&mut self, m: Mbuf) -> Result<usize, Mbuf> {
        let len = self.len;
        let Some(slot) = self.slots.get_mut(len) else {
            return Err(m);
        };
        *slot = std::mem::ManuallyDrop::new(m).0.as_ptr();
        self.len = len + 1;
        Ok(len + 1)
    }

    /// The held packets, in order.
    #[inline(always)]
    pub fn as_slice(&self) -> &[Mbuf] {
        // SAFETY: Mbuf is a transparent NonNull<rte_mbuf>, laid out as the
        // raw pointer; the first `len` slots are owned, non-null mbufs.
        unsafe { std::slice::from_raw_parts(self.slots.as_ptr() as *const Mbuf, self.len) }
    }

    /// The held packets, in order, writable.
    #[inline(always)]
    pub fn as_mut_slice(&mut self) -> &mut [Mbuf] {
        // SAFETY: as in `as_slice`, with exclusive access through &mut self.
        unsafe { std::slice::from_raw_parts_mut(self.slots.as_mut_ptr() as *mut Mbuf, self.len) }
    }

    /// Takes every packet out, in order, leaving the array empty. Packets
    /// the iterator is dropped without yielding are freed.
    ///
    /// The forwarder drains each RX burst into the TX buffers: every packet
    /// moves to one of them or is dropped, and the compiler checks that no
    /// path forgets one.
    #[inline(always)]
    pub fn drain(&mut self) -> Drain<'_> {
        let n = std::mem::take(&mut self.len);
        Drain {
            slots: self.slots[..n].iter(),
        }
    }

    /// Frees every held packet (one `rte_pktmbuf_free_bulk`); returns how
    /// many. After [`TxQueue::send`](crate::TxQueue::send), this drops what
    /// the driver refused.
    pub fn free_all(&mut self) -> usize {
        let n = std::mem::take(&mut self.len);
        if n > 0 {
            // SAFETY: the first n slots were owned mbufs; len is already 0,
            // so each is freed exactly once.
            unsafe { sys::rte_pktmbuf_free_bulk(self.slots.as_mut_ptr(), n as u32) };
        }
        n
    }

    /// Raw pointers of the held packets for a burst call.
    #[inline(always)]
    pub(crate) fn raw_ptrs(&mut self) -> *mut *mut sys::rte_mbuf {
        self.slots.as_mut_ptr()
    }

    /// Raw pointer to the first free slot, for RX to fill.
    #[inline(always)]
    pub(crate) fn raw_free_slots(&mut self) -> (*mut *mut sys::rte_mbuf, usize) {
        (self.slots[self.len..].as_mut_ptr(), N - self.len)
    }

    /// Records that RX wrote `n` owned mbufs after the held ones.
    #[inline(always)]
    pub(crate) fn grow(&mut self, n: usize) {
        debug_assert!(self.len + n <= N);
        self.len = (self.len + n).min(N);
    }

    /// Drops ownership of the first `n` packets without freeing them (the
    /// driver took them) and moves the rest to the front.
    #[inline(always)]
    pub(crate) fn forget_first(&mut self, n: usize) {
        let n = n.min(self.len);
        self.slots.copy_within(n..self.len, 0);
        self.len -= n;
    }
}

/// The packets taken out of an [`MbufArray`] by [`MbufArray::drain`], in
/// order; those not taken are freed when it is dropped.
pub struct Drain<'a> {
    /// The owned mbufs not yet yielded.
    slots: std::slice::Iter<'a, *mut sys::rte_mbuf>,
}

impl Iterator for Drain<'_> {
    type Item = Mbuf;

    #[inline(always)]
    fn next(&mut self) -> Option<Mbuf> {
        let &p = self.slots.next()?;
        // SAFETY: slots below the array's old len are owned, non-null mbufs,
        // each handed out once (the iterator only advances).
        Some(Mbuf(unsafe { NonNull::new_unchecked(p) }))
    }
}

impl<'a> Drain<'a> {
    /// The next mbufs, each with the item of `a` at its index, as many as
    /// the shorter of the two has. One index walks both, where zipping this
    /// iterator with another tests the end of each.
    #[inline(always)]
    pub fn zip_take<'s, A: Copy>(&'s mut self, a: &'s [A]) -> ZipTake<'s, A> {
        let rest = self.slots.as_slice();
        let n = rest.len().min(a.len());
        let (now, later) = rest.split_at(n);
        // Past them at once: this drain's Drop never frees them, ZipTake's
        // frees those it does not hand out.
        self.slots = later.iter();
        ZipTake {
            slots: now,
            a: &a[..n],
            next: 0,
        }
    }
}

impl Drain<'_> {
    /// Moves the next `n` mbufs (no more than `into` has room for) to the
    /// end of `into` in one copy of their pointers, in order; returns how
    /// many moved. A run of packets bound for one TX buffer goes there
    /// whole, not one push at a time.
    #[inline(always)]
    pub fn move_into<const M: usize>(&mut self, n: usize, into: &mut MbufArray<M>) -> usize {
        let rest = self.slots.as_slice();
        let len = into.len;
        let n = n.min(rest.len()).min(M - len);
        let (moved, later) = rest.split_at(n);
        into.slots[len..len + n].copy_from_slice(moved);
        into.len = len + n;
        // Past them: this drain's Drop never frees them; `into` owns them.
        self.slots = later.iter();
        n
    }
}

/// The iterator of [`Drain::zip_take`]; the mbufs it does not hand out are
/// freed when it is dropped.
pub struct ZipTake<'s, A> {
    /// Owned mbufs from `next` on; `a` as long.
    slots: &'s [*mut sys::rte_mbuf],
    a: &'s [A],
    next: usize,
}

impl<A: Copy> Iterator for ZipTake<'_, A> {
    type Item = (Mbuf, A);

    #[inline(always)]
    fn next(&mut self) -> Option<(Mbuf, A)> {
        let i = self.next;
        if i >= self.slots.len() {
            return None;
        }
        self.next = i + 1;
        // SAFETY: i is below slots' length, which `a` shares (cut so by
        // zip_take); slots from `next` on are owned, non-null mbufs, each
        // handed out once (next only grows).
        unsafe {
            Some((
                Mbuf(NonNull::new_unchecked(*self.slots.get_unchecked(i))),
                *self.a.get_unchecked(i),
            ))
        }
    }
}

impl<A> Drop for ZipTake<'_, A> {
    fn drop(&mut self) {
        let rest = self.slots.get(self.next..).unwrap_or_default();
        if !rest.is_empty() {
            // SAFETY: as in Drain's Drop: owned mbufs no one else has.
            unsafe { sys::rte_pktmbuf_free_bulk(rest.as_ptr() as *mut *mut sys::rte_mbuf, rest.len() as u32) };
        }
    }
}

impl Drop for Drain<'_> {
    fn drop(&mut self) {
        let rest = self.slots.as_slice();
        if !rest.is_empty() {
            // SAFETY: the remaining slots are owned mbufs nobody else has
            // (the array's len is 0); rte_pktmbuf_free_bulk only reads the
            // pointer array despite its mutable type.
            unsafe { sys::rte_pktmbuf_free_bulk(rest.as_ptr() as *mut *mut sys::rte_mbuf, rest.len() as u32) };
        }
    }
}

impl<const N: usize> Drop for MbufArray<N> {
    fn drop(&mut self) {
        self.free_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Eal, Mempool};

    /// An mbuf of `pool`, taken as an RX queue would hand it out.
    fn alloc(pool: &Mempool) -> Mbuf {
        // SAFETY: the pool is alive; a fresh mbuf is ours alone.
        Mbuf(NonNull::new(unsafe { sys::shim_pktmbuf_alloc(pool.as_ptr()) }).expect("an mbuf"))
    }

    #[test]
    fn shared_bytes_are_not_writable() {
        let eal = Eal::for_tests(&[]).expect("EAL init");
        let pool = Mempool::create(eal, "test_shared_mbufs", 64, 0, 0).expect("pool");
        let mut m = alloc(&pool);
        // SAFETY: appends 64 bytes to a fresh mbuf with room for 2048.
        assert!(!unsafe { sys::shim_pktmbuf_append(m.0.as_ptr(), 64) }.is_null());
        assert!(m.is_exclusive());
        assert_eq!(m.try_data_mut().map(|d| d.len()), Some(64));

        // A clone shares the bytes: an indirect mbuf, and the original's
        // count is 2. Neither may write them.
        // SAFETY: clones an mbuf we hold into a pool that is alive.
        let mut clone = Mbuf(NonNull::new(unsafe { sys::rte_pktmbuf_clone(m.0.as_ptr(), pool.as_ptr()) }).unwrap());
        assert_eq!(clone.data(), m.data());
        for shared in [&mut m, &mut clone] {
            assert!(!shared.is_exclusive());
            assert!(shared.try_data_mut().is_none());
        }
        drop(clone);
        // The original alone again.
        assert!(m.is_exclusive());
        assert_eq!(m.try_data_mut().map(|d| d.len()), Some(64));
        drop(m);
        assert_eq!(pool.in_use(), 0);
    }

    /// An array of 8 holding six fresh mbufs of `pool`, and their pointers.
    fn six_in_a_batch(pool: &Mempool) -> (MbufArray<8>, Vec<*mut sys::rte_mbuf>) {
        let mut batch = MbufArray::<8>::new();
        let ptrs = (0..6)
            .map(|_| {
                let m = alloc(pool);
                let p = m.0.as_ptr();
                assert!(batch.push(m).is_ok());
                p
            })
            .collect();
        (batch, ptrs)
    }

    #[test]
    fn move_into_moves_the_next_mbufs_that_fit_in_order_and_frees_none_twice() {
        let eal = Eal::for_tests(&[]).expect("EAL init");
        let pool = Mempool::create(eal, "test_move_into", 64, 0, 0).expect("pool");
        let (mut batch, ptrs) = six_in_a_batch(&pool);
        let mut buffer = MbufArray::<4>::new();
        assert!(buffer.push(alloc(&pool)).is_ok());
        let mut drain = batch.drain();
        assert_eq!(drain.move_into(2, &mut buffer), 2);
        // Room for one more only.
        assert_eq!(drain.move_into(3, &mut buffer), 1);
        let held: Vec<_> = buffer.as_slice().iter().map(|m| m.0.as_ptr()).collect();
        assert_eq!(held[1..], ptrs[..3]);
        // The drain goes on after the moved ones; the rest are freed with it.
        assert_eq!(drain.next().map(|m| m.0.as_ptr()), Some(ptrs[3]));
        drop(drain);
        assert_eq!(pool.in_use(), 4, "the buffer's four");
        drop(buffer);
        assert_eq!(pool.in_use(), 0);
    }

    #[test]
    fn zip_take_pairs_each_mbuf_with_its_items_and_frees_what_it_does_not_hand_out() {
        let eal = Eal::for_tests(&[]).expect("EAL init");
        let pool = Mempool::create(eal, "test_zip_take", 64, 0, 0).expect("pool");
        let (mut batch, ptrs) = six_in_a_batch(&pool);
        let a = [10, 11, 12, 13];
        let mut drain = batch.drain();
        // The shorter of the two decides: 3 mbufs, of which 2 are taken.
        let mut first = drain.zip_take(&a[..3]);
        let taken: Vec<_> = first.by_ref().take(2).collect();
        let seen: Vec<_> = taken.iter().map(|(m, a)| (m.0.as_ptr(), *a)).collect();
        assert_eq!(seen, [(ptrs[0], 10), (ptrs[1], 11)]);
        drop(first);
        assert_eq!(
            pool.in_use(),
            5,
            "the third mbuf, not handed out, is freed with its iterator"
        );
        // The drain goes on after them.
        let rest: Vec<_> = drain.zip_take(&a).map(|(m, a)| (m.0.as_ptr(), a)).collect();
        assert_eq!(rest, [(ptrs[3], 10), (ptrs[4], 11), (ptrs[5], 12)]);
        drop(drain);
        assert_eq!(pool.in_use(), 2, "the two taken first are held");
        drop(taken);
        assert_eq!(pool.in_use(), 0);
    }
}
