//! l3fwd-bench: forwarding rates of C l3fwd, l3fwd-rs and testpmd (the I/O ceiling),
//! run alternately on the same virtual ports and traffic, compared as ratios;
//! `l3fwd-bench sweep`: C l3fwd and l3fwd-rs over frame sizes x flow counts;
//! `l3fwd-bench latency`: one-way latency (sockperf) through l3fwd-rs, C l3fwd
//! and the kernel's forwarding between two network namespaces;
//! `l3fwd-bench callgrind`: instructions per packet of each, under valgrind;
//! `l3fwd-bench update`: the rate while the tables change through `l3fwd-ctl`.

#![forbid(unsafe_code)]

mod baseline;
mod calibrate;
mod callgrind;
mod cbuild;
mod command;
mod configs;
mod engine;
mod failures;
mod hugepages;
mod interrupt;
mod latency;
mod machine;
mod mode;
mod pool;
mod progress;
mod release;
mod report;
mod run;
mod significance;
mod stats;
mod sweep;
mod traffic;
mod update;
mod versions;

use cbuild::Build;
use clap::{Parser, Subcommand};
use configs::{Config, Forwarder};
use engine::{Engine, Unit};
use failures::Failures;
use machine::Machine;
use pool::Pool;
use release::Tools;
use report::{Report, Settings};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

/// Where the runs' hugetlbfs is mounted.
const HUGEPAGES_DIR: &str = "target/bench/hugepages";
/// EAL init with --no-huge and pcap setup take a few seconds; more means something is wrong...
const START_TIMEOUT: Duration = Duration::from_secs(30);
/// ...except with large tables and a pool of a million mbufs to fill.
const SCALE_START_TIMEOUT: Duration = Duration::from_secs(120);

#[derive(Parser)]
#[command(
    version,
    about = "Side-by-side forwarding rates: C l3fwd, l3fwd-rs and testpmd on pcap ports",
    args_conflicts_with_subcommands = true
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Sub>,
    #[command(flatten)]
    bench: Args,
}

#[derive(Subcommand)]
enum Sub {
    /// C l3fwd and l3fwd-rs over frame sizes x flow counts, per lookup mode: table, CSV, JSON, plots
    Sweep(sweep::SweepArgs),
    /// Instructions per forwarded packet under valgrind's callgrind (C l3fwd, l3fwd-rs, testpmd io);
    /// --baseline exits 2 if one rose by more than 1%
    Callgrind(callgrind::CallgrindArgs),
    /// One-way latency (sockperf) through l3fwd-rs, C l3fwd and the kernel between two namespaces (root)
    Latency(latency::LatencyArgs),
    /// Whether --baseline's verdicts hold here: the same l3fwd-rs twice, then a build 5% slower on purpose
    Calibrate(calibrate::CalibrateArgs),
    /// l3fwd-rs's rate while routes and flows change through l3fwd-ctl at set rates, changes applied
    /// per second, and reload time beside C's restart, on router-size tables (--quick: small ones)
    Update(update::UpdateArgs),
}

/// What `make bench` and sweeps share: how runs are measured, what they
/// run, and the regression check.
#[derive(clap::Args)]
struct Common {
    /// Rounds; every selected configuration (in a sweep, both forwarders of a cell) runs once per round, in turn
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..))]
    rounds: u32,
    /// Seconds of forwarding before the measurement window
    #[arg(long, default_value_t = 2.0, value_parser = seconds)]
    warmup: f64,
    /// Seconds over which TX packets are counted
    #[arg(long, default_value_t = 3.0, value_parser = seconds)]
    window: f64,
    /// An earlier report of the same kind (--json, or a sweep's sweep.json): exit with status 2 if a
    /// ratio fell by more than --tolerance and significantly (Mann-Whitney over rounds, p <= 0.05)
    #[arg(long)]
    baseline: Option<PathBuf>,
    /// Relative fall of a ratio that counts as a regression
    #[arg(long, default_value_t = 0.05)]
    tolerance: f64,
    /// 4 KB pages (EAL --no-huge) even where hugepages could be reserved (as root): to
    /// compare the two, or on a machine whose memory is short
    #[arg(long)]
    no_huge: bool,
    /// The ports forwarded between: pcap (replaying its files, what any user
    /// can reproduce) or ring (the lab port: net_ring ports looping the same
    /// mbufs, primed by the pcap files, with a floor far below pcap's)
    #[arg(long, value_enum, default_value_t)]
    ports: command::Ports,
    #[arg(long, default_value = "target/release/l3fwd-rs")]
    rs_bin: PathBuf,
    #[arg(long, default_value = "target/release/l3fwd-tablegen")]
    tablegen_bin: PathBuf,
    /// Directory of the rule files lpm_v4.cfg, lpm_v6.cfg, em_v4.cfg, em_v6.cfg
    #[arg(long, default_value = "configs")]
    rules_dir: PathBuf,
    /// Builds the C sample with the pool (and LPM size) runs need
    #[arg(long, default_value = "scripts/build-c-l3fwd.sh")]
    c_build_script: PathBuf,
}

