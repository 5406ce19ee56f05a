//! The application: from parsed arguments to forwarding and back. Loads the
//! rule files, starts EAL, checks the port/queue/lcore plan, builds the
//! lookup tables, sets up the ports and runs the lcores until a signal or
//! `--duration` stops them, then stops the ports, checks that every mbuf
//! came back and reports.

use std::error::Error;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::Arc;
use std::time::{Duration, Instant};

use dpdk::{Eal, Port};

use crate::cli::{Args, LookupMode};
use crate::control::{self, Control, Summary};
use crate::counters::{LcoreCounters, LcoreStats};
use crate::forward::{Lcore, LcoreQueues};
use crate::lookup::{gathers_v4, AclLookup, EmLookup, FibLookup, Lookup, LpmLookup};
use crate::plan::{Plan, PortCaps, Topology};
use crate::rule_files;
use crate::setup::{self, Dataplane};

/// Runs l3fwd-rs with EAL arguments `eal_args` (program name first) and the
/// application's parsed `args`; returns when forwarding has stopped and the
/// ports are closed.
pub fn run(eal_args: &[String], args: &Args) -> Result<(), Box<dyn Error>> {
    // Registered first: a signal during rule loading or EAL and port
    // set-up then stops forwarding before it starts, with the summary and
    // the cleanup of any later stop.
    let quit = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register(sig, Arc::clone(&quit))?;
    }
    if let Some(path) = &args.stats_json {
        check_writable(path)?;
    }
    match args.lookup {
        LookupMode::Lpm => run_lpm(eal_args, args, &quit),
        LookupMode::Em => run_em(eal_args, args, &quit),
        LookupMode::Fib => run_fib(eal_args, args, &quit),
        LookupMode::Acl => run_acl(eal_args, args, &quit),
    }
}

/// Fails now, before any set-up, if `--stats-json` could not be written at
/// exit. Creates the file (empty until then).
fn check_writable(path: &std::path::Path) -> Result<(), String> {
    std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .open(path)
        .map(drop)
        .map_err(|e| format!("--stats-json {}: {e}", path.display()))
}

/// EAL start, its ports, and the port/queue/lcore plan: common to both modes.
fn start(eal_args: &[String], args: &Args) -> Result<(Eal, Vec<Port>, Plan), Box<dyn Error>> {
    let eal = Eal::init(eal_args)?;
    check_vdevs(&eal, eal_args)?;
    let ports = eal.take_ports()?;
    let plan = Plan::build(&args.config, args.portmask, &topology(&eal, &ports)?)?;
    Ok((eal, ports, plan))
}

/// `--lpm-max-rules` and `--lpm-tbl8s`.
fn route_limits(args: &Args) -> lpm::Limits {
    lpm::Limits {
        max_rules: args.lpm_max_rules,
        tbl8s: args.lpm_tbl8s,
    }
}

fn log_routes(kind: &str, report: &lpm::LoadReport) {
    log::info!(
        "{kind}: {} IPv4 and {} IPv6 routes added, {} to disabled ports skipped",
        report.v4_added,
        report.v6_added,
        report.skipped
    );
}

fn run_lpm(eal_args: &[String], args: &Args, quit: &Arc<AtomicBool>) -> Result<(), Box<dyn Error>> {
    // The route files (also FIB mode's) are read before EAL starts: a typo
    // costs no EAL start-up.
    let (v4, v6) = rule_files::lpm(args)?;
    let (eal, ports, plan) = start(eal_args, args)?;
    let enabled = |p: u8| plan.forwards_to(p.into());
    let (tables, report) = lpm::LpmTables::build(&eal, "l3fwd", 0, &v4, &v6, route_limits(args), enabled)?;
    log_routes("LPM", &report);
    let lookup = LpmLookup {
        tables,
        sequential: args.sequential_lookup,
        gather_v4: gathers_v4(report.v4_added),
    };
    serve(&eal, ports, &plan, args, lookup, quit)
}

fn run_fib(eal_args: &[String], args: &Args, quit: &Arc<AtomicBool>) -> Result<(), Box<dyn Error>> {
    let (v4, v6) = rule_files::lpm(args)?;
    let (eal, ports, plan) = start(eal_args, args)?;
    let enabled = |p: u8| plan.forwards_to(p.into());
    let (tables, report) = lpm::FibTables::build(&eal, "l3fwd", 0, &v4, &v6, route_limits(args), enabled)?;
    log_routes("FIB", &report);
    serve(&eal, ports, &plan, args, FibLookup { tables }, quit)
}

fn run_acl(eal_args: &[String], args: &Args, quit: &Arc<AtomicBool>) -> Result<(), Box<dyn Error>> {
    let (v4, v6) = rule_files::acl(args)?;
    let (eal, ports, plan) = start(eal_args, args)?;
    // C checks routes against the port mask itself, not the ports found.
    let enabled = |p: u32| u16::try_from(p).is_ok_and(|p| args.portmask.contains(p));
    let tables = acl::AclTables::build(&eal, "l3fwd", 0, &v4, &v6, args.alg, enabled)?;
    serve(&eal, ports, &plan, args, AclLookup { tables }, quit)
}

