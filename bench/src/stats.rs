//! Summaries over rounds and the ratios that make rates comparable across runs.

use crate::configs::Config;
use crate::release::Release;
use std::collections::BTreeMap;

/// The ratios reported and compared against a baseline: l3fwd-rs against the C sample
/// of the same mode, and against the I/O ceiling; at scale, also sequential over
/// multi-lookup for each; exact match's whole-burst calls over C's groups
/// of 8; bursts of 64 and 256 over 32; FIB against C's
/// FIB and against LPM; ACL against C's ACL; and the idle-flush policy over C's drain timing
/// (l3fwd-rs LPM without and with `--c-drain`: what flushing when idle costs at
/// full load). Absolute rates drift on a shared machine; these move only
/// when one side gets faster or slower than the other.
pub const RATIOS: [(&str, &str); 18] = [
    ("rs-lpm", "c-lpm"),
    ("rs-lpm-c-drain", "c-lpm"),
    ("rs-lpm", "rs-lpm-c-drain"),
    ("rs-lpm-burst64", "rs-lpm"),
    ("rs-lpm-burst256", "rs-lpm"),
    ("rs-fib", "c-fib"),
    ("rs-fib", "rs-lpm"),
    ("rs-acl", "c-acl"),
    ("rs-em", "c-em"),
    ("rs-em-seq", "c-em"),
    ("rs-em", "rs-em-group8"),
    ("rs-lpm", "io"),
    ("rs-em", "io"),
    ("rs-em-seq", "io"),
    ("rs-em-1m", "c-em-1m"),
    ("rs-em-seq-1m", "c-em-seq-1m"),
    ("c-em-seq-1m", "c-em-1m"),
    ("rs-em-seq-1m", "rs-em-1m"),
];

/// The configurations of [`RATIOS`] (ids of configurations of a mode that
/// l3fwd-rs no longer has are skipped).
fn ratio_pairs() -> impl Iterator<Item = (Config, Config)> {
    RATIOS
        .iter()
        .filter_map(|&(num, den)| Some((Config::parse(num)?, Config::parse(den)?)))
}

/// The pairs of [`RATIOS`] on each release of `configs` (one set when none
/// names a release): ratios never mix releases.
pub fn ratio_pairs_on(configs: impl IntoIterator<Item = Config>) -> Vec<(Config, Config)> {
    let mut releases: Vec<Option<Release>> = configs.into_iter().map(|c| c.release).collect();
    releases.sort();
    releases.dedup();
    releases
        .into_iter()
        .flat_map(|release| ratio_pairs().map(move |(num, den)| (num.on(release), den.on(release))))
        .collect()
}

pub fn ratio_key(num: Config, den: Config) -> String {
    format!("{}/{}", num.id(), den.id())
}

pub fn median(values: &[f64]) -> Option<f64> {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => Some(v[n / 2]),
        _ => Some((v[n / 2 - 1] + v[n / 2]) / 2.0),
    }
}

/// Median, min and max of the rates of one configuration's successful runs.
#[derive(Clone, Copy, PartialEq, Debug)]
pub struct Spread {
    pub median: f64,
    pub min: f64,
    pub max: f64,
}

pub fn spread(rates: &[f64]) -> Option<Spread> {
    let median = median(rates)?;
    let min = rates.iter().copied().fold(f64::INFINITY, f64::min);
    let max = rates.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    Some(Spread { median, min, max })
}

/// Every ratio of RATIOS whose two medians exist.
pub fn ratios(medians: &BTreeMap<Config, f64>) -> BTreeMap<String, f64> {
    ratio_pairs_on(medians.keys().copied())
        .into_iter()
        .filter_map(|(num, den)| {
            let (n, d) = (medians.get(&num)?, medians.get(&den)?);
            (*d > 0.0).then(|| (ratio_key(num, den), n / d))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::configs::tests::config;

    #[test]
    fn median_of_odd_even_and_empty() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), Some(2.5));
        assert_eq!(median(&[]), None);
        assert_eq!(
            spread(&[5.0, 1.0, 3.0]),
            Some(Spread {
                median: 3.0,
                min: 1.0,
                max: 5.0
            })
        );
    }

    #[test]
    fn every_ratio_names_configurations() {
        assert_eq!(ratio_pairs().count(), RATIOS.len());
    }

    #[test]
    fn ratios_need_both_medians() {
        let medians = BTreeMap::from([
            (config("c-lpm"), 20.0),
            (config("rs-lpm"), 22.0),
            (config("rs-em"), 10.0),
        ]);
        let r = ratios(&medians);
        assert_eq!(r.len(), 1);
        assert!((r["rs-lpm/c-lpm"] - 1.1).abs() < 1e-12);
    }
}
