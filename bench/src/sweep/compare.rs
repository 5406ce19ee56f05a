//! A sweep against an earlier one, cell by cell: the l3fwd-rs / C ratio of
//! each cell both measured, over rounds, judged as `make bench` judges its
//! ratios.

use crate::baseline::{self, Comparison};
use crate::report::Report;
use crate::significance;

/// Each cell of `new` that `old` has a ratio for. A cell whose ratio is
/// gone (a run failed) counts as a regression, as in `make bench`.
pub fn compare(old: &Report, new: &Report, tolerance: f64) -> Vec<Comparison> {
    new.cells
        .iter()
        .filter_map(|cell| {
            let before = per_round(old, &cell.cell);
            if before.is_empty() {
                return None;
            }
            let change = significance::compare(&before, &per_round(new, &cell.cell));
            Some(Comparison {
                name: format!("{} l3fwd-rs / C", cell.cell),
                tracks_rs: true,
                change,
                verdict: baseline::judge(change, tolerance),
            })
        })
        .collect()
}

/// l3fwd-rs over C in each round of `cell` where both ran.
fn per_round(report: &Report, cell: &str) -> Vec<f64> {
    let rate = |forwarder: &'static str| {
        move |round: u32| {
            let run = report
                .runs
                .iter()
                .find(|r| r.cell.as_deref() == Some(cell) && r.forwarder() == forwarder && r.round == round);
            run.and_then(|r| r.mpps)
        }
    };
    baseline::ratios_by_round(report.runs.iter().map(|r| r.round), rate("rs"), rate("c"))
}

#[cfg(test)]
mod tests {
    use super::super::results::tests::sample;
    use super::*;
    use crate::baseline::Verdict;

    /// `sample()` with l3fwd-rs's rates in `cell` scaled by `factor`.
    fn scaled(cell: &str, factor: f64) -> Report {
        let mut report = sample();
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
        let old = sample();
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
        let verdicts: Vec<(String, Verdict)> = compare(&old, &new, 0.05)
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
        assert!(compare(&old, &new, 0.10).iter().all(|c| !c.verdict.is_regression()));
    }

    #[test]
    fn lost_and_improved_cells() {
        let old = sample();
        let mut new = scaled("lpm-16/1518B/16", 1.5);
        new.runs
            .retain(|r| !(r.cell.as_deref() == Some("lpm-16/64B/16") && r.forwarder() == "rs"));
        new.cells.remove(2);
        let c = compare(&old, &new, 0.05);
        assert_eq!(c[0].verdict, Verdict::Missing);
        assert!(c[0].verdict.is_regression());
        assert_eq!(c[1].verdict, Verdict::Better);
        let mut other = sample();
        for cell in &mut other.cells {
            cell.cell = format!("em/{}", cell.cell);
        }
        assert!(compare(&old, &other, 0.05).is_empty(), "no cell in common");
    }
}
