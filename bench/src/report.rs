//! The benchmark's result: every run, per-configuration summaries and the ratios;
//! written as JSON and printed as a table.

use crate::configs::Config;
use crate::configs::Forwarder;
use crate::machine::Machine;
use crate::run::Sample;
use crate::stats;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

#[derive(Serialize, Deserialize, PartialEq, Debug)]
pub struct Report {
    pub timestamp: String,
    pub machine: Machine,
    pub settings: Settings,
    pub runs: Vec<RunRecord>,
    pub configs: Vec<ConfigSummary>,
    /// See `stats::RATIOS`; keys like "rs-lpm/c-lpm".
    pub ratios: BTreeMap<String, f64>,
}

#[derive(Serialize, Deserialize, PartialEq, Debug)]
pub struct Settings {
    pub rounds: u32,
    pub warmup_secs: f64,
    pub window_secs: f64,
    pub frames: usize,
    pub selected: Vec<String>,
    /// EAL's memory: `hugepages 2MB x N` or `no-huge` (older reports: none).
    #[serde(default)]
    pub memory: String,
    /// The large tables and traffic, when a scale configuration ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scale: Option<ScaleSettings>,
}

#[derive(Serialize, Deserialize, PartialEq, Debug)]
pub struct ScaleSettings {
    pub em_rules: usize,
    pub v4_routes: usize,
    pub v6_routes: usize,
    /// Frames per pcap file (flows per port).
    pub frames: usize,
    /// mbufs per pool, both forwarders.
    pub mbufs: u32,
}