fn run_em(eal_args: &[String], args: &Args, quit: &Arc<AtomicBool>) -> Result<(), Box<dyn Error>> {
    let (v4, v6) = rule_files::em(args)?;
    let (mut v4, mut v6) = (v4.rules, v6.rules);
    // As in the C sample, exact match populates one family only: IPv6 with
    // --ipv6, IPv4 without; the other family's packets all miss.
    if args.ipv6 {
        v4.clear();
    } else {
        v6.clear();
    }
    let (eal, ports, plan) = start(eal_args, args)?;
    let entries = args.hash_entry_num.unwrap_or(em::DEFAULT_HASH_ENTRIES);
    let tables = em::EmTables::new(&eal, entries, 0, &v4, &v6, |p| plan.forwards_to(p.into()))?;
    let lookup = EmLookup {
        tables,
        sequential: args.sequential_lookup,
    };
    serve(&eal, ports, &plan, args, lookup, quit)
}

/// Fails if a network `--vdev` of `eal_args` is not a port: its driver
/// refused it (or EAL did, for a second device of one name), and EAL
/// carried on without it, which would silently shift the ids of the ports
/// after it.
fn check_vdevs(eal: &Eal, eal_args: &[String]) -> Result<(), String> {
    let names = network_vdev_names(eal_args);
    for (i, (name, spec)) in names.iter().enumerate() {
        if let Some((_, first)) = names[..i].iter().find(|(other, _)| other == name) {
            return Err(format!(
                "--vdev {spec}: a second device named {name} (the first: --vdev {first}); EAL creates one of them only"
            ));
        }
        if eal.port_id_by_name(name).is_none() {
            return Err(format!(
                "--vdev {spec}: the driver could not create port {name} (its message above says why)"
            ));
        }
    }
    Ok(())
}

/// The `(name, argument)` of every `--vdev` of `eal_args` that names a
/// network device: DPDK's `net_*` drivers and their `eth_*` aliases
/// (`eth_pcap0`, `eth_ring0`, `eth_null0`, `eth_af_packet0`, ...).
fn network_vdev_names(eal_args: &[String]) -> Vec<(&str, &str)> {
    let mut names = Vec::new();
    let mut args = eal_args.iter();
    while let Some(arg) = args.next() {
        let spec = match arg.strip_prefix("--vdev") {
            Some("") => args.next().map(String::as_str),
            Some(rest) => rest.strip_prefix('='),
            None => None,
        };
        let Some(spec) = spec else { continue };
        let name = spec.split(',').next().unwrap_or_default();
        if name.starts_with("net_") || name.starts_with("eth_") {
            names.push((name, spec));
        }
    }
    names
}

/// What EAL created: ports with their queue limits, and the lcores.
fn topology(eal: &Eal, ports: &[Port]) -> Result<Topology, Box<dyn Error>> {
    let ports = ports
        .iter()
        .map(|p| {
            let info = p.info()?;
            Ok(PortCaps {
                max_rx_queues: info.max_rx_queues,
                max_tx_queues: info.max_tx_queues,
            })
        })
        .collect::<dpdk::Result<_>>()?;
    Ok(Topology {
        ports,
        lcores: eal.lcores(),
        main_lcore: eal.main_lcore(),
    })
}

fn setup_options(args: &Args) -> setup::Options {
    setup::Options {
        rx_desc: args.rx_queue_size,
        tx_desc: args.tx_queue_size,
        max_pkt_len: args.max_pkt_len,
        per_port_pool: args.per_port_pool,
        num_mbufs: args.num_mbufs,
        no_numa: args.no_numa,
        eth_dest: args.eth_dest.clone(),
        mbuf_cache: args.mbcache,
        disable_rss: args.disable_rss,
        rss_l4: args.lookup == LookupMode::Acl,
        tx_burst: args.tx_burst,
        rx_burst: args.rx_burst,
    }
}

