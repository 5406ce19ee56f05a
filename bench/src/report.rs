//! The one report of every rate command, make bench's and a sweep's:
//! every run, and a summary of each unit's runs (make bench's
//! configurations, a sweep's cells): medians, spreads, ratios of medians
//! and the work above testpmd io; written as JSON and printed as a table.

use crate::command::Ports;
use crate::configs::{Config, Forwarder, Variant};
pub use crate::engine::Run;
use crate::grid::{format_count, Cell};
use crate::machine::Machine;
use crate::mode::Mode;
use crate::run::Sample;
use crate::stats;
use crate::traffic::ScaleSizes;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

/// The one report of every rate command: make bench's (a summary per
/// configuration, the key ratios) and a sweep's (a summary per cell).
#[derive(Serialize, Deserialize, PartialEq, Debug)]
pub struct Report {
    pub timestamp: String,
    pub machine: Machine,
    pub settings: Settings,
    /// Every run of every round, in the order they ran.
    pub runs: Vec<RunRecord>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub configs: Vec<ConfigSummary>,
    /// See `stats::RATIOS`; keys like "rs-lpm/c-lpm".
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub ratios: BTreeMap<String, f64>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cells: Vec<CellSummary>,
}

impl Report {
    /// The report of `runs`: a summary per configuration of `selected`
    /// and their key ratios (make bench), or per cell of `cells` (a sweep).
    pub fn new(
        settings: Settings,
        machine: Machine,
        timestamp: String,
        selected: &[Config],
        cells: &[Cell],
        runs: &[Run],
    ) -> Report {
        let medians: BTreeMap<Config, f64> = selected
            .iter()
            .filter_map(|&c| Some((c, Rates::of_unit(runs, None, c).median_mpps?)))
            .collect();
        Report {
            runs: runs.iter().map(RunRecord::of).collect(),
            configs: selected
                .iter()
                .map(|&c| ConfigSummary::new(c, runs, &medians))
                .collect(),
            ratios: stats::ratios(&medians),
            cells: cells
                .iter()
                .map(|&cell| CellSummary::new(cell, runs, machine.cpu_mhz))
                .collect(),
            timestamp,
            machine,
            settings,
        }
    }

    /// Reads a report. The runs of sweeps written before the schema was
    /// shared name their forwarder alone (`c`): they get their
    /// configuration's id (`c-lpm`), the mode being their cell's.
    pub fn read(path: &Path) -> Result<Report, String> {
        let mut report: Report = crate::files::read_json(path)?;
        for run in &mut report.runs {
            let forwarder = [Forwarder::C, Forwarder::Rs, Forwarder::Io]
                .into_iter()
                .find(|f| f.id() == run.config);
            if let Some(config) = forwarder.and_then(|f| cell_config(run.cell.as_deref()?, f)) {
                run.config = config.id();
            }
        }
        Ok(report)
    }

    /// A sweep's, not make bench's.
    pub fn is_sweep(&self) -> bool {
        !self.cells.is_empty() || !self.settings.tables.is_empty()
    }

    /// The table printed after the runs: make bench's a line per
    /// configuration, a sweep's a line per cell (a block per table); each
    /// unit's median and min..max alike, and its failures.
    pub fn table(&self) -> String {
        let lines = if self.is_sweep() {
            self.cell_lines()
        } else {
            self.config_lines()
        };
        lines.join("\n")
    }

