//! The eventdev dataplane, C l3fwd's `--mode=eventdev`: the eth RX adapter
//! turns each received packet into an event, the event device schedules
//! the events over every lcore's event port (ordered, atomic or parallel,
//! `--eventq-sched`), each lcore looks its events up and forwards them
//! with the poll path's code ([`Batches`]), and the eth TX adapter sends
//! them. On a software device (`event_sw`) the scheduler and the adapters
//! run on service cores (`-s`).
//!
//! C's two ways to the TX adapter are both here ([`dpdk::TxPath`]): the
//! generic one (a last, single-link event queue the TX adapter's port
//! dequeues from) and, on devices whose TX adapter is an internal port,
//! the direct enqueue.

use std::cell::RefCell;
use std::error::Error;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::Arc;
use std::time::Duration;

use dpdk::{
    Eal, Event, EventDev, EventPort, EventVector, Mbuf, MbufArray, Port, Reader, RxAdapter, SchedType, Service,
    ServiceCores, TxAdapter, TxPath, VectorConfig, VectorLimits,
};

use crate::cli::plan::ConfigEntry;
use crate::cli::plan::Plan;
use crate::cli::Args;
use crate::control::summary::Summary;
use crate::dataplane::counters::{DropReason, LcoreCounters, LcoreStats, Role};
use crate::dataplane::forward::io::{Packets, Transmit};
use crate::dataplane::forward::{Batches, LcoreQueues, Tap, TxPort, TxPorts, ROUNDS_PER_QUIESCENT};
use crate::dataplane::lookup::Lookup;
use crate::dataplane::packet::EthRewrite;
use crate::dataplane::setup;
use crate::dataplane::trace::Trace;
use crate::model::runner::{self, LcoreJob, LiveLookup};
use crate::MAX_BURST;

/// C's event device and port sizes (`l3fwd_event_device_setup_generic`,
/// `l3fwd_event_port_setup_generic`), cut to what the device offers.
const EVENTS_LIMIT: i32 = 4096;
const QUEUE_FLOWS: u32 = 1024;
const DEVICE_DEPTH: u32 = 128;
const PORT_DEPTH: u16 = 32;
/// How long the TX adapter gets, once the workers stopped, to send what
/// they forwarded last.
const TX_DRAIN: Duration = Duration::from_millis(50);
/// After a stop, the workers forward what is in flight for at most this
/// many seconds (and the vectors' timeout twice).
const DRAIN_MAX_SECS: u64 = 2;
/// C's vector timeout when `--event-vector-tmo` is absent or 0
/// (`VECTOR_TMO_NS_DEFAULT`; the size's is [`crate::DEFAULT_VECTOR_SIZE`]).
const VECTOR_TMO_NS_DEFAULT: u64 = 1_000_000;

/// The vectors `--event-vector` asks for, with C's defaults. The sizes
/// are checked against the RX adapter's limits later ([`check_vectors`]).
struct VectorRequest {
    size: u64,
    tmo: u64,
    /// `--software-rx-vectors`.
    software: bool,
}

/// `None` without `--event-vector`.
fn vector_request(args: &Args) -> Option<VectorRequest> {
    args.event_vector.then(|| VectorRequest {
        size: args
            .event_vector_size
            .filter(|&n| n > 0)
            .unwrap_or(crate::DEFAULT_VECTOR_SIZE),
        tmo: args
            .event_vector_tmo
            .filter(|&n| n > 0)
            .unwrap_or(VECTOR_TMO_NS_DEFAULT),
        software: args.software_rx_vectors,
    })
}

/// The vector configuration if the RX adapter takes it on every port in
/// `eth_ports`; else one line saying what it takes. DPDK 22.11's software
/// RX adapter (`event_sw`'s) loses the vectors it makes (see
/// [`VectorLimits::software`]): refused there rather than leaking.
fn check_vectors(dev: &EventDev, eth_ports: &[u16], request: &VectorRequest) -> Result<VectorConfig, String> {
    let mut conf = None;
    for &port in eth_ports {
        let limits = dev.vector_limits(port).map_err(|e| format!("--event-vector: {e}"))?;
        conf = Some(within(&limits, request.size, request.tmo)?);
        if limits.software && !request.software {
            return Err(SOFTWARE_VECTORS.to_owned());
        }
    }
    conf.ok_or_else(|| "--event-vector: no port".to_owned())
}

