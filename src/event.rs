//! The event dataplane, C l3fwd's `--mode=eventdev`: the eth RX adapter
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

use dpdk::{Eal, Event, EventDev, EventPort, Port, Reader, RxAdapter, SchedType, ServiceCores, TxAdapter, TxPath};

use crate::cli::{Args, ConfigEntry};
use crate::control::Summary;
use crate::counters::{LcoreCounters, LcoreStats};
use crate::forward::io::Transmit;
use crate::forward::{Batches, LcoreQueues, TxPort, TxPorts, ROUNDS_PER_QUIESCENT};
use crate::lookup::Lookup;
use crate::packet::EthRewrite;
use crate::plan::Plan;
use crate::poll::{self, LcoreJob, LiveLookup};
use crate::setup;
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
/// many seconds.
const DRAIN_MAX_SECS: u64 = 2;

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
    let mut dataplane = setup::build(eal, ports, plan, args, rss_l4)?;
    let mbufs_before = dataplane.mbufs_in_use();
    let queues = dataplane
        .lcores
        .pop()
        .ok_or("eventdev mode: no enabled port to forward on")?;
    let workers = eal.lcores();
    let sched = args.eventq_sched.unwrap_or(SchedType::Atomic);
    let mut scheduler = Scheduler::build(eal, queues, workers.len(), sched, quit)?;
    scheduler.dev.start()?;
    poll::start_ports(&mut dataplane.ports, args, quit)?;
    let stats: Vec<Arc<LcoreStats>> = workers
        .iter()
        .map(|&lcore| {
            Arc::new(LcoreStats {
                lcore,
                rx_queues: Vec::new(),
                counters: LcoreCounters::for_ports(usize::from(dpdk::MAX_PORTS)),
            })
        })
        .collect();
    let drain = Arc::new(Drain {
        rx: scheduler.rx.as_ref().map(RxAdapter::watch),
        workers: stats.clone(),
        max_ticks: eal.tsc_hz() * DRAIN_MAX_SECS,
    });
    let tasks = stats
        .iter()
        .zip(std::mem::take(&mut scheduler.ports))
        .map(|(stats, port)| {
            Ok(EventLcore {
                port,
                eth: scheduler.eth.clone(),
                lookup: lookup.live.register(stats.lcore)?,
                stats: Arc::clone(stats),
                quit: Arc::clone(quit),
                dequeue_depth: scheduler.dequeue_depth,
                drain: Arc::clone(&drain),
            })
        })
        .collect::<dpdk::Result<Vec<_>>>()?;
    let secs = poll::forward(eal, &dataplane.ports, tasks, &stats, args, quit, lookup.changes)?;

    let freed = scheduler.stop()?;
    if freed > 0 {
        log::info!("event device: freed {freed} packets still scheduled at stop");
    }
    let mut summary = Summary::collect(&dataplane.ports, &stats, secs);
    for p in &mut dataplane.ports {
        p.stop()?;
    }
    summary.mbufs_in_use = [mbufs_before, dataplane.mbufs_in_use()];
    poll::close_and_report(std::mem::take(&mut dataplane.ports), &summary, args)
}

/// The event device with its queues, the adapters holding the ethdev
/// queues, and the service cores running what needs one.
struct Scheduler {
    /// Dropped in this order: adapters, device, then the service cores.
    rx: Option<RxAdapter>,
    tx: Option<TxAdapter>,
    dev: EventDev,
    _services: ServiceCores,
    /// One per worker, until handed out.
    ports: Vec<EventPort>,
    /// Each ethdev port's MACs, by port id.
    eth: Vec<(u16, EthRewrite)>,
    /// Events asked of each dequeue (C: the port's default dequeue depth).
    dequeue_depth: usize,
}

