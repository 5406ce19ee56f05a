//! A sweep against an earlier one, cell by cell: the l3fwd-rs / C ratio of
//! each cell both measured, judged as `make bench` judges its ratios.

use super::results::SweepReport;
use crate::baseline::{self, Comparison};

/// Each cell of `new` that `old` has a ratio for. A cell whose ratio is
/// gone (a run failed) counts as a regression, as in `make bench`.
pub fn compare(old: &SweepReport, new: &SweepReport, tolerance: f64) -> Vec<Comparison> {
    new.cells
        .iter()
        .filter_map(|cell| {
            let before = old.cells.iter().find(|c| c.cell == cell.cell)?.ratio?;
            Some(Comparison {
                name: format!("{} l3fwd-rs / C", cell.cell),
                old: before,
                new: cell.ratio,
                verdict: baseline::judge(before, cell.ratio, tolerance),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::super::results::tests::sample;
    use super::*;
    use crate::baseline::Verdict;

    #[test]
    fn a_ratio_fallen_beyond_tolerance_is_a_regression() {
        let old = sample();
        let mut new = sample();
        // lpm-16/64B/16: 1.273 -> 1.2 (-5.7%); lpm-16/1518B/16: 1.25 -> 1.2 (-4%).
        new.cells[0].ratio = Some(1.2);
        new.cells[1].ratio = Some(1.2);
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
        let mut new = sample();
        new.cells[0].ratio = None;
        new.cells[1].ratio = Some(1.5);
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