/// Sets up the ports, forwards with `lookup` until SIGINT, SIGTERM or
/// `--duration`, then stops the ports, checks the mbufs and reports. On an
/// error the ports set up so far are closed as their handles drop, and
/// nothing is left running.
fn serve<L: Lookup>(
    eal: &Eal,
    ports: Vec<Port>,
    plan: &Plan,
    args: &Args,
    lookup: L,
    quit: &Arc<AtomicBool>,
) -> Result<(), Box<dyn Error>> {
    let mut dataplane = setup::build(eal, ports, plan, &setup_options(args))?;
    // What the drivers hold before forwarding (a pcap port with infinite_rx
    // keeps a copy of its file): the count to come back to.
    let mbufs_before = dataplane.mbufs_in_use();
    for p in &mut dataplane.ports {
        if args.promiscuous {
            p.enable_promiscuous()?;
        }
        p.start()?;
    }
    if !args.skip_link_wait {
        wait_for_links(&dataplane.ports, quit)?;
    }
    let lcores = std::mem::take(&mut dataplane.lcores);
    let (tasks, stats) = lcore_tasks(eal, args, lcores, Arc::new(lookup), quit);
    let secs = forward(eal, &dataplane, tasks, &stats, args, quit)?;

    let mut summary = Summary::collect(&dataplane.ports, &stats, secs);
    summary.mbufs_in_use = [mbufs_before, stop(&mut dataplane)?];
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

/// The lcores that have RX queues, ready to run, and their stats.
fn lcore_tasks<L: Lookup>(
    eal: &Eal,
    args: &Args,
    lcores: Vec<LcoreQueues>,
    lookup: Arc<L>,
    quit: &Arc<AtomicBool>,
) -> (Vec<Lcore<L>>, Vec<Arc<LcoreStats>>) {
    let drain_ticks = eal.tsc_hz().div_ceil(1_000_000) * args.drain_us;
    lcores
        .into_iter()
        .filter(|q| {
            if q.rx.is_empty() {
                log::info!("lcore {} has nothing to do", q.lcore);
            }
            !q.rx.is_empty()
        })
        .map(|queues| {
            let stats = Arc::new(LcoreStats {
                lcore: queues.lcore,
                rx_queues: queues.rx.iter().map(|q| (q.port(), q.queue())).collect(),
                counters: LcoreCounters::for_ports(usize::from(dpdk::MAX_PORTS)),
            });
            let task = Lcore {
                queues,
                lookup: Arc::clone(&lookup),
                stats: Arc::clone(&stats),
                quit: Arc::clone(quit),
                drain_ticks,
                drain_when_idle: !args.c_drain,
                rx_burst: args.rx_burst,
            };
            (task, stats)
        })
        .unzip()
}

/// Forwards on every task's lcore, with telemetry and the control thread
/// (rates, `--duration`) beside them, until `quit`; returns how long
/// forwarding ran, once every lcore has stopped and flushed.
fn forward<L: Lookup>(
    eal: &Eal,
    dataplane: &Dataplane,
    tasks: Vec<Lcore<L>>,
    stats: &[Arc<LcoreStats>],
    args: &Args,
    quit: &Arc<AtomicBool>,
) -> Result<f64, Box<dyn Error>> {
    // Telemetry and the control thread start before any lcore forwards, so
    // that their failure leaves nothing to stop.
    let telemetry_view = stats.to_vec();
    eal.register_telemetry(
        "/l3fwd/stats",
        "l3fwd-rs forwarding counters, summed over lcores, then each lcore's load counters",
        move || {
            let mut pairs = LcoreCounters::named(&control::totals(&telemetry_view));
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
            pairs
        },
    )?;
    let control = Control {
        ports: dataplane.ports.iter().map(Port::id).collect(),
        lcores: stats.to_vec(),
        quit: Arc::clone(quit),
        interval: (args.stats_interval > 0).then(|| Duration::from_secs(args.stats_interval)),
        duration: args.duration.map(Duration::from_secs),
    };
    let control_thread = eal.spawn_control_thread("l3fwd-ctrl", move || control.run())?;
    let started = Instant::now();
    let ran = run_lcores(eal, tasks, quit);
    let secs = started.elapsed().as_secs_f64();
    control_thread.join();
    ran?;
    Ok(secs)
}

/// Stops every port (no queue handle is left: the lcores have returned)
/// and returns the mbufs then in use. Stopped ports hold what they held
/// before they started: every mbuf taken since must be back in its pool,
/// or it leaked.
fn stop(dataplane: &mut Dataplane) -> Result<u64, Box<dyn Error>> {
    for p in &mut dataplane.ports {
        p.stop()?;
    }
    Ok(dataplane.mbufs_in_use())
}

/// Runs each task on its lcore (the main lcore's on this thread) until
/// `quit`, and returns once every one has stopped and flushed. If a worker
/// cannot be launched, those already running are stopped before the error
/// is returned; `quit` is set on return either way (it also stops the
/// control thread).
fn run_lcores<L: Lookup>(eal: &Eal, tasks: Vec<Lcore<L>>, quit: &AtomicBool) -> dpdk::Result<()> {
    let mut main_task = None;
    let mut workers = Vec::new();
    let mut launched = Ok(());
    for task in tasks {
        let lcore = task.stats.lcore;
        log::info!("lcore {lcore}: forwarding");
        if lcore == eal.main_lcore() {
            main_task = Some(task);
        } else if let Err(e) = eal.launch_on_lcore(lcore, move || task.run()) {
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
        eal.wait_lcore(w);
    }
    quit.store(true, Relaxed);
    launched
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(args: &[&str]) -> Vec<String> {
        args.iter().map(|&a| a.to_owned()).collect()
    }

    #[test]
    fn network_vdevs_by_driver_name_and_alias() {
        let args = strings(&[
            "l3fwd-rs",
            "--vdev=net_pcap0,rx_pcap=a.pcap",
            "--vdev",
            "eth_ring0",
            "--vdev=crypto_null0",
            "--vdev=eth_pcap1,iface=lo",
            "-l",
            "0",
        ]);
        assert_eq!(
            network_vdev_names(&args),
            [
                ("net_pcap0", "net_pcap0,rx_pcap=a.pcap"),
                ("eth_ring0", "eth_ring0"),
                ("eth_pcap1", "eth_pcap1,iface=lo")
            ]
        );
    }
}
