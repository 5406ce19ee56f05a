//! The benchmark's result: every run, per-configuration summaries and the ratios;
//! written as JSON and printed as a table.

use crate::configs::{Config, Forwarder, Variant};
pub use crate::engine::Run;
use crate::machine::Machine;
use crate::mode::Mode;
use crate::run::Sample;
use crate::stats;
pub use crate::sweep::results::CellSummary;
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
    /// Reads a report. The runs of sweeps written before the schema was
    /// shared name their forwarder alone (`c`): they get their
    /// configuration's id (`c-lpm`), the mode being their cell's.
    pub fn read(path: &Path) -> Result<Report, String> {
        let mut report: Report = crate::read_json(path)?;
        for run in &mut report.runs {
            let mode = run
                .cell
                .as_deref()
                .and_then(|cell| Mode::parse(cell.split(['-', '/']).next()?).ok());
            let forwarder = [Forwarder::C, Forwarder::Rs, Forwarder::Io]
                .into_iter()
                .find(|f| f.id() == run.config);
            if let (Some(mode), Some(forwarder)) = (mode, forwarder) {
                run.config = Config::new(forwarder, mode, Variant::Default, false).id();
            }
        }
        Ok(report)
    }

    /// A sweep's, not make bench's.
    pub fn is_sweep(&self) -> bool {
        !self.cells.is_empty() || !self.settings.tables.is_empty()
    }
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
    pub fn new(cell: Option<String>, config: Config, round: u32, result: &Result<Sample, String>) -> RunRecord {
        let ok = result.as_ref().ok();
        RunRecord {
            cell,
            config: config.id(),
            round,
            mpps: ok.map(|s| s.mpps),
            first_tx_secs: ok.map(|s| s.first_tx_secs),
            rss_mb: ok.map(|s| s.rss_mb),
            cycles_per_packet: ok.and_then(|s| s.cycles_per_packet),
            error: result.as_ref().err().cloned(),
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
    pub fn of<'a>(results: impl IntoIterator<Item = &'a Result<Sample, String>>) -> Rates {
        let results: Vec<_> = results.into_iter().collect();
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
}

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

pub fn build(settings: Settings, machine: Machine, timestamp: String, selected: &[Config], runs: &[Run]) -> Report {
    let rates = |c: Config| {
        Rates::of(
            runs.iter()
                .filter(|r| r.config == c && r.cell.is_none())
                .map(|r| &r.result),
        )
    };
    let medians: BTreeMap<Config, f64> = selected
        .iter()
        .filter_map(|&c| Some((c, rates(c).median_mpps?)))
        .collect();
    let over = |num: Config, den: Option<Config>| Some(medians.get(&num)? / medians.get(&den?)?);
    let configs = selected
        .iter()
        .map(|&c| ConfigSummary {
            config: c.id(),
            label: c.label(),
            rates: rates(c),
            vs_c: over(c, c.reference()),
            of_io: over(c, (c.forwarder != Forwarder::Io).then(|| c.floor())),
        })
        .collect();
    let runs = runs
        .iter()
        .map(|r| RunRecord::new(None, r.config, r.round, &r.result))
        .collect();
    Report {
        timestamp,
        machine,
        settings,
        runs,
        configs,
        ratios: stats::ratios(&medians),
        cells: Vec::new(),
    }
}

pub fn print_table(report: &Report) {
    println!("\nmemory: {}", report.settings.memory);
    // As wide as the longest label, so that no name shifts its row.
    let w = report
        .configs
        .iter()
        .map(|c| c.label.len())
        .fold("configuration".len(), usize::max);
    println!(
        "{:<w$} {:>11} {:>15} {:>5} {:>7} {:>7} {:>10} {:>7} {:>8}",
        "configuration", "median Mpps", "min..max", "runs", "vs C", "of I/O", "first TX s", "RSS MB", "cyc/pkt"
    );
    for summary in &report.configs {
        let (label, c) = (&summary.label, &summary.rates);
        let runs = format!("{}/{}", c.ok_runs, c.runs);
        let (Some(median), Some(min), Some(max)) = (c.median_mpps, c.min_mpps, c.max_mpps) else {
            let why = c.error.as_deref().unwrap_or("");
            println!("{label:<w$} {:>11} {:>15} {:>5}   {why}", "failed", "", runs);
            continue;
        };
        let vs_c = summary.vs_c.map_or("-".into(), |r| format!("{r:.3}"));
        let of_io = summary.of_io.map_or("-".into(), |r| format!("{:.1}%", r * 100.0));
        let first_tx = c.first_tx_secs.map_or("-".into(), |s| format!("{s:.2}"));
        let rss = c.rss_mb.map_or("-".into(), |mb| format!("{mb:.0}"));
        let cycles = c.cycles_per_packet.map_or("-".into(), |n| format!("{n:.1}"));
        let range = format!("{min:.2}..{max:.2}");
        println!(
            "{label:<w$} {median:>11.2} {range:>15} {runs:>5} {vs_c:>7} {of_io:>7} {first_tx:>10} {rss:>7} {cycles:>8}"
        );
        if let (true, Some(e)) = (c.ok_runs < c.runs, &c.error) {
            println!("{:<w$} some runs failed: {e}", "");
        }
    }
    println!();
    println!("first TX s: from starting the process to telemetry first showing a packet sent");
    println!("(rule files read, tables built, mbuf pools filled, ports started); RSS MB: peak.");
    println!("cyc/pkt: l3fwd-rs's busy TSC cycles per packet on its forwarding lcores (eventdev: the");
    println!("workers'; the scheduler's service core is not in it), over the whole run.");
    println!();
    let lines = ratio_lines(report);
    if !lines.is_empty() {
        println!("key ratios (of medians):");
        for line in lines {
            println!("  {line}");
        }
    }
}

/// `NAME  RATIO  (+N.N%)` for each key ratio both of whose configurations
/// were measured.
fn ratio_lines(report: &Report) -> Vec<String> {
    let measured = report.configs.iter().filter_map(|c| Config::parse(&c.config));
    let ratios = stats::ratio_pairs_on(measured).into_iter().filter_map(|(num, den)| {
        let r = report.ratios.get(&stats::ratio_key(num, den))?;
        Some((format!("{} / {}", num.label(), den.label()), *r))
    });
    let ratios: Vec<(String, f64)> = ratios.collect();
    let w = ratios.iter().map(|(name, _)| name.len()).max().unwrap_or(0);
    ratios
        .iter()
        .map(|(name, r)| format!("{name:<w$} {r:.3}  ({:+.1}%)", (r - 1.0) * 100.0))
        .collect()
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
        build(settings, machine, "2025-01-01T00:00:00Z".into(), &selected, &runs)
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
        let lines = ratio_lines(&sample());
        assert!(lines.iter().any(|l| l.contains("1.250  (+25.0%)")), "{lines:?}");
        let mut only_em = sample();
        only_em.configs.retain(|c| c.config == "rs-em");
        only_em.ratios.clear();
        assert!(ratio_lines(&only_em).is_empty(), "a heading with nothing under it");
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
}