/// Why `--event-vector` is refused on a software RX adapter.
const SOFTWARE_VECTORS: &str = "--event-vector: the RX adapter here is DPDK's software one, which loses event \
vectors (22.11's writes them outside the live part of its buffer); vectors need an RX adapter that is an internal port";

/// `size` and `tmo` as a vector configuration, if within `limits`.
fn within(limits: &VectorLimits, size: u64, tmo: u64) -> Result<VectorConfig, String> {
    let (min, max) = (limits.min_size, limits.max_size);
    let size_ok = (u64::from(min)..=u64::from(max)).contains(&size) && (!limits.power_of_2 || size.is_power_of_two());
    if !size_ok {
        let powers = if limits.power_of_2 { ", a power of 2" } else { "" };
        return Err(format!(
            "--event-vector-size {size}: the event device's RX adapter takes {min} to {max}{powers}"
        ));
    }
    let (min, max) = (limits.min_timeout_ns, limits.max_timeout_ns);
    if !(min..=max).contains(&tmo) {
        return Err(format!(
            "--event-vector-tmo {tmo}: the event device's RX adapter takes {min} to {max} ns"
        ));
    }
    Ok(VectorConfig {
        size: size as u16,
        timeout_ns: tmo,
    })
}

/// The RX queues of the event model as `--config` tuples (C's
/// `--event-eth-rxqs` per enabled port, queue 0 first), all on the main
/// lcore: setup then sizes the pools and sets the queues up as for poll
/// mode, and the RX adapter takes them.
pub fn rx_queues(args: &Args, n_ports: usize, main_lcore: u32) -> Vec<ConfigEntry> {
    let queues = args.event_eth_rxqs.unwrap_or(1);
    args.portmask
        .ports()
        .filter(|&p| usize::from(p) < n_ports)
        .flat_map(|port| {
            (0..queues).map(move |queue| ConfigEntry {
                port,
                queue,
                lcore: main_lcore,
            })
        })
        .collect()
}

/// The lcores that forward in the event model: every enabled lcore (the
/// main one too) runs a worker.
pub fn worker_lcores(eal: &Eal) -> Vec<u32> {
    eal.lcores()
}

/// Sets up the ports and the event device, forwards with `lookup` on
/// every lcore until SIGINT, SIGTERM or `--duration`, then drains: the RX
/// adapter frees what arrives from then on and flushes what it buffered,
/// the workers forward what is in flight until their ports run dry, and
/// the adapters, the device (which frees what is still in it) and the
/// ports stop. Checks that every mbuf came back and reports.
pub fn serve<L: Lookup>(
    eal: &Eal,
    ports: Vec<Port>,
    plan: &Plan,
    args: &Args,
    rss_l4: bool,
    lookup: LiveLookup<L>,
    quit: &Arc<AtomicBool>,
) -> Result<(), Box<dyn Error>> {
    let mut configured = setup::build(eal, ports, plan, args, rss_l4)?;
    let mbufs_before = configured.mbufs_in_use();
    let queues = configured
        .lcores
        .pop()
        .ok_or("eventdev mode: no enabled port to forward on")?;
    let workers = worker_lcores(eal);
    let sched = args.eventq_sched.unwrap_or(SchedType::Atomic);
    let mbufs = configured.pools.iter().map(dpdk::Mempool::size).sum();
    let vectors = vector_request(args).map(|req| (req, mbufs));
    let mut scheduler = Scheduler::build(eal, queues, workers.len(), sched, vectors, quit)?;
    scheduler.dev.start()?;
    runner::start_ports(&mut configured.ports, args, quit)?;
    let rx_queues = plan.ports.iter().map(|p| usize::from(p.n_rx_queues)).sum();
    setup::warn_if_pools_starved(
        &configured.pools,
        rx_queues,
        workers.len(),
        configured.ports.len(),
        args,
    );
    scheduler.start()?;
    let stats: Vec<Arc<LcoreStats>> = workers
        .iter()
        .map(|&lcore| {
            Arc::new(LcoreStats {
                lcore,
                role: Role::EventWorker,
                rx_queues: Vec::new(),
                counters: LcoreCounters::for_ports(usize::from(dpdk::MAX_PORTS)),
            })
        })
        .collect();
    // Vectors being filled when the RX adapter closed are sent when they
    // time out: the drain waits for that.
    let settle_ticks = scheduler.vectors.map_or(0, |v| {
        (2 * u128::from(v.timeout_ns) * u128::from(eal.tsc_hz()) / 1_000_000_000) as u64
    });
    let drain = Arc::new(Drain {
        rx: scheduler.rx.as_ref().map(RxAdapter::watch),
        workers: stats.clone(),
        settle_ticks,
        max_ticks: eal.tsc_hz() * DRAIN_MAX_SECS + settle_ticks,
    });
    let simd = runner::vector_path(eal);
    let tasks = stats
        .iter()
        .zip(std::mem::take(&mut scheduler.ports))
        .map(|(stats, port)| {
            Ok(EventLcore {
                port,
                eth: scheduler.eth.clone(),
                lookup: lookup.reader(eal, args, stats.lcore)?,
                stats: Arc::clone(stats),
                quit: Arc::clone(quit),
                dequeue_depth: scheduler.dequeue_depth,
                vectors: scheduler.vectors.is_some(),
                drain: Arc::clone(&drain),
                trace: lookup.trace(),
                simd,
            })
        })
        .collect::<dpdk::Result<Vec<_>>>()?;
    let secs = runner::forward(eal, &configured, tasks, &stats, args, quit, lookup.changes)?;

    let freed = scheduler.stop()?;
    if freed > 0 {
        log::info!("event device: freed {freed} events still scheduled at stop");
    }
    let vectors_out = scheduler.dev.vectors_in_use();
    if vectors_out > 0 {
        log::warn!("event vectors: {vectors_out} never came back to their pool");
    }
    let mut stats = stats;
    stats.extend(dropped_at_stop(drain.rx.as_ref(), scheduler.rx_lcore));
    let summary = Summary::collect(&configured, &stats, secs);
    runner::stop_and_report(&mut configured, summary, mbufs_before, args)
}

