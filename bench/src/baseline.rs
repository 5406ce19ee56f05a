//! Comparing this run's ratios with an earlier run's: the regression check.
//! Each ratio is compared over rounds ([`significance`]): a change counts
//! only when it is beyond the tolerance and significant.

use crate::configs::{Config, Forwarder};
use crate::report::{cell_config, Report, RunRecord};
use crate::significance::{self, Change, ALPHA};
use crate::stats::ratio_pairs_on;
use std::path::Path;
use std::process::ExitCode;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Verdict {
    Better,
    Same,
    Worse,
    /// Both configurations ran but the ratio could not be computed (a run failed).
    Missing,
}

impl Verdict {
    pub fn is_regression(self) -> bool {
        matches!(self, Verdict::Worse | Verdict::Missing)
    }
}

pub struct Comparison {
    pub name: String,
    /// l3fwd-rs over another forwarder: the ratio moves with l3fwd-rs's
    /// own rate (a slower l3fwd-rs build lowers it).
    pub tracks_rs: bool,
    /// None: no round of this run measured both configurations.
    pub change: Option<Change>,
    pub verdict: Verdict,
}

/// The baseline at `path` if one is given, read before any run (a bad
/// path should not cost minutes of runs): a report of the same kind as
/// this run's, a sweep's if `sweep`, else make bench's.
pub fn read(path: Option<&Path>, sweep: bool) -> Result<Option<(&Path, Report)>, String> {
    let Some(path) = path else {
        return Ok(None);
    };
    let old = Report::read(path)?;
    let (is, other) = (["make bench's", "`l3fwd-bench`"], ["a sweep's", "`l3fwd-bench sweep`"]);
    let [kind, command] = if sweep { is } else { other };
    if old.is_sweep() == sweep {
        return Ok(Some((path, old)));
    }
    Err(format!(
        "baseline {}: {kind} report: give it to {command} --baseline",
        path.display()
    ))
}

/// Prints the verdicts of `new` against the baseline `old` (and where it
/// was read): make bench's by ratio of configurations (those `selected`),
/// a sweep's by cell; the exit status, 2 if one is a regression.
pub fn status(old: Option<(&Path, Report)>, new: &Report, selected: &[Config], tolerance: f64) -> ExitCode {
    let Some((path, old)) = old else {
        return ExitCode::SUCCESS;
    };
    println!("\nagainst baseline {} ({}):", path.display(), old.timestamp);
    if let Some(why) = incomparable(&old, new) {
        println!("  no verdicts: {why}");
        return ExitCode::FAILURE;
    }
    let comparisons = if new.is_sweep() {
        compare_cells(&old, new, tolerance)
    } else {
        compare(&old.runs, &new.runs, selected, tolerance)
    };
    if comparisons.is_empty() {
        println!("  no {} in common", if new.is_sweep() { "cell" } else { "ratio" });
    }
    print(&comparisons, tolerance);
    let regressed = comparisons.iter().any(|c| c.verdict.is_regression());
    ExitCode::from(if regressed { 2 } else { 0 })
}

/// Why the baseline `old` cannot judge `new`, if it cannot: its runs went
/// through other ports (a ring port's rates are many times pcap's).
fn incomparable(old: &Report, new: &Report) -> Option<String> {
    let [was, is] = [old, new].map(|r| r.settings.ports.id());
    (was != is).then(|| format!("the baseline ran on {was} ports, these runs on {is}"))
}

/// Judges each ratio the baseline `old` measured whose configurations were
/// selected this time, from the per-round values of both runs.
pub fn compare(old: &[RunRecord], new: &[RunRecord], selected: &[Config], tolerance: f64) -> Vec<Comparison> {
    let pairs = ratio_pairs_on(selected.iter().copied())
        .into_iter()
        .filter(|(num, den)| selected.contains(num) && selected.contains(den))
        .map(|(num, den)| (format!("{} / {}", num.label(), den.label()), None, num, den));
    judge_all(old, new, pairs, tolerance)
}

/// Judges the l3fwd-rs / C ratio of each cell of the sweep `new` that the
/// sweep `old` has one for. A cell whose ratio is gone (a run failed)
/// counts as a regression, as in make bench.
pub fn compare_cells(old: &Report, new: &Report, tolerance: f64) -> Vec<Comparison> {
    let pairs = new.cells.iter().filter_map(|cell| {
        let config = |forwarder| cell_config(&cell.cell, forwarder);
        let name = format!("{} l3fwd-rs / C", cell.cell);
        Some((
            name,
            Some(cell.cell.as_str()),
            config(Forwarder::Rs)?,
            config(Forwarder::C)?,
        ))
    });
    judge_all(&old.runs, &new.runs, pairs, tolerance)
}

