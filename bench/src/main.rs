//! l3fwd-bench: forwarding rates of C l3fwd, l3fwd-rs and testpmd (the I/O ceiling),
//! run alternately on the same virtual ports and traffic, compared as ratios.

mod baseline;
mod command;
mod configs;
mod machine;
mod report;
mod run;
mod stats;
mod telemetry;
mod traffic;

use clap::Parser;
use command::Tools;
use configs::Config;
use report::{Report, Run, Settings};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

/// Both forwarders size their mbuf pool at 8192 here; a pcap port with infinite_rx
/// holds one mbuf per frame of its file, and replay needs a few more (measured: 2 x 4064
/// frames forward, 2 x 4096 set up but forward nothing).
const POOL_MBUFS: usize = 8192;
const POOL_HEADROOM: usize = 256;

#[derive(Parser)]
#[command(
    version,
    about = "Side-by-side forwarding rates: C l3fwd, l3fwd-rs and testpmd on pcap ports"
)]
struct Args {
    /// Rounds; every selected configuration runs once per round, in turn
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..))]
    rounds: u32,
    /// Seconds of forwarding before the measurement window
    #[arg(long, default_value_t = 2.0, value_parser = seconds)]
    warmup: f64,
    /// Seconds over which TX packets are counted
    #[arg(long, default_value_t = 3.0, value_parser = seconds)]
    window: f64,
    /// Frames in each port's pcap file
    #[arg(long, default_value_t = 1024, value_parser = clap::value_parser!(u32).range(1..))]
    frames: u32,
    /// Configurations, comma-separated: groups all, lpm, em, io, c, rs or ids c-lpm, rs-lpm, c-em, rs-em, rs-em-seq
    #[arg(long, value_delimiter = ',', default_value = "all")]
    only: Vec<String>,
    /// Where to write every run's rate, medians and ratios
    #[arg(long, default_value = "target/bench/bench.json")]
    json: PathBuf,
    /// An earlier --json file: exit with status 2 if a ratio fell by more than --tolerance
    #[arg(long)]
    baseline: Option<PathBuf>,
    /// Relative fall of a ratio that counts as a regression
    #[arg(long, default_value_t = 0.05)]
    tolerance: f64,
    /// Directory for traffic files and per-run logs
    #[arg(long, default_value = "target/bench")]
    work_dir: PathBuf,
    #[arg(long, default_value = "target/release/l3fwd-rs")]
    rs_bin: PathBuf,
    #[arg(long, default_value = "target/c-l3fwd/dpdk-l3fwd")]
    c_bin: PathBuf,
    #[arg(long, default_value = "/usr/bin/dpdk-testpmd")]
    testpmd: PathBuf,
    #[arg(long, default_value = "target/release/l3fwd-gen")]
    gen_bin: PathBuf,
    /// Directory of the rule files lpm_v4.cfg, lpm_v6.cfg, em_v4.cfg, em_v6.cfg
    #[arg(long, default_value = "configs")]
    rules_dir: PathBuf,
}

fn seconds(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v > 0.0 && v.is_finite() => Ok(v),
        _ => Err(format!("'{s}' is not a positive number of seconds")),
    }
}

fn main() -> ExitCode {
    match bench(Args::parse()) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("l3fwd-bench: {e}");
            ExitCode::FAILURE
        }
    }
}

