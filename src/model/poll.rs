//! The poll-mode dataplane, C l3fwd's default model: each lcore polls its
//! RX queues, looks the packets up and sends them on (see [`crate::dataplane::forward`]).
//! Sets the ports up, runs the lcores until a signal or `--duration`, then
//! stops the ports, checks that every mbuf came back and reports.

use std::error::Error;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use dpdk::{Eal, Port};

use crate::cli::plan::Plan;
use crate::cli::Args;
use crate::control::summary::Summary;
use crate::dataplane::counters::{LcoreCounters, LcoreStats, Role};
use crate::dataplane::forward::{Lcore, LcoreQueues};
use crate::dataplane::lookup::Lookup;
use crate::dataplane::setup;
use crate::model::runner::{self, LcoreJob, LiveLookup};

/// The lcores' tasks and their stats.
type Tasks<L> = (Vec<Lcore<L>>, Vec<Arc<LcoreStats>>);

/// Sets up the ports, forwards with the live lookup until SIGINT, SIGTERM
/// or `--duration` (SIGHUP reloads it once forwarding), then stops the
/// ports, checks the mbufs and reports. On an error the ports set up so
/// far are closed as their handles drop, and nothing is left running.
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
    // What the drivers hold before forwarding (a pcap port with infinite_rx
    // keeps a copy of its file): the count to come back to.
    let mbufs_before = configured.mbufs_in_use();
    runner::start_ports(&mut configured.ports, args, quit)?;
    let rx_queues = configured.lcores.iter().map(|l| l.rx.len()).sum();
    let (n_lcores, n_ports) = (configured.lcores.len(), configured.ports.len());
    setup::warn_if_pools_starved(&configured.pools, rx_queues, n_lcores, n_ports, args);
    let lcores = std::mem::take(&mut configured.lcores);
    let (tasks, stats) = lcore_tasks(eal, args, lcores, &lookup, quit)?;
    let secs = runner::forward(eal, &configured, tasks, &stats, args, quit, lookup.changes)?;

    let summary = Summary::collect(&configured, &stats, secs);
    runner::stop_and_report(&mut configured, summary, mbufs_before, args)
}

/// The lcores that have RX queues, ready to run (each a reader of its
/// socket's live lookup, by its lcore id), and their stats.
fn lcore_tasks<L: Lookup>(
    eal: &Eal,
    args: &Args,
    lcores: Vec<LcoreQueues>,
    lookup: &LiveLookup<L>,
    quit: &Arc<AtomicBool>,
) -> dpdk::Result<Tasks<L>> {
    let ticks_per_us = eal.tsc_hz().div_ceil(1_000_000);
    let drain_ticks = ticks_per_us * args.drain_us;
    let simd = runner::vector_path(eal);
    lcores
        .into_iter()
        .filter(|q| {
            if q.rx.is_empty() {
                log::info!("lcore {} has nothing to do", q.lcore);
            }
            !q.rx.is_empty()
        })
        .map(|queues| {
            let reader = lookup.reader(eal, args, queues.lcore)?;
            let stats = Arc::new(LcoreStats {
                lcore: queues.lcore,
                role: Role::Poll,
                rx_queues: queues.rx.iter().map(|q| (q.port(), q.queue())).collect(),
                counters: LcoreCounters::for_ports(usize::from(dpdk::MAX_PORTS)),
            });
            let task = Lcore {
                queues,
                lookup: reader,
                stats: Arc::clone(&stats),
                quit: Arc::clone(quit),
                drain_ticks,
                idle_flush: (!args.c_drain).then_some(args.idle_flush_gap * ticks_per_us),
                rx_burst: args.rx_burst,
                trace: lookup.trace(),
                simd,
            };
            Ok((task, stats))
        })
        .collect::<dpdk::Result<Vec<_>>>()
        .map(|tasks| tasks.into_iter().unzip())
}

impl<L: Lookup> LcoreJob for Lcore<L> {
    fn lcore(&self) -> u32 {
        self.stats.lcore
    }
    fn run(self) -> i32 {
        Lcore::run(self)
    }
}
