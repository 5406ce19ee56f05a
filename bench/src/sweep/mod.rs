//! `l3fwd-bench sweep`: C l3fwd and l3fwd-rs over a grid of frame sizes x
//! flow counts, per lookup table (LPM of a few sizes, EM with a rule per
//! flow). In each cell both run alternately for some rounds on traffic made
//! for it; the result is a table, CSV and JSON with every run, plots, and
//! optionally a cell-by-cell comparison with an earlier sweep.

pub(crate) mod plot;
pub(crate) mod results;
mod resume;

use crate::cbuild::{Build, CBuilds};
use crate::common::{Common, START_TIMEOUT};
use crate::configs::Forwarder;
use crate::engine::{Engine, Run, Unit};
use crate::files::{require, write_json};
use crate::grid::{self, Cell, Grid, Mode};
use crate::machine::{timestamp, Machine};
use crate::mode::RuleFormat;
use crate::report::{Report, Settings};
use crate::{command, hugepages, interrupt, traffic};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

/// Cells with a table or pool this large start slowly: rule files, a
/// million mbufs to fill, and the C sample adds 1M routes one by one
/// (measured: first TX after 62 s)...
const SLOW_START_RULES: usize = 1 << 16;
const SLOW_START_MBUFS: usize = 1 << 16;
/// ...so they may take this long to forward.
const SLOW_START_TIMEOUT: Duration = Duration::from_secs(300);

#[derive(clap::Args)]
pub struct SweepArgs {
    #[command(flatten)]
    common: Common,
    /// Frame sizes in bytes, FCS included (64..=1518; pcap frames are 4 bytes shorter)
    #[arg(long, value_delimiter = ',', value_parser = grid::parse_size, default_value = "64,128,256,512,1024,1518")]
    sizes: Vec<u32>,
    /// Distinct flows of both ports together (each replays half); K = 1024, M = 1048576
    #[arg(long, value_delimiter = ',', value_parser = grid::parse_count, default_value = "16,1K,64K,1M")]
    flows: Vec<usize>,
    /// Lookup modes: lpm, em (an EM table holds one rule per flow), fib (on the
    /// LPM tables; the C build's IPv4 FIB is raised with its LPM to hold them),
    /// acl (the LPM tables of up to 64K routes as ACL routes, behind 256 deny rules)
    #[arg(long, value_delimiter = ',', value_parser = Mode::parse, default_value = "lpm,em")]
    modes: Vec<Mode>,
    /// Routes of each LPM table (a plot each); flows are spread over the routes
    #[arg(long, value_delimiter = ',', value_parser = grid::parse_count, default_value = "16,10K,1M")]
    routes: Vec<usize>,
    /// Where sweep.json, runs.csv, cells.csv, the plots and per-run logs go
    #[arg(long, default_value = "target/bench/sweep")]
    out_dir: PathBuf,
    /// Go on with the sweep in --out-dir: the cells its sweep.json holds
    /// every run of are kept as measured, and only the others run (the same
    /// rounds, warm-up, window, kind of memory and CPU, or it refuses); a
    /// failed run kept so still fails the sweep
    #[arg(long)]
    resume: bool,
    /// Skip testpmd io, which otherwise runs in every cell (the same ports
    /// and traffic, no lookup): the floor under both forwarders' cost, and
    /// the work each adds above it (the headline)
    #[arg(long)]
    no_io: bool,
    #[arg(long, default_value = "/usr/bin/dpdk-testpmd")]
    testpmd: PathBuf,
    /// Where the C builds of its cells go, one directory per pool size
    #[arg(long, default_value = "target/c-l3fwd-sweep")]
    c_build_dir: PathBuf,
}

