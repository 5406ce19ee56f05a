//! `make bench`: the selected configurations (`--only`) round by round on
//! the default tables (and the router-size ones of `make bench-scale`), on
//! one DPDK release or several (`--dpdk`): a table of medians and ratios,
//! the JSON report, and the verdict against a baseline.

use crate::cbuild::Build;
use crate::common::{Common, SCALE_START_TIMEOUT, START_TIMEOUT};
use crate::configs::{self, Config, Forwarder};
use crate::engine::{Engine, Unit};
use crate::failures::Failures;
use crate::files::{require, write_json};
use crate::machine::{self, Machine};
use crate::pool::{self, Pool};
use crate::release::{self, Tools};
use crate::report::{Report, Settings};
use crate::{baseline, command, hugepages, interrupt, traffic, versions};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub common: Common,
    /// Frames in each port's pcap file
    #[arg(long, default_value_t = 1024, value_parser = clap::value_parser!(u32).range(1..))]
    pub frames: u32,
    /// Configurations, comma-separated: groups all, lpm, burst, fib, acl, em, io, c, rs, scale or ids c-lpm,
    /// rs-lpm, rs-lpm-c-drain, rs-lpm-burst64, rs-lpm-burst256, c-fib, rs-fib, c-acl, rs-acl, c-em, rs-em,
    /// rs-em-group8, rs-em-seq, io, c-em-1m, c-em-seq-1m, rs-em-1m, rs-em-seq-1m, rs-lpm-1m
    #[arg(long, value_delimiter = ',', default_value = "all")]
    pub only: Vec<String>,
    /// DPDK releases, comma-separated (e.g. 22.11,24.11,25.11): every configuration runs on each, the
    /// machine's own and those of `make build c-l3fwd DPDK=VERSION`'s roots, alternately in every
    /// round; each change from one release to the next gets a verdict, and versions.png plots them
    #[arg(long, value_delimiter = ',', value_parser = release::Release::parse)]
    pub dpdk: Vec<release::Release>,
    /// Scale runs: IPv4 exact-match rules
    #[arg(long, default_value_t = 1_000_000)]
    pub scale_em_rules: usize,
    /// Scale runs: IPv4 LPM routes
    #[arg(long, default_value_t = 1_000_000)]
    scale_v4_routes: usize,
    /// Scale runs: IPv6 LPM routes
    #[arg(long, default_value_t = 230_000)]
    scale_v6_routes: usize,
    /// Scale runs: frames in each port's pcap file, each to a random rule or route (10% to none)
    #[arg(long, default_value_t = 131_072)]
    pub scale_frames: usize,
    /// Scale runs: mbufs per pool of both forwarders (the C binaries are built with it)
    #[arg(long, default_value_t = 1 << 20)]
    pub scale_mbufs: u32,
    /// Scale runs: EAL memory (-m) in MB
    #[arg(long, default_value_t = 8192)]
    pub scale_memory: u32,
    /// Where to write every run's rate, medians and ratios
    #[arg(long, default_value = "target/bench/bench.json")]
    pub json: PathBuf,
    /// Directory for traffic files and per-run logs
    #[arg(long, default_value = "target/bench")]
    pub work_dir: PathBuf,
    #[arg(long, default_value = "target/c-l3fwd/dpdk-l3fwd")]
    pub c_bin: PathBuf,
    #[arg(long, default_value = "target/c-l3fwd-scale/dpdk-l3fwd")]
    pub c_scale_bin: PathBuf,
    #[arg(long, default_value = "target/c-l3fwd-scale-seq/dpdk-l3fwd")]
    pub c_scale_seq_bin: PathBuf,
    #[arg(long, default_value = "/usr/bin/dpdk-testpmd")]
    pub testpmd: PathBuf,
    #[arg(long, default_value = "target/release/l3fwd-gen")]
    pub gen_bin: PathBuf,
}

/// make bench: measures, writes the report and judges it.
pub fn bench(args: Args) -> Result<ExitCode, String> {
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
    let memory = hugepages::Memory::for_runs(largest, Path::new(hugepages::DIR), args.common.no_huge);
    command::use_eal_args(
        memory.eal_args(),
        command::simd_bitwidth_args(args.common.simd_bitwidth),
    );
    command::use_ports(args.common.ports);
    let units: Vec<Unit> = selected
        .iter()
        .map(|&config| Unit {
            config,
            cell: None,
            program: Ok(command::program(config, &config.release().tools(&tools)).to_owned()),
            files: args.common.ports.feed(traffic.files(config), args.common.ring_prime()),
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
        simd_bitwidth: args.common.simd_bitwidth,
        ring_frames: args.common.ring_frames,
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