/// Judges each ratio (name, sweep cell or none, numerator, denominator)
/// that `old` has values of.
fn judge_all<'a>(
    old: &[RunRecord],
    new: &[RunRecord],
    pairs: impl Iterator<Item = (String, Option<&'a str>, Config, Config)>,
    tolerance: f64,
) -> Vec<Comparison> {
    pairs
        .filter_map(|(name, cell, num, den)| {
            let old = per_round(old, cell, num, den);
            if old.is_empty() {
                return None;
            }
            let change = significance::compare(&old, &per_round(new, cell, num, den));
            Some(Comparison {
                name,
                tracks_rs: num.is_rs() && !den.is_rs(),
                change,
                verdict: judge(change, tolerance),
            })
        })
        .collect()
}

/// The ratio `num / den` in each round where both ran (in `cell`).
fn per_round(runs: &[RunRecord], cell: Option<&str>, num: Config, den: Config) -> Vec<f64> {
    let rate = |config: Config| {
        move |round: u32| {
            runs.iter()
                .find(|r| r.config == config.id() && r.round == round && r.cell.as_deref() == cell)
                .and_then(|r| r.mpps)
        }
    };
    ratios_by_round(runs.iter().map(|r| r.round), rate(num), rate(den))
}

/// `num(round) / den(round)` for each distinct round of `rounds` where
/// both rates exist: the per-round values [`significance::compare`] takes.
fn ratios_by_round(
    rounds: impl Iterator<Item = u32>,
    num: impl Fn(u32) -> Option<f64>,
    den: impl Fn(u32) -> Option<f64>,
) -> Vec<f64> {
    let mut rounds: Vec<u32> = rounds.collect();
    rounds.sort_unstable();
    rounds.dedup();
    rounds
        .into_iter()
        .filter_map(|round| Some((num(round)?, den(round)?)))
        .filter(|&(_, d)| d > 0.0)
        .map(|(n, d)| n / d)
        .collect()
}

/// A change beyond `tolerance` (relative) that is significant is worse or
/// better; anything else is the same.
pub fn judge(change: Option<Change>, tolerance: f64) -> Verdict {
    match change {
        None => Verdict::Missing,
        Some(c) if c.change < -tolerance && c.p_fall <= ALPHA => Verdict::Worse,
        Some(c) if c.change > tolerance && c.p_rise <= ALPHA => Verdict::Better,
        Some(_) => Verdict::Same,
    }
}