pub fn sweep(args: SweepArgs) -> Result<ExitCode, String> {
    let grid = Grid::new(args.sizes.clone(), args.flows.clone(), &args.modes, &args.routes)?;
    // Everything that can fail fast does, before minutes of runs.
    let old = crate::baseline::read(args.common.baseline.as_deref(), true)?;
    crate::plot::load_font()?;
    let hint = "build it with `cargo build --release -p l3fwd-rs -p trafficgen`, or `make bench-sweep` does it";
    require(&args.common.rs_bin, hint)?;
    require(&args.common.tablegen_bin, hint)?;
    if !args.no_io {
        require(&args.testpmd, "install Debian's dpdk package (make deps)")?;
    }
    require(
        &args.common.c_build_script,
        "run from the workspace root or give --c-build-script",
    )?;
    let (logs, traffic_dir) = (args.out_dir.join("logs"), args.out_dir.join("traffic"));
    for dir in [&logs, &traffic_dir] {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }

    let cells = grid.cells();
    for cell in &cells {
        args.common.ports.check_frames(cell.frames_per_port())?;
    }
    // C's IPv4 LPM table is sized at build time, and the script raises its
    // IPv4 FIB (65536 routes) to the same size: every table of routes, LPM
    // or FIB, sizes the build.
    let lpm_routes = grid
        .tables
        .iter()
        .filter(|t| t.mode.rules() == RuleFormat::Routes)
        .filter_map(|t| t.routes)
        .max()
        .unwrap_or(0);
    let mut c_builds = CBuilds::new(args.common.c_build_script.clone(), args.c_build_dir.clone());
    let c_build = |mbufs| Build {
        mbufs,
        lpm_routes,
        sequential: false,
    };
    let mut pools: Vec<usize> = cells.iter().map(Cell::mbufs).collect();
    pools.sort();
    pools.dedup();
    println!("building C l3fwd for pools of {pools:?} mbufs (scripts/build-c-l3fwd.sh)");
    for &mbufs in &pools {
        if let Err(e) = c_builds.binary(c_build(mbufs)) {
            println!("  pool {mbufs}: {e}: C cells of this pool are n/a");
        }
    }

    // Ctrl-C ends the runs and unwinds, so that the hugepages are given back.
    interrupt::catch_signals()?;
    let rounds = args.common.rounds;
    let (memory, keep_slow) = memory_for(&cells, rounds, args.common.no_huge);
    command::use_eal_args(
        memory.eal_args(),
        command::simd_bitwidth_args(args.common.simd_bitwidth),
    );
    command::use_ports(args.common.ports);
    let mut forwarders = Forwarder::BOTH.to_vec();
    if !args.no_io {
        forwarders.push(Forwarder::Io);
    }
    let mut settings = Settings {
        rounds,
        warmup_secs: args.common.warmup,
        window_secs: args.common.window,
        sizes: grid.sizes.clone(),
        flows: grid.flows.clone(),
        tables: grid.tables.iter().map(|t| t.id()).collect(),
        memory: memory.describe(),
        ports: args.common.ports,
        simd_bitwidth: args.common.simd_bitwidth,
        ring_frames: args.common.ring_frames,
        ..Settings::default()
    };
    let mut carried: Vec<Option<Vec<Run>>> = cells.iter().map(|_| None).collect();
    let mut earlier_sweep = None;
    if args.resume {
        let path = args.out_dir.join("sweep.json");
        let earlier = resume::check(Report::read(&path)?, &settings, &Machine::current())?;
        carried = cells
            .iter()
            .map(|cell| resume::carried(&earlier, cell, &forwarders, rounds))
            .collect();
        let measured = carried.iter().flatten().count();
        println!(
            "resuming the sweep of {}: {measured} of {} cells measured",
            earlier.timestamp,
            cells.len()
        );
        settings.resumed_from = earlier.settings.resumed_from;
        settings.resumed_from.push(earlier.timestamp.clone());
        earlier_sweep = Some(earlier.timestamp);
    }
    let labels: Vec<&str> = forwarders.iter().map(|f| f.label()).collect();
    let to_run = carried.iter().filter(|c| c.is_none()).count();
    let total = to_run * rounds as usize * forwarders.len();
    println!(
        "{total} runs ({to_run} cells x {rounds} rounds x {}), about {:.0} s each plus traffic and start-up",
        labels.join(", "),
        args.common.warmup + args.common.window + 1.0
    );
    let mut engine = Engine::new(total, rounds, &logs)?;
    let report_of =
        |cells: &[Cell], runs: &[Run]| Report::new(settings.clone(), Machine::current(), timestamp(), &[], cells, runs);
    let mut runs = Vec::new();
    for ((done, cell), carried) in cells.iter().enumerate().zip(carried) {
        if let Some(carried) = carried {
            engine.carried(&carried, earlier_sweep.as_deref().unwrap_or_default());
            runs.extend(carried);
            continue;
        }
        let files = traffic::generate_cell(&args.common.tablegen_bin, &args.common.rules_dir, &traffic_dir, cell);
        let fed = match &files {
            Ok(files) => args.common.ports.feed(&files.files, args.common.ring_prime()),
            Err(e) => Err(format!("no traffic: {e}")),
        };
        let c_bin = c_builds.binary(c_build(cell.mbufs()));
        let slow = cell.rules() > SLOW_START_RULES || cell.mbufs() > SLOW_START_MBUFS;
        let units: Vec<Unit> = forwarders
            .iter()
            .map(|&forwarder| Unit {
                config: cell.config(forwarder),
                cell: Some(*cell),
                program: match forwarder {
                    Forwarder::C => c_bin.clone().map_err(|e| format!("C n/a: {e}")),
                    Forwarder::Rs => Ok(args.common.rs_bin.clone()),
                    Forwarder::Io => Ok(args.testpmd.clone()),
                },
                files: fed.clone(),
                pool: cell.pool(),
                timing: args
                    .common
                    .timing(if slow { SLOW_START_TIMEOUT } else { START_TIMEOUT }),
                may_keep: keep_slow && cell.rules() > SLOW_START_RULES,
            })
            .collect();
        let measured = engine.run(&units);
        runs.extend(measured.map_err(|e| format!("{e} (the cells measured so far are in sweep.json)"))?);
        drop(files);
        // Written after every cell, so that an interrupted sweep keeps what it measured.
        let so_far = report_of(&cells[..=done], &runs);
        write_data(&args.out_dir, &so_far)?;
    }
    let failures = engine.finish();

    let report = report_of(&cells, &runs);
    println!("{}", report.table());
    write_data(&args.out_dir, &report)?;
    let plots = plot::draw_all(&report, &args.out_dir)?;
    println!(
        "\nwrote {}/{{sweep.json,runs.csv,cells.csv}} and {} plots (*-mpps: rates by frame size, *-ratio: l3fwd-rs / C, *-work: C / l3fwd-rs work above testpmd io)",
        args.out_dir.display(),
        plots.len()
    );

    let status = crate::baseline::status(old, &report, &[], args.common.tolerance);
    Ok(failures.finish(status))
}

