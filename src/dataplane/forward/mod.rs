//! The per-lcore data path: RX burst -> parse -> lookup -> rewrite ->
//! per-port TX buffer, drained over the ports this lcore transmits on when
//! the RX queues run dry and at least every ~100 us. Generic over the
//! packets and queues ([`io`]): DPDK's in production, in-memory ones in the
//! unit tests.

pub mod io;
mod slowdown;
#[cfg(test)]
mod tests;

use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::Arc;

use dpdk::Reader;

use crate::dataplane::counters::{DropReason, LcoreCounters, LcoreStats};
use crate::dataplane::lookup::{Lookup, Miss, Route};
use crate::dataplane::packet::{is_ipv4, parse_then, rewrite, EthRewrite};
use crate::dataplane::trace::{Fate, Input, Record, Trace};
use crate::MAX_BURST;
use io::{Drained, Packet, Packets, Receive, Transmit};

/// Poll rounds between two quiescent states (each followed by a fresh
/// read of the live tables): a few microseconds' delay to a grace period
/// under load, less when idle. Every round cost LPM and FIB 1-1.5
/// instructions per packet more (callgrind), every 8th 0.2 or less.
pub const ROUNDS_PER_QUIESCENT: u32 = 8;

/// How far ahead of the packet being parsed its successors' headers are
/// prefetched.
const PREFETCH_AHEAD: usize = 4;
/// A port this lcore transmits on: its TX queue, the frames waiting for it,
/// and the MACs frames get on their way out.
pub struct TxPort<T: Transmit = dpdk::TxQueue> {
    queue: T,
    eth: EthRewrite,
    pending: T::Batch,
    /// Packets buffered before a TX call (`--tx-burst`).
    burst: usize,
}

impl<T: Transmit> TxPort<T> {
    /// A TX port with an empty buffer sent every `burst` packets (at most
    /// [`MAX_BURST`]).
    pub fn new(queue: T, eth: EthRewrite, burst: usize) -> TxPort<T> {
        TxPort {
            queue,
            eth,
            pending: T::Batch::default(),
            burst: burst.clamp(1, MAX_BURST),
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
            counters.add_drop(DropReason::TxFull, refused as u64);
        }
    }

    /// Rewrites `m` in place for this port, or says why it cannot be:
    /// another holder shares its bytes (C rewrites a frame in place
    /// whoever else holds it; here another holder's bytes are never
    /// changed under it, so the frame is dropped), or it is not valid IPv4.
    #[inline(always)]
    fn rewrite_frame(&self, m: &mut impl Packet) -> Result<(), DropReason> {
        let frame = m.try_data_mut().ok_or(DropReason::Shared)?;
        if rewrite(frame, &self.eth) {
            Ok(())
        } else {
            Err(DropReason::Invalid)
        }
    }

    /// Moves the next `n` packets of `from`, rewritten already, to the
    /// buffer whole, sending each full burst on the way; returns how many
    /// moved (all `n`, unless `from` holds fewer).
    #[inline(always)]
    fn append(
        &mut self,
        from: &mut impl Drained<<T::Batch as Packets>::Packet, Into = T::Batch>,
        n: usize,
        counters: &LcoreCounters,
    ) -> usize {
        let mut done = 0;
        while done < n {
            let room = self.burst.saturating_sub(self.pending.len());
            let moved = from.move_into((n - done).min(room), &mut self.pending);
            done += moved;
            if self.pending.len() >= self.burst {
                self.flush(counters);
            } else if moved == 0 {
                // `from` ran out (a flush leaves the buffer empty, so there
                // was room).
                break;
            }
        }
        done
    }

    /// Buffers one frame; sends the buffer once it holds a full burst.
    #[inline(always)]
    fn enqueue(&mut self, m: <T::Batch as Packets>::Packet, counters: &LcoreCounters) {
        match self.pending.push(m) {
            Ok(n) if n >= self.burst => self.flush(counters),
            Ok(_) => {}
            Err(m) => {
                // Unreachable while the buffer is flushed when full;
                // counted, never leaked, if it ever happens.
                drop(m);
                counters.add_drop(DropReason::TxFull, 1);
            }
        }
    }
}