impl Scheduler {
    /// C's `l3fwd_event_resource_setup` and `l3fwd_event_service_setup`:
    /// an event queue per ethdev port (and the TX adapter's, on the
    /// generic path), an event port per worker linked to the former, the
    /// adapters, and the services mapped to service cores.
    fn build(
        eal: &Eal,
        queues: LcoreQueues,
        workers: usize,
        sched: SchedType,
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

        let LcoreQueues { rx, tx, .. } = queues;
        // Once `quit` is set, it drops what arrives and flushes the rest.
        let mut rx_adapter = RxAdapter::create(&mut dev, &port_conf, Arc::clone(quit))?;
        for q in rx {
            let event_queue = eth_ports.iter().position(|&p| p == q.port()).unwrap_or(0) as u8;
            rx_adapter.add(q, event_queue, sched)?;
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

        let mut services = ServiceCores::new(eal);
        let needed = [dev.service()?, rx_adapter.service()?, tx_adapter.service()?];
        for service in needed.into_iter().flatten() {
            if services.lcores().is_empty() {
                return Err(format!(
                    "eventdev mode: {} needs a service core: give one with -s COREMASK (e.g. -l 0-1 -s 0x2)",
                    service.name()
                )
                .into());
            }
            let lcore = services.run(service)?;
            log::info!("service {} runs on lcore {lcore}", service.name());
        }
        rx_adapter.start()?;
        tx_adapter.start()?;
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
            _services: services,
            ports,
            eth,
            dequeue_depth: usize::from(default.dequeue_depth),
        })
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
    drain: Arc<Drain>,
}

/// When the workers are done after `quit`: once the RX adapter has
/// flushed what it buffered and the workers have dequeued every event it
/// enqueued (each is dequeued once: the workers' ports are linked to the
/// ethdev queues only), or `max_ticks` after `quit`.
struct Drain {
    /// None on an internal-port device (no adapter buffer to flush).
    rx: Option<dpdk::RxAdapterWatch>,
    workers: Vec<Arc<LcoreStats>>,
    max_ticks: u64,
}

impl Drain {
    /// Whether a worker whose port just came back empty, and which saw
    /// `quit` at `quit_at`, is done at `now`.
    fn done(&self, now: u64, quit_at: u64) -> bool {
        let Some(rx) = self.rx.and_then(|w| w.stats()) else {
            return true;
        };
        let dequeued: u64 = self.workers.iter().map(|w| w.counters.totals().rx).sum();
        (rx.buffered == 0 && dequeued >= rx.enqueued) || self.expired(now, quit_at)
    }

    /// Whether the drain has run out of time.
    fn expired(&self, now: u64, quit_at: u64) -> bool {
        now.wrapping_sub(quit_at) > self.max_ticks
    }
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

impl<L: Lookup> LcoreJob for EventLcore<L> {
    fn lcore(&self) -> u32 {
        self.stats.lcore
    }

    /// Dequeues a burst, forwards it, sends the round back in order, until
    /// `quit`, and on until the events in flight are forwarded ([`Drain`]);
    /// then releases what the port holds. Never inlined: profilers find
    /// the loop by name.
    #[inline(never)]
    fn run(self) -> i32 {
        let EventLcore {
            port,
            eth,
            mut lookup,
            stats,
            quit,
            dequeue_depth,
            drain,
        } = self;
        let counters = &stats.counters;
        let port = Rc::new(RefCell::new(port));
        let mut tx = TxPorts::default();
        for (p, rewrite) in eth {
            let out = EventTx {
                port: p,
                events: Rc::clone(&port),
            };
            // Sent at the end of each round, never held across dequeues.
            tx.insert(p, TxPort::new(out, rewrite, MAX_BURST));
        }
        let mut batch: Vec<Event> = Vec::with_capacity(dpdk::MAX_DEQUEUE);
        let mut path = Batches::<L, Event>::default();
        // When `quit` was seen.
        let mut quit_at = None;
        let mut reader = lookup.online();
        let mut lookup = reader.read();
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
            let n = port.borrow_mut().dequeue(&mut batch, dequeue_depth);
            counters.add_polls(1, u64::from(n == 0));
            if n == 0 {
                if quit_at.is_some_and(|at| drain.done(start, at)) {
                    break;
                }
                std::hint::spin_loop();
                continue;
            }
            path.forward(&mut batch, |e| e.mbuf().port(), &*lookup, &mut tx, counters);
            tx.drain(counters);
            // Retried until the device takes it, or the drain runs out.
            port.borrow_mut()
                .send_round(|| quit_at.is_some_and(|at| drain.expired(dpdk::rdtsc(), at)));
            counters.add_busy_cycles(dpdk::rdtsc().wrapping_sub(start));
        }
        drop(reader); // offline: the control thread waits for it no more
        drop(tx);
        if let Ok(port) = Rc::try_unwrap(port) {
            port.into_inner().quiesce();
        }
        0
    }
}