/// What the RX adapter freed on arrival after the stop, counted as
/// received and dropped (`at-stop`) by the lcore that runs it, so that
/// what the ports received is what was sent or counted as dropped; none
/// if it freed nothing.
fn dropped_at_stop(rx: Option<&dpdk::RxAdapterWatch>, lcore: Option<u32>) -> Option<Arc<LcoreStats>> {
    let counters = LcoreCounters::for_ports(usize::from(dpdk::MAX_PORTS));
    let mut total = 0;
    for (port, n) in rx?.dropped() {
        counters.add_rx(port, n);
        counters.add_drop(DropReason::AtStop, n);
        total += n;
    }
    (total > 0).then(|| {
        Arc::new(LcoreStats {
            lcore: lcore.unwrap_or(u32::MAX),
            role: Role::RxAdapter,
            rx_queues: Vec::new(),
            counters,
        })
    })
}

/// The event device with its queues, the adapters holding the ethdev
/// queues, and the service cores running what needs one.
struct Scheduler {
    /// Dropped in this order: adapters, device, then the service cores.
    rx: Option<RxAdapter>,
    tx: Option<TxAdapter>,
    dev: EventDev,
    services: ServiceCores,
    /// The services that need a service core, run by [`Scheduler::start`].
    needed: Vec<Service>,
    rx_service: Option<Service>,
    /// One per worker, until handed out.
    ports: Vec<EventPort>,
    /// Each ethdev port's MACs, by port id.
    eth: Vec<(u16, EthRewrite)>,
    /// Events asked of each dequeue (C: the port's default dequeue depth).
    dequeue_depth: usize,
    /// How the RX adapter makes vectors, if it does.
    vectors: Option<VectorConfig>,
    /// The service lcore the RX adapter runs on, if it needs one.
    rx_lcore: Option<u32>,
}

