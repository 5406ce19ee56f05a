//! sockperf (Debian's package): the server and client command lines, and
//! the client's summary parsed into percentiles.
//!
//! sockperf reports latency as half the round trip unless `--full-rtt` is
//! given; we never give it, so every figure here is RTT/2 in microseconds.

use serde::{Deserialize, Serialize};
use std::process::Command;

/// UDP port of the server.
pub const PORT: u16 = 11111;

/// One client run's latency summary, from sockperf's "[Valid Duration]"
/// block (warm-up excluded).
#[derive(Serialize, Deserialize, Clone, Copy, PartialEq, Debug)]
pub struct Latency {
    /// Replies the percentiles are computed over.
    pub observations: u64,
    /// One-way latency (RTT/2), microseconds.
    pub p50_us: f64,
    pub p90_us: f64,
    pub p99_us: f64,
    pub p99_9_us: f64,
    pub max_us: f64,
    pub min_us: f64,
    pub avg_us: f64,
    /// Messages sent and replies received in the valid duration.
    pub sent: u64,
    pub received: u64,
    pub valid_secs: f64,
    /// Replies sockperf saw missing (sequence gaps).
    pub dropped: u64,
}

impl Latency {
    /// Messages sent per second: the load actually offered.
    pub fn sent_per_sec(&self) -> f64 {
        if self.valid_secs > 0.0 {
            self.sent as f64 / self.valid_secs
        } else {
            0.0
        }
    }
}

/// What the client runs.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Mode {
    /// One message in flight, the next sent when its reply arrives.
    PingPong,
    /// `mps` messages a second; the server replies to every `reply_every`th.
    UnderLoad { mps: u64, reply_every: u64 },
}

/// The server's command line, bound to `addr`, pinned to `cpu`.
pub fn server(addr: &str, cpu: u32) -> Command {
    let mut cmd = pinned(cpu);
    cmd.args(["sockperf", "server", "-i", addr, "-p", &PORT.to_string()]);
    cmd
}

/// The client's: `mode` for `secs` seconds with `msg_size`-byte messages.
pub fn client(mode: Mode, addr: &str, cpu: u32, secs: u32, msg_size: u32) -> Command {
    let mut cmd = pinned(cpu);
    let subcommand = match mode {
        Mode::PingPong => "ping-pong",
        Mode::UnderLoad { .. } => "under-load",
    };
    cmd.args(["sockperf", subcommand, "-i", addr, "-p", &PORT.to_string()]);
    cmd.args(["--time", &secs.to_string(), "--msg-size", &msg_size.to_string()]);
    if let Mode::UnderLoad { mps, reply_every } = mode {
        cmd.args(["--mps", &mps.to_string(), "--reply-every", &reply_every.to_string()]);
    }
    cmd
}

pub(super) fn pinned(cpu: u32) -> Command {
    let mut cmd = Command::new("taskset");
    cmd.args(["-c", &cpu.to_string()]);
    cmd
}

/// Parses a client's output. Fails when a line it needs is missing (sockperf
/// got no reply, or its format changed).
pub fn parse(output: &str) -> Result<Latency, String> {
    let text = strip_colours(output);
    // The total run (warm-up included) comes first; the valid duration is
    // what the percentiles cover.
    let valid = text
        .lines()
        .find_map(|l| l.split_once("[Valid Duration]").map(|(_, rest)| rest))
        .ok_or("no [Valid Duration] line: did any reply arrive?")?;
    let value = |line: &str, key: &str| -> Option<f64> {
        let (_, rest) = line.split_once(key)?;
        let number: String = rest
            .trim_start()
            .chars()
            .take_while(|c| c.is_ascii_digit() || *c == '.')
            .collect();
        number.parse().ok()
    };
    let find = |key: &str| -> Result<f64, String> {
        text.lines()
            .find_map(|l| value(l, key))
            .ok_or_else(|| format!("no '{key}' in sockperf's output"))
    };
    let in_valid = |key: &str| value(valid, key).ok_or_else(|| format!("no '{key}' in the [Valid Duration] line"));
    let percentile = |p: &str| find(&format!("percentile {p} ="));
    Ok(Latency {
        observations: find("Total ")? as u64,
        p50_us: percentile("50.000")?,
        p90_us: percentile("90.000")?,
        p99_us: percentile("99.000")?,
        p99_9_us: percentile("99.900")?,
        max_us: find("<MAX> observation =")?,
        min_us: find("<MIN> observation =")?,
        avg_us: find("avg-latency=")?,
        sent: in_valid("SentMessages=")? as u64,
        received: in_valid("ReceivedMessages=")? as u64,
        valid_secs: in_valid("RunTime=")?,
        dropped: find("# dropped messages =")? as u64,
    })
}

