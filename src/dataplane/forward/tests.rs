//! The data path on in-memory queues, without EAL: each RX queue replays a
//! script of bursts, one per poll; each TX queue logs what it took. The
//! log of polls and sends shows when the lcore sent what, in which order.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering::Relaxed};
use std::sync::{Arc, Mutex};

use dpdk::{Live, Qsbr};

use super::io::{Drained, Packet, Packets, Receive, Transmit};
use super::{Lcore, LcoreQueues, TxPort, TxPorts};
use crate::dataplane::counters::{DropReason, LcoreCounters, LcoreStats, Role, Totals};
use crate::dataplane::lookup::{answer, Gather, Lookup, Miss, Route};
use crate::dataplane::packet::L3;
use crate::dataplane::trace::{Fate, Input, Record, TraceReader};
use crate::MAX_BURST;

/// What the queues saw, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Event {
    /// RX queue of this port polled.
    Poll(u16),
    /// Packets (by id) taken by the TX queue of this port, in one call.
    Sent(u16, Vec<u32>),
}

type Log = Arc<Mutex<Vec<Event>>>;
/// Frames as sent, with their port.
type Frames = Vec<(u16, Vec<u8>)>;
/// One RX burst: packets as (id, frame).
type Burst = Vec<(u32, Vec<u8>)>;
/// One RX queue: its port and its bursts, one per poll.
type Script = (u16, Vec<Burst>);

/// Set in a scripted packet's id: another holder shares its bytes (as a
/// cloned or shared mbuf), so they are not writable.
const SHARED: u32 = 1 << 31;

/// A frame with an id; counts itself in `live` until dropped (freed).
struct TestPacket {
    id: u32,
    bytes: Vec<u8>,
    live: Arc<AtomicUsize>,
}

impl Drop for TestPacket {
    fn drop(&mut self) {
        self.live.fetch_sub(1, Relaxed);
    }
}

impl Packet for TestPacket {
    fn data(&self) -> &[u8] {
        &self.bytes
    }
    fn try_data_mut(&mut self) -> Option<&mut [u8]> {
        (self.id & SHARED == 0).then_some(&mut self.bytes)
    }
    fn prefetch_data(&self) {}
}

/// Up to MAX_BURST packets, as an MbufArray holds them.
#[derive(Default)]
struct Batch(Vec<TestPacket>);

impl Packets for Batch {
    type Packet = TestPacket;
    fn len(&self) -> usize {
        self.0.len()
    }
    fn push(&mut self, p: TestPacket) -> Result<usize, TestPacket> {
        if self.0.len() == MAX_BURST {
            return Err(p);
        }
        self.0.push(p);
        Ok(self.0.len())
    }
    fn as_slice(&self) -> &[TestPacket] {
        &self.0
    }
    fn as_mut_slice(&mut self) -> &mut [TestPacket] {
        &mut self.0
    }
    fn drain(&mut self) -> impl Drained<TestPacket, Into = Batch> + '_ {
        BatchDrain(self.0.drain(..))
    }
    fn free_all(&mut self) -> usize {
        std::mem::take(&mut self.0).len()
    }
}

/// A [`Batch`]'s drain: its Vec's, moving packets into another Batch.
struct BatchDrain<'a>(std::vec::Drain<'a, TestPacket>);

impl Drained<TestPacket> for BatchDrain<'_> {
    type Into = Batch;
    fn zip_take<'s, A: Copy>(&'s mut self, a: &'s [A]) -> impl Iterator<Item = (TestPacket, A)> + 's {
        self.0.zip_take(a)
    }
    fn move_into(&mut self, n: usize, into: &mut Batch) -> usize {
        self.0.move_into(n, &mut into.0)
    }
}

/// Replays one burst per poll; once the script is done, sets `quit` if
/// it holds it (the last queue of an lcore does).
struct ScriptRx {
    port: u16,
    bursts: VecDeque<Vec<TestPacket>>,
    log: Log,
    quit: Option<Arc<AtomicBool>>,
}

impl Receive for ScriptRx {
    type Batch = Batch;
    fn port(&self) -> u16 {
        self.port
    }
    fn queue(&self) -> u16 {
        0
    }
    fn recv_at_most(&mut self, into: &mut Batch, max: usize) -> usize {
        self.log.lock().unwrap().push(Event::Poll(self.port));
        let Some(burst) = self.bursts.pop_front() else {
            if let Some(quit) = &self.quit {
                quit.store(true, Relaxed);
            }
            return 0;
        };
        assert!(burst.len() <= max && into.len() + burst.len() <= MAX_BURST);
        let n = burst.len();
        into.0.extend(burst);
        n
    }
}