    fn config_lines(&self) -> Vec<String> {
        let mut lines = vec![self.settings.setup_line()];
        // As wide as the longest label, so that no name shifts its row.
        let w = self
            .configs
            .iter()
            .map(|c| c.label.len())
            .fold("configuration".len(), usize::max);
        lines.push(format!(
            "{:<w$} {:>11} {:>15} {:>5} {:>7} {:>7} {:>10} {:>7} {:>8}",
            "configuration", "median Mpps", "min..max", "runs", "vs C", "of I/O", "first TX s", "RSS MB", "cyc/pkt"
        ));
        for summary in &self.configs {
            let (label, c) = (&summary.label, &summary.rates);
            let runs = format!("{}/{}", c.ok_runs, c.runs);
            let Some(rates) = c.columns(11) else {
                let why = c.error.as_deref().unwrap_or("");
                lines.push(format!("{label:<w$} {:>11} {:>15} {:>5}   {why}", "failed", "", runs));
                continue;
            };
            let vs_c = summary.vs_c.map_or("-".into(), |r| format!("{r:.3}"));
            let of_io = summary.of_io.map_or("-".into(), |r| format!("{:.1}%", r * 100.0));
            let first_tx = c.first_tx_secs.map_or("-".into(), |s| format!("{s:.2}"));
            let rss = c.rss_mb.map_or("-".into(), |mb| format!("{mb:.0}"));
            let cycles = c.cycles_per_packet.map_or("-".into(), |n| format!("{n:.1}"));
            lines.push(format!(
                "{label:<w$} {rates} {runs:>5} {vs_c:>7} {of_io:>7} {first_tx:>10} {rss:>7} {cycles:>8}"
            ));
            if let Some(e) = c.failure() {
                lines.push(format!("{:<w$} some runs failed: {e}", ""));
            }
        }
        lines.push(
            "\nfirst TX s: from starting the process to telemetry first showing a packet sent\n\
             (rule files read, tables built, mbuf pools filled, ports started); RSS MB: peak.\n\
             cyc/pkt: l3fwd-rs's busy TSC cycles per packet on its forwarding lcores (eventdev: the\n\
             workers'; the scheduler's service core is not in it), over the whole run.\n"
                .into(),
        );
        let ratios = self.ratio_lines();
        if !ratios.is_empty() {
            lines.push("key ratios (of medians):".into());
            lines.extend(ratios.iter().map(|line| format!("  {line}")));
        }
        lines
    }

    /// `NAME  RATIO  (+N.N%)` for each key ratio both of whose
    /// configurations were measured.
    fn ratio_lines(&self) -> Vec<String> {
        let measured = self.configs.iter().filter_map(|c| Config::parse(&c.config));
        let ratios = stats::ratio_pairs_on(measured).into_iter().filter_map(|(num, den)| {
            let r = self.ratios.get(&stats::ratio_key(num, den))?;
            Some((format!("{} / {}", num.label(), den.label()), *r))
        });
        let ratios: Vec<(String, f64)> = ratios.collect();
        let w = ratios.iter().map(|(name, _)| name.len()).max().unwrap_or(0);
        ratios
            .iter()
            .map(|(name, r)| format!("{name:<w$} {r:.3}  ({:+.1}%)", (r - 1.0) * 100.0))
            .collect()
    }

    fn cell_lines(&self) -> Vec<String> {
        let mut lines = Vec::new();
        let mut tables: Vec<&str> = self.cells.iter().map(|c| c.table.as_str()).collect();
        tables.dedup();
        let with_io = self.cells.iter().any(|c| c.io.is_some());
        for table in tables {
            let cells: Vec<&CellSummary> = self.cells.iter().filter(|c| c.table == table).collect();
            lines.push(format!("\n{}", cells[0].table_label));
            let io = match with_io {
                true => "   io Mpps  C cyc>io rs cyc>io  C/rs work",
                false => "",
            };
            lines.push(format!(
                "{:>6} {:>6} {:>9} {:>15} {:>9} {:>15} {:>8}{io}",
                "size", "flows", "C Mpps", "C min..max", "rs Mpps", "rs min..max", "rs/C"
            ));
            let rates = |r: &Rates| r.columns(9).unwrap_or_else(|| format!("{:>9} {:>15}", "n/a", ""));
            for c in &cells {
                let ratio = match (c.ratio, &c.c.median_mpps, &c.rs.median_mpps) {
                    (Some(r), _, _) => format!("{r:.3}"),
                    (None, None, _) => "C n/a".into(),
                    (None, _, _) => "rs n/a".into(),
                };
                let io = match (c.io.as_ref().map(|io| io.median_mpps), c.above_io) {
                    (Some(Some(mpps)), Some(a)) => format!(
                        " {mpps:>9.2} {:>9.1} {:>9.1} {:>10.2}",
                        a.c_cycles, a.rs_cycles, a.c_over_rs
                    ),
                    (Some(Some(mpps)), None) => format!(" {mpps:>9.2} {:>9} {:>9} {:>10}", "n/a", "n/a", "n/a"),
                    (Some(None), _) => format!(" {:>9}", "n/a"),
                    (None, _) => String::new(),
                };
                let (size, flows) = (c.size, format_count(c.flows));
                lines.push(format!(
                    "{size:>6} {flows:>6} {} {} {ratio:>8}{io}",
                    rates(&c.c),
                    rates(&c.rs)
                ));
            }
            for c in &cells {
                for (who, rates) in [("C", Some(&c.c)), ("rs", Some(&c.rs)), ("io", c.io.as_ref())] {
                    if let Some((rates, e)) = rates.and_then(|r| Some((r, r.failure()?))) {
                        let failed = rates.runs - rates.ok_runs;
                        lines.push(format!("  {} {who}: {failed}/{} runs failed: {e}", c.cell, rates.runs));
                    }
                }
            }
        }
        lines.push(self.settings.setup_line());
        lines.push("Mpps: TX packets of both ports per second, median over rounds; rs/C: ratio of the medians.".into());
        if with_io {
            lines.push(
                "io: testpmd --forward-mode=io on the same ports and traffic, no lookup: the floor under both.".into(),
            );
            lines.push(format!(
                "cyc>io: cycles per packet each forwarder spends above that floor, at {:.0} MHz (its own work); \
                 C/rs work: C's over l3fwd-rs's, the headline.",
                self.machine.cpu_mhz
            ));
        }
        lines
    }
}

