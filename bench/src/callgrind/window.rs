//! One configuration under callgrind: start it with nothing counted, let it
//! forward, then switch counting on, zero the counters, wait the window and
//! dump them, reading the ports' TX counters around the zero and the dump.

use crate::interrupt::pause;
use crate::run::{Forwarding, Timing};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};
use testkit::Stop;

/// A program under valgrind answers telemetry slowly.
const REPLY_TIMEOUT: Duration = Duration::from_secs(30);
/// Writing the dump of a large program takes a few seconds under load.
const DUMP_TIMEOUT: Duration = Duration::from_secs(30);

/// How valgrind runs the program.
pub struct Valgrind<'a> {
    pub cache_sim: bool,
    /// Further options, given by the user.
    pub options: &'a [String],
}

impl Valgrind<'_> {
    /// `cmd` under callgrind, counting nothing until switched on (start-up
    /// and table set-up are not counted), dumps to `out`.N.
    pub fn wrap(&self, cmd: &Command, out: &Path) -> Command {
        let mut vg = Command::new("valgrind");
        // --fair-sched: with valgrind's default lock the busy forwarding
        // thread can starve the telemetry thread (its replies time out).
        vg.args(["--tool=callgrind", "--instr-atstart=no", "--fair-sched=yes"])
            .arg(format!("--callgrind-out-file={}", out.display()));
        if self.cache_sim {
            vg.arg("--cache-sim=yes");
        }
        vg.args(self.options).arg(cmd.get_program()).args(cmd.get_args());
        vg
    }
}

/// TX packets of both ports read just before and just after zeroing the
/// counters (`zero`) and just before and after the dump (`dump`).
#[derive(Clone, Copy, PartialEq, Debug)]
pub struct Reads {
    pub zero: [u64; 2],
    pub dump: [u64; 2],
}

impl Reads {
    /// Packets in the window, from the midpoints of each pair of reads.
    pub fn packets(&self) -> u64 {
        (self.dump[0] + self.dump[1]).saturating_sub(self.zero[0] + self.zero[1]) / 2
    }

    /// Bound on the error of [`Reads::packets`]: half the packets sent
    /// between each pair of reads, as % of the packets.
    pub fn edge_pct(&self) -> f64 {
        let edges = (self.zero[1] - self.zero[0] + self.dump[1] - self.dump[0]) / 2;
        100.0 * edges as f64 / self.packets() as f64
    }
}

/// Runs `cmd` (already under [`Valgrind::wrap`] with dumps to `out`) and
/// counts one window: the TX reads and the dump's event totals. The
/// warm-up is uninstrumented; `settle` instrumented before the window, so
/// that the rate is the instrumented one on both edges of the window.
pub fn count(
    cmd: Command,
    stop: Stop,
    prefix: &str,
    log: &Path,
    out: &Path,
    timing: &Timing,
    settle: Duration,
) -> Result<(Reads, BTreeMap<String, u64>), String> {
    let started = Instant::now();
    let mut run = Forwarding::start(cmd, stop, prefix, log, timing.start_timeout)?;
    run.set_telemetry_timeout(REPLY_TIMEOUT)?;
    eprintln!(
        "  forwarding after {:.0}s; warm-up {:?}, settle {:?}, window {:?}",
        started.elapsed().as_secs_f64(),
        timing.warmup,
        settle,
        timing.window
    );
    pause(timing.warmup)?;
    let pid = run.pid();
    monitor(pid, &["instrumentation", "on"])?;
    pause(settle)?;
    let a = run.opackets()?;
    monitor(pid, &["zero"])?;
    let zero = [a, run.opackets()?];
    pause(timing.window)?;
    let b = run.opackets()?;
    monitor(pid, &["dump"])?;
    let dump = [b, run.opackets()?];
    monitor(pid, &["instrumentation", "off"])?;
    // The dump is OUT.1; OUT itself is the (empty) final dump at exit.
    let totals = wait_for_totals(&numbered(out, 1))?;
    // The counts are in; a slow exit under valgrind does not spoil them,
    // an exit with an error does.
    if let Some(note) = run.stop_slowly()? {
        eprintln!("  note: {note}");
    }
    Ok((Reads { zero, dump }, totals))
}

