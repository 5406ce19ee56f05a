//! What the data path needs of packets and queues, as traits: DPDK's mbufs
//! and ethdev queues are one implementation (below), the in-memory queues
//! of the unit tests another. The forwarder is generic over them, so the
//! DPDK instance compiles to the same code as if it named the DPDK types.

use dpdk::{Mbuf, MbufArray, Simd};

use crate::dataplane::packet::IPV4_DESTINATION;

use crate::MAX_BURST;

/// A packet buffer the data path reads and rewrites in place. Dropping it
/// frees it.
pub trait Packet {
    /// The frame's bytes.
    fn data(&self) -> &[u8];
    /// The frame's bytes, writable; None if another holder can see them
    /// (a shared or cloned mbuf), which the forwarder then drops.
    fn try_data_mut(&mut self) -> Option<&mut [u8]>;
    /// Starts loading the frame's first cache line.
    fn prefetch_data(&self);
    /// Of each whole group of eight of `pkts`, read with `simd`: which
    /// are IPv4 frames (bit `i` of `ipv4[g]` for packet `8g + i`) and their
    /// destinations, as [`parse`](crate::dataplane::packet::parse) reads
    /// them (`dsts[8g + i]`). Returns how many packets it read, a multiple
    /// of 8; none for packets without this path (the default).
    fn ipv4_dsts(_simd: Simd, _pkts: &[Self], _dsts: &mut [u32], _ipv4: &mut [u8]) -> usize
    where
        Self: Sized,
    {
        0
    }
}

/// An array of up to [`MAX_BURST`] owned packets: an RX batch or a TX
/// buffer.
pub trait Packets: Default {
    type Packet: Packet;
    fn len(&self) -> usize;
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Appends a packet and returns how many are held; hands it back when
    /// the array is full.
    fn push(&mut self, p: Self::Packet) -> Result<usize, Self::Packet>;
    /// The held packets, in order.
    fn as_slice(&self) -> &[Self::Packet];
    /// The held packets, in order, writable.
    fn as_mut_slice(&mut self) -> &mut [Self::Packet];
    /// Takes every packet out, in order; those not taken are freed when
    /// the drain is dropped.
    fn drain(&mut self) -> impl Drained<Self::Packet, Into = Self> + '_;
    /// Frees every held packet; returns how many.
    fn free_all(&mut self) -> usize;
}

/// The packets taken out of a [`Packets`], in order.
pub trait Drained<P> {
    /// The array the packets can move to whole (a TX buffer).
    type Into;
    /// The next packets, each with the item of `a` at its index, as many
    /// as the shorter of the two has.
    fn zip_take<'s, A: Copy>(&'s mut self, a: &'s [A]) -> impl Iterator<Item = (P, A)> + 's;
    /// Moves the next `n` packets (no more than `into` has room for) to
    /// the end of `into`, in order; returns how many moved.
    fn move_into(&mut self, n: usize, into: &mut Self::Into) -> usize;
}

impl Drained<Mbuf> for dpdk::Drain<'_> {
    type Into = MbufArray<MAX_BURST>;
    #[inline(always)]
    fn zip_take<'s, A: Copy>(&'s mut self, a: &'s [A]) -> impl Iterator<Item = (Mbuf, A)> + 's {
        dpdk::Drain::zip_take(self, a)
    }
    #[inline(always)]
    fn move_into(&mut self, n: usize, into: &mut MbufArray<MAX_BURST>) -> usize {
        dpdk::Drain::move_into(self, n, into)
    }
}

impl<P> Drained<P> for std::vec::Drain<'_, P> {
    type Into = Vec<P>;
    #[inline(always)]
    fn zip_take<'s, A: Copy>(&'s mut self, a: &'s [A]) -> impl Iterator<Item = (P, A)> + 's {
        // The items first: zip stops on them without taking a packet.
        a.iter().zip(self).map(|(&a, p)| (p, a))
    }
    fn move_into(&mut self, n: usize, into: &mut Vec<P>) -> usize {
        let n = n.min(MAX_BURST.saturating_sub(into.len()));
        let before = into.len();
        into.extend(self.take(n));
        into.len() - before
    }
}

/// An RX queue, polled by one lcore.
pub trait Receive {
    type Batch: Packets;
    /// Its port's id.
    fn port(&self) -> u16;
    /// Its queue's id on the port.
    fn queue(&self) -> u16;
    /// Appends up to `max` packets to `into` (no more than its free room);
    /// returns how many arrived.
    fn recv_at_most(&mut self, into: &mut Self::Batch, max: usize) -> usize;
}