/// The TX side of an lcore: a [`TxPort`] for each port it transmits on,
/// by port id. The drain timer flushes exactly these.
pub struct TxPorts<T: Transmit = dpdk::TxQueue> {
    /// A fixed size, so a port id is bounds-checked against a constant;
    /// each port's buffer behind a pointer, so that finding it is one load
    /// from this small array (1.7 instructions a packet fewer than a
    /// multiply into an array of the buffers themselves).
    by_port: [Option<Box<TxPort<T>>>; dpdk::MAX_PORTS as usize],
    /// How many slots hold a port: a walk over them stops at the last.
    in_use: usize,
}

impl<T: Transmit> Default for TxPorts<T> {
    fn default() -> Self {
        TxPorts {
            by_port: std::array::from_fn(|_| None),
            in_use: 0,
        }
    }
}

impl<T: Transmit> TxPorts<T> {
    /// Adds the TX side of `port` (in place of any it had).
    pub fn insert(&mut self, port: u16, tx: TxPort<T>) {
        if let Some(slot) = self.by_port.get_mut(usize::from(port)) {
            if slot.replace(Box::new(tx)).is_none() {
                self.in_use += 1;
            }
        }
    }

    #[inline(always)]
    fn get_mut(&mut self, port: u16) -> Option<&mut TxPort<T>> {
        self.by_port.get_mut(usize::from(port))?.as_deref_mut()
    }

    /// The TX ports in use, by port id.
    fn each_mut(&mut self) -> impl Iterator<Item = &mut TxPort<T>> {
        self.by_port.iter_mut().flatten().take(self.in_use).map(|t| &mut **t)
    }

    /// The ports this lcore transmits on.
    pub fn ports(&self) -> impl Iterator<Item = u16> + '_ {
        self.by_port.iter().flatten().map(|t| t.queue.port())
    }

    /// Each port's TX queue and MACs, by port id, for a model whose queues
    /// someone else serves (the event model's TX adapter).
    pub fn into_queues(self) -> impl Iterator<Item = (T, EthRewrite)> {
        self.by_port.into_iter().flatten().map(|t| (t.queue, t.eth))
    }

    /// Flushes the buffer of every port this lcore transmits on.
    pub fn drain(&mut self, counters: &LcoreCounters) {
        for t in self.each_mut() {
            t.flush(counters);
        }
    }

    /// After the last flush: lets every TX queue of this lcore return the
    /// mbufs its driver has finished sending, so that the mbufs counted at
    /// shutdown are only those a driver really keeps (or a leak).
    fn reclaim_sent(&mut self) {
        for t in self.each_mut() {
            t.queue.reclaim_sent();
        }
    }
}

/// The queues one lcore polls and sends on, as setup hands them out.
pub struct LcoreQueues<R = dpdk::RxQueue, T: Transmit = dpdk::TxQueue> {
    pub lcore: u32,
    /// RX queues polled in order.
    pub rx: Vec<R>,
    pub tx: TxPorts<T>,
}

/// Everything one forwarding lcore owns.
pub struct Lcore<L: Lookup, R = dpdk::RxQueue, T: Transmit = dpdk::TxQueue> {
    pub queues: LcoreQueues<R, T>,
    /// The live tables, read afresh after each quiescent state (every
    /// [`ROUNDS_PER_QUIESCENT`] poll rounds): there the lcore holds no
    /// reference into them, so the control thread may free the ones it
    /// swapped out.
    pub lookup: Reader<L>,
    pub stats: Arc<LcoreStats>,
    pub quit: Arc<AtomicBool>,
    /// TSC ticks between drains (~100 us).
    pub drain_ticks: u64,
    /// Also drain when a poll round brings back no full burst (there is
    /// nothing more to batch, so waiting for the timer only adds latency),
    /// once this many TSC ticks have passed since the last drain
    /// (`--idle-flush-gap`, default 0); None: C's timing, the timer or a
    /// full buffer only (`--c-drain`).
    pub idle_flush: Option<u64>,
    /// Packets asked of each RX poll (`--rx-burst`, at most [`MAX_BURST`]).
    pub rx_burst: usize,
    /// `l3fwd-ctl trace`'s: whether to record the next packets.
    pub trace: Arc<Trace>,
    /// The vector parse and lookup to take (`parse_simd`); None: the
    /// scalar ones.
    pub simd: Option<dpdk::Simd>,
}