impl Scheduler {
    /// C's `l3fwd_event_resource_setup`: an event queue per ethdev port
    /// (and the TX adapter's, on the generic path), an event port per
    /// worker linked to the former, and the adapters, not yet started;
    /// refused if a service needs a service core and there is none.
    /// With `vectors` (the size and timeout asked for, and the mbufs
    /// there are), the RX adapter makes vectors from a pool of them sized
    /// as C sizes it.
    fn build(
        eal: &Eal,
        queues: LcoreQueues,
        workers: usize,
        sched: SchedType,
        vectors: Option<(VectorRequest, u32)>,
        quit: &Arc<AtomicBool>,
    ) -> Result<Scheduler, Box<dyn Error>> {
        let mut dev = EventDev::take(eal)?;
        let info = dev.info()?;
        let eth_ports: Vec<u16> = queues.tx.ports().collect();
        let mut generic = false;
        for &p in &eth_ports {
            generic |= !dpdk::tx_internal_port(&dev, p)?;
        }
        let n_eth = u8::try_from(eth_ports.len()).map_err(|_| "eventdev mode: too many ports for an event device")?;
        let n_queues = (n_eth + u8::from(generic)).min(info.max_queues);
        let n_ports = u8::try_from(workers).unwrap_or(u8::MAX).min(info.max_ports);
        let slots = dev.configure(&dpdk::EventDevConfig {
            queues: n_queues,
            ports: n_ports,
            events_limit: EVENTS_LIMIT.min(info.max_events),
            queue_flows: QUEUE_FLOWS.min(info.max_queue_flows),
            dequeue_depth: DEVICE_DEPTH.min(info.max_dequeue_depth),
            enqueue_depth: DEVICE_DEPTH.min(info.max_enqueue_depth),
        })?;
        let queue = dpdk::EventQueueConfig {
            sched,
            all_types: info.all_types,
            single_link: false,
            highest_priority: false,
            atomic_flows: QUEUE_FLOWS,
            order_sequences: QUEUE_FLOWS,
        };
        for q in 0..n_eth {
            dev.setup_queue(q, &queue)?;
        }
        let tx_path = if generic {
            let single = dpdk::EventQueueConfig {
                single_link: true,
                highest_priority: true,
                ..queue
            };
            dev.setup_queue(n_eth, &single)?;
            TxPath::Queue(n_eth)
        } else {
            TxPath::Direct
        };
        let default = dev.default_port_config(0)?;
        let port_conf = dpdk::EventPortConfig {
            dequeue_depth: PORT_DEPTH.min(default.dequeue_depth),
            enqueue_depth: PORT_DEPTH.min(default.enqueue_depth),
            new_event_threshold: EVENTS_LIMIT.min(default.new_event_threshold),
        };
        let eth_queues: Vec<u8> = (0..n_eth).collect();
        let mut ports = Vec::new();
        for slot in slots {
            let mut port = dev.setup_port(slot, &port_conf, tx_path)?;
            port.link(&eth_queues)?;
            ports.push(port);
        }

        let vectors = match vectors {
            Some((request, mbufs)) => {
                let conf = check_vectors(&dev, &eth_ports, &request)?;
                let count = mbufs.div_ceil(u32::from(conf.size)).max(512) + workers as u32 * 32;
                dev.create_vector_pool(count, conf.size)?;
                log::info!(
                    "event vectors of up to {} packets, {} ns: a pool of {count}",
                    conf.size,
                    conf.timeout_ns
                );
                Some(conf)
            }
            None => None,
        };
        let LcoreQueues { rx, tx, .. } = queues;
        // Once `quit` is set, it drops what arrives and flushes the rest.
        let mut rx_adapter = RxAdapter::create(&mut dev, &port_conf, Arc::clone(quit))?;
        for q in rx {
            let event_queue = eth_ports.iter().position(|&p| p == q.port()).unwrap_or(0) as u8;
            rx_adapter.add(q, event_queue, sched, vectors)?;
        }
        let mut tx_adapter = TxAdapter::create(&mut dev, &port_conf)?;
        let mut eth = Vec::new();
        for (q, rewrite) in tx.into_queues() {
            eth.push((q.port(), rewrite));
            tx_adapter.add(q)?;
        }
        if let TxPath::Queue(q) = tx_path {
            tx_adapter.link(&dev, q)?;
        }

        let services = ServiceCores::new(eal);
        let rx_service = rx_adapter.service()?;
        let needed: Vec<_> = [dev.service()?, rx_service, tx_adapter.service()?]
            .into_iter()
            .flatten()
            .collect();
        if let (Some(service), []) = (needed.first(), services.lcores()) {
            return Err(format!(
                "eventdev mode: {} needs a service core: give one with -s COREMASK (e.g. -l 0-1 -s 0x2)",
                service.name()
            )
            .into());
        }
        log::info!(
            "event device {}: {n_queues} queues ({sched:?}), {n_ports} ports, {} path",
            info.driver,
            if generic {
                "generic (TX adapter queue)"
            } else {
                "internal port"
            }
        );
        Ok(Scheduler {
            rx: Some(rx_adapter),
            tx: Some(tx_adapter),
            dev,
            services,
            needed,
            rx_service,
            ports,
            eth,
            dequeue_depth: usize::from(default.dequeue_depth),
            vectors,
            rx_lcore: None,
        })
    }