fn bench(args: Args) -> Result<ExitCode, String> {
    let selected = configs::select(&args.only)?;
    // Read the baseline first: a bad path should not cost minutes of runs.
    let baseline = args.baseline.as_deref().map(read_report).transpose()?;
    let tools = Tools {
        rs_bin: args.rs_bin,
        c_bin: args.c_bin,
        testpmd: args.testpmd,
        rules_dir: args.rules_dir,
    };
    for &c in &selected {
        require(command::program(c, &tools), "build it first, or `make bench` does it")?;
    }
    require(&args.gen_bin, "build it with `cargo build --release -p trafficgen`")?;

    let frames = args.frames as usize;
    let logs = args.work_dir.join("logs");
    std::fs::create_dir_all(&logs).map_err(|e| format!("{}: {e}", logs.display()))?;
    let any_lpm = selected.iter().any(|c| !c.is_em());
    let any_em = selected.iter().any(|c| c.is_em());
    let traffic = traffic::generate(&args.gen_bin, &args.work_dir, frames, any_lpm, any_em)?;
    if selected.iter().any(|&c| c != Config::Io) && 2 * frames + POOL_HEADROOM > POOL_MBUFS {
        println!(
            "note: --frames {frames}: the two infinite_rx ports hold {} of the forwarders' {POOL_MBUFS} mbufs; \
             l3fwd runs may fail or forward nothing (the C sample cannot grow its pool; l3fwd-rs will with \
             --num-mbufs). testpmd's pool is large enough.",
            2 * frames
        );
    }

    let timing = run::Timing {
        warmup: Duration::from_secs_f64(args.warmup),
        window: Duration::from_secs_f64(args.window),
    };
    let total = args.rounds as usize * selected.len();
    println!(
        "{total} runs ({} configurations x {} rounds), about {:.0} s each",
        selected.len(),
        args.rounds,
        args.warmup + args.window + 1.0
    );
    let mut runs = Vec::with_capacity(total);
    for round in 1..=args.rounds {
        for &config in &selected {
            print!("[{}/{total}] {} round {round}: ", runs.len() + 1, config.label());
            let _ = std::io::stdout().flush();
            let prefix = format!("l3fwd-bench-{}-{}", std::process::id(), runs.len());
            let log = logs.join(format!("{}-r{round}.log", config.id()));
            let (cmd, stop) = command::command(config, &tools, &traffic, &prefix);
            let result = run::measure(cmd, stop, &prefix, &log, &timing);
            match &result {
                Ok(mpps) => println!("{mpps:.2} Mpps"),
                Err(e) => println!("FAILED: {e} (log: {})", log.display()),
            }
            runs.push(Run { config, round, result });
        }
    }

    let settings = Settings {
        rounds: args.rounds,
        warmup_secs: args.warmup,
        window_secs: args.window,
        frames,
        selected: selected.iter().map(|c| c.id().to_string()).collect(),
    };
    let report = report::build(
        settings,
        machine::Machine::current(),
        machine::timestamp(),
        &selected,
        &runs,
    );
    report::print_table(&report);
    write_report(&args.json, &report)?;
    println!("\nwrote {}", args.json.display());

    let Some(old) = baseline else {
        return Ok(ExitCode::SUCCESS);
    };
    println!(
        "\nagainst baseline {} ({}):",
        args.baseline.unwrap_or_default().display(),
        old.timestamp
    );
    let comparisons = baseline::compare(&old.ratios, &report.ratios, &selected, args.tolerance);
    if comparisons.is_empty() {
        println!("  no ratio in common");
    }
    baseline::print(&comparisons, args.tolerance);
    let regressed = comparisons.iter().any(|c| c.verdict.is_regression());
    Ok(if regressed {
        ExitCode::from(2)
    } else {
        ExitCode::SUCCESS
    })
}

fn require(path: &Path, hint: &str) -> Result<(), String> {
    if path.is_file() {
        Ok(())
    } else {
        Err(format!("{} not found: {hint}", path.display()))
    }
}

fn read_report(path: &Path) -> Result<Report, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("baseline {}: {e}", path.display()))?;
    serde_json::from_str(&text).map_err(|e| format!("baseline {}: {e}", path.display()))
}

fn write_report(path: &Path, report: &Report) -> Result<(), String> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    let text = serde_json::to_string_pretty(report).map_err(|e| e.to_string())?;
    std::fs::write(path, text + "\n").map_err(|e| format!("{}: {e}", path.display()))
}
