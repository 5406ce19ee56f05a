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
mod common;
mod configs;
mod engine;
mod failures;
mod files;
mod grid;
mod hugepages;
mod interrupt;
mod latency;
mod machine;
mod mode;
mod plot;
mod pool;
mod progress;
mod rates;
mod release;
mod report;
mod run;
mod significance;
mod stats;
mod sweep;
mod traffic;
mod update;
mod versions;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

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
    bench: rates::Args,
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

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Some(Sub::Sweep(args)) => sweep::sweep(args),
        Some(Sub::Latency(args)) => latency::latency(args),
        Some(Sub::Callgrind(args)) => callgrind::callgrind(args),
        Some(Sub::Calibrate(args)) => calibrate::calibrate(args),
        Some(Sub::Update(args)) => update::update(args),
        None => rates::bench(cli.bench),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("l3fwd-bench: {e}");
            ExitCode::FAILURE
        }
    }
}
