//! The application: from parsed arguments to forwarding and back. Loads the
//! rule files, starts EAL, checks the port/queue/lcore plan, builds the
//! lookup tables, sets up the ports and runs the lcores until a signal or
//! `--duration` stops them.

use std::error::Error;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::Arc;
use std::time::{Duration, Instant};

use dpdk::{Eal, Port};

use crate::cli::{Args, LookupMode};
use crate::control::{self, Control, LcoreView};
use crate::counters::LcoreCounters;
use crate::forward::LcoreTask;
use crate::lookup::{EmLookup, Lookup, LpmLookup};
use crate::plan::{self, PortCaps, Topology};
use crate::setup;

/// TX buffers are flushed at least this often.
const DRAIN_US: u64 = 100;

/// The rule file given, or the copy shipped in `configs/`.
fn rule_file(given: &Option<PathBuf>, default: &str) -> PathBuf {
    given
        .clone()
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("configs").join(default))
}

/// Runs l3fwd-rs with EAL arguments `eal_args` (program name first) and the
/// application's parsed `args`; returns when forwarding has stopped and the
/// ports are closed.
pub fn run(eal_args: &[String], args: &Args) -> Result<(), Box<dyn Error>> {
    match args.lookup {
        LookupMode::Lpm => run_lpm(eal_args, args),
        LookupMode::Em => run_em(eal_args, args),
    }
}

/// Whether rules to `port` are loaded: the port is enabled in `-p`.
fn port_enabled(args: &Args, port: u8) -> bool {
    u16::from(port) < dpdk::MAX_PORTS && args.portmask & (1 << port) != 0
}

/// EAL start and the port/queue/lcore plan: common to both modes.
fn start(eal_args: &[String], args: &Args) -> Result<(Eal, plan::Plan), Box<dyn Error>> {
    let eal = Eal::init(eal_args)?;
    check_vdevs(eal_args)?;
    let topology = topology(&eal)?;
    let plan = plan::Plan::build(&args.config, args.portmask, &topology)?;
    Ok((eal, plan))
}

fn run_lpm(eal_args: &[String], args: &Args) -> Result<(), Box<dyn Error>> {
    // Rule files are read before EAL starts: a typo costs no EAL start-up.
    let v4 = lpm::rules::load_v4(rule_file(&args.rule_ipv4, "lpm_v4.cfg"))?;
    let v6 = lpm::rules::load_v6(rule_file(&args.rule_ipv6, "lpm_v6.cfg"))?;
    let (eal, plan) = start(eal_args, args)?;
    let limits = lpm::Limits {
        max_rules: args.lpm_max_rules,
        tbl8s: args.lpm_tbl8s,
    };
    let (tables, report) = lpm::LpmTables::build("l3fwd", 0, &v4, &v6, limits, |p| port_enabled(args, p))?;
    log::info!(
        "LPM: {} IPv4 and {} IPv6 routes added, {} to disabled ports skipped",
        report.v4_added,
        report.v6_added,
        report.skipped
    );
    let lookup = Arc::new(LpmLookup {
        tables,
        sequential: args.sequential_lookup,
    });
    forward_until_stopped(&eal, &plan, args, lookup)
}

fn run_em(eal_args: &[String], args: &Args) -> Result<(), Box<dyn Error>> {
    let mut v4 = em::rules::load_v4(rule_file(&args.rule_ipv4, "em_v4.cfg"))?;
    let mut v6 = em::rules::load_v6(rule_file(&args.rule_ipv6, "em_v6.cfg"))?;
    // As in the C sample, exact match populates one family only: IPv6 with
    // --ipv6, IPv4 without; the other family's packets all miss.
    if args.ipv6 {
        v4.clear();
    } else {
        v6.clear();
    }
    let (eal, plan) = start(eal_args, args)?;
    let entries = args.hash_entry_num.unwrap_or(em::DEFAULT_HASH_ENTRIES);
    let tables = em::EmTables::new(entries, 0, &v4, &v6, |p| port_enabled(args, p))?;
    let lookup = Arc::new(EmLookup {
        tables,
        sequential: args.sequential_lookup,
    });
    forward_until_stopped(&eal, &plan, args, lookup)
}

/// Fails if a `--vdev=net_...` of `eal_args` is not a port: its driver
/// refused it, and EAL carried on without it, which would silently shift
/// the ids of the ports after it.
fn check_vdevs(eal_args: &[String]) -> Result<(), String> {
    let mut args = eal_args.iter();
    while let Some(arg) = args.next() {
        let spec = match arg.strip_prefix("--vdev") {
            Some("") => args.next().map(String::as_str),
            Some(rest) => rest.strip_prefix('='),
            None => None,
        };
        let Some(spec) = spec else { continue };
        let name = spec.split(',').next().unwrap_or_default();
        if name.starts_with("net_") && Port::id_by_name(name).is_none() {
            return Err(format!(
                "--vdev {spec}: the driver could not create port {name} (its message above says why)"
            ));
        }
    }
    Ok(())
}

