//! The one rate engine of make bench, its scale and release runs, and the
//! sweep: units (a configuration on its traffic, in a sweep cell or on
//! make bench's tables) run once per round, in turn, so that the units
//! compared are measured alternately. make bench hands it all its units
//! at once; a sweep one cell's at a time (a cell's traffic is removed
//! before the next is made).

use crate::command;
use crate::configs::{Config, Forwarder};
use crate::failures::{self, Failures};
use crate::grid::Cell;
use crate::interrupt;
use crate::pool::Pool;
use crate::progress::Progress;
use crate::run::{self, Forwarding, Sample, Timing};
use crate::traffic::Files;
use std::path::{Path, PathBuf};
use std::process::Command;
use testkit::Stop;

/// One run's outcome: what it measured or why there is nothing.
pub struct Run {
    pub config: Config,
    /// The sweep cell it ran in; None: make bench's tables.
    pub cell: Option<Cell>,
    pub round: u32,
    pub result: Result<Sample, String>,
}

impl Run {
    /// Its name in a failure and its log's: `c-lpm`, or for a sweep's
    /// `lpm-10K/64B/1K c`.
    pub fn name(&self) -> String {
        unit_name(self.config, self.cell.as_ref())
    }
}

fn unit_name(config: Config, cell: Option<&Cell>) -> String {
    match cell {
        Some(cell) => format!("{} {}", cell.key(), config.forwarder.id()),
        None => config.id(),
    }
}

/// The logs of `config`'s (in `cell`) round `round`: its
/// [`testkit::log_files`], and `.json` for l3fwd-rs's `--stats-json`.
pub fn log(logs: &Path, config: Config, cell: Option<&Cell>, round: u32) -> PathBuf {
    let name = unit_name(config, cell).replace(['/', ' '], "-");
    logs.join(format!("{name}-r{round}"))
}

/// A configuration on its traffic, ready to run.
pub struct Unit {
    pub config: Config,
    pub cell: Option<Cell>,
    /// Its program, or why it has none (`C n/a: ...`).
    pub program: Result<PathBuf, String>,
    /// Its rule and pcap files, or why there are none.
    pub files: Result<Files, String>,
    pub pool: Pool,
    pub timing: Timing,
    /// A slow starter (a large table) may wait paused (SIGSTOP) for its
    /// next round instead of starting again, if no other unit waits.
    pub may_keep: bool,
}

impl Unit {
    /// Its command line with EAL file prefix `prefix`, on its release, and
    /// how to stop it.
    pub fn command(&self, prefix: &str) -> Result<(Command, Stop), String> {
        let (program, files) = (self.program.as_ref()?, self.files.as_ref()?);
        let (cmd, stop) = command::command(self.config, program, files, &self.pool, prefix);
        Ok((self.config.release().command(cmd), stop))
    }

    fn label(&self) -> String {
        match &self.cell {
            Some(cell) => format!("{cell}, {}", self.config.forwarder.label()),
            None => self.config.label(),
        }
    }
}

/// A forwarder that took longer than this to forward is kept for its next
/// round when its unit may be: on hugepages the C sample takes 3-4 min to
/// add 1M routes.
const KEEP_AFTER_SECS: f64 = 30.0;

/// The runs so far, their progress and failures.
pub struct Engine {
    logs: PathBuf,
    rounds: u32,
    progress: Progress,
    pub failures: Failures,
    /// Runs made: each gets an EAL file prefix of its own.
    n: usize,
}

impl Engine {
    /// For `total` runs of `rounds` rounds, logs in `logs`.
    pub fn new(total: usize, rounds: u32, logs: &Path) -> Result<Engine, String> {
        std::fs::create_dir_all(logs).map_err(|e| format!("{}: {e}", logs.display()))?;
        Ok(Engine {
            logs: logs.to_owned(),
            rounds,
            progress: Progress::new(total),
            failures: Failures::new(),
            n: 0,
        })
    }

    /// Counts runs carried from an earlier report (a failed one still
    /// fails the command), `from` naming it.
    pub fn carried(&mut self, runs: &[Run], from: &str) {
        for run in runs {
            let log = log(&self.logs, run.config, run.cell.as_ref(), run.round);
            let who = format!("{} round {} (kept from the sweep of {from})", run.name(), run.round);
            self.failures.count(who, &log, &run.result);
        }
    }