impl Common {
    /// The table and traffic generators, `gen` making the default traffic.
    fn generators<'a>(&'a self, gen: &'a Path) -> traffic::Generators<'a> {
        traffic::Generators {
            gen,
            tablegen: &self.tablegen_bin,
            rules_dir: &self.rules_dir,
        }
    }

    fn timing(&self, start_timeout: Duration) -> run::Timing {
        run::Timing {
            start_timeout,
            warmup: Duration::from_secs_f64(self.warmup),
            window: Duration::from_secs_f64(self.window),
        }
    }
}

#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    common: Common,
    /// Frames in each port's pcap file
    #[arg(long, default_value_t = 1024, value_parser = clap::value_parser!(u32).range(1..))]
    frames: u32,
    /// Configurations, comma-separated: groups all, lpm, burst, fib, acl, em, io, c, rs, scale or ids c-lpm,
    /// rs-lpm, rs-lpm-c-drain, rs-lpm-burst64, rs-lpm-burst256, c-fib, rs-fib, c-acl, rs-acl, c-em, rs-em,
    /// rs-em-group8, rs-em-seq, io, c-em-1m, c-em-seq-1m, rs-em-1m, rs-em-seq-1m, rs-lpm-1m
    #[arg(long, value_delimiter = ',', default_value = "all")]
    only: Vec<String>,
    /// DPDK releases, comma-separated (e.g. 22.11,24.11,25.11): every configuration runs on each, the
    /// machine's own and those of `make build c-l3fwd DPDK=VERSION`'s roots, alternately in every
    /// round; each change from one release to the next gets a verdict, and versions.png plots them
    #[arg(long, value_delimiter = ',', value_parser = release::Release::parse)]
    dpdk: Vec<release::Release>,
    /// Scale runs: IPv4 exact-match rules
    #[arg(long, default_value_t = 1_000_000)]
    scale_em_rules: usize,
    /// Scale runs: IPv4 LPM routes
    #[arg(long, default_value_t = 1_000_000)]
    scale_v4_routes: usize,
    /// Scale runs: IPv6 LPM routes
    #[arg(long, default_value_t = 230_000)]
    scale_v6_routes: usize,
    /// Scale runs: frames in each port's pcap file, each to a random rule or route (10% to none)
    #[arg(long, default_value_t = 131_072)]
    scale_frames: usize,
    /// Scale runs: mbufs per pool of both forwarders (the C binaries are built with it)
    #[arg(long, default_value_t = 1 << 20)]
    scale_mbufs: u32,
    /// Scale runs: EAL memory (-m) in MB
    #[arg(long, default_value_t = 8192)]
    scale_memory: u32,
    /// Where to write every run's rate, medians and ratios
    #[arg(long, default_value = "target/bench/bench.json")]
    json: PathBuf,
    /// Directory for traffic files and per-run logs
    #[arg(long, default_value = "target/bench")]
    work_dir: PathBuf,
    #[arg(long, default_value = "target/c-l3fwd/dpdk-l3fwd")]
    c_bin: PathBuf,
    #[arg(long, default_value = "target/c-l3fwd-scale/dpdk-l3fwd")]
    c_scale_bin: PathBuf,
    #[arg(long, default_value = "target/c-l3fwd-scale-seq/dpdk-l3fwd")]
    c_scale_seq_bin: PathBuf,
    #[arg(long, default_value = "/usr/bin/dpdk-testpmd")]
    testpmd: PathBuf,
    #[arg(long, default_value = "target/release/l3fwd-gen")]
    gen_bin: PathBuf,
}