impl<L: Lookup, R: Receive, T: Transmit<Batch = R::Batch>> Lcore<L, R, T> {
    /// Forwards until `quit` is set, then flushes every TX buffer. Never
    /// inlined: profilers (callgrind --toggle-collect) find the loop by name.
    #[inline(never)]
    pub fn run(self) -> i32 {
        let Lcore {
            queues: LcoreQueues { mut rx, mut tx, .. },
            mut lookup,
            stats,
            quit,
            drain_ticks,
            idle_flush,
            rx_burst,
            trace,
            simd,
        } = self;
        let counters = &stats.counters;
        let mut batch = R::Batch::default();
        let tap = Tap {
            trace,
            lcore: stats.lcore,
        };
        let mut work = BurstWork::<L, <R::Batch as Packets>::Packet>::new(rx.len(), tap, simd);
        let mut last_drain = dpdk::rdtsc();
        // Start of the last round, and whether it received anything: a
        // round's cycles count as busy once the next one starts, so the
        // accounting reads the clock no more than the drain timer does.
        let (mut round_start, mut round_busy) = (last_drain, false);
        let polls_per_round = rx.len() as u64;
        let mut reader = lookup.online();
        let mut lookup = reader.read();
        // Nothing forwarded yet: a lookup told which way to use sets it.
        work.timed(&*lookup, 0);
        let mut until_quiescent = ROUNDS_PER_QUIESCENT;
        while !quit.load(Relaxed) {
            let now = dpdk::rdtsc();
            if round_busy {
                let cycles = now.wrapping_sub(round_start);
                counters.add_busy_cycles(cycles);
                work.timed(&*lookup, cycles);
            }
            round_start = now;
            if now.wrapping_sub(last_drain) > drain_ticks {
                tx.drain(counters);
                last_drain = now;
            }
            // The bursts of one round over the RX queues are looked up
            // together: bulk lookups (rte_acl above all, whose SIMD lanes
            // fill by 16) cost less per packet in bigger batches. They are
            // sent burst by burst in the order received, as C sends them.
            let (mut full, mut empty) = (false, 0);
            for q in rx.iter_mut() {
                if batch.len() + rx_burst > MAX_BURST {
                    forward_batch(&mut batch, &*lookup, &mut work, &mut tx, counters);
                }
                let n = q.recv_at_most(&mut batch, rx_burst);
                if n == 0 {
                    empty += 1;
                    continue;
                }
                full |= n == rx_burst;
                counters.add_rx(q.port(), n as u64);
                work.bursts.push(Burst {
                    port: q.port(),
                    queue: Some(q.queue()),
                    end: batch.len(),
                    rewritten: 0,
                });
            }
            if !batch.is_empty() {
                forward_batch(&mut batch, &*lookup, &mut work, &mut tx, counters);
            }
            counters.add_polls(polls_per_round, empty);
            round_busy = empty < polls_per_round;
            if slowdown::ENABLED && round_busy {
                slowdown::stretch(round_start);
            }
            // Under load every round brings full bursts and buffers go out
            // full; a short round means the queues ran dry.
            if let Some(gap) = idle_flush {
                if !full && now.wrapping_sub(last_drain) >= gap {
                    tx.drain(counters);
                    last_drain = now;
                }
            }
            until_quiescent -= 1;
            if until_quiescent == 0 {
                until_quiescent = ROUNDS_PER_QUIESCENT;
                // No reference into the tables lives here: the control
                // thread may free those it swapped out; read the new ones.
                reader.quiescent();
                lookup = reader.read();
            }
        }
        tx.drain(counters);
        tx.reclaim_sent();
        // Offline after the last burst: a capture's grace waits for bursts
        // through this reader (see `dpdk::Eal::serve_packet_capture`).
        drop(reader);
        0
    }
}

