//! `l3fwd-tablegen`: writes seeded rule tables of a real router's size (LPM
//! routes with the Internet's prefix-length mix, or exact-match 5-tuples) and
//! pcap files of traffic aimed at them.

#![forbid(unsafe_code)]

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use clap::{Args, Parser, Subcommand};
use trafficgen::aimed::{self, Aim, Order};
use trafficgen::tables;
use trafficgen::{write_pcap, GenOpts, MAX_FRAME, MIN_FRAME};

/// Writes DIR/MODE_v4.cfg, DIR/MODE_v6.cfg and DIR/MODE_I.pcap (I = 0, 1, ...).
#[derive(Parser, Debug)]
#[command(version, allow_negative_numbers = true)]
struct Cli {
    #[command(subcommand)]
    mode: Mode,
}

#[derive(Subcommand, Debug)]
enum Mode {
    /// LPM route tables (IPv4 and IPv6) and traffic to random routes.
    Lpm(Common),
    /// Exact-match rule tables (IPv4 and IPv6) and traffic carrying their 5-tuples.
    Em(EmArgs),
}

#[derive(Args, Debug)]
struct EmArgs {
    #[command(flatten)]
    common: Common,
    /// Share of TCP rules (the others are UDP), in percent. The C sample looks
    /// up a group of 8 packets mixing TCP and UDP one packet at a time.
    #[arg(long, default_value_t = 25, value_parser = clap::value_parser!(u8).range(0..=100))]
    tcp: u8,
}

#[derive(Args, Debug)]
struct Common {
    /// IPv4 routes or rules.
    #[arg(long, default_value_t = 1_000_000)]
    v4: usize,
    /// IPv6 routes or rules.
    #[arg(long, default_value_t = 230_000)]
    v6: usize,
    /// Output ports of the routes or rules, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "0,1")]
    ports: Vec<u8>,
    /// Random seed: the same seed and options give the same files.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Output directory.
    #[arg(long)]
    dir: PathBuf,
    /// Number of pcap files (one per port that replays traffic).
    #[arg(long, default_value_t = 2)]
    pcaps: usize,
    /// Frames per pcap file.
    #[arg(long, default_value_t = 131_072)]
    frames: usize,
    /// Share of frames that miss every route or rule, in percent.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u8).range(0..=100))]
    miss: u8,
    /// Smallest frame size in bytes, without FCS.
    #[arg(long, default_value_t = GenOpts::default().min_size)]
    min_size: usize,
    /// Largest frame size in bytes, without FCS.
    #[arg(long, default_value_t = GenOpts::default().max_size)]
    max_size: usize,
    /// Aim at the routes or rules in turn instead of at random ones: file I
    /// gets items I, I + PCAPS, I + 2 PCAPS, ... (IPv4 first), so that
    /// PCAPS files of FRAMES = RULES / PCAPS frames hit each rule once.
    #[arg(long)]
    in_turn: bool,
}

fn main() -> ExitCode {
    let start = Instant::now();
    let result = match trafficgen::cli::parse_or_exit::<Cli>("l3fwd-tablegen").mode {
        Mode::Lpm(c) => c.generate(
            "lpm",
            |c| {
                (
                    tables::ipv4_routes(c.seed, c.v4, &c.ports),
                    tables::ipv6_routes(c.seed, c.v6, &c.ports),
                )
            },
            (tables::write_lpm_rules, tables::write_lpm_rules),
            aimed::at_routes_in,
        ),
        Mode::Em(EmArgs { common: c, tcp }) => c.generate(
            "em",
            |c| {
                let v4 = tables::ipv4_em_rules(c.seed, c.v4, &c.ports, tcp);
                (v4, tables::ipv6_em_rules(c.seed, c.v6, &c.ports, tcp))
            },
            (tables::write_em_rules, tables::write_em_rules),
            aimed::at_em_rules_in,
        ),
    };
    match result {
        Ok(()) => {
            println!("l3fwd-tablegen: done in {:.1?}", start.elapsed());
            ExitCode::SUCCESS
        }
        Err(err) => {
            eprintln!("l3fwd-tablegen: {err}");
            ExitCode::FAILURE
        }
    }
}