/// What `forwarder` ran in the sweep cell `cell` (`lpm-10K/64B/1K`): its
/// table's mode, no variant.
pub fn cell_config(cell: &str, forwarder: Forwarder) -> Option<Config> {
    let mode = Mode::parse(cell.split(['-', '/']).next()?).ok()?;
    Some(Config::new(forwarder, mode, Variant::Default, false))
}

/// How the runs were made, and what ran: make bench's frames, selection
/// and scale, or a sweep's grid.
#[derive(Serialize, Deserialize, PartialEq, Debug, Clone, Default)]
pub struct Settings {
    pub rounds: u32,
    pub warmup_secs: f64,
    pub window_secs: f64,
    /// EAL's memory: `hugepages 2MB x N` or `no-huge (why)` (older reports: none).
    #[serde(default)]
    pub memory: String,
    /// EAL's maximum SIMD bitwidth, if `--simd-bitwidth` set one (else
    /// EAL's default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub simd_bitwidth: Option<u16>,
    /// The ring primers' frames, if `--ring-frames` set them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ring_frames: Option<u16>,
    /// The ports forwarded between (older reports: pcap).
    #[serde(default, skip_serializing_if = "Ports::is_pcap")]
    pub ports: Ports,
    /// Frames in each port's pcap file on the default tables.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub frames: usize,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub selected: Vec<String>,
    /// The large tables and traffic, when a scale configuration ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scale: Option<ScaleSizes>,
    /// A sweep's frame sizes with FCS (pcap frames are 4 bytes shorter)...
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sizes: Vec<u32>,
    /// ...flow counts...
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub flows: Vec<usize>,
    /// ...and table ids: `lpm-10K`, `em`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tables: Vec<String>,
    /// The sweeps (their timestamps) whose complete cells `--resume` carried
    /// into this one.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resumed_from: Vec<String>,
}