/// Takes at most `accept` packets per call (all by default), logs their
/// ids and frees them.
struct LogTx {
    port: u16,
    accept: usize,
    log: Log,
    frames: Arc<Mutex<Frames>>,
}

impl Transmit for LogTx {
    type Batch = Batch;
    fn port(&self) -> u16 {
        self.port
    }
    fn send(&mut self, from: &mut Batch) -> usize {
        let n = from.len().min(self.accept);
        let sent: Vec<TestPacket> = from.0.drain(..n).collect();
        self.frames
            .lock()
            .unwrap()
            .extend(sent.iter().map(|p| (self.port, p.bytes.clone())));
        self.log
            .lock()
            .unwrap()
            .push(Event::Sent(self.port, sent.iter().map(|p| p.id).collect()));
        n
    }
    fn reclaim_sent(&mut self) {}
}

/// Routes by the last byte of the destination address: port N for N < 0x80,
/// no match for 0xff (anything else: a port no lcore sends on). IPv4 is
/// answered as parsed, IPv6 gathered and answered in `resolve`, as the
/// real modes do. Records the size of each batch it resolved.
#[derive(Default)]
struct ByLastByte<const DROP_MISS: bool, const IPV4_FIRST: bool> {
    batches: Arc<Mutex<Vec<usize>>>,
}

#[derive(Default)]
struct Scratch {
    v6: Gather<u8>,
    seen: usize,
}

fn route_of(last: u8) -> Option<u16> {
    (last != 0xff).then_some(u16::from(last))
}

impl<const DROP_MISS: bool, const IPV4_FIRST: bool> Lookup for ByLastByte<DROP_MISS, IPV4_FIRST> {
    type Scratch = Scratch;
    const MISS: Miss = if DROP_MISS { Miss::Drop } else { Miss::InputPort };
    const IPV4_FIRST: bool = IPV4_FIRST;

    fn add(&self, scratch: &mut Scratch, _: bool, index: usize, l3: &L3, _frame: &[u8]) -> Route {
        scratch.seen += 1;
        match l3 {
            L3::Ipv4(h) => Route::from_table(route_of(h.dst as u8)),
            L3::Ipv6(h) => {
                scratch.v6.push(index, h.dst[15]);
                Route::NO_MATCH
            }
            L3::Other => Route::NO_MATCH,
            L3::Runt => Route::RUNT,
        }
    }

    fn resolve(&self, scratch: &mut Scratch, routes: &mut [Route; MAX_BURST]) {
        self.batches.lock().unwrap().push(std::mem::take(&mut scratch.seen));
        let (last, from) = scratch.v6.take();
        for (i, &b) in last.iter().enumerate() {
            answer(from, routes, i, route_of(b));
        }
    }
}

/// Packets and busy cycles the forwarding loop told its lookup of
/// ([`Lookup::timed`]); only [`Timed`] adds to them.
static TIMED: [AtomicU64; 2] = [AtomicU64::new(0), AtomicU64::new(0)];

/// Routes every packet to port 1, and adds what it is told of to [`TIMED`].
struct Timed;

impl Lookup for Timed {
    type Scratch = ();
    fn add(&self, _: &mut (), _: bool, _: usize, _: &L3, _: &[u8]) -> Route {
        Route::port(1)
    }
    fn resolve(&self, _: &mut (), _: &mut [Route; MAX_BURST]) {}
    fn timed(&self, _: &mut (), cycles: u64, packets: u64) {
        TIMED[0].fetch_add(packets, Relaxed);
        TIMED[1].fetch_add(cycles, Relaxed);
    }
}

/// A valid IPv4 frame to 198.18.0.`last`.
fn ipv4(last: u8) -> Vec<u8> {
    let mut f = vec![0xee; 12];
    f.extend_from_slice(&[0x08, 0x00, 0x45, 0, 0, 46, 0, 0, 0, 0, 64, 17, 0, 0]);
    f.extend_from_slice(&[10, 0, 0, 1, 198, 18, 0, last]);
    f.resize(60, 0xaa);
    f
}

