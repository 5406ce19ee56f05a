//! Comparing this run's ratios with an earlier run's: the regression check.

use crate::configs::Config;
use crate::stats::{ratio_key, ratio_pairs};
use std::collections::BTreeMap;

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
    pub old: f64,
    pub new: Option<f64>,
    pub verdict: Verdict,
}

/// Judges each ratio present in `old` whose configurations were selected this time;
/// a fall of more than `tolerance` (relative) is a regression.
pub fn compare(
    old: &BTreeMap<String, f64>,
    new: &BTreeMap<String, f64>,
    selected: &[Config],
    tolerance: f64,
) -> Vec<Comparison> {
    ratio_pairs()
        .filter(|(num, den)| selected.contains(num) && selected.contains(den))
        .filter_map(|(num, den)| {
            let key = ratio_key(num, den);
            let old = *old.get(&key)?;
            let new = new.get(&key).copied();
            Some(Comparison {
                name: format!("{} / {}", num.label(), den.label()),
                old,
                new,
                verdict: judge(old, new, tolerance),
            })
        })
        .collect()
}

/// A ratio that was `old` and is `new` (none: not measured this time); a
/// fall of more than `tolerance` (relative) is worse.
pub fn judge(old: f64, new: Option<f64>, tolerance: f64) -> Verdict {
    match new.map(|n| n / old - 1.0) {
        None => Verdict::Missing,
        Some(change) if change < -tolerance => Verdict::Worse,
        Some(change) if change > tolerance => Verdict::Better,
        Some(_) => Verdict::Same,
    }
}

pub fn print(comparisons: &[Comparison], tolerance: f64) {
    for c in comparisons {
        let Some(new) = c.new else {
            println!(
                "REGRESSION: {}: was {:.3}, now not measured (runs failed)",
                c.name, c.old
            );
            continue;
        };
        let change = format!("{:.3} -> {new:.3} ({:+.1}%)", c.old, (new / c.old - 1.0) * 100.0);
        match c.verdict {
            Verdict::Worse => println!("REGRESSION: {}: {change}, tolerance {:.1}%", c.name, tolerance * 100.0),
            Verdict::Better => println!("better:     {}: {change}", c.name),
            _ => println!("same:       {}: {change}", c.name),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::configs::tests::config;

    fn map(pairs: &[(&str, f64)]) -> BTreeMap<String, f64> {
        pairs.iter().map(|&(k, v)| (k.to_string(), v)).collect()
    }

    #[test]
    fn verdicts() {
        let old = map(&[
            ("rs-lpm/c-lpm", 1.0),
            ("rs-em/c-em", 1.0),
            ("rs-em-seq/c-em", 1.0),
            ("rs-lpm/io", 0.5),
        ]);
        let new = map(&[("rs-lpm/c-lpm", 0.94), ("rs-em-seq/c-em", 1.04), ("rs-lpm/io", 0.6)]);
        let all = crate::configs::all();
        let verdicts: Vec<_> = compare(&old, &new, &all, 0.05)
            .iter()
            .map(|c| (c.name.clone(), c.verdict))
            .collect();
        assert_eq!(
            verdicts,
            [
                ("l3fwd-rs LPM / C l3fwd LPM".to_string(), Verdict::Worse),
                ("l3fwd-rs EM / C l3fwd EM".to_string(), Verdict::Missing),
                ("l3fwd-rs EM seq / C l3fwd EM".to_string(), Verdict::Same),
                ("l3fwd-rs LPM / testpmd io".to_string(), Verdict::Better),
            ]
        );
    }

    #[test]
    fn unselected_ratios_are_not_judged() {
        let old = map(&[("rs-lpm/c-lpm", 1.0), ("rs-em/c-em", 1.0)]);
        let new = map(&[("rs-lpm/c-lpm", 1.0)]);
        let lpm_only = [config("c-lpm"), config("rs-lpm")];
        let c = compare(&old, &new, &lpm_only, 0.05);
        assert_eq!(c.len(), 1);
        assert!(!c[0].verdict.is_regression());
    }
}