/// EAL memory for the runs of `cells`, and whether a slow-starting
/// forwarder may wait paused beside another's run: only on hugepages
/// reserved for two of the largest such cells at once (for one if two
/// cannot be had).
fn memory_for(cells: &[Cell], rounds: u32, no_huge: bool) -> (hugepages::Memory, bool) {
    let memory_mb = |cell: &Cell| cell.pool().memory_mb;
    let one = cells.iter().map(memory_mb).max().unwrap_or(0);
    let slow = cells.iter().filter(|c| c.rules() > SLOW_START_RULES);
    let two = slow
        .map(|c| 2 * memory_mb(c))
        .max()
        .filter(|&two| rounds > 1 && two > one);
    let dir = Path::new(hugepages::DIR);
    if let Some(two) = two.filter(|_| !no_huge) {
        match hugepages::Memory::huge(two, dir) {
            Ok(memory) => return (memory, true),
            Err(why) => println!("hugepages for two runs at once: {why}; slow starters restart each round"),
        }
    }
    let memory = hugepages::Memory::for_runs(one, dir, no_huge);
    let keep = two.is_none() && memory.is_huge();
    (memory, keep)
}

fn write_data(dir: &Path, report: &Report) -> Result<(), String> {
    write_json(&dir.join("sweep.json"), report)?;
    for (name, text) in [
        ("runs.csv", results::runs_csv(report)),
        ("cells.csv", results::cells_csv(report)),
    ] {
        let path = dir.join(name);
        std::fs::write(&path, text).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    Ok(())
}