/// Per-batch records, kept for the life of the lcore so no batch pays for
/// initialising them: nothing of a packet's parse outlives the lookups
/// (its rewrite tells IPv4 from the frame again).
struct BurstWork<L: Lookup, P> {
    /// The bursts of the batch, in the order received (room for one per
    /// RX queue, never grown).
    bursts: Vec<Burst>,
    routes: [Route; MAX_BURST],
    lookup: L::Scratch,
    /// Packets forwarded since [`BurstWork::timed`] last ran.
    forwarded: u64,
    /// Packets held back until their burst's IPv4 ones are sent
    /// ([`Lookup::IPV4_FIRST`]); room for a whole batch, never grown.
    later: Vec<(P, Route)>,
    tap: Tap,
    /// The vector parse, if any ([`parse_simd`]): the proof, and the
    /// destinations and IPv4 lanes it reads.
    simd: Option<dpdk::Simd>,
    dsts: [u32; MAX_BURST],
    ipv4: [u8; MAX_BURST / 8],
}

/// One RX burst of a batch: its port and queue (none: from an event
/// port), where its packets end, and how many of its first packets
/// [`rewrite_whole_bursts`] rewrote for one TX port.
struct Burst {
    port: u16,
    queue: Option<u16>,
    end: usize,
    rewritten: usize,
}

impl Burst {
    fn input(&self) -> Input {
        match self.queue {
            Some(queue) => Input::Queue { port: self.port, queue },
            None => Input::Event { port: self.port },
        }
    }
}

/// An lcore's view of `l3fwd-ctl trace`.
pub struct Tap {
    pub trace: Arc<Trace>,
    pub lcore: u32,
}

impl<L: Lookup, P> BurstWork<L, P> {
    /// Work space for an lcore polling `rx_queues` queues, parsing with
    /// `simd`.
    fn new(rx_queues: usize, tap: Tap, simd: Option<dpdk::Simd>) -> Self {
        Self {
            bursts: Vec::with_capacity(rx_queues),
            routes: [Route::NO_MATCH; MAX_BURST],
            lookup: L::Scratch::default(),
            forwarded: 0,
            later: Vec::with_capacity(if L::IPV4_FIRST { MAX_BURST } else { 0 }),
            tap,
            simd,
            dsts: [0; MAX_BURST],
            ipv4: [0; MAX_BURST / 8],
        }
    }

    /// The packets forwarded since the last call took `cycles`: for
    /// `lookup`, which may time its ways of looking up ([`Lookup::timed`]).
    /// Called once a round, so never inlined: inlined, it cost the LPM
    /// parse loop a register (1.7 instructions a packet, callgrind).
    #[inline(never)]
    fn timed(&mut self, lookup: &L, cycles: u64) {
        lookup.timed(&mut self.lookup, cycles, std::mem::take(&mut self.forwarded));
    }
}

/// The data path for a model handed whole batches, each packet tagged with
/// its input port (the event model): the batch goes through the same
/// parse, lookup, rewrite and send as a poll round, in runs of one input
/// port.
pub struct Batches<L: Lookup, P>(BurstWork<L, P>);

impl<L: Lookup, P: Packet> Batches<L, P> {
    /// The batch path of the lcore `tap` names, parsing with `simd`.
    pub fn new(tap: Tap, simd: Option<dpdk::Simd>) -> Self {
        Batches(BurstWork::new(MAX_BURST, tap, simd))
    }

    /// Counts `batch` as received, forwards it and leaves it empty;
    /// `in_port` says where each packet came in.
    #[inline(always)]
    pub fn forward<B: Packets<Packet = P>, T: Transmit<Batch = B>>(
        &mut self,
        batch: &mut B,
        in_port: impl Fn(&P) -> u16,
        lookup: &L,
        tx: &mut TxPorts<T>,
        counters: &LcoreCounters,
    ) {
        let pkts = batch.as_slice();
        let mut start = 0;
        while let Some(first) = pkts.get(start) {
            let port = in_port(first);
            let end = pkts[start..]
                .iter()
                .position(|p| in_port(p) != port)
                .map_or(pkts.len(), |n| start + n);
            counters.add_rx(port, (end - start) as u64);
            self.0.bursts.push(Burst {
                port,
                queue: None,
                end,
                rewritten: 0,
            });
            start = end;
        }
        forward_batch(batch, lookup, &mut self.0, tx, counters);
    }

