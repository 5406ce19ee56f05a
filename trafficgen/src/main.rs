//! `l3fwd-gen`: writes seeded l3fwd test/demo traffic to a pcap file.

#![forbid(unsafe_code)]

use std::collections::HashMap;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use trafficgen::{cli, generate_frames, validate, write_pcap, GenOpts, Kind, Mix};

/// Most frames one file may hold: they are built in memory first.
const MAX_COUNT: usize = 1 << 28;

/// Writes a pcap file of frames aimed at l3fwd's default rule tables.
#[derive(Parser, Debug)]
#[command(version, allow_negative_numbers = true)]
struct Args {
    /// Output pcap file.
    #[arg(long)]
    out: PathBuf,
    /// Number of frames (at most 268435456).
    #[arg(long, default_value_t = 1024)]
    count: usize,
    /// Random seed: the same seed and options give the same file.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Weight of valid IPv4 frames.
    #[arg(long, default_value_t = Mix::default().v4)]
    v4: u32,
    /// Weight of valid IPv6 frames.
    #[arg(long, default_value_t = Mix::default().v6)]
    v6: u32,
    /// Weight of IPv4 frames with a bad version/IHL or total length.
    #[arg(long, default_value_t = Mix::default().invalid_v4)]
    invalid: u32,
    /// Weight of non-IP frames (ARP, other ethertypes).
    #[arg(long, default_value_t = Mix::default().non_ip)]
    non_ip: u32,
    /// Weight of frames shorter than their headers (the C sample reads past them).
    #[arg(long, default_value_t = Mix::default().runt)]
    runt: u32,
    /// Smallest frame size in bytes, without FCS.
    #[arg(long, default_value_t = GenOpts::default().min_size)]
    min_size: usize,
    /// Largest frame size in bytes, without FCS.
    #[arg(long, default_value_t = GenOpts::default().max_size)]
    max_size: usize,
    /// Aim at the exact-match rules (5-tuples of configs/em_v*.cfg), with some misses.
    #[arg(long)]
    em: bool,
    /// Ports 0..PORTS get most of the routed traffic.
    #[arg(long, default_value_t = GenOpts::default().ports)]
    ports: u8,
}

fn main() -> ExitCode {
    let args: Args = cli::parse_or_exit("l3fwd-gen");
    if args.count > MAX_COUNT {
        eprintln!("l3fwd-gen: --count {}: at most {MAX_COUNT} frames", args.count);
        return ExitCode::FAILURE;
    }
    let mix = Mix {
        v4: args.v4,
        v6: args.v6,
        invalid_v4: args.invalid,
        non_ip: args.non_ip,
        runt: args.runt,
    };
    let opts = GenOpts {
        min_size: args.min_size,
        max_size: args.max_size,
        em: args.em,
        ports: args.ports,
    };
    if let Err(err) = validate(&mix, &opts) {
        eprintln!("l3fwd-gen: {err}");
        return ExitCode::FAILURE;
    }
    let frames = generate_frames(args.seed, args.count, &mix, &opts);
    let data: Vec<_> = frames.iter().map(|f| &f.data).collect();
    if let Err(err) = write_pcap(&args.out, &data) {
        eprintln!("l3fwd-gen: {}: {err}", args.out.display());
        return ExitCode::FAILURE;
    }
    let mut per_kind = HashMap::new();
    for frame in &frames {
        *per_kind.entry(frame.kind).or_insert(0) += 1;
    }
    let count = |kind| per_kind.get(&kind).copied().unwrap_or(0);
    println!(
        "l3fwd-gen: wrote {} frames to {} (seed {}{}): v4 {}, v6 {}, invalid-v4 {}, non-ip {}, runt {}",
        frames.len(),
        args.out.display(),
        args.seed,
        if args.em { ", em" } else { "" },
        count(Kind::V4),
        count(Kind::V6),
        count(Kind::InvalidV4),
        count(Kind::NonIp),
        count(Kind::Runt),
    );
    ExitCode::SUCCESS
}
