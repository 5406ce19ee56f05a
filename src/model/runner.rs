//! What both dataplane models (poll, [`crate::model::poll`], and eventdev,
//! [`crate::model::event`]) run their lcores with: the ports started and their
//! links awaited, the lcores launched beside telemetry and the control
//! thread until a stop, the ports closed and the summary reported.

use std::error::Error;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::Arc;
use std::time::{Duration, Instant};

use dpdk::{Eal, Live, Port, Reader};

use crate::cli::Args;
use crate::control::live::Tables;
use crate::control::metrics::{self, Metrics};
use crate::control::signals::Hangup;
use crate::control::socket::Socket;
use crate::control::summary::{self, Summary};
use crate::control::thread::Control;
use crate::dataplane::counters::{LcoreCounters, LcoreStats};
use crate::dataplane::lookup::Lookup;
use crate::dataplane::pool_watch::PoolWatch;
use crate::dataplane::setup::ConfiguredPorts;
use crate::dataplane::sockets::{self, PerSocket};
use crate::dataplane::trace::{Trace, TraceReader};

/// What the lcores read and the control thread changes: the live lookup
/// of each socket, and what changes it.
pub struct LiveLookup<L: Lookup> {
    pub live: PerSocket<Arc<Live<L>>>,
    pub changes: Changes,
}

impl<L: Lookup> LiveLookup<L> {
    /// A reader for `lcore` of its socket's live lookup.
    pub fn reader(&self, eal: &Eal, args: &Args, lcore: u32) -> dpdk::Result<Reader<L>> {
        self.live
            .on(sockets::socket_of(eal, args.no_numa, lcore))
            .register(lcore)
    }

    /// The lcores' side of `l3fwd-ctl trace`.
    pub fn trace(&self) -> Arc<Trace> {
        self.changes.trace.trace()
    }
}

/// What changes the live tables: the control thread's writer side, and
/// SIGHUP once forwarding; and the control thread's side of the trace.
pub struct Changes {
    pub tables: Box<dyn Tables>,
    pub hangup: Hangup,
    pub trace: TraceReader,
}

/// The vector parse and lookup the lcores take, as EAL's maximum SIMD
/// bitwidth and the CPU allow ([`dpdk::Simd::detect`]); logged, as it
/// decides the rate.
pub fn vector_path(eal: &Eal) -> Option<dpdk::Simd> {
    let simd = dpdk::Simd::detect(eal);
    let bits = eal.max_simd_bitwidth();
    match simd {
        Some(simd) => log::info!("vector path: {} (EAL max SIMD bitwidth {bits})", simd.name()),
        None => log::info!("vector path: none, scalar (EAL max SIMD bitwidth {bits})"),
    }
    simd
}

/// What one lcore runs until `quit`: a dataplane model's loop.
pub trait LcoreJob: Send + 'static {
    /// The lcore it runs on.
    fn lcore(&self) -> u32;
    /// Forwards until `quit`, then flushes.
    fn run(self) -> i32;
}

/// Stops every port (no queue handle is left: the lcores have returned)
/// and counts the mbufs then in use: stopped ports hold what they held
/// before they started (`mbufs_before`), so every mbuf taken since must be
/// back in its pool, or it leaked. Then closes them (a pcap port completes
/// its files, and drivers give back what their rings held), counts the
/// mbufs still out, prints the summary and writes `--stats-json`.
pub fn stop_and_report(
    configured: &mut ConfiguredPorts,
    mut summary: Summary,
    mbufs_before: u64,
    args: &Args,
) -> Result<(), Box<dyn Error>> {
    for p in &mut configured.ports {
        p.stop()?;
    }
    summary.mbufs_in_use = [mbufs_before, configured.mbufs_in_use()];
    for p in std::mem::take(&mut configured.ports) {
        p.close()?;
    }
    summary.mbufs_after_close = configured.mbufs_in_use();
    summary.print();
    if let Some(path) = &args.stats_json {
        summary
            .write_json(path)
            .map_err(|e| format!("cannot write --stats-json {}: {e}", path.display()))?;
    }
    Ok(())
}

/// Starts every port (promiscuous with `-P`) and waits for the links
/// unless `--skip-link-wait`.
pub fn start_ports(ports: &mut [Port], args: &Args, quit: &AtomicBool) -> Result<(), Box<dyn Error>> {
    for p in ports.iter_mut() {
        if args.promiscuous {
            p.enable_promiscuous()?;
        }
        p.start()?;
    }
    if !args.skip_link_wait {
        wait_for_links(ports, quit)?;
    }
    Ok(())
}

