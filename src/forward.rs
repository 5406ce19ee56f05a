//! The per-lcore data path: RX burst -> classify -> lookup -> rewrite ->
//! per-port TX buffer, with a drain timer over the ports this lcore
//! transmits on.

use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::Arc;

use dpdk::{Mbuf, MbufArray, RxQueue, TxQueue};

use crate::counters::LcoreCounters;
use crate::lookup::{Lookup, RUNT};
use crate::packet::{classify, rewrite, EthRewrite, L3};
use crate::BURST;

/// How far ahead of the packet being classified its successors' headers are
/// prefetched.
const PREFETCH_AHEAD: usize = 4;

/// A port this lcore transmits on: its TX queue, the frames waiting for it,
/// and the MACs frames get on their way out.
pub struct TxPort {
    queue: TxQueue,
    eth: EthRewrite,
    pending: MbufArray<BURST>,
}

impl TxPort {
    /// A TX port with an empty buffer.
    pub fn new(queue: TxQueue, eth: EthRewrite) -> TxPort {
        TxPort {
            queue,
            eth,
            pending: MbufArray::new(),
        }
    }

    /// Sends what is buffered; frees and counts what the queue refuses.
    #[inline(always)]
    fn flush(&mut self, counters: &LcoreCounters) {
        if self.pending.is_empty() {
            return;
        }
        let sent = self.queue.send(&mut self.pending);
        counters.add_tx(self.queue.port(), sent as u64);
        let refused = self.pending.free_all();
        if refused > 0 {
            counters.add_tx_full(refused as u64);
        }
    }

    /// Buffers one frame; sends the buffer once it holds a full burst.
    #[inline(always)]
    fn enqueue(&mut self, m: Mbuf, counters: &LcoreCounters) {
        if let Err(m) = self.pending.push(m) {
            // Unreachable while the buffer is flushed when full; counted,
            // never leaked, if it ever happens.
            drop(m);
            counters.add_tx_full(1);
        }
        if self.pending.is_full() {
            self.flush(counters);
        }
    }
}

/// Everything one forwarding lcore owns.
pub struct LcoreTask<L: Lookup> {
    /// RX queues polled in order.
    pub rx: Vec<RxQueue>,
    /// TX side by port id (None for ports not enabled).
    pub tx: Vec<Option<TxPort>>,
    /// Ports whose buffers the drain timer flushes: exactly the ports this
    /// lcore transmits on.
    pub tx_ports: Vec<u16>,
    pub lookup: Arc<L>,
    pub counters: Arc<LcoreCounters>,
    pub quit: Arc<AtomicBool>,
    /// TSC ticks between drains (~100 us).
    pub drain_ticks: u64,
}

impl<L: Lookup> LcoreTask<L> {
    /// Forwards until `quit` is set, then flushes every TX buffer. Never
    /// inlined: profilers (callgrind --toggle-collect) find the loop by name.
    #[inline(never)]
    pub fn run(self) -> i32 {
        let LcoreTask {
            mut rx,
            tx,
            tx_ports,
            lookup,
            counters,
            quit,
            drain_ticks,
        } = self;
        let mut out = TxSide { tx, tx_ports, counters };
        let mut burst = MbufArray::<BURST>::new();
        let mut work = BurstWork::<L>::default();
        let mut last_drain = dpdk::rdtsc();
        while !quit.load(Relaxed) {
            let now = dpdk::rdtsc();
            if now.wrapping_sub(last_drain) > drain_ticks {
                out.drain();
                last_drain = now;
            }
            for q in rx.iter_mut() {
                if q.recv(&mut burst) == 0 {
                    continue;
                }
                out.counters.add_rx(q.port(), burst.len() as u64);
                forward_burst(q.port(), &mut burst, lookup.as_ref(), &mut work, &mut out);
            }
        }
        out.drain();
        out.reclaim_sent();
        0
    }
}

/// The TX half of an lcore: buffers by port and the drain list.
struct TxSide {
    tx: Vec<Option<TxPort>>,
    tx_ports: Vec<u16>,
    counters: Arc<LcoreCounters>,
}

impl TxSide {
    /// Flushes the buffer of every port this lcore transmits on.
    fn drain(&mut self) {
        for &p in &self.tx_ports {
            if let Some(Some(t)) = self.tx.get_mut(p as usize) {
                t.flush(&self.counters);
            }
        }
    }
}

impl TxSide {
    /// After the last flush: lets every TX queue of this lcore return the
    /// mbufs its driver has finished sending, so that the mbufs counted at
    /// shutdown are only those a driver really keeps (or a leak).
    fn reclaim_sent(&mut self) {
        for t in self.tx.iter_mut().flatten() {
            t.queue.reclaim_sent();
        }
    }
}

/// Per-burst results, kept for the life of the lcore so no burst pays for
/// initialising them.
struct BurstWork<L: Lookup> {
    l3: [L3; BURST],
    dst: [u16; BURST],
    lookup: L::Scratch,
}

impl<L: Lookup> Default for BurstWork<L> {
    fn default() -> Self {
        Self {
            l3: [L3::Other; BURST],
            dst: [0; BURST],
            lookup: L::Scratch::default(),
        }
    }
}

/// Classifies, looks up, rewrites and buffers one burst received on
/// `in_port`; leaves `burst` empty.
#[inline(always)]
fn forward_burst<L: Lookup>(
    in_port: u16,
    burst: &mut MbufArray<BURST>,
    lookup: &L,
    work: &mut BurstWork<L>,
    out: &mut TxSide,
) {
    let BurstWork {
        l3,
        dst,
        lookup: scratch,
    } = work;
    let pkts = burst.as_slice();
    // Slices of exactly the burst's length: the loops below need no bounds
    // checks.
    let (l3, dst) = (&mut l3[..pkts.len()], &mut dst[..pkts.len()]);
    for p in pkts.iter().take(PREFETCH_AHEAD) {
        p.prefetch_data();
    }
    for (i, (h, p)) in l3.iter_mut().zip(pkts).enumerate() {
        if let Some(ahead) = pkts.get(i + PREFETCH_AHEAD) {
            ahead.prefetch_data();
        }
        *h = classify(p.data());
    }
    lookup.route(scratch, in_port, pkts, l3, dst);

    let counters = &out.counters;
    for ((mut m, &d), h) in burst.drain().zip(dst.iter()).zip(l3.iter()) {
        if d == RUNT {
            counters.add_runt(1);
            continue;
        }
        let Some(Some(port)) = out.tx.get_mut(d as usize) else {
            // A next hop outside the enabled ports cannot come from the
            // tables (rules to disabled ports are not loaded); dropped and
            // counted rather than trusted.
            counters.add_invalid(1);
            continue;
        };
        if !rewrite(m.data_mut(), h, &port.eth) {
            counters.add_invalid(1);
            continue;
        }
        port.enqueue(m, counters);
    }
}