/// A valid IPv6 frame to 2001:db8::`last`.
fn ipv6(last: u8) -> Vec<u8> {
    let mut f = vec![0xee; 12];
    f.extend_from_slice(&[0x86, 0xdd, 0x60, 0, 0, 0, 0, 8, 17, 64]);
    f.extend_from_slice(&[0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]);
    f.extend_from_slice(&[0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, last]);
    f.resize(70, 0xaa);
    f
}

/// Frames for RX queues and which ports the lcore transmits on.
struct Setup {
    /// Per RX queue: its port and its bursts.
    rx: Vec<Script>,
    tx_ports: Vec<u16>,
    tx_accept: usize,
    tx_burst: usize,
    drain_ticks: u64,
    idle_flush: Option<u64>,
    /// Packets `l3fwd-ctl trace` asks for before the lcore starts.
    trace: u32,
}

impl Setup {
    fn new(rx: Vec<Script>) -> Setup {
        Setup {
            rx,
            tx_ports: vec![0, 1, 2],
            tx_accept: usize::MAX,
            tx_burst: 32,
            drain_ticks: u64::MAX,
            idle_flush: Some(0),
            trace: 0,
        }
    }
}

/// What a run did.
struct Outcome {
    log: Vec<Event>,
    totals: Totals,
    /// Packets still alive after the lcore returned: leaked.
    live: usize,
    /// Every frame sent, with its port.
    frames: Frames,
    /// What the trace recorded.
    traced: Vec<Record>,
}

impl Outcome {
    /// Ids sent on `port`, in order.
    fn sent(&self, port: u16) -> Vec<u32> {
        self.log
            .iter()
            .filter_map(|e| match e {
                Event::Sent(p, ids) if *p == port => Some(ids.clone()),
                _ => None,
            })
            .flatten()
            .collect()
    }

    /// Index in the log of the first send of `id`.
    fn sent_at(&self, id: u32) -> usize {
        self.log
            .iter()
            .position(|e| matches!(e, Event::Sent(_, ids) if ids.contains(&id)))
            .unwrap_or_else(|| panic!("{id} never sent: {:?}", self.log))
    }

    /// Index in the log of poll number `n` (from 0) of any queue.
    fn poll_at(&self, n: usize) -> usize {
        let polls = self.log.iter().enumerate().filter(|(_, e)| matches!(e, Event::Poll(_)));
        polls.map(|(i, _)| i).nth(n).expect("not that many polls")
    }
}

fn run<L: Lookup>(setup: Setup, lookup: L) -> Outcome {
    let log: Log = Arc::default();
    let live = Arc::new(AtomicUsize::new(0));
    let quit = Arc::new(AtomicBool::new(false));
    let frames = Arc::default();
    let last = setup.rx.len() - 1;
    let rx = setup
        .rx
        .into_iter()
        .enumerate()
        .map(|(i, (port, bursts))| ScriptRx {
            port,
            bursts: bursts
                .into_iter()
                .map(|b| {
                    let burst: Vec<TestPacket> = b
                        .into_iter()
                        .map(|(id, bytes)| TestPacket {
                            id,
                            bytes,
                            live: Arc::clone(&live),
                        })
                        .collect();
                    live.fetch_add(burst.len(), Relaxed);
                    burst
                })
                .collect(),
            log: Arc::clone(&log),
            quit: (i == last).then(|| Arc::clone(&quit)),
        })
        .collect();
    let mut tx = TxPorts::default();
    for &port in &setup.tx_ports {
        let queue = LogTx {
            port,
            accept: setup.tx_accept,
            log: Arc::clone(&log),
            frames: Arc::clone(&frames),
        };
        tx.insert(port, TxPort::new(queue, [port as u8; 12], setup.tx_burst));
    }
    let stats = Arc::new(LcoreStats {
        lcore: 1,
        role: Role::Poll,
        rx_queues: vec![],
        counters: LcoreCounters::for_ports(8),
    });
    let trace = TraceReader::default();
    if setup.trace > 0 {
        trace.start(setup.trace);
    }
    let lcore: Lcore<L, ScriptRx, LogTx> = Lcore {
        queues: LcoreQueues { lcore: 1, rx, tx },
        lookup: Arc::new(Live::new(Qsbr::new(1).unwrap(), lookup)).register(0).unwrap(),
        stats: Arc::clone(&stats),
        quit,
        drain_ticks: setup.drain_ticks,
        idle_flush: setup.idle_flush,
        rx_burst: 32,
        trace: trace.trace(),
        simd: None,
    };
    lcore.run();
    let log = log.lock().unwrap().clone();
    let frames = std::mem::take(&mut *frames.lock().unwrap());
    Outcome {
        log,
        totals: stats.counters.totals(),
        live: live.load(Relaxed),
        frames,
        traced: std::iter::from_fn(|| trace.next()).collect(),
    }
}

