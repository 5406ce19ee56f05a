//! What every rate command shares: how runs are measured and compared
//! ([`Common`], flattened into make bench's and a sweep's options), and
//! how long a forwarder may take to start.

use crate::{command, run, traffic};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// EAL init with --no-huge and pcap setup take a few seconds; more means something is wrong...
pub const START_TIMEOUT: Duration = Duration::from_secs(30);
/// ...except with large tables and a pool of a million mbufs to fill.
pub const SCALE_START_TIMEOUT: Duration = Duration::from_secs(120);

/// What `make bench` and sweeps share: how runs are measured, what they
/// run, and the regression check.
#[derive(clap::Args)]
pub struct Common {
    /// Rounds; every selected configuration (in a sweep, both forwarders of a cell) runs once per round, in turn
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..))]
    pub rounds: u32,
    /// Seconds of forwarding before the measurement window
    #[arg(long, default_value_t = 2.0, value_parser = seconds)]
    pub warmup: f64,
    /// Seconds over which TX packets are counted
    #[arg(long, default_value_t = 3.0, value_parser = seconds)]
    pub window: f64,
    /// An earlier report of the same kind (--json, or a sweep's sweep.json): exit with status 2 if a
    /// ratio fell by more than --tolerance and significantly (Mann-Whitney over rounds, p <= 0.05)
    #[arg(long)]
    pub baseline: Option<PathBuf>,
    /// Relative fall of a ratio that counts as a regression
    #[arg(long, default_value_t = 0.05)]
    pub tolerance: f64,
    /// 4 KB pages (EAL --no-huge) even where hugepages could be reserved (as root): to
    /// compare the two, or on a machine whose memory is short
    #[arg(long)]
    pub no_huge: bool,
    /// EAL's maximum SIMD bitwidth for every run, C's and testpmd's as
    /// l3fwd-rs's (`--force-max-simd-bitwidth`): 512 lets the AVX-512 paths
    /// run (rte_fib's lookup in C, l3fwd-rs's parse and lookups), 64 none;
    /// unset, EAL's default (256 on x86: AVX2)
    #[arg(long, value_parser = simd_bitwidth)]
    pub simd_bitwidth: Option<u16>,
    /// Ring ports only: each primer repeats its file's frames to at least N
    /// (default 512, about 1024 frames going round the two rings). Fewer
    /// keep the frames in cache, where each forwarder's own work per packet
    /// shows; a file of more frames goes as it is
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(32..=512))]
    pub ring_frames: Option<u16>,
    /// The ports forwarded between: pcap (replaying its files, what any user
    /// can reproduce) or ring (the lab port: net_ring ports looping the same
    /// mbufs, primed by the pcap files, with a floor far below pcap's)
    #[arg(long, value_enum, default_value_t)]
    pub ports: command::Ports,
    #[arg(long, default_value = "target/release/l3fwd-rs")]
    pub rs_bin: PathBuf,
    #[arg(long, default_value = "target/release/l3fwd-tablegen")]
    pub tablegen_bin: PathBuf,
    /// Directory of the rule files lpm_v4.cfg, lpm_v6.cfg, em_v4.cfg, em_v6.cfg
    #[arg(long, default_value = "configs")]
    pub rules_dir: PathBuf,
    /// Builds the C sample with the pool (and LPM size) runs need
    #[arg(long, default_value = "scripts/build-c-l3fwd.sh")]
    pub c_build_script: PathBuf,
}

impl Common {
    /// The table and traffic generators, `gen` making the default traffic.
    pub fn generators<'a>(&'a self, gen: &'a Path) -> traffic::Generators<'a> {
        traffic::Generators {
            gen,
            tablegen: &self.tablegen_bin,
            rules_dir: &self.rules_dir,
        }
    }

    /// What each ring primer holds at least: `--ring-frames`, or the default.
    pub fn ring_prime(&self) -> usize {
        self.ring_frames.map_or(command::RING_PRIME, usize::from)
    }

    pub fn timing(&self, start_timeout: Duration) -> run::Timing {
        run::Timing {
            start_timeout,
            warmup: Duration::from_secs_f64(self.warmup),
            window: Duration::from_secs_f64(self.window),
        }
    }
}

/// A clap parser: a bitwidth EAL takes (64, 128, 256 or 512).
pub fn simd_bitwidth(s: &str) -> Result<u16, String> {
    match s.parse::<u16>() {
        Ok(bits @ (64 | 128 | 256 | 512)) => Ok(bits),
        _ => Err(format!("'{s}' is not a SIMD bitwidth EAL takes: 64, 128, 256 or 512")),
    }
}

/// A clap parser: a positive, finite number of seconds.
pub fn seconds(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v > 0.0 && v.is_finite() => Ok(v),
        _ => Err(format!("'{s}' is not a positive number of seconds")),
    }
}