    /// C's `l3fwd_event_service_setup` and the adapters' start, once the
    /// device and the ethdev ports have started: a service that ran
    /// earlier would poll a port or dequeue from a device not yet ready
    /// (and race its start).
    fn start(&mut self) -> Result<(), Box<dyn Error>> {
        for &service in &self.needed {
            let lcore = self.services.run(service)?;
            log::info!("service {} runs on lcore {lcore}", service.name());
            if Some(service) == self.rx_service {
                self.rx_lcore = Some(lcore);
            }
        }
        if let Some(rx) = &mut self.rx {
            rx.start()?;
        }
        if let Some(tx) = &mut self.tx {
            tx.start()?;
        }
        Ok(())
    }

    /// Once the workers have drained: stops the RX adapter, gives the TX
    /// adapter a moment to send what was forwarded, stops it, and stops the
    /// device, which frees the packets still inside it; returns how many.
    fn stop(&mut self) -> dpdk::Result<u64> {
        self.rx = None;
        std::thread::sleep(TX_DRAIN);
        self.tx = None;
        // The service cores stop when the scheduler is dropped.
        self.dev.stop()
    }
}

/// Everything one event lcore owns.
struct EventLcore<L: Lookup> {
    port: EventPort,
    eth: Vec<(u16, EthRewrite)>,
    /// The live tables, read afresh after each quiescent state.
    lookup: Reader<L>,
    stats: Arc<LcoreStats>,
    quit: Arc<AtomicBool>,
    dequeue_depth: usize,
    /// Its events are vectors.
    vectors: bool,
    drain: Arc<Drain>,
    trace: Arc<Trace>,
    simd: Option<dpdk::Simd>,
}

/// When the workers are done after `quit`: once the RX adapter has
/// flushed what it buffered (and, with vectors, `settle_ticks` have passed
/// for those it was filling to time out and be sent) and the workers have
/// dequeued every event it enqueued (each is dequeued once: the workers'
/// ports are linked to the ethdev queues only), or `max_ticks` after
/// `quit`.
struct Drain {
    /// None on an internal-port device (no adapter buffer to flush).
    rx: Option<dpdk::RxAdapterWatch>,
    workers: Vec<Arc<LcoreStats>>,
    settle_ticks: u64,
    max_ticks: u64,
}

impl Drain {
    /// Whether a worker whose port just came back empty, and which saw
    /// `quit` at `quit_at`, is done at `now`.
    fn done(&self, now: u64, quit_at: u64) -> bool {
        let Some(rx) = self.rx.as_ref().and_then(|w| w.stats()) else {
            return true;
        };
        let dequeued: u64 = self.workers.iter().map(|w| w.counters.totals().events).sum();
        let settled = now.wrapping_sub(quit_at) > self.settle_ticks;
        (settled && rx.buffered == 0 && dequeued >= rx.enqueued) || self.expired(now, quit_at)
    }

    /// Whether the drain has run out of time.
    fn expired(&self, now: u64, quit_at: u64) -> bool {
        now.wrapping_sub(quit_at) > self.max_ticks
    }
}

/// How a worker forwards what one dequeue brought: packet events, or
/// vectors of packets. Either way through [`Batches`], the poll path's
/// code, each packet put back into the event port's round.
trait EventPath<L: Lookup> {
    /// Forwards `packets` and `vectors`, leaving both empty.
    fn forward(
        &mut self,
        packets: &mut Vec<Event>,
        vectors: &mut Vec<EventVector>,
        lookup: &L,
        counters: &LcoreCounters,
    );

    /// What it forwarded since the last call took `cycles` ([`Batches::timed`]).
    fn timed(&mut self, lookup: &L, cycles: u64);
}

/// The way to one ethdev port from an event lcore: events bound there go
/// back into the lcore's event port, for the TX adapter.
struct EventTx {
    port: u16,
    events: Rc<RefCell<EventPort>>,
}