    /// The batches forwarded since the last call took `cycles`, for
    /// `lookup` ([`Lookup::timed`]).
    #[inline(always)]
    pub fn timed(&mut self, lookup: &L, cycles: u64) {
        self.0.timed(lookup, cycles);
    }
}

/// Parses, looks up, rewrites and buffers the packets of `batch`, the
/// bursts `work.bursts` lists; leaves both empty. A batch that `l3fwd-ctl
/// trace` wants packets of goes through a traced instance of the same
/// steps.
#[inline(always)]
fn forward_batch<L: Lookup, B: Packets, T: Transmit<Batch = B>>(
    batch: &mut B,
    lookup: &L,
    work: &mut BurstWork<L, B::Packet>,
    tx: &mut TxPorts<T>,
    counters: &LcoreCounters,
) {
    // Both instances inline: a call out of the loop (to a cold traced
    // instance, or only to mark this branch cold) measured 2.6 and 5.6
    // instructions per packet more in LPM mode untraced; inline, 0.9.
    if work.tap.trace.armed() {
        forward_steps::<true, L, B, T>(batch, lookup, work, tx, counters);
    } else {
        forward_steps::<false, L, B, T>(batch, lookup, work, tx, counters);
    }
}

/// [`forward_batch`]'s steps; `TRACED`: each packet the trace claims is
/// recorded as it is sent.
#[inline(always)]
fn forward_steps<const TRACED: bool, L: Lookup, B: Packets, T: Transmit<Batch = B>>(
    batch: &mut B,
    lookup: &L,
    work: &mut BurstWork<L, B::Packet>,
    tx: &mut TxPorts<T>,
    counters: &LcoreCounters,
) {
    let BurstWork {
        bursts,
        routes,
        lookup: scratch,
        forwarded,
        later,
        tap,
        simd,
        dsts,
        ipv4,
    } = work;
    let pkts = batch.as_slice();
    *forwarded += pkts.len() as u64;
    // A parse loop for each answer, so that no packet tests it.
    if lookup.defers(scratch) {
        parse_all::<true, L, B::Packet>(pkts, 0, lookup, scratch, routes);
    } else if let Some(simd) = simd.filter(|_| L::VECTOR_IPV4) {
        parse_simd(simd, pkts, lookup, scratch, routes, dsts, ipv4);
    } else {
        parse_all::<false, L, B::Packet>(pkts, 0, lookup, scratch, routes);
    }
    lookup.resolve(scratch, routes);
    // A trace records each packet before its rewrite, and IPV4_FIRST
    // reorders bursts: both take every packet one by one.
    if !TRACED && !L::IPV4_FIRST {
        rewrite_whole_bursts(batch.as_mut_slice(), routes, bursts, tx);
    }

    let mut sent = batch.drain();
    let mut start = 0;
    for burst in bursts.drain(..) {
        // start is an earlier end, so never above MAX_BURST.
        let end = burst.end.clamp(start, MAX_BURST);
        if burst.rewritten > 0 {
            // The port `rewrite_whole_bursts` found; what it did not take
            // stays in line with its routes for the one-by-one path.
            if let Some(out) = routes.get(start).and_then(|r| tx.get_mut(r.bits())) {
                start = (start + out.append(&mut sent, burst.rewritten, counters)).min(end);
            }
        }
        for (m, route) in sent.zip_take(&routes[start..end]) {
            if L::IPV4_FIRST && !is_ipv4(m.data()) && later.len() < later.capacity() {
                later.push((m, route));
            } else {
                send_maybe_traced::<TRACED, L, T>(m, route, &burst, tap, tx, counters);
            }
        }
        for (m, route) in later.drain(..) {
            send_maybe_traced::<TRACED, L, T>(m, route, &burst, tap, tx, counters);
        }
        start = end;
    }
}