/// sockperf colours some lines (ESC [ ... m) even into a pipe.
fn strip_colours(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            for c in chars.by_ref() {
                if c.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Real output of sockperf 3.7 (Debian), through the Linux kernel's
    /// forwarding between two namespaces on this machine.
    const PING_PONG: &str = include_str!("fixtures/ping-pong-kernel.txt");
    const UNDER_LOAD: &str = include_str!("fixtures/under-load-kernel-100k.txt");

    #[test]
    fn ping_pong_output_parses_into_percentiles() {
        let l = parse(PING_PONG).unwrap();
        assert_eq!(l.observations, 143_920);
        assert_eq!(
            (l.p50_us, l.p90_us, l.p99_us, l.p99_9_us, l.max_us, l.min_us),
            (6.274, 6.800, 7.741, 1328.206, 4755.084, 5.943)
        );
        assert_eq!(l.avg_us, 8.837);
        assert_eq!((l.sent, l.received, l.dropped), (143_920, 143_920, 0));
        assert_eq!(l.valid_secs, 2.547);
        assert!((l.sent_per_sec() - 56_505.7).abs() < 1.0, "{}", l.sent_per_sec());
    }

    #[test]
    fn under_load_output_counts_the_valid_duration_and_drops() {
        let l = parse(UNDER_LOAD).unwrap();
        assert_eq!(l.observations, 2001);
        assert_eq!(
            (l.sent, l.received, l.dropped),
            (255_001, 2001, 550),
            "not the total run's"
        );
        assert_eq!((l.p50_us, l.p99_9_us, l.max_us), (6.519, 4318.117, 5067.757));
        assert_eq!(l.avg_us, 337.735, "through the colour codes");
    }

    #[test]
    fn output_without_replies_is_an_error() {
        let cut: String = PING_PONG.lines().take(8).collect::<Vec<_>>().join("\n");
        assert!(parse(&cut).unwrap_err().contains("Valid Duration"));
        let no_max = PING_PONG.replace("<MAX>", "<max>");
        assert!(parse(&no_max).unwrap_err().contains("<MAX>"));
    }

    #[test]
    fn command_lines() {
        let args = |cmd: Command| -> Vec<String> {
            std::iter::once(cmd.get_program())
                .chain(cmd.get_args())
                .map(|a| a.to_string_lossy().into_owned())
                .collect()
        };
        assert_eq!(
            args(server("198.51.100.2", 0)).join(" "),
            "taskset -c 0 sockperf server -i 198.51.100.2 -p 11111"
        );
        assert_eq!(
            args(client(Mode::PingPong, "198.51.100.2", 0, 5, 64)).join(" "),
            "taskset -c 0 sockperf ping-pong -i 198.51.100.2 -p 11111 --time 5 --msg-size 64"
        );
        let load = Mode::UnderLoad {
            mps: 10_000,
            reply_every: 10,
        };
        assert_eq!(
            args(client(load, "198.51.100.2", 0, 5, 64)).join(" "),
            "taskset -c 0 sockperf under-load -i 198.51.100.2 -p 11111 --time 5 --msg-size 64 \
             --mps 10000 --reply-every 10"
        );
    }
}