pub fn print(comparisons: &[Comparison], tolerance: f64) {
    for c in comparisons {
        let Some(ch) = c.change else {
            println!("REGRESSION: {}: now not measured (runs failed)", c.name);
            continue;
        };
        let p = if ch.change < 0.0 { ch.p_fall } else { ch.p_rise };
        let detectable = if ch.detectable.is_finite() {
            format!("{:.1}%", ch.detectable * 100.0)
        } else {
            "none with so few rounds".to_owned()
        };
        let line = format!(
            "{}: {:.3} -> {:.3} ({:+.1}%, p {p:.3}), spread +-{:.1}%, detectable {detectable}",
            c.name,
            ch.old,
            ch.new,
            ch.change * 100.0,
            ch.spread * 100.0
        );
        match c.verdict {
            Verdict::Worse => println!("REGRESSION: {line}, tolerance {:.1}%", tolerance * 100.0),
            Verdict::Better => println!("better:     {line}"),
            _ if ch.change.abs() > tolerance => println!("same:       {line} (not significant)"),
            _ => println!("same:       {line}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::configs::tests::config;

    /// One schema, two kinds: each command takes a baseline of its own
    /// kind only, and says which command the other kind is for.
    #[test]
    fn a_baseline_is_of_the_same_kind_as_the_run() {
        let scratch = testkit::Scratch::new("l3fwd-bench-baseline");
        let path = scratch.path("l3fwd-bench-baseline.json");
        crate::files::write_json(&path, &crate::sweep::results::tests::sample()).unwrap();
        assert!(read(Some(&path), true).unwrap().unwrap().1.is_sweep());
        let err = read(Some(&path), false).unwrap_err();
        assert!(
            err.contains("a sweep's report: give it to `l3fwd-bench sweep` --baseline"),
            "{err}"
        );
    }

    /// Runs of `(config, [rate per round])`.
    fn runs(rates: &[(&str, &[f64])]) -> Vec<RunRecord> {
        rates
            .iter()
            .flat_map(|&(config, per_round)| {
                per_round.iter().enumerate().map(move |(i, &mpps)| RunRecord {
                    cell: None,
                    config: config.to_owned(),
                    round: i as u32 + 1,
                    mpps: (mpps > 0.0).then_some(mpps),
                    first_tx_secs: None,
                    rss_mb: None,
                    cycles_per_packet: None,
                    error: None,
                })
            })
            .collect()
    }

    #[test]
    fn verdicts_need_a_change_beyond_the_tolerance_and_significance() {
        let c = [10.0, 10.0, 10.0];
        let old = runs(&[
            ("c-lpm", &c),
            ("rs-lpm", &[14.0, 14.1, 13.9]),
            ("c-em", &c),
            ("rs-em", &[13.0, 13.1, 12.9]),
            ("rs-em-seq", &[12.0, 12.0, 12.0]),
            ("io", &[20.0, 20.0, 20.0]),
        ]);
        let new = runs(&[
            ("c-lpm", &c),
            ("rs-lpm", &[13.0, 13.1, 12.9]), // -7%, no overlap: worse
            ("c-em", &c),
            ("rs-em", &[0.0, 0.0, 0.0]),        // failed: missing
            ("rs-em-seq", &[11.0, 13.5, 11.1]), // -8% of medians, overlapping: same
            ("io", &[20.0, 20.0, 20.0]),
        ]);
        let all = crate::configs::all();
        let verdicts: Vec<(String, Verdict)> = compare(&old, &new, &all, 0.05)
            .into_iter()
            .map(|c| (c.name, c.verdict))
            .collect();
        let of = |name: &str| verdicts.iter().find(|(n, _)| n == name).map(|(_, v)| *v);
        assert_eq!(of("l3fwd-rs LPM / C l3fwd LPM"), Some(Verdict::Worse));
        assert_eq!(of("l3fwd-rs EM / C l3fwd EM"), Some(Verdict::Missing));
        assert_eq!(of("l3fwd-rs EM seq / C l3fwd EM"), Some(Verdict::Same));
        assert_eq!(
            of("l3fwd-rs LPM / testpmd io"),
            Some(Verdict::Worse),
            "0.70 -> 0.65, no overlap"
        );
        assert!(compare(&old, &new, &all, 0.10)
            .iter()
            .all(|c| c.verdict != Verdict::Worse));
    }

    #[test]
    fn unselected_ratios_are_not_judged() {
        let old = runs(&[
            ("c-lpm", &[10.0; 3]),
            ("rs-lpm", &[12.0; 3]),
            ("c-em", &[10.0; 3]),
            ("rs-em", &[12.0; 3]),
        ]);
        let new = runs(&[("c-lpm", &[10.0; 3]), ("rs-lpm", &[12.0; 3])]);
        let lpm_only = [config("c-lpm"), config("rs-lpm")];
        let c = compare(&old, &new, &lpm_only, 0.05);
        assert_eq!(c.len(), 1);
        assert!(!c[0].verdict.is_regression());
    }

    #[test]
    fn a_baseline_from_other_ports_judges_nothing() {
        let pcap = crate::sweep::results::tests::sample();
        let mut ring = crate::sweep::results::tests::sample();
        ring.settings.ports = crate::command::Ports::Ring;
        assert_eq!(incomparable(&pcap, &pcap), None);
        assert_eq!(
            incomparable(&pcap, &ring).as_deref(),
            Some("the baseline ran on pcap ports, these runs on ring")
        );
    }

    /// `sample()` with l3fwd-rs's rates in `cell` scaled by `factor`.
    fn scaled(cell: &str, factor: f64) -> Report {
        let mut report = crate::sweep::results::tests::sample();
        for r in report
            .runs
            .iter_mut()
            .filter(|r| r.cell.as_deref() == Some(cell) && r.forwarder() == "rs")
        {
            r.mpps = r.mpps.map(|m| m * factor);
        }
        report
    }

    #[test]
    fn a_ratio_fallen_beyond_tolerance_is_a_regression() {
        let old = crate::sweep::results::tests::sample();
        // lpm-16/64B/16 (ratios 1.3, 1.25, 1.27 by round) falls 8%, every
        // round below every old one; lpm-16/1518B/16 (1.2, 1.3, 1.25) 4%.
        let mut new = scaled("lpm-16/64B/16", 0.92);
        let fallen = scaled("lpm-16/1518B/16", 0.96);
        new.runs.retain(|r| r.cell.as_deref() != Some("lpm-16/1518B/16"));
        new.runs.extend(
            fallen
                .runs
                .into_iter()
                .filter(|r| r.cell.as_deref() == Some("lpm-16/1518B/16")),
        );
        let verdicts: Vec<(String, Verdict)> = compare_cells(&old, &new, 0.05)
            .into_iter()
            .map(|c| (c.name, c.verdict))
            .collect();
        assert_eq!(
            verdicts,
            [
                ("lpm-16/64B/16 l3fwd-rs / C".to_string(), Verdict::Worse),
                ("lpm-16/1518B/16 l3fwd-rs / C".to_string(), Verdict::Same),
            ],
            "the EM cell had no ratio before: not judged"
        );
        assert!(compare_cells(&old, &new, 0.10)
            .iter()
            .all(|c| !c.verdict.is_regression()));
    }

    #[test]
    fn lost_and_improved_cells() {
        let old = crate::sweep::results::tests::sample();
        let mut new = scaled("lpm-16/1518B/16", 1.5);
        new.runs
            .retain(|r| !(r.cell.as_deref() == Some("lpm-16/64B/16") && r.forwarder() == "rs"));
        new.cells.remove(2);
        let c = compare_cells(&old, &new, 0.05);
        assert_eq!(c[0].verdict, Verdict::Missing);
        assert!(c[0].verdict.is_regression());
        assert_eq!(c[1].verdict, Verdict::Better);
        let mut other = crate::sweep::results::tests::sample();
        for cell in &mut other.cells {
            cell.cell = format!("em/{}", cell.cell);
        }
        assert!(compare_cells(&old, &other, 0.05).is_empty(), "no cell in common");
    }
}