impl Transmit for EventTx {
    type Batch = Vec<Event>;
    fn port(&self) -> u16 {
        self.port
    }
    #[inline(always)]
    fn send(&mut self, from: &mut Vec<Event>) -> usize {
        let mut events = self.events.borrow_mut();
        let n = from.len();
        for e in from.drain(..) {
            events.forward(e, self.port);
        }
        n
    }
    fn reclaim_sent(&mut self) {}
}

/// The poll path's batch forwarding with the TX ports it sends to.
struct SendPath<L: Lookup, T: Transmit> {
    path: Batches<L, <T::Batch as Packets>::Packet>,
    tx: TxPorts<T>,
}

impl<L: Lookup, T: Transmit> SendPath<L, T> {
    fn new(tx: TxPorts<T>, tap: Tap, simd: Option<dpdk::Simd>) -> Self {
        SendPath {
            path: Batches::new(tap, simd),
            tx,
        }
    }

    /// Forwards `batch` (`in_port` says where each packet came in) and
    /// sends what it buffered: nothing is held across dequeues.
    #[inline(always)]
    fn send(
        &mut self,
        batch: &mut T::Batch,
        in_port: impl Fn(&<T::Batch as Packets>::Packet) -> u16,
        lookup: &L,
        counters: &LcoreCounters,
    ) {
        self.path.forward(batch, in_port, lookup, &mut self.tx, counters);
        self.tx.drain(counters);
    }
}

/// Packet events: the round forwarded as one batch.
struct PacketPath<L: Lookup>(SendPath<L, EventTx>);

impl<L: Lookup> EventPath<L> for PacketPath<L> {
    #[inline(always)]
    fn forward(
        &mut self,
        packets: &mut Vec<Event>,
        vectors: &mut Vec<EventVector>,
        lookup: &L,
        counters: &LcoreCounters,
    ) {
        // None without vectors (dropping one would free it).
        vectors.clear();
        self.0.send(packets, |e| e.mbuf().port(), lookup, counters);
    }

    fn timed(&mut self, lookup: &L, cycles: u64) {
        self.0.path.timed(lookup, cycles);
    }
}

/// The way to one ethdev port for the packets of a vector: back into the
/// vector being forwarded.
struct VectorTx {
    port: u16,
    open: Rc<RefCell<Option<EventVector>>>,
}

impl Transmit for VectorTx {
    type Batch = MbufArray<MAX_BURST>;
    fn port(&self) -> u16 {
        self.port
    }
    #[inline(always)]
    fn send(&mut self, from: &mut MbufArray<MAX_BURST>) -> usize {
        self.open.borrow_mut().as_mut().map_or(0, |v| v.refill(from, self.port))
    }
    fn reclaim_sent(&mut self) {}
}

/// Vectors: each one's packets forwarded in batches of up to
/// [`MAX_BURST`] and put back into it, then the vector into the round.
struct VectorPath<L: Lookup> {
    path: SendPath<L, VectorTx>,
    /// The vector being forwarded.
    open: Rc<RefCell<Option<EventVector>>>,
    batch: MbufArray<MAX_BURST>,
    port: Rc<RefCell<EventPort>>,
}

impl<L: Lookup> EventPath<L> for VectorPath<L> {
    #[inline(always)]
    fn forward(
        &mut self,
        packets: &mut Vec<Event>,
        vectors: &mut Vec<EventVector>,
        lookup: &L,
        counters: &LcoreCounters,
    ) {
        // None with vectors: every RX queue makes them.
        packets.clear();
        for v in vectors.drain(..) {
            *self.open.borrow_mut() = Some(v);
            while self.open.borrow_mut().as_mut().map_or(0, |v| v.fill(&mut self.batch)) > 0 {
                self.path.send(&mut self.batch, Mbuf::port, lookup, counters);
            }
            if let Some(v) = self.open.borrow_mut().take() {
                self.port.borrow_mut().forward_vector(v);
            }
        }
    }

    fn timed(&mut self, lookup: &L, cycles: u64) {
        self.path.path.timed(lookup, cycles);
    }
}

impl<L: Lookup> LcoreJob for EventLcore<L> {
    fn lcore(&self) -> u32 {
        self.stats.lcore
    }