/// `ids` numbered from `first`, each a frame from `frame`.
fn burst(first: u32, frames: Vec<Vec<u8>>) -> Burst {
    (first..).zip(frames).collect()
}

type InputPortMiss = ByLastByte<false, false>;

#[test]
fn a_rounds_bursts_are_looked_up_as_one_batch_and_sent_burst_by_burst() {
    // Round 1: queue A (port 0) brings 3 to port 2 and a miss, queue B
    // (port 1) 2 and a miss; round 2: only B, 1 packet.
    let a = (0, vec![burst(0, vec![ipv4(2), ipv6(2), ipv4(0xff), ipv4(2)]), vec![]]);
    let b = (
        1,
        vec![burst(10, vec![ipv6(2), ipv6(0xff), ipv4(2)]), burst(20, vec![ipv4(2)])],
    );
    let lookup = InputPortMiss::default();
    let batches = Arc::clone(&lookup.batches);
    let out = run(Setup::new(vec![a, b]), lookup);
    // One lookup batch per round that received anything.
    assert_eq!(*batches.lock().unwrap(), [7, 1]);
    assert_eq!(out.sent(2), [0, 1, 3, 10, 12, 20], "A's burst, then B's, each in order");
    assert_eq!(
        (out.sent(0), out.sent(1)),
        (vec![2], vec![11]),
        "each miss out of its own input port"
    );
    assert_eq!((out.totals.rx, out.totals.tx), (8, 8));
    assert_eq!(out.live, 0, "every packet freed");
}

#[test]
fn the_lookup_is_told_what_the_busy_rounds_forwarded_and_took() {
    // Two busy rounds, an empty one, a busy one; then the empty poll that
    // ends the run.
    let bursts = vec![
        burst(0, vec![ipv4(1); 3]),
        burst(3, vec![ipv4(1); 2]),
        vec![],
        burst(5, vec![ipv4(1)]),
    ];
    let out = run(Setup::new(vec![(0, bursts)]), Timed);
    assert_eq!(out.totals.tx, 6);
    assert_eq!(TIMED[0].load(Relaxed), 6, "every packet, once");
    assert!(out.totals.busy_cycles > 0);
    assert_eq!(
        TIMED[1].load(Relaxed),
        out.totals.busy_cycles,
        "the busy cycles counted"
    );
}

#[test]
fn ipv4_first_sends_a_bursts_ipv4_packets_before_the_rest() {
    let frames = || vec![ipv6(1), ipv4(1), ipv6(1), ipv4(1)];
    let out = run(
        Setup::new(vec![(0, vec![burst(0, frames())])]),
        ByLastByte::<false, true>::default(),
    );
    assert_eq!(out.sent(1), [1, 3, 0, 2]);
    let out = run(
        Setup::new(vec![(0, vec![burst(0, frames())])]),
        InputPortMiss::default(),
    );
    assert_eq!(out.sent(1), [0, 1, 2, 3], "otherwise in the order received");
}

#[test]
fn a_miss_goes_back_out_of_its_input_port_or_is_dropped() {
    let frames = || vec![ipv4(0xff), ipv6(0xff), vec![0xee; 60], ipv4(2)];
    let out = run(
        Setup::new(vec![(1, vec![burst(0, frames())])]),
        InputPortMiss::default(),
    );
    assert_eq!((out.sent(1), out.sent(2)), (vec![0, 1, 2], vec![3]));
    let out = run(
        Setup::new(vec![(1, vec![burst(0, frames())])]),
        ByLastByte::<true, false>::default(),
    );
    assert_eq!((out.sent(1), out.sent(2)), (vec![], vec![3]));
    assert_eq!(out.totals.dropped(DropReason::NoRule), 3);
    assert_eq!(out.live, 0);
}