/// C's shortcut for a burst whose packets all go out of one port (as
/// when each port's traffic goes to one other): its packets are rewritten
/// here, before the batch is drained, and then move to that port's TX
/// buffer whole rather than one at a time. Each such burst's
/// [`Burst::rewritten`] says how many of its first packets were
/// rewritten: up to the first that cannot be (shared or not valid IPv4),
/// which, with the packets after it, takes the one-by-one path.
#[inline(always)]
fn rewrite_whole_bursts<P: Packet, T: Transmit>(
    pkts: &mut [P],
    routes: &[Route; MAX_BURST],
    bursts: &mut [Burst],
    tx: &mut TxPorts<T>,
) {
    let mut start = 0;
    for burst in bursts.iter_mut() {
        let end = burst.end.clamp(start, MAX_BURST).min(pkts.len());
        let (Some(burst_pkts), Some(burst_routes)) = (pkts.get_mut(start..end), routes.get(start..end)) else {
            return;
        };
        start = end;
        let Some(&first) = burst_routes.first() else {
            continue;
        };
        // Ports sit below the reasons, as in `send`.
        if first.bits() >= dpdk::MAX_PORTS || burst_routes.iter().any(|&r| r != first) {
            continue;
        }
        let Some(out) = tx.get_mut(first.bits()) else {
            continue;
        };
        for m in burst_pkts {
            if out.rewrite_frame(m).is_err() {
                break;
            }
            burst.rewritten += 1;
        }
    }
}

/// Parses `pkts`, packets `first..` of the batch, and hands each to the
/// lookup ([`Lookup::add`], which `DEFER` tells what [`Lookup::defers`]
/// answered): its route, if known yet.
#[inline(always)]
fn parse_all<const DEFER: bool, L: Lookup, P: Packet>(
    pkts: &[P],
    first: usize,
    lookup: &L,
    scratch: &mut L::Scratch,
    routes: &mut [Route; MAX_BURST],
) {
    for p in pkts.iter().take(PREFETCH_AHEAD) {
        p.prefetch_data();
    }
    let routes = routes.get_mut(first..).unwrap_or_default();
    // Two loops, so that no packet tests whether it has one to prefetch;
    // each zips slices only, which one index walks together.
    let ahead = pkts.get(PREFETCH_AHEAD..).unwrap_or_default();
    for (i, ((p, ahead), r)) in pkts.iter().zip(ahead).zip(routes.iter_mut()).enumerate() {
        ahead.prefetch_data();
        *r = look(lookup, scratch, DEFER, first + i, p.data());
    }
    let last = ahead.len();
    let tail = pkts.get(last..).unwrap_or_default();
    for (i, (p, r)) in (last..).zip(tail.iter().zip(routes.iter_mut().skip(last))) {
        *r = look(lookup, scratch, DEFER, first + i, p.data());
    }
}

/// [`parse_all`] for a batch not deferred, with a vector path: the IPv4 frames
/// of each whole group of eight are read ([`Packet::ipv4_dsts`]) and
/// routed ([`Lookup::route_ipv4s`]) eight at a time; the other frames of
/// those groups, and the packets after the last group, take the scalar
/// parse. Every packet gets the route the scalar parse gives it (tested
/// in `mode::lpm`).
#[inline(always)]
pub(crate) fn parse_simd<L: Lookup, P: Packet>(
    simd: dpdk::Simd,
    pkts: &[P],
    lookup: &L,
    scratch: &mut L::Scratch,
    routes: &mut [Route; MAX_BURST],
    dsts: &mut [u32; MAX_BURST],
    ipv4: &mut [u8; MAX_BURST / 8],
) {
    let read = P::ipv4_dsts(simd, pkts, dsts, ipv4);
    if read > 0 {
        lookup.route_ipv4s(simd, scratch, &dsts[..read], &mut routes[..read]);
    }
    // Eight groups' lanes in one word (bit i: packet i of the 64), so
    // that a run of IPv4 traffic costs one test per 64 packets.
    for (chunk, lanes) in ipv4.get(..read / 8).unwrap_or_default().chunks(8).enumerate() {
        let mut word = [u8::MAX; 8];
        word[..lanes.len()].copy_from_slice(lanes);
        let mut others = !u64::from_le_bytes(word);
        while others != 0 {
            let i = 64 * chunk + others.trailing_zeros() as usize;
            others &= others - 1;
            if let (Some(p), Some(r)) = (pkts.get(i), routes.get_mut(i)) {
                *r = look(lookup, scratch, false, i, p.data());
            }
        }
    }
    parse_all::<false, L, P>(pkts.get(read..).unwrap_or_default(), read, lookup, scratch, routes);
}