/// What EAL created: ports with their queue limits, and the lcores.
fn topology(eal: &Eal) -> Result<Topology, Box<dyn Error>> {
    let mut ports = Vec::new();
    for id in 0..eal.port_count() {
        let info = Port::new(id)?.info()?;
        ports.push(PortCaps {
            max_rx_queues: info.max_rx_queues,
            max_tx_queues: info.max_tx_queues,
        });
    }
    Ok(Topology {
        ports,
        lcores: eal.lcores(),
        main_lcore: eal.main_lcore(),
    })
}

/// Sets up the ports, forwards on every lcore with RX queues until SIGINT,
/// SIGTERM or `--duration`, then flushes, prints totals and closes the ports.
/// On an error the ports set up so far are closed (dropping `Dataplane`)
/// and nothing is left running.
fn forward_until_stopped<L: Lookup>(
    eal: &Eal,
    plan: &plan::Plan,
    args: &Args,
    lookup: Arc<L>,
) -> Result<(), Box<dyn Error>> {
    let mut dataplane = setup::build(eal, plan, args)?;
    let in_use = |pools: &[dpdk::Mempool]| pools.iter().map(|p| p.in_use() as u64).sum::<u64>();
    // What the drivers hold before forwarding (a pcap port with infinite_rx
    // keeps a copy of its file): the count to come back to.
    let mbufs_before = in_use(&dataplane.pools);
    for p in &mut dataplane.ports {
        if args.promiscuous {
            p.enable_promiscuous()?;
        }
        p.start()?;
    }

    let quit = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register(sig, Arc::clone(&quit))?;
    }
    let drain_ticks = dpdk::tsc_hz().div_ceil(1_000_000) * DRAIN_US;
    let port_ids: Vec<u16> = dataplane.ports.iter().map(Port::id).collect();
    let mut views = Vec::new();
    let mut tasks = Vec::new();
    for lq in std::mem::take(&mut dataplane.lcores) {
        if lq.rx.is_empty() {
            log::info!("lcore {} has nothing to do", lq.lcore);
            continue;
        }
        let counters = Arc::new(LcoreCounters::for_ports(usize::from(dpdk::MAX_PORTS)));
        views.push(LcoreView {
            lcore: lq.lcore,
            rx_queues: lq.rx.iter().map(|q| (q.port(), q.queue())).collect(),
            counters: Arc::clone(&counters),
        });
        let task = LcoreTask {
            rx: lq.rx,
            tx: lq.tx,
            tx_ports: lq.tx_ports,
            lookup: Arc::clone(&lookup),
            counters,
            quit: Arc::clone(&quit),
            drain_ticks,
        };
        tasks.push((lq.lcore, task));
    }

    // Telemetry and the control thread start before any lcore forwards, so
    // that their failure leaves nothing to stop.
    let telemetry_view = views.clone();
    dpdk::register_telemetry(
        "/l3fwd/stats",
        "l3fwd-rs forwarding counters, summed over lcores",
        move || LcoreCounters::named(&control::totals(&telemetry_view)),
    )?;
    let control = Control {
        ports: port_ids.clone(),
        lcores: views.clone(),
        quit: Arc::clone(&quit),
        interval: (args.stats_interval > 0).then(|| Duration::from_secs(args.stats_interval)),
        duration: args.duration.map(Duration::from_secs),
    };
    let control_thread = dpdk::spawn_control_thread("l3fwd-ctrl", move || control.run())?;
    let started = Instant::now();
    let ran = run_lcores(eal, tasks, &quit);
    let secs = started.elapsed().as_secs_f64();
    control_thread.join();
    ran?;

    let mut summary = control::Summary::collect(&port_ids, &views, secs);
    for p in &mut dataplane.ports {
        p.stop()?;
    }
    // Stopped ports hold what they held before they started: every mbuf
    // taken since must be back in its pool, or it leaked.
    summary.mbufs_in_use = [mbufs_before, in_use(&dataplane.pools)];
    for p in std::mem::take(&mut dataplane.ports) {
        p.close()?;
    }
    summary.print();
    if let Some(path) = &args.stats_json {
        summary
            .write_json(path)
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    }
    Ok(())
}

/// Runs each task on its lcore (the main lcore's on this thread) until
/// `quit`, and returns once every one has stopped and flushed. If a worker
/// cannot be launched, those already running are stopped before the error
/// is returned; `quit` is set on return either way (it also stops the
/// control thread).
fn run_lcores<L: Lookup>(eal: &Eal, tasks: Vec<(u32, LcoreTask<L>)>, quit: &AtomicBool) -> dpdk::Result<()> {
    let mut main_task = None;
    let mut workers = Vec::new();
    let mut launched = Ok(());
    for (lcore, task) in tasks {
        log::info!("lcore {lcore}: forwarding");
        if lcore == eal.main_lcore() {
            main_task = Some(task);
        } else if let Err(e) = dpdk::launch_on_lcore(lcore, move || task.run()) {
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
        dpdk::wait_lcore(w);
    }
    quit.store(true, Relaxed);
    launched
}