#[test]
fn drops_are_counted_by_reason_and_freed() {
    let mut bad_ihl = ipv4(1);
    bad_ihl[14] = 0x44;
    let frames = vec![
        ipv4(1)[..20].to_vec(), // runt: an IPv4 header cut short
        bad_ihl,                // invalid IPv4 header
        ipv4(7),                // a port no lcore transmits on
        ipv4(200),              // a port number no port can have
        ipv4(1),
    ];
    let out = run(Setup::new(vec![(0, vec![burst(0, frames)])]), InputPortMiss::default());
    let t = out.totals;
    assert_eq!(out.sent(1), [4]);
    let counts = [DropReason::Runt, DropReason::Invalid, DropReason::Unroutable].map(|d| t.dropped(d));
    assert_eq!(counts, [1, 1, 2]);
    assert_eq!(out.live, 0);
}

#[test]
fn a_frame_another_holder_shares_is_dropped_unchanged() {
    let frames = [ipv4(1), vec![0xee; 60], ipv4(1)];
    let ids = [SHARED, SHARED | 1, 2];
    let script = vec![(0, vec![ids.into_iter().zip(frames).collect()])];
    let out = run(Setup::new(script), InputPortMiss::default());
    assert_eq!((out.sent(0), out.sent(1)), (vec![], vec![2]));
    assert_eq!(out.totals.dropped(DropReason::Shared), 2);
    assert_eq!(out.totals.dropped(DropReason::Invalid), 0);
    assert_eq!(out.live, 0);
}

#[test]
fn a_short_round_is_flushed_at_once_unless_c_drain_or_within_the_gap() {
    // Round 1 brings 2 packets (a short burst), round 2 nothing, then the
    // script ends and the lcore stops.
    let script = || vec![(0, vec![burst(0, vec![ipv4(1), ipv4(1)]), vec![]])];
    let out = run(Setup::new(script()), InputPortMiss::default());
    assert!(
        out.sent_at(0) < out.poll_at(1),
        "sent before the next poll: {:?}",
        out.log
    );

    // C's drain: a short round waits for the timer (never here) or the
    // final flush at stop, after the last poll.
    let mut c_drain = Setup::new(script());
    c_drain.idle_flush = None;
    let out = run(c_drain, InputPortMiss::default());
    let last_poll = out.log.iter().rposition(|e| matches!(e, Event::Poll(_))).unwrap();
    assert!(out.sent_at(0) > last_poll, "{:?}", out.log);
    assert_eq!(out.sent(1), [0, 1], "flushed at stop, nothing left in a buffer");

    // An idle-flush gap that has not passed since the last drain (the
    // lcore's start): the short round waits, as with C's drain.
    let mut spaced = Setup::new(script());
    spaced.idle_flush = Some(u64::MAX / 2);
    let out = run(spaced, InputPortMiss::default());
    let last_poll = out.log.iter().rposition(|e| matches!(e, Event::Poll(_))).unwrap();
    assert!(out.sent_at(0) > last_poll, "{:?}", out.log);

    // C's drain with the timer due every round: sent at the next round's
    // start, before its poll.
    let mut timer = Setup::new(script());
    timer.idle_flush = None;
    timer.drain_ticks = 0;
    let out = run(timer, InputPortMiss::default());
    assert!(
        out.poll_at(0) < out.sent_at(0) && out.sent_at(0) < out.poll_at(1),
        "{:?}",
        out.log
    );
}

#[test]
fn the_drain_covers_ports_the_lcore_only_sends_to() {
    // The lcore receives on port 0 only; port 2's buffer must drain too.
    let mut setup = Setup::new(vec![(0, vec![burst(0, vec![ipv4(2)]), vec![], vec![]])]);
    setup.idle_flush = None;
    setup.drain_ticks = 0;
    let out = run(setup, InputPortMiss::default());
    assert!(out.sent_at(0) < out.poll_at(1), "{:?}", out.log);
}

#[test]
fn per_port_order_holds_across_queues_rounds_and_full_buffers() {
    // Two queues, three rounds, every packet to port 1; TX buffers of 4.
    let rounds = |first: u32| {
        (0..3)
            .map(|r| burst(first + 10 * r, vec![ipv4(1), ipv6(1), ipv4(1)]))
            .collect::<Vec<_>>()
    };
    let mut setup = Setup::new(vec![(0, rounds(100)), (2, rounds(200))]);
    setup.tx_burst = 4;
    setup.idle_flush = None;
    let out = run(setup, InputPortMiss::default());
    let expected: Vec<u32> = (0..3)
        .flat_map(|r| [100, 101, 102, 200, 201, 202].map(|id| id + 10 * r))
        .collect();
    assert_eq!(out.sent(1), expected);
    let calls: Vec<usize> = out
        .log
        .iter()
        .filter_map(|e| match e {
            Event::Sent(_, ids) => Some(ids.len()),
            _ => None,
        })
        .collect();
    assert_eq!(calls, [4, 4, 4, 4, 2], "sent whenever 4 are buffered, the rest at stop");
}

