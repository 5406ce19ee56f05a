//! The application: from parsed arguments to forwarding and back. Loads the
//! chosen mode's rule files, starts EAL, checks the port/queue/lcore plan,
//! builds the mode's lookup tables and hands them to the dataplane model
//! ([`poll`]), which forwards until a signal or `--duration` stops it.

use std::error::Error;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use dpdk::eal_args::NetworkVdev;
use dpdk::{Eal, Port};

use crate::cli::plan::{Plan, PortCaps, Topology};
use crate::cli::{Args, Model};
use crate::control::live::LiveTables;
use crate::control::signals::{self, Hangup};
use crate::control::stats_json;
use crate::dataplane::mode::{self, Mode, ModeTask};
use crate::dataplane::sockets;
use crate::dataplane::trace::TraceReader;
use crate::model::runner::{Changes, LiveLookup};
use crate::model::{event, poll};

/// Runs l3fwd-rs with EAL arguments `eal_args` (program name first) and the
/// application's parsed `args`; returns when forwarding has stopped and the
/// ports are closed.
pub fn run(eal_args: &[String], args: &Args) -> Result<(), Box<dyn Error>> {
    // Registered first: a signal during rule loading or EAL and port
    // set-up then stops forwarding before it starts, with the summary and
    // the cleanup of any later stop.
    let quit = Arc::new(AtomicBool::new(false));
    let hangup = signals::stop_on_signals(&quit)?;
    rulefile::stop_reading_on(Arc::clone(&quit));
    // Held to the end of the run: see `stats_json::check_writable`.
    let _stats_fifo = args.stats_json.as_deref().map(stats_json::check_writable).transpose()?;
    let run = Run {
        eal_args,
        args,
        quit: &quit,
        hangup,
    };
    mode::with_mode(args.lookup, run).unwrap_or_else(|| Err(format!("no lookup mode {}", args.lookup.name).into()))
}

/// A run in the chosen lookup mode, `M`.
struct Run<'a> {
    eal_args: &'a [String],
    args: &'a Args,
    quit: &'a Arc<AtomicBool>,
    hangup: Hangup,
}

impl ModeTask for Run<'_> {
    type Output = Result<(), Box<dyn Error>>;

    /// The lookup mode and the dataplane model are separate axes: the mode
    /// builds its [`Lookup`](crate::dataplane::lookup::Lookup) here, and the model (the
    /// poll loop or the event loop, `--mode`) forwards with any lookup.
    fn run<M: Mode>(self) -> Self::Output {
        let Run {
            eal_args,
            args,
            quit,
            hangup,
        } = self;
        // The rule files are read before EAL starts: a typo costs no EAL
        // start-up.
        let options = M::Options::from(args);
        let rules = M::load(&options)?;
        let (eal, ports, plan) = start(eal_args, args)?;
        let lcores = match args.model {
            Model::Poll => plan.lcores.iter().map(|l| l.lcore).collect(),
            Model::Eventdev => event::worker_lcores(&eal),
        };
        let socket = |lcore| sockets::socket_of(&eal, args.no_numa, lcore);
        let tables = LiveTables::<M>::new(&eal, &plan, &options, rules, &lcores, socket)?;
        let lookup = LiveLookup {
            live: tables.live(),
            changes: Changes {
                tables: Box::new(tables),
                hangup,
                trace: TraceReader::default(),
            },
        };
        match args.model {
            Model::Poll => poll::serve(&eal, ports, &plan, args, M::RSS_L4, lookup, quit),
            Model::Eventdev => event::serve(&eal, ports, &plan, args, M::RSS_L4, lookup, quit),
        }
    }
}

/// EAL start, its ports, and the port/queue/lcore plan: common to every mode.
fn start(eal_args: &[String], args: &Args) -> Result<(Eal, Vec<Port>, Plan), Box<dyn Error>> {
    let eal = Eal::init(eal_args)?;
    // dpdk-dumpcap and dpdk-pdump can capture our ports (C l3fwd does not
    // serve them); nothing runs per packet until one does.
    if let Err(e) = eal.serve_packet_capture() {
        log::warn!("{e}: dpdk-dumpcap cannot capture this run's ports");
    }
    check_vdevs(&eal, eal_args)?;
    let ports = eal.take_ports()?;
    let mut topology = topology(&eal, &ports)?;
    let plan = match args.model {
        Model::Poll => Plan::build(&args.config, args.portmask, &topology)?,
        // The event model's RX queues go to the RX adapter, and each port
        // has one TX queue, the TX adapter's: planned as one lcore's.
        Model::Eventdev => {
            topology.lcores = vec![topology.main_lcore];
            let config = event::rx_queues(args, ports.len(), topology.main_lcore);
            Plan::build(&config, args.portmask, &topology)?
        }
    };
    Ok((eal, ports, plan))
}

/// Fails if a network `--vdev` of `eal_args` is not a port: its driver
/// refused it (or EAL did, for a second device of one name), and EAL
/// carried on without it, which would silently shift the ids of the ports
/// after it.
fn check_vdevs(eal: &Eal, eal_args: &[String]) -> Result<(), String> {
    let vdevs = dpdk::eal_args::network_vdevs(eal_args);
    for (i, &NetworkVdev { name, spec }) in vdevs.iter().enumerate() {
        if let Some(first) = vdevs[..i].iter().find(|other| other.name == name).map(|v| v.spec) {
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