/// Parses packet `i` of a burst and hands it to the lookup: its route, if
/// known yet.
#[inline(always)]
fn look<L: Lookup>(lookup: &L, scratch: &mut L::Scratch, defer: bool, i: usize, frame: &[u8]) -> Route {
    parse_then(
        frame,
        #[inline(always)]
        |l3| lookup.add(scratch, defer, i, &l3, frame),
    )
}

/// [`send`]; in a `TRACED` batch, through [`send_traced`] if the packet
/// claims one of those the trace wants.
#[inline(always)]
fn send_maybe_traced<const TRACED: bool, L: Lookup, T: Transmit>(
    m: <T::Batch as Packets>::Packet,
    route: Route,
    burst: &Burst,
    tap: &Tap,
    tx: &mut TxPorts<T>,
    counters: &LcoreCounters,
) {
    if TRACED && tap.trace.claim() {
        send_traced::<L, T>(m, route, burst, tap, tx, counters);
    } else {
        send::<L, T>(m, route, burst.port, tx, counters, &mut ());
    }
}

/// [`send`], recording the packet for the trace.
fn send_traced<L: Lookup, T: Transmit>(
    m: <T::Batch as Packets>::Packet,
    route: Route,
    burst: &Burst,
    tap: &Tap,
    tx: &mut TxPorts<T>,
    counters: &LcoreCounters,
) {
    let mut record = Record::new(tap.lcore, burst.input(), m.data(), route);
    send::<L, T>(m, route, burst.port, tx, counters, &mut record);
    tap.trace.keep(record);
}

/// What the send step tells about a packet: nothing, untraced (`()`); a
/// trace's [`Record`] keeps it.
trait SendWatch {
    fn sent(&mut self, _port: u16, _frame: &impl Packet) {}
    fn dropped(&mut self, _reason: DropReason) {}
}

impl SendWatch for () {}

impl SendWatch for Record {
    fn sent(&mut self, port: u16, frame: &impl Packet) {
        self.rewritten(frame.data());
        self.fate = Fate::Sent(port);
    }
    fn dropped(&mut self, reason: DropReason) {
        self.fate = Fate::Dropped(reason);
    }
}

/// Rewrites and buffers one looked-up packet, or drops and counts it;
/// tells `watch` which. A packet that matched nothing meets the mode's
/// miss policy: here and nowhere else.
#[inline(always)]
fn send<L: Lookup, T: Transmit>(
    mut m: <T::Batch as Packets>::Packet,
    route: Route,
    in_port: u16,
    tx: &mut TxPorts<T>,
    counters: &LcoreCounters,
    watch: &mut impl SendWatch,
) {
    let mut drop = |reason| {
        watch.dropped(reason);
        counters.add_drop(reason, 1)
    };
    // Ports sit below the reasons: one test, which TxPorts repeats and
    // the compiler folds, takes a routed packet to its buffer.
    let port = match route.bits() {
        port if port < dpdk::MAX_PORTS => port,
        _ => match route {
            Route::NO_MATCH if L::MISS == Miss::InputPort => in_port,
            Route::NO_MATCH => return drop(DropReason::NoRule),
            Route::RUNT => return drop(DropReason::Runt),
            Route::DENIED => return drop(DropReason::Denied),
            // A port number no port can have: TxPorts has no buffer for it.
            _ => route.bits(),
        },
    };
    let Some(out) = tx.get_mut(port) else {
        return drop(DropReason::Unroutable);
    };
    if let Err(reason) = out.rewrite_frame(&mut m) {
        return drop(reason);
    }
    watch.sent(port, &m);
    out.enqueue(m, counters);
}