#[test]
fn a_burst_for_one_port_goes_out_in_order_each_frame_rewritten_once() {
    // Every packet to port 1; one shared and one not valid IPv4 (IHL 0)
    // in the middle, which the burst's packets after them follow.
    let mut bad = ipv4(1);
    bad[14] = 0x40;
    let frames = vec![ipv4(1), ipv4(1), ipv4(1), bad, ipv4(1), ipv4(1)];
    let ids = [0, 1, SHARED | 2, 3, 4, 5];
    let script = vec![(0, vec![ids.into_iter().zip(frames).collect()])];
    let mut setup = Setup::new(script);
    setup.tx_burst = 2;
    let out = run(setup, InputPortMiss::default());
    assert_eq!(out.sent(1), [0, 1, 4, 5]);
    assert_eq!(out.totals.dropped(DropReason::Shared), 1);
    assert_eq!(out.totals.dropped(DropReason::Invalid), 1);
    let ttls: Vec<u8> = out.frames.iter().map(|(_, f)| f[22]).collect();
    assert_eq!(ttls, [63; 4], "each TTL decremented once");
    assert!(out.frames.iter().all(|(port, f)| *port == 1 && f[..12] == [1; 12]));
    assert_eq!(out.live, 0);
}

#[test]
fn what_a_tx_queue_refuses_is_counted_and_freed() {
    let mut setup = Setup::new(vec![(0, vec![burst(0, vec![ipv4(1); 5])])]);
    setup.tx_accept = 3;
    let out = run(setup, InputPortMiss::default());
    assert_eq!(out.sent(1), [0, 1, 2]);
    assert_eq!((out.totals.tx, out.totals.dropped(DropReason::TxFull)), (3, 2));
    assert_eq!(out.live, 0);
}

#[test]
fn frames_leave_rewritten_for_their_port() {
    let out = run(
        Setup::new(vec![(0, vec![burst(0, vec![ipv4(2), ipv6(1)])])]),
        InputPortMiss::default(),
    );
    let [(1, v6), (2, v4)] = &out.frames[..] else {
        panic!("{:?}", out.log)
    };
    assert_eq!(
        (&v4[..12], &v6[..12]),
        (&[2; 12][..], &[1; 12][..]),
        "the TX port's MACs"
    );
    assert_eq!(
        (v4[22], v6[21]),
        (63, 64),
        "IPv4 TTL one less; the IPv6 hop limit kept, as in C"
    );
}

#[test]
fn a_trace_records_the_next_packets_as_they_are_sent_and_no_more() {
    let mut runt = ipv4(1);
    runt.truncate(20);
    let frames = vec![ipv4(2), runt, ipv4(0xff), ipv6(1), ipv4(2)];
    let script = || vec![(0, vec![burst(0, frames.clone())])];
    let untraced = run(Setup::new(script()), InputPortMiss::default());
    assert!(untraced.traced.is_empty());
    let out = run(
        Setup {
            trace: 4,
            ..Setup::new(script())
        },
        InputPortMiss::default(),
    );
    assert_eq!(out.sent(0), untraced.sent(0), "a trace changes no packet's way");
    assert_eq!(out.sent(2), untraced.sent(2));
    let fates: Vec<_> = out.traced.iter().map(|r| (r.route, r.fate)).collect();
    assert_eq!(
        fates,
        [
            (Route::port(2), Fate::Sent(2)),
            (Route::RUNT, Fate::Dropped(DropReason::Runt)),
            (Route::NO_MATCH, Fate::Sent(0)), // the miss: back out of its input port
            (Route::port(1), Fate::Sent(1)),
        ]
    );
    let first = &out.traced[0];
    assert_eq!((first.lcore, first.input), (1, Input::Queue { port: 0, queue: 0 }));
    assert_eq!(first.frame_before(), &frames[0][..]);
    assert_eq!(
        first.frame_after(),
        &out.frames.iter().find(|(p, _)| *p == 2).unwrap().1[..]
    );
    assert_eq!(
        out.traced[1].frame_after(),
        &frames[1][..],
        "a dropped frame is not rewritten"
    );
}