/// How one kind of table is written.
type Write<T> = fn(&Path, &[T]) -> std::io::Result<()>;
/// Traffic aimed at an IPv4 and an IPv6 table.
type AimAt<T4, T6> = fn(Order, &Aim, &[T4], &[T6]) -> Vec<Vec<u8>>;

impl Common {
    /// Draws the IPv4 and IPv6 tables, writes them and the pcaps of traffic
    /// `aim_at` aims at them.
    fn generate<T4, T6>(
        &self,
        mode: &str,
        draw: impl FnOnce(&Self) -> (Vec<T4>, Vec<T6>),
        write: (Write<T4>, Write<T6>),
        aim_at: AimAt<T4, T6>,
    ) -> Result<(), String> {
        self.validate()?;
        let (v4, v6) = draw(self);
        // l3fwd (C and Rust) refuses a rule file without rules: a family
        // of 0 rules gets no file.
        self.write(mode, |path4, path6| {
            if !v4.is_empty() {
                write.0(path4, &v4)?;
            }
            if !v6.is_empty() {
                write.1(path6, &v6)?;
            }
            Ok(())
        })?;
        self.write_pcaps(mode, |order, aim| aim_at(order, aim, &v4, &v6))
    }

    fn validate(&self) -> Result<(), String> {
        if self.ports.is_empty() || (self.v4 == 0 && self.v6 == 0) {
            return Err("no ports or no rules to generate".into());
        }
        if !(MIN_FRAME <= self.min_size && self.min_size <= self.max_size && self.max_size <= MAX_FRAME) {
            return Err(format!("frame sizes must be within {MIN_FRAME}..={MAX_FRAME}"));
        }
        Ok(())
    }

    /// Writes the rule files DIR/MODE_v4.cfg and DIR/MODE_v6.cfg with `write`.
    fn write(&self, mode: &str, write: impl FnOnce(&Path, &Path) -> std::io::Result<()>) -> Result<(), String> {
        std::fs::create_dir_all(&self.dir).map_err(|e| format!("{}: {e}", self.dir.display()))?;
        let (path4, path6) = (self.file(mode, "v4.cfg"), self.file(mode, "v6.cfg"));
        write(&path4, &path6).map_err(|e| format!("{}: {e}", self.dir.display()))?;
        for (family, count, path) in [("IPv4", self.v4, &path4), ("IPv6", self.v6, &path6)] {
            if count == 0 {
                println!(
                    "l3fwd-tablegen: no {family} rules, so no {} (l3fwd refuses a rule file without rules)",
                    path.display()
                );
            } else {
                println!(
                    "l3fwd-tablegen: {count} {family} rules in {} (seed {})",
                    path.display(),
                    self.seed
                );
            }
        }
        Ok(())
    }

    /// Writes DIR/MODE_I.pcap for each pcap file I, each with its own frames.
    fn write_pcaps(&self, mode: &str, frames: impl Fn(Order, &Aim) -> Vec<Vec<u8>>) -> Result<(), String> {
        for i in 0..self.pcaps {
            let order = if self.in_turn {
                Order::InTurn {
                    file: i,
                    files: self.pcaps,
                }
            } else {
                Order::Random
            };
            let aim = Aim {
                seed: self.seed ^ ((i as u64 + 1) << 32),
                count: self.frames,
                miss_percent: self.miss,
                sizes: self.min_size..=self.max_size,
            };
            let path = self.file(mode, &format!("{i}.pcap"));
            write_pcap(&path, &frames(order, &aim)).map_err(|e| format!("{}: {e}", path.display()))?;
            println!(
                "l3fwd-tablegen: {} frames ({}% misses) in {}",
                self.frames,
                self.miss,
                path.display()
            );
        }
        Ok(())
    }

    fn file(&self, mode: &str, suffix: &str) -> PathBuf {
        self.dir.join(format!("{mode}_{suffix}"))
    }
}