fn seconds(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v > 0.0 && v.is_finite() => Ok(v),
        _ => Err(format!("'{s}' is not a positive number of seconds")),
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Some(Sub::Sweep(args)) => sweep::sweep(args),
        Some(Sub::Latency(args)) => latency::latency(args),
        Some(Sub::Callgrind(args)) => callgrind::callgrind(args),
        Some(Sub::Calibrate(args)) => calibrate::calibrate(args),
        Some(Sub::Update(args)) => update::update(args),
        None => bench(cli.bench),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("l3fwd-bench: {e}");
            ExitCode::FAILURE
        }
    }
}

fn bench(args: Args) -> Result<ExitCode, String> {
    let selected = versions::on_releases(configs::select(&args.only)?, &args.dpdk)?;
    let old = baseline::read(args.common.baseline.as_deref(), false)?;
    let (report, failures) = measure(&args, &args.common.rs_bin, &selected)?;
    write_json(&args.json, &report)?;
    println!("\nwrote {}", args.json.display());
    if args.dpdk.len() > 1 {
        versions::report(&report, &args.json.with_file_name("versions.png"))?;
    }
    let status = baseline::status(old, &report, &selected, args.common.tolerance);
    Ok(failures.finish(status))
}

/// Runs the `selected` configurations (l3fwd-rs from `rs_bin`) round by
/// round, prints the table and returns the report, and the runs that
/// failed: a failed run does not stop the others, but fails the command.
pub fn measure(args: &Args, rs_bin: &Path, selected: &[Config]) -> Result<(Report, Failures), String> {
    let tools = Tools {
        rs_bin: rs_bin.to_owned(),
        c_bin: args.c_bin.clone(),
        c_scale_bin: args.c_scale_bin.clone(),
        c_scale_seq_bin: args.c_scale_seq_bin.clone(),
        testpmd: args.testpmd.clone(),
    };
    for &c in selected {
        let release = c.release();
        release.check()?;
        let program = release.on_machine(command::program(c, &release.tools(&tools)));
        // The C sample is built here on the machine's DPDK; another
        // release's is built in its root, and must be the same build.
        match (c_build(c, args.scale_mbufs), program.parent()) {
            (Some(build), Some(dir)) if release.is_machine() => {
                build.make(&args.common.c_build_script, dir)?;
            }
            (Some(build), _) if build != Build::STOCK => build.check(&program)?,
            _ => {}
        }
        let hint = format!("build it first (`make build c-l3fwd DPDK={release}` for that release)");
        require(&program, &hint)?;
    }
    require(&args.gen_bin, "build it with `cargo build --release -p trafficgen`")?;
    require(
        &args.common.tablegen_bin,
        "build it with `cargo build --release -p trafficgen`",
    )?;
    let scale = Pool {
        mbufs: Some(args.scale_mbufs),
        memory_mb: args.scale_memory,
    };

    let frames = args.frames as usize;
    let logs = args.work_dir.join("logs");
    let generators = args.common.generators(&args.gen_bin);
    let sizes = traffic::ScaleSizes {
        em_rules: args.scale_em_rules,
        v4_routes: args.scale_v4_routes,
        v6_routes: args.scale_v6_routes,
        frames: args.scale_frames,
        mbufs: args.scale_mbufs,
    };
    let needed = |scale: bool, em: bool| selected.iter().any(|c| c.is_scale() == scale && c.is_em() == em);
    let any_scale = selected.iter().any(|c| c.is_scale());
    args.common.ports.check_frames(frames)?;
    if any_scale {
        args.common.ports.check_frames(args.scale_frames)?;
    }
    let traffic = traffic::generate(&generators, &args.work_dir, frames, &sizes, needed)?;
    if any_scale && !pool::holds(args.scale_mbufs as usize, args.scale_frames) {
        println!(
            "note: --scale-frames {}: the two infinite_rx ports need more than --scale-mbufs {}",
            args.scale_frames, args.scale_mbufs
        );
    }
    if selected.iter().any(|c| c.forwarder != Forwarder::Io && !c.is_scale()) && !pool::holds(pool::MIN_MBUFS, frames) {
        println!(
            "note: --frames {frames}: the two infinite_rx ports hold {} of the forwarders' {} mbufs; \
             l3fwd runs may fail or forward nothing (the C sample cannot grow its pool; l3fwd-rs can with \
             --num-mbufs). testpmd's pool is large enough.",
            2 * frames,
            pool::MIN_MBUFS
        );
    }

    let timing = |config: Config| {
        args.common.timing(if config.is_scale() {
            SCALE_START_TIMEOUT
        } else {
            START_TIMEOUT
        })
    };
    let total = args.common.rounds as usize * selected.len();
    println!(
        "{total} runs ({} configurations x {} rounds), about {:.0} s each{}",
        selected.len(),
        args.common.rounds,
        args.common.warmup + args.common.window + 1.0,
        if any_scale { " plus start-up" } else { "" }
    );
    let largest = if any_scale {
        scale.memory_mb
    } else {
        Pool::DEFAULT.memory_mb
    };
    // Ctrl-C ends the runs and unwinds, so that the hugepages are given back.
    interrupt::catch_signals()?;
    let mut engine = Engine::new(total, args.common.rounds, &logs)?;
    let memory = hugepages::Memory::for_runs(largest, Path::new(HUGEPAGES_DIR), args.common.no_huge);
    command::use_memory(memory.eal_args());
    command::use_ports(args.common.ports);
    let units: Vec<Unit> = selected
        .iter()
        .map(|&config| Unit {
            config,
            cell: None,
            program: Ok(command::program(config, &config.release().tools(&tools)).to_owned()),
            files: args.common.ports.feed(traffic.files(config)),
            pool: if config.is_scale() { scale } else { Pool::DEFAULT },
            timing: timing(config),
            may_keep: false,
        })
        .collect();
    let runs = engine.run(&units)?;
    let failures = engine.finish();

    let settings = Settings {
        rounds: args.common.rounds,
        warmup_secs: args.common.warmup,
        window_secs: args.common.window,
        frames,
        selected: selected.iter().map(|c| c.id()).collect(),
        memory: memory.describe(),
        ports: args.common.ports,
        scale: any_scale.then_some(sizes),
        ..Settings::default()
    };
    let report = Report::new(settings, Machine::current(), machine::timestamp(), selected, &[], &runs);
    println!("{}", report.table());
    Ok((report, failures))
}

/// The C build `config` runs: the stock one, or at scale one with the
/// pool of the l3fwd-rs runs (`mbufs`) and its lookup; None: not C.
fn c_build(config: Config, mbufs: u32) -> Option<Build> {
    let scale = Build {
        mbufs: mbufs as usize,
        sequential: config.is_sequential(),
        ..Build::STOCK
    };
    (config.forwarder == Forwarder::C).then_some(if config.is_scale() { scale } else { Build::STOCK })
}

pub fn require(path: &Path, hint: &str) -> Result<(), String> {
    if path.is_file() {
        Ok(())
    } else {
        Err(format!("{} not found: {hint}", path.display()))
    }
}

fn read_json<T: serde::de::DeserializeOwned>(path: &Path) -> Result<T, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("baseline {}: {e}", path.display()))?;
    serde_json::from_str(&text).map_err(|e| format!("baseline {}: {e}", path.display()))
}

pub fn write_json(path: &Path, report: &impl serde::Serialize) -> Result<(), String> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    let text = serde_json::to_string_pretty(report).map_err(|e| e.to_string())?;
    std::fs::write(path, text + "\n").map_err(|e| format!("{}: {e}", path.display()))
}