impl Settings {
    /// The memory and ports the runs had, the line above or below a table.
    fn setup_line(&self) -> String {
        let simd = self
            .simd_bitwidth
            .map(|bits| format!("; max SIMD bitwidth: {bits}"))
            .unwrap_or_default();
        let prime = (self.ring_frames)
            .map(|n| format!(" primed with {n} frames each"))
            .unwrap_or_default();
        format!("\nmemory: {}; ports: {}{prime}{simd}", self.memory, self.ports.id())
    }
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// One run: what it measured, or why there is nothing.
#[derive(Serialize, Deserialize, PartialEq, Debug, Clone)]
pub struct RunRecord {
    /// The sweep cell it ran in (`lpm-10K/64B/1K`); none: make bench's tables.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cell: Option<String>,
    /// The configuration's id; older sweeps name the forwarder alone (`c`).
    #[serde(alias = "forwarder")]
    pub config: String,
    pub round: u32,
    pub mpps: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_tx_secs: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rss_mb: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cycles_per_packet: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl RunRecord {
    fn of(run: &Run) -> RunRecord {
        let ok = run.result.as_ref().ok();
        RunRecord {
            cell: run.cell.map(|c| c.key()),
            config: run.config.id(),
            round: run.round,
            mpps: ok.map(|s| s.mpps),
            first_tx_secs: ok.map(|s| s.first_tx_secs),
            rss_mb: ok.map(|s| s.rss_mb),
            cycles_per_packet: ok.and_then(|s| s.cycles_per_packet),
            error: run.result.as_ref().err().cloned(),
        }
    }

    /// The forwarder's id: `c`, `rs` or `io`.
    pub fn forwarder(&self) -> &str {
        self.config.split('-').next().unwrap_or_default()
    }

    /// What it recorded, as the run returned it (a sweep's `--resume`).
    pub fn result(&self) -> Result<Sample, String> {
        match (self.mpps, &self.error) {
            (Some(mpps), None) => Ok(Sample {
                mpps,
                first_tx_secs: self.first_tx_secs.unwrap_or(0.0),
                rss_mb: self.rss_mb.unwrap_or(0.0),
                cycles_per_packet: self.cycles_per_packet,
            }),
            (_, error) => Err(error.clone().unwrap_or_else(|| "no rate recorded".into())),
        }
    }
}

/// One configuration's (in a sweep: one forwarder's in one cell) runs:
/// medians and spread over rounds.
#[derive(Serialize, Deserialize, PartialEq, Debug, Default)]
pub struct Rates {
    pub runs: usize,
    pub ok_runs: usize,
    pub median_mpps: Option<f64>,
    pub min_mpps: Option<f64>,
    pub max_mpps: Option<f64>,
    /// Median seconds from start to the first packet sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_tx_secs: Option<f64>,
    /// Median peak resident memory, MB.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rss_mb: Option<f64>,
    /// l3fwd-rs only: median busy cycles per packet of its lcores (in
    /// eventdev mode, the workers': the scheduler's service core is not
    /// counted).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cycles_per_packet: Option<f64>,
    /// The last failure, if any run failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl Rates {
    /// The rates of one unit: `config`'s runs in `cell` (none: make
    /// bench's tables).
    fn of_unit(runs: &[Run], cell: Option<Cell>, config: Config) -> Rates {
        let mine = runs.iter().filter(|r| r.cell == cell && r.config == config);
        Rates::of(mine.map(|r| &r.result))
    }

    fn of<'a>(results: impl Iterator<Item = &'a Result<Sample, String>>) -> Rates {
        let results: Vec<_> = results.collect();
        let ok: Vec<&Sample> = results.iter().filter_map(|r| r.as_ref().ok()).collect();
        let values = |field: fn(&Sample) -> Option<f64>| ok.iter().filter_map(|s| field(s)).collect::<Vec<_>>();
        let spread = stats::spread(&values(|s| Some(s.mpps)));
        Rates {
            runs: results.len(),
            ok_runs: ok.len(),
            median_mpps: spread.map(|s| s.median),
            min_mpps: spread.map(|s| s.min),
            max_mpps: spread.map(|s| s.max),
            first_tx_secs: stats::median(&values(|s| Some(s.first_tx_secs))),
            rss_mb: stats::median(&values(|s| Some(s.rss_mb))),
            cycles_per_packet: stats::median(&values(|s| s.cycles_per_packet)),
            error: results.iter().rev().find_map(|r| r.as_ref().err().cloned()),
        }
    }

    /// Median and min..max, the median `width` wide; none if no run
    /// succeeded.
    fn columns(&self, width: usize) -> Option<String> {
        let (median, min, max) = (self.median_mpps?, self.min_mpps?, self.max_mpps?);
        Some(format!("{median:>width$.2} {:>15}", format!("{min:.2}..{max:.2}")))
    }