    /// Runs each of `units` once per round, in turn; their runs.
    pub fn run(&mut self, units: &[Unit]) -> Result<Vec<Run>, String> {
        let mut runs = Vec::with_capacity(units.len() * self.rounds as usize);
        // Per unit: its process paused since the last round, and its log.
        // One at most: the hugepages hold two runs.
        let mut kept: Vec<Option<(Forwarding, PathBuf)>> = units.iter().map(|_| None).collect();
        for round in 1..=self.rounds {
            for (i, unit) in units.iter().enumerate() {
                if interrupt::interrupted() {
                    return Err("interrupted".into());
                }
                let another_kept = kept.iter().enumerate().any(|(j, k)| j != i && k.is_some());
                let may_keep = unit.may_keep && round < self.rounds && !another_kept;
                let resumed = kept[i].is_some();
                let log = match &kept[i] {
                    Some((_, log)) => log.clone(),
                    None => log(&self.logs, unit.config, unit.cell.as_ref(), round),
                };
                self.progress.start(format!("{} round {round}", unit.label()));
                let result = self.measure(unit, &log, &mut kept[i], may_keep);
                self.progress.done(&match &result {
                    Ok(s) => {
                        let start = match resumed {
                            true => "resumed from the last round".to_string(),
                            false => format!("first TX after {:.2} s", s.first_tx_secs),
                        };
                        let paused = if kept[i].is_some() {
                            "; paused for the next round"
                        } else {
                            ""
                        };
                        format!("{:.2} Mpps, {start}, {:.0} MB resident{paused}", s.mpps, s.rss_mb)
                    }
                    Err(e) => format!("FAILED: {e}{}", failures::logs_note(&log)),
                });
                if result.is_ok() && kept[i].is_none() {
                    trim_logs(&log);
                }
                let run = Run {
                    config: unit.config,
                    cell: unit.cell,
                    round,
                    result,
                };
                self.failures
                    .count(format!("{} round {round}", run.name()), &log, &run.result);
                runs.push(run);
            }
        }
        Ok(runs)
    }

    /// One round of `unit`: in the process `kept` paused from the last
    /// round if there is one, else in a new one. If `may_keep`, a process
    /// slow to start is paused into `kept` for the next round, not stopped.
    fn measure(
        &mut self,
        unit: &Unit,
        log: &Path,
        kept: &mut Option<(Forwarding, PathBuf)>,
        may_keep: bool,
    ) -> Result<Sample, String> {
        let config = unit.config;
        // l3fwd-rs's own counters: what its lcores spend per packet.
        let stats_json = (config.forwarder == Forwarder::Rs).then(|| PathBuf::from(format!("{}.json", log.display())));
        let mut forwarding = match kept.take() {
            Some((forwarding, _)) => {
                forwarding.resume()?;
                forwarding
            }
            None => {
                let prefix = format!("l3fwd-bench-{}-{}", std::process::id(), self.n);
                let (mut cmd, stop) = unit.command(&prefix)?;
                self.n += 1;
                if let Some(file) = &stats_json {
                    let _ = std::fs::remove_file(file); // one an earlier run left
                    cmd.arg("--stats-json").arg(file);
                }
                Forwarding::start(cmd, stop, &prefix, log, unit.timing.start_timeout)?
            }
        };
        let sample = forwarding.sample(&unit.timing);
        if sample.is_ok() && may_keep && forwarding.first_tx_secs > KEEP_AFTER_SECS {
            forwarding.pause()?;
            *kept = Some((forwarding, log.to_owned()));
            return sample;
        }
        let stopped = forwarding.stop();
        run::stopped_after(sample, stopped).map(|s| Sample {
            cycles_per_packet: stats_json.as_deref().and_then(run::cycles_per_packet),
            ..s
        })
    }

    /// The failures of every run so far.
    pub fn finish(self) -> Failures {
        drop(self.progress);
        self.failures
    }
}

/// Logs of successful runs keep only their end: the C sample logs every
/// route it adds (50 MB for 1M routes, per run).
fn trim_logs(logs: &Path) {
    const KEEP: usize = 64 << 10;
    for log in testkit::log_files(logs) {
        let Ok(text) = std::fs::read(&log) else {
            continue;
        };
        if text.len() > 2 * KEEP {
            let mut kept = format!("[l3fwd-bench: {} bytes trimmed]\n", text.len() - KEEP).into_bytes();
            kept.extend_from_slice(&text[text.len() - KEEP..]);
            let _ = std::fs::write(&log, kept);
        }
    }
}