/// `path`.`n`, as callgrind names its numbered dumps.
pub fn numbered(path: &Path, n: u32) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(format!(".{n}"));
    PathBuf::from(name)
}

/// A callgrind monitor command (what callgrind_control sends) to process `pid`.
fn monitor(pid: u32, command: &[&str]) -> Result<(), String> {
    let out = Command::new("vgdb")
        .arg(format!("--pid={pid}"))
        .args(command)
        .output()
        .map_err(|e| format!("cannot run vgdb: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "vgdb {} failed ({}): {}{}",
            command.join(" "),
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(())
}

fn wait_for_totals(dump: &Path) -> Result<BTreeMap<String, u64>, String> {
    let deadline = Instant::now() + DUMP_TIMEOUT;
    loop {
        let text = std::fs::read_to_string(dump).unwrap_or_default();
        if let Some(totals) = totals(&text) {
            return Ok(totals);
        }
        if Instant::now() > deadline {
            return Err(format!("no callgrind dump ({})", dump.display()));
        }
        pause(Duration::from_millis(200))?;
    }
}

/// The event totals of a callgrind dump, by event name (`events:` gives the
/// names, `totals:` the values, written last); None while incomplete.
pub fn totals(dump: &str) -> Option<BTreeMap<String, u64>> {
    let field = |prefix: &str| dump.lines().find_map(|l| l.strip_prefix(prefix));
    let names = field("events:")?.split_whitespace();
    let values = field("totals:")?.split_whitespace().map(|v| v.parse().ok());
    names.zip(values).map(|(n, v)| Some((n.to_string(), v?))).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packets_and_edge_from_the_reads_around_zero_and_dump() {
        let reads = Reads {
            zero: [1000, 1100],
            dump: [11_000, 11_300],
        };
        // Midpoints 1050 and 11150.
        assert_eq!(reads.packets(), 10_100);
        // (100 + 300) / 2 = 200 packets of uncertainty.
        assert!((reads.edge_pct() - 100.0 * 200.0 / 10_100.0).abs() < 1e-9);
    }

    #[test]
    fn totals_by_event_name() {
        let dump = "version: 1\ncreator: callgrind-3.19.0\nevents: Ir D1mr D1mw\n\
                    summary: 11 2 3\nfn=(1) main\n5 10 1 2\ntotals: 1234 56 78\n";
        let t = totals(dump).unwrap();
        assert_eq!(t["Ir"], 1234);
        assert_eq!(t["D1mr"] + t["D1mw"], 134);
        assert_eq!(totals("events: Ir\nsummary: 5\n"), None, "no totals yet");
        assert_eq!(totals("events: Ir\ntotals: x\n"), None);
    }

    #[test]
    fn valgrind_wraps_the_command_line() {
        let mut cmd = Command::new("prog");
        cmd.args(["-l", "1", "--", "-p", "0x3"]);
        let opts = ["--LL=8388608,16,64".to_string()];
        let vg = Valgrind {
            cache_sim: true,
            options: &opts,
        }
        .wrap(&cmd, Path::new("w/rs-lpm.cg"));
        let args: Vec<_> = vg.get_args().map(|a| a.to_string_lossy().into_owned()).collect();
        assert_eq!(vg.get_program(), "valgrind");
        assert_eq!(
            args,
            [
                "--tool=callgrind",
                "--instr-atstart=no",
                "--fair-sched=yes",
                "--callgrind-out-file=w/rs-lpm.cg",
                "--cache-sim=yes",
                "--LL=8388608,16,64",
                "prog",
                "-l",
                "1",
                "--",
                "-p",
                "0x3"
            ]
        );
        assert_eq!(numbered(Path::new("w/rs-lpm.cg"), 1), Path::new("w/rs-lpm.cg.1"));
    }
}