    /// The last failure, when some runs failed.
    fn failure(&self) -> Option<&str> {
        self.error.as_deref().filter(|_| self.ok_runs < self.runs)
    }
}

/// One configuration's runs on make bench's tables.
#[derive(Serialize, Deserialize, PartialEq, Debug)]
pub struct ConfigSummary {
    pub config: String,
    pub label: String,
    #[serde(flatten)]
    pub rates: Rates,
    /// Median over the median of the C sample in the same mode.
    pub vs_c: Option<f64>,
    /// Median over testpmd's (the I/O ceiling).
    pub of_io: Option<f64>,
}

impl ConfigSummary {
    /// `config`'s runs, against the `medians` of the others.
    fn new(config: Config, runs: &[Run], medians: &BTreeMap<Config, f64>) -> ConfigSummary {
        let median = |c: Option<Config>| medians.get(&c?).copied();
        let floor = (config.forwarder != Forwarder::Io).then(|| config.floor());
        ConfigSummary {
            config: config.id(),
            label: config.label(),
            rates: Rates::of_unit(runs, None, config),
            vs_c: over(median(Some(config)), median(config.reference())),
            of_io: over(median(Some(config)), median(floor)),
        }
    }
}

/// One sweep cell's runs: each forwarder's rates, l3fwd-rs over C, and
/// the work of each above testpmd io.
#[derive(Serialize, Deserialize, PartialEq, Debug)]
pub struct CellSummary {
    /// `lpm-10K/64B/1K`: what a baseline is matched by.
    pub cell: String,
    pub table: String,
    pub table_label: String,
    pub size: u32,
    pub flows: usize,
    /// Routes or rules in the IPv4 table.
    pub rules: usize,
    /// mbufs per pool, both forwarders.
    pub mbufs: usize,
    pub c: Rates,
    pub rs: Rates,
    /// testpmd io, when the sweep ran it (not `--no-io`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub io: Option<Rates>,
    /// l3fwd-rs median over C median; none if either has no successful run.
    pub ratio: Option<f64>,
    /// The work each forwarder adds above testpmd io's floor (not `--no-io`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub above_io: Option<AboveIo>,
}

impl CellSummary {
    /// `cell`'s runs, on a clock of `mhz`.
    fn new(cell: Cell, runs: &[Run], mhz: f64) -> CellSummary {
        let rates = |forwarder| Rates::of_unit(runs, Some(cell), cell.config(forwarder));
        let (c, rs, io) = (rates(Forwarder::C), rates(Forwarder::Rs), rates(Forwarder::Io));
        let io = (io.runs > 0).then_some(io);
        CellSummary {
            cell: cell.key(),
            table: cell.table.id(),
            table_label: cell.table.label(),
            size: cell.size,
            flows: cell.flows,
            rules: cell.rules(),
            mbufs: cell.mbufs(),
            ratio: over(rs.median_mpps, c.median_mpps),
            above_io: io
                .as_ref()
                .and_then(|io| AboveIo::of(mhz, c.median_mpps, rs.median_mpps, io.median_mpps)),
            c,
            rs,
            io,
        }
    }
}

/// A ratio of medians; none unless both were measured.
fn over(num: Option<f64>, den: Option<f64>) -> Option<f64> {
    Some(num? / den.filter(|&den| den > 0.0)?)
}

/// Cycles per packet above testpmd io: what a forwarder spends on its own
/// work (parse, lookup, rewrite, buffering) on top of the ports' I/O, which
/// both pay alike. rs/C hides it where both sit near the floor.
#[derive(Serialize, Deserialize, PartialEq, Debug, Clone, Copy)]
pub struct AboveIo {
    pub c_cycles: f64,
    pub rs_cycles: f64,
    /// C's work over l3fwd-rs's: above 1, l3fwd-rs does less.
    pub c_over_rs: f64,
}

impl AboveIo {
    /// From the median rates of one lcore forwarding and of testpmd io, at
    /// a clock of `mhz`: cycles per packet are MHz / Mpps.
    pub fn of(mhz: f64, c_mpps: Option<f64>, rs_mpps: Option<f64>, io_mpps: Option<f64>) -> Option<AboveIo> {
        let io = io_mpps.filter(|&io| io > 0.0 && mhz > 0.0)?;
        // At or above the floor (within its noise) there is no work to compare.
        let above = |mpps: f64| Some(mhz / mpps - mhz / io).filter(|&cycles| mpps > 0.0 && cycles > 0.0);
        let (c_cycles, rs_cycles) = (above(c_mpps?)?, above(rs_mpps?)?);
        Some(AboveIo {
            c_cycles,
            rs_cycles,
            c_over_rs: c_cycles / rs_cycles,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::configs::tests::config;

    fn ok(mpps: f64) -> Result<Sample, String> {
        Ok(Sample {
            mpps,
            first_tx_secs: mpps / 10.0,
            rss_mb: 100.0,
            cycles_per_packet: None,
        })
    }

    fn sample() -> Report {
        let runs = [
            Run {
                config: config("c-lpm"),
                cell: None,
                round: 1,
                result: ok(20.0),
            },
            Run {
                config: config("rs-lpm"),
                cell: None,
                round: 1,
                result: ok(25.0),
            },
            Run {
                config: config("io"),
                cell: None,
                round: 1,
                result: ok(40.0),
            },
            Run {
                config: config("rs-em"),
                cell: None,
                round: 1,
                result: Err("exited early".into()),
            },
        ];
        let settings = Settings {
            rounds: 1,
            warmup_secs: 2.0,
            window_secs: 3.0,
            frames: 1024,
            memory: "no-huge (not root)".into(),
            ..Settings::default()
        };
        let machine = Machine::test();
        let selected = [config("c-lpm"), config("rs-lpm"), config("rs-em"), config("io")];
        Report::new(settings, machine, "2025-01-01T00:00:00Z".into(), &selected, &[], &runs)
    }

    #[test]
    fn summaries_and_ratios() {
        let r = sample();
        assert_eq!(r.ratios.get("rs-lpm/c-lpm"), Some(&1.25));
        assert_eq!(r.ratios.get("rs-lpm/io"), Some(&0.625));
        assert!(!r.ratios.contains_key("rs-em/io"));
        let em = &r.configs[2].rates;
        assert_eq!((em.ok_runs, em.runs, em.median_mpps), (0, 1, None));
        assert_eq!(em.error.as_deref(), Some("exited early"));
        assert_eq!(r.configs[1].vs_c, Some(1.25));
        assert_eq!(
            (r.configs[1].rates.first_tx_secs, r.configs[1].rates.rss_mb),
            (Some(2.5), Some(100.0))
        );
        assert_eq!(r.configs[3].of_io, None);
    }

    #[test]
    fn key_ratios_are_the_measured_pairs_only() {
        let lines = sample().ratio_lines();
        assert!(lines.iter().any(|l| l.contains("1.250  (+25.0%)")), "{lines:?}");
        let mut only_em = sample();
        only_em.configs.retain(|c| c.config == "rs-em");
        only_em.ratios.clear();
        assert!(only_em.ratio_lines().is_empty(), "a heading with nothing under it");
    }

    /// A make bench report written before the schema was shared (every
    /// field of a summary at its top level) is still a baseline.
    #[test]
    fn older_reports_are_read() {
        let old = r#"{"timestamp": "t", "machine": {"nproc": 2, "cpu_model": "m", "cpu_mhz": 2000.0},
            "settings": {"rounds": 1, "warmup_secs": 2.0, "window_secs": 3.0, "frames": 1024,
                "selected": ["rs-lpm"]},
            "runs": [{"config": "rs-lpm", "round": 1, "mpps": 25.0}],
            "configs": [{"config": "rs-lpm", "label": "l3fwd-rs LPM", "runs": 1, "ok_runs": 1,
                "median_mpps": 25.0, "min_mpps": 25.0, "max_mpps": 25.0, "vs_c": null, "of_io": null,
                "first_tx_secs": 0.3, "rss_mb": null}],
            "ratios": {}}"#;
        let r: Report = serde_json::from_str(old).unwrap();
        assert!(!r.is_sweep());
        assert_eq!(r.configs[0].rates.median_mpps, Some(25.0));
        assert_eq!(r.configs[0].rates.first_tx_secs, Some(0.3));
        assert_eq!((r.runs[0].forwarder(), r.runs[0].cell.as_ref()), ("rs", None));
    }

    #[test]
    fn json_round_trip() {
        let r = sample();
        let text = serde_json::to_string_pretty(&r).unwrap();
        assert_eq!(serde_json::from_str::<Report>(&text).unwrap(), r);
    }

    #[test]
    fn work_above_the_io_floor_in_cycles_per_packet() {
        // At 2000 MHz: io 20 Mpps is 100 cycles a packet, C at 10 Mpps 200
        // (100 above), l3fwd-rs at 16 Mpps 125 (25 above): C does 4x the work.
        let a = AboveIo::of(2000.0, Some(10.0), Some(16.0), Some(20.0)).unwrap();
        assert!(
            (a.c_cycles - 100.0).abs() < 1e-9 && (a.rs_cycles - 25.0).abs() < 1e-9,
            "{a:?}"
        );
        assert!((a.c_over_rs - 4.0).abs() < 1e-9);
        assert_eq!(AboveIo::of(2000.0, None, Some(16.0), Some(20.0)), None);
        assert_eq!(
            AboveIo::of(0.0, Some(10.0), Some(16.0), Some(20.0)),
            None,
            "clock unknown"
        );
        assert_eq!(AboveIo::of(2000.0, Some(10.0), Some(16.0), None), None);
        assert_eq!(
            AboveIo::of(2000.0, Some(10.0), Some(21.0), Some(20.0)),
            None,
            "rs above the floor"
        );
    }
}