#[derive(Serialize, Deserialize, PartialEq, Debug)]
pub struct RunRecord {
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

#[derive(Serialize, Deserialize, PartialEq, Debug)]
pub struct ConfigSummary {
    pub config: String,
    pub label: String,
    pub runs: usize,
    pub ok_runs: usize,
    pub median_mpps: Option<f64>,
    pub min_mpps: Option<f64>,
    pub max_mpps: Option<f64>,
    /// Median over the median of the C sample in the same mode.
    pub vs_c: Option<f64>,
    /// Median over testpmd's (the I/O ceiling).
    pub of_io: Option<f64>,
    /// Median seconds from start to the first packet sent.
    #[serde(default)]
    pub first_tx_secs: Option<f64>,
    /// Median peak resident memory, MB.
    #[serde(default)]
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

/// One run's outcome: what it measured or why there is nothing.
pub struct Run {
    pub config: Config,
    pub round: u32,
    pub result: Result<Sample, String>,
}

pub fn build(settings: Settings, machine: Machine, timestamp: String, selected: &[Config], runs: &[Run]) -> Report {
    let values = |c: Config, field: fn(&Sample) -> Option<f64>| -> Vec<f64> {
        runs.iter()
            .filter(|r| r.config == c)
            .filter_map(|r| r.result.as_ref().ok().and_then(field))
            .collect()
    };
    let spreads: BTreeMap<Config, stats::Spread> = selected
        .iter()
        .filter_map(|&c| Some((c, stats::spread(&values(c, |s| Some(s.mpps)))?)))
        .collect();
    let medians: BTreeMap<Config, f64> = spreads.iter().map(|(&c, s)| (c, s.median)).collect();
    let over = |num: Config, den: Option<Config>| Some(medians.get(&num)? / medians.get(&den?)?);

    let configs = selected
        .iter()
        .map(|&c| {
            let spread = spreads.get(&c);
            let mine: Vec<&Run> = runs.iter().filter(|r| r.config == c).collect();
            ConfigSummary {
                config: c.id(),
                label: c.label(),
                runs: mine.len(),
                ok_runs: mine.iter().filter(|r| r.result.is_ok()).count(),
                median_mpps: spread.map(|s| s.median),
                min_mpps: spread.map(|s| s.min),
                max_mpps: spread.map(|s| s.max),
                vs_c: over(c, c.reference()),
                of_io: over(c, (c.forwarder != Forwarder::Io).then(|| c.floor())),
                first_tx_secs: stats::median(&values(c, |s| Some(s.first_tx_secs))),
                rss_mb: stats::median(&values(c, |s| Some(s.rss_mb))),
                cycles_per_packet: stats::median(&values(c, |s| s.cycles_per_packet)),
                error: mine.iter().rev().find_map(|r| r.result.as_ref().err().cloned()),
            }
        })
        .collect();
    let runs = runs
        .iter()
        .map(|r| RunRecord {
            config: r.config.id(),
            round: r.round,
            mpps: r.result.as_ref().ok().map(|s| s.mpps),
            first_tx_secs: r.result.as_ref().ok().map(|s| s.first_tx_secs),
            rss_mb: r.result.as_ref().ok().map(|s| s.rss_mb),
            cycles_per_packet: r.result.as_ref().ok().and_then(|s| s.cycles_per_packet),
            error: r.result.as_ref().err().cloned(),
        })
        .collect();
    Report {
        timestamp,
        machine,
        settings,
        runs,
        configs,
        ratios: stats::ratios(&medians),
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
    for c in &report.configs {
        let runs = format!("{}/{}", c.ok_runs, c.runs);
        let (Some(median), Some(min), Some(max)) = (c.median_mpps, c.min_mpps, c.max_mpps) else {
            let why = c.error.as_deref().unwrap_or("");
            println!("{:<w$} {:>11} {:>15} {:>5}   {why}", c.label, "failed", "", runs);
            continue;
        };
        let vs_c = c.vs_c.map_or("-".into(), |r| format!("{r:.3}"));
        let of_io = c.of_io.map_or("-".into(), |r| format!("{:.1}%", r * 100.0));
        let first_tx = c.first_tx_secs.map_or("-".into(), |s| format!("{s:.2}"));
        let rss = c.rss_mb.map_or("-".into(), |mb| format!("{mb:.0}"));
        let cycles = c.cycles_per_packet.map_or("-".into(), |n| format!("{n:.1}"));
        let range = format!("{min:.2}..{max:.2}");
        println!(
            "{:<w$} {median:>11.2} {range:>15} {runs:>5} {vs_c:>7} {of_io:>7} {first_tx:>10} {rss:>7} {cycles:>8}",
            c.label
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
                round: 1,
                result: ok(20.0),
            },
            Run {
                config: config("rs-lpm"),
                round: 1,
                result: ok(25.0),
            },
            Run {
                config: config("io"),
                round: 1,
                result: ok(40.0),
            },
            Run {
                config: config("rs-em"),
                round: 1,
                result: Err("exited early".into()),
            },
        ];
        let settings = Settings {
            rounds: 1,
            warmup_secs: 2.0,
            window_secs: 3.0,
            frames: 1024,
            selected: vec![],
            memory: "no-huge (not root)".into(),
            scale: None,
        };
        let machine = Machine {
            nproc: 2,
            cpu_model: "test".into(),
            cpu_mhz: 2000.0,
        };
        let selected = [config("c-lpm"), config("rs-lpm"), config("rs-em"), config("io")];
        build(settings, machine, "2025-01-01T00:00:00Z".into(), &selected, &runs)
    }

    #[test]
    fn summaries_and_ratios() {
        let r = sample();
        assert_eq!(r.ratios.get("rs-lpm/c-lpm"), Some(&1.25));
        assert_eq!(r.ratios.get("rs-lpm/io"), Some(&0.625));
        assert!(!r.ratios.contains_key("rs-em/io"));
        let em = &r.configs[2];
        assert_eq!((em.ok_runs, em.runs, em.median_mpps), (0, 1, None));
        assert_eq!(em.error.as_deref(), Some("exited early"));
        assert_eq!(r.configs[1].vs_c, Some(1.25));
        assert_eq!(
            (r.configs[1].first_tx_secs, r.configs[1].rss_mb),
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

    #[test]
    fn json_round_trip() {
        let r = sample();
        let text = serde_json::to_string_pretty(&r).unwrap();
        assert_eq!(serde_json::from_str::<Report>(&text).unwrap(), r);
    }
}