/// A TX queue, used by one lcore.
pub trait Transmit {
    type Batch: Packets;
    /// Its port's id.
    fn port(&self) -> u16;
    /// Sends what `from` holds: the packets taken leave it, the ones
    /// refused stay, in order. Returns how many were taken.
    fn send(&mut self, from: &mut Self::Batch) -> usize;
    /// Lets the driver free what it has finished sending (at shutdown).
    fn reclaim_sent(&mut self);
}

impl Packet for Mbuf {
    #[inline(always)]
    fn data(&self) -> &[u8] {
        Mbuf::data(self)
    }
    #[inline(always)]
    fn try_data_mut(&mut self) -> Option<&mut [u8]> {
        Mbuf::try_data_mut(self)
    }
    #[inline(always)]
    fn prefetch_data(&self) {
        Mbuf::prefetch_data(self)
    }
    #[inline(always)]
    fn ipv4_dsts(simd: Simd, pkts: &[Mbuf], dsts: &mut [u32], ipv4: &mut [u8]) -> usize {
        simd.tagged_words(pkts, &IPV4_DESTINATION, dsts, ipv4)
    }
}

impl Packets for MbufArray<MAX_BURST> {
    type Packet = Mbuf;
    #[inline(always)]
    fn len(&self) -> usize {
        MbufArray::len(self)
    }
    #[inline(always)]
    fn push(&mut self, m: Mbuf) -> Result<usize, Mbuf> {
        MbufArray::push(self, m)
    }
    #[inline(always)]
    fn as_slice(&self) -> &[Mbuf] {
        MbufArray::as_slice(self)
    }
    #[inline(always)]
    fn as_mut_slice(&mut self) -> &mut [Mbuf] {
        MbufArray::as_mut_slice(self)
    }
    #[inline(always)]
    fn drain(&mut self) -> impl Drained<Mbuf, Into = Self> + '_ {
        MbufArray::drain(self)
    }
    #[inline(always)]
    fn free_all(&mut self) -> usize {
        MbufArray::free_all(self)
    }
}

impl Packet for dpdk::Event {
    #[inline(always)]
    fn data(&self) -> &[u8] {
        self.mbuf().data()
    }
    #[inline(always)]
    fn try_data_mut(&mut self) -> Option<&mut [u8]> {
        self.mbuf_mut().try_data_mut()
    }
    #[inline(always)]
    fn prefetch_data(&self) {
        self.mbuf().prefetch_data()
    }
}

/// The event model's batch: the events of one dequeue (at most
/// [`dpdk::MAX_DEQUEUE`]), or those bound for one port.
impl Packets for Vec<dpdk::Event> {
    type Packet = dpdk::Event;
    #[inline(always)]
    fn len(&self) -> usize {
        Vec::len(self)
    }
    #[inline(always)]
    fn push(&mut self, e: dpdk::Event) -> Result<usize, dpdk::Event> {
        if self.len() >= MAX_BURST {
            return Err(e);
        }
        Vec::push(self, e);
        Ok(self.len())
    }
    #[inline(always)]
    fn as_slice(&self) -> &[dpdk::Event] {
        self
    }
    #[inline(always)]
    fn as_mut_slice(&mut self) -> &mut [dpdk::Event] {
        self
    }
    #[inline(always)]
    fn drain(&mut self) -> impl Drained<dpdk::Event, Into = Self> + '_ {
        Vec::drain(self, ..)
    }
    fn free_all(&mut self) -> usize {
        let n = self.len();
        self.clear();
        n
    }
}

impl Receive for dpdk::RxQueue {
    type Batch = MbufArray<MAX_BURST>;
    #[inline(always)]
    fn port(&self) -> u16 {
        dpdk::RxQueue::port(self)
    }
    #[inline(always)]
    fn queue(&self) -> u16 {
        dpdk::RxQueue::queue(self)
    }
    #[inline(always)]
    fn recv_at_most(&mut self, into: &mut Self::Batch, max: usize) -> usize {
        dpdk::RxQueue::recv_at_most(self, into, max)
    }
}

impl Transmit for dpdk::TxQueue {
    type Batch = MbufArray<MAX_BURST>;
    #[inline(always)]
    fn port(&self) -> u16 {
        dpdk::TxQueue::port(self)
    }
    #[inline(always)]
    fn send(&mut self, from: &mut Self::Batch) -> usize {
        dpdk::TxQueue::send(self, from)
    }
    fn reclaim_sent(&mut self) {
        dpdk::TxQueue::reclaim_sent(self)
    }
}