    /// Forwards events, or vectors, until `quit` and the drain are over.
    fn run(self) -> i32 {
        let EventLcore {
            port,
            eth,
            lookup,
            stats,
            quit,
            dequeue_depth,
            vectors,
            drain,
            trace,
            simd,
        } = self;
        let tap = Tap {
            trace,
            lcore: stats.lcore,
        };
        let port = Rc::new(RefCell::new(port));
        let worker = Worker {
            lookup,
            stats,
            quit,
            dequeue_depth,
            drain,
        };
        if vectors {
            let open = Rc::new(RefCell::new(None));
            let tx = tx_ports(eth, |port| VectorTx {
                port,
                open: Rc::clone(&open),
            });
            let path = VectorPath {
                path: SendPath::new(tx, tap, simd),
                open,
                batch: MbufArray::new(),
                port: Rc::clone(&port),
            };
            worker.run(port, path)
        } else {
            let tx = tx_ports(eth, |p| EventTx {
                port: p,
                events: Rc::clone(&port),
            });
            let path = PacketPath(SendPath::new(tx, tap, simd));
            worker.run(port, path)
        }
    }
}

/// A TX port for each ethdev port and its MACs in `eth`, sending through
/// `out(port)`. Its buffer is sent at the end of each round (or vector),
/// never held across dequeues.
fn tx_ports<T: Transmit>(eth: Vec<(u16, EthRewrite)>, out: impl Fn(u16) -> T) -> TxPorts<T> {
    let mut tx = TxPorts::default();
    for (port, rewrite) in eth {
        tx.insert(port, TxPort::new(out(port), rewrite, MAX_BURST));
    }
    tx
}

/// What the event loop needs besides its port and path.
struct Worker<L: Lookup> {
    lookup: Reader<L>,
    stats: Arc<LcoreStats>,
    quit: Arc<AtomicBool>,
    dequeue_depth: usize,
    drain: Arc<Drain>,
}

impl<L: Lookup> Worker<L> {
    /// Dequeues a burst, forwards it along `path`, sends the round back in
    /// order, until `quit`, and on until the events in flight are forwarded
    /// ([`Drain`]); then releases what the port holds. Never inlined:
    /// profilers find the loop by name.
    #[inline(never)]
    fn run<P: EventPath<L>>(self, port: Rc<RefCell<EventPort>>, mut path: P) -> i32 {
        let Worker {
            mut lookup,
            stats,
            quit,
            dequeue_depth,
            drain,
        } = self;
        let counters = &stats.counters;
        let mut packets: Vec<Event> = Vec::with_capacity(dpdk::MAX_DEQUEUE);
        let mut vectors: Vec<EventVector> = Vec::with_capacity(dpdk::MAX_DEQUEUE);
        // When `quit` was seen.
        let mut quit_at = None;
        let mut reader = lookup.online();
        let mut lookup = reader.read();
        // Nothing forwarded yet: a lookup told which way to use sets it.
        path.timed(&*lookup, 0);
        let mut until_quiescent = ROUNDS_PER_QUIESCENT;
        loop {
            until_quiescent -= 1;
            if until_quiescent == 0 {
                until_quiescent = ROUNDS_PER_QUIESCENT;
                // Between two dequeues no reference into the tables lives:
                // the control thread may free those it swapped out.
                reader.quiescent();
                lookup = reader.read();
            }
            let start = dpdk::rdtsc();
            if quit_at.is_none() && quit.load(Relaxed) {
                quit_at = Some(start);
            }
            let n = port.borrow_mut().dequeue(&mut packets, &mut vectors, dequeue_depth);
            counters.add_polls(1, u64::from(n == 0));
            if n == 0 {
                if quit_at.is_some_and(|at| drain.done(start, at)) {
                    break;
                }
                std::hint::spin_loop();
                continue;
            }
            counters.add_events(n as u64);
            path.forward(&mut packets, &mut vectors, &*lookup, counters);
            // Retried until the device takes it, or the drain runs out.
            port.borrow_mut()
                .send_round(|| quit_at.is_some_and(|at| drain.expired(dpdk::rdtsc(), at)));
            let cycles = dpdk::rdtsc().wrapping_sub(start);
            counters.add_busy_cycles(cycles);
            path.timed(&*lookup, cycles);
        }
        drop(reader); // offline: the control thread waits for it no more
        drop(path);
        if let Ok(port) = Rc::try_unwrap(port) {
            port.into_inner().quiesce();
        }
        0
    }
}