/// C's `check_all_ports_link_status`: waits up to 9 s, checking every
/// 100 ms, for every port's link to be up (a real NIC takes a moment after
/// its start; virtual ports are up at once), then logs each link. A link
/// still down is a warning, and forwarding starts anyway, as in C; a signal
/// ends the wait.
fn wait_for_links(ports: &[Port], quit: &AtomicBool) -> dpdk::Result<()> {
    const CHECK_INTERVAL: Duration = Duration::from_millis(100);
    const CHECKS: u32 = 90;
    for check in 0..=CHECKS {
        let links = ports.iter().map(Port::link).collect::<dpdk::Result<Vec<_>>>()?;
        if links.iter().all(|l| l.up) || check == CHECKS || quit.load(Relaxed) {
            for (p, l) in ports.iter().zip(&links) {
                match l {
                    l if l.up => log::info!(
                        "port {}: link up at {} Mbps, {} duplex",
                        p.id(),
                        l.speed_mbps,
                        if l.full_duplex { "full" } else { "half" }
                    ),
                    _ => log::warn!("port {}: link down; forwarding anyway", p.id()),
                }
            }
            return Ok(());
        }
        std::thread::sleep(CHECK_INTERVAL);
    }
    Ok(())
}

/// Forwards on every task's lcore, with telemetry and the control thread
/// (rates, `--duration`, the live tables' changes) beside them, until
/// `quit`; returns how long forwarding ran, once every lcore has stopped
/// and flushed.
pub fn forward<J: LcoreJob>(
    eal: &Eal,
    configured: &ConfiguredPorts,
    tasks: Vec<J>,
    stats: &[Arc<LcoreStats>],
    args: &Args,
    quit: &Arc<AtomicBool>,
    changes: Changes,
) -> Result<f64, Box<dyn Error>> {
    // Telemetry and the control thread start before any lcore forwards, so
    // that their failure leaves nothing to stop.
    let telemetry_view = stats.to_vec();
    let pool_empty = configured.pool_empty.clone();
    eal.register_telemetry(
        "/l3fwd/stats",
        "l3fwd-rs counters summed over lcores, each lcore's load, each port's seconds with an empty pool",
        move || {
            let mut pairs = LcoreCounters::named(&summary::totals(&telemetry_view));
            for l in &telemetry_view {
                let t = l.counters.totals();
                let per_lcore = [
                    ("rx", t.rx),
                    ("busy_cycles", t.busy_cycles),
                    ("polls", t.polls),
                    ("empty_polls", t.empty_polls),
                ];
                pairs.extend(per_lcore.map(|(k, v)| (format!("lcore{}_{k}", l.lcore), v)));
            }
            pairs.extend(
                pool_empty
                    .all()
                    .map(|(port, secs)| (format!("port{port}_pool_empty_seconds"), secs)),
            );
            pairs
        },
    )?;
    let socket = Socket::bind(&eal.runtime_dir(), changes.trace)?;
    log::info!("l3fwd-ctl socket: {}", socket.path().display());
    let metrics = match args.metrics {
        Some(addr) => {
            let sources = metrics::Sources {
                ports: configured.ports.iter().map(Port::stats_reader).collect(),
                lcores: stats.to_vec(),
                pool_empty: configured.pool_empty.clone(),
            };
            let served = Metrics::bind(addr, sources).map_err(|e| format!("--metrics {addr}: {e}"))?;
            log::info!("metrics: http://{}/metrics", served.local_addr()?);
            Some(served)
        }
        None => None,
    };
    let control = Control {
        ports: configured.ports.iter().map(Port::id).collect(),
        lcores: stats.to_vec(),
        quit: Arc::clone(quit),
        interval: (args.stats_interval > 0).then(|| Duration::from_secs(args.stats_interval)),
        duration: args.duration.map(Duration::from_secs),
        tables: changes.tables,
        reload: changes.hangup.reloads_from_now()?,
        socket,
        pools: PoolWatch::new(
            configured.port_pools.clone(),
            configured.pool_empty.clone(),
            args.rx_burst,
        ),
        metrics,
    };
    let control_thread = eal.spawn_control_thread("l3fwd-ctrl", move || control.run())?;
    let started = Instant::now();
    let ran = run_lcores(eal, tasks, quit);
    let secs = started.elapsed().as_secs_f64();
    control_thread.join();
    ran?;
    Ok(secs)
}

/// Runs each task on its lcore (the main lcore's on this thread) until
/// `quit`, and returns once every one has stopped and flushed. If a worker
/// cannot be launched, those already running are stopped before the error
/// is returned; `quit` is set on return either way (it also stops the
/// control thread).
fn run_lcores<J: LcoreJob>(eal: &Eal, tasks: Vec<J>, quit: &AtomicBool) -> dpdk::Result<()> {
    let main = match eal.main_lcore_token() {
        Ok(main) => main,
        Err(e) => {
            quit.store(true, Relaxed);
            return Err(e);
        }
    };
    let mut main_task = None;
    let mut workers = Vec::new();
    let mut launched = Ok(());
    for task in tasks {
        let lcore = task.lcore();
        log::info!("lcore {lcore}: forwarding");
        if lcore == main.lcore() {
            main_task = Some(task);
        } else if let Err(e) = main.launch(lcore, move || task.run()) {
            launched = Err(e);
            break;
        } else {
            workers.push(lcore);
        }
    }
    match (&launched, main_task) {
        (Ok(()), Some(task)) => {
            task.run();
        }
        (Ok(()), None) => {}
        (Err(_), _) => quit.store(true, Relaxed),
    }
    for w in workers {
        // Launched, so an enabled worker: the wait cannot be refused.
        let _ = main.wait(w);
    }
    quit.store(true, Relaxed);
    launched
}
