//! Whether a ratio really moved between two runs: its per-round values in
//! the baseline and now, compared with a one-sided exact Mann-Whitney U
//! test. Rates on a shared machine move by more than any threshold from
//! run to run; a change counts only when it is both above the threshold
//! and unlikely to come from that noise.

use crate::stats::median;

/// The significance level: a one-sided p-value at most this is significant.
pub const ALPHA: f64 = 0.05;

/// The test's view of one ratio in two runs.
#[derive(Clone, Copy, PartialEq, Debug)]
pub struct Change {
    pub old: f64,
    pub new: f64,
    /// `new / old - 1`, of the medians.
    pub change: f64,
    /// The probability of a fall at least this clear by chance alone.
    pub p_fall: f64,
    /// The same for a rise.
    pub p_rise: f64,
    /// Half the range of the new per-round values, over their median.
    pub spread: f64,
    /// The smallest fall these rounds can show as significant: the
    /// relative shift of the new values, moved to the old median first,
    /// at which the test reaches [`ALPHA`] (infinite when even a complete
    /// separation cannot with so few rounds).
    pub detectable: f64,
}

/// Compares the per-round values of a ratio; None if either run has none.
pub fn compare(old: &[f64], new: &[f64]) -> Option<Change> {
    let (old_median, new_median) = (median(old)?, median(new)?);
    let reachable = min_p(old.len(), new.len()) <= ALPHA;
    let range = |v: &[f64]| {
        v.iter().copied().fold(f64::NEG_INFINITY, f64::max) - v.iter().copied().fold(f64::INFINITY, f64::min)
    };
    Some(Change {
        old: old_median,
        new: new_median,
        change: new_median / old_median - 1.0,
        p_fall: p_greater(old, new),
        p_rise: p_greater(new, old),
        spread: range(new) / 2.0 / new_median,
        detectable: if reachable {
            detectable_fall(old, new, old_median / new_median)
        } else {
            f64::INFINITY
        },
    })
}

/// The smallest relative shift down of `new` (scaled by `recentre` onto
/// the old median) that makes its fall from `old` significant: a bisection,
/// since the p-value only falls as the shift grows. Partial overlap may
/// already be significant with five or more rounds, so this is smaller than
/// the shift that separates the samples completely.
fn detectable_fall(old: &[f64], new: &[f64], recentre: f64) -> f64 {
    let significant = |shift: f64| {
        let moved: Vec<f64> = new.iter().map(|v| v * recentre * (1.0 - shift)).collect();
        p_greater(old, &moved) <= ALPHA
    };
    let (mut low, mut high) = (0.0, 1.0);
    if significant(low) {
        return 0.0;
    }
    for _ in 0..40 {
        let mid = (low + high) / 2.0;
        if significant(mid) {
            high = mid;
        } else {
            low = mid;
        }
    }
    high
}

/// The one-sided p-value that values of `high` tend to exceed those of
/// `low`: the share of all ways to split the pooled values into groups of
/// their sizes whose U statistic is at least the observed one (exact;
/// pooled samples of more than 20 values use the normal approximation).
pub fn p_greater(high: &[f64], low: &[f64]) -> f64 {
    let observed = u_statistic(high, low);
    let pooled: Vec<f64> = high.iter().chain(low).copied().collect();
    let (n, k) = (pooled.len(), high.len());
    if n > 20 {
        return normal_p(observed, k, n - k);
    }
    let (mut at_least, mut total) = (0u64, 0u64);
    for mask in 0u32..(1 << n) {
        if mask.count_ones() as usize != k {
            continue;
        }
        let (a, b): (Vec<f64>, Vec<f64>) =
            pooled
                .iter()
                .enumerate()
                .fold((vec![], vec![]), |(mut a, mut b), (i, &v)| {
                    if mask & (1 << i) != 0 {
                        a.push(v);
                    } else {
                        b.push(v);
                    }
                    (a, b)
                });
        total += 1;
        at_least += u64::from(u_statistic(&a, &b) >= observed - 1e-9);
    }
    at_least as f64 / total.max(1) as f64
}

/// Pairs `(h, l)` with `h > l`, ties counting half.
fn u_statistic(high: &[f64], low: &[f64]) -> f64 {
    high.iter()
        .flat_map(|h| low.iter().map(move |l| (h, l)))
        .map(|(h, l)| match h.total_cmp(l) {
            std::cmp::Ordering::Greater => 1.0,
            std::cmp::Ordering::Equal => 0.5,
            std::cmp::Ordering::Less => 0.0,
        })
        .sum()
}

/// The smallest one-sided p-value samples of these sizes can give (when
/// they do not overlap at all): 1 / C(n1 + n2, n1).
pub fn min_p(n1: usize, n2: usize) -> f64 {
    let ways = (1..=n1).fold(1.0, |c, i| c * (n2 + i) as f64 / i as f64);
    1.0 / ways
}

/// Mann-Whitney's normal approximation, with continuity correction.
fn normal_p(u: f64, n1: usize, n2: usize) -> f64 {
    let (n1, n2) = (n1 as f64, n2 as f64);
    let mean = n1 * n2 / 2.0;
    let sd = (n1 * n2 * (n1 + n2 + 1.0) / 12.0).sqrt();
    let z = (u - 0.5 - mean) / sd;
    0.5 * erfc(z / std::f64::consts::SQRT_2)
}

/// The complementary error function (Numerical Recipes' erfcc, error
/// below 1.2e-7).
fn erfc(x: f64) -> f64 {
    let t = 1.0 / (1.0 + 0.5 * x.abs());
    let poly = -x * x - 1.26551223
        + t * (1.00002368
            + t * (0.37409196
                + t * (0.09678418
                    + t * (-0.18628806
                        + t * (0.27886807
                            + t * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277))))))));
    let r = t * poly.exp();
    if x >= 0.0 {
        r
    } else {
        2.0 - r
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_p_values_of_small_samples() {
        // Three rounds against three that do not overlap: 1 of the 20
        // splits is at least as extreme.
        assert!((p_greater(&[4.0, 5.0, 6.0], &[1.0, 2.0, 3.0]) - 0.05).abs() < 1e-12);
        assert!((min_p(3, 3) - 0.05).abs() < 1e-12);
        assert!((min_p(5, 5) - 1.0 / 252.0).abs() < 1e-12);
        // The other direction, and identical samples.
        assert!((p_greater(&[1.0, 2.0, 3.0], &[4.0, 5.0, 6.0]) - 1.0).abs() < 1e-12);
        let same = p_greater(&[1.0, 1.0, 1.0], &[1.0, 1.0, 1.0]);
        assert!((same - 1.0).abs() < 1e-12, "{same}");
        // One overlap of 3 against 3: U = 8 of 9, 2 of 20 splits reach it.
        assert!((p_greater(&[2.5, 5.0, 6.0], &[1.0, 2.0, 3.0]) - 0.1).abs() < 1e-12);
    }

    #[test]
    fn normal_approximation_agrees_with_the_exact_test() {
        let high: Vec<f64> = (0..10).map(|i| 10.0 + f64::from(i) * 0.7).collect();
        let low: Vec<f64> = (0..10).map(|i| 8.0 + f64::from(i) * 0.7).collect();
        let exact = p_greater(&high, &low);
        let approx = normal_p(u_statistic(&high, &low), 10, 10);
        assert!((exact - approx).abs() < 0.01, "{exact} {approx}");
        assert!((erfc(0.0) - 1.0).abs() < 1e-6 && erfc(3.0) < 3e-5);
    }

    #[test]
    fn change_spread_and_detectable_shift() {
        let c = compare(&[1.0, 1.02, 0.98], &[0.9, 0.91, 0.89]).unwrap();
        assert!((c.change - -0.1).abs() < 1e-9);
        assert!(c.p_fall <= ALPHA && c.p_rise > 0.9, "{c:?}");
        assert!((c.spread - 0.01 / 0.9).abs() < 1e-9);
        // Three rounds need complete separation: the recentred new values
        // (0.9 / 0.9 x 1.0, 1.011, 0.989) below 0.98.
        assert!((c.detectable - (1.0 - 0.98 / (0.91 / 0.9))).abs() < 1e-6, "{c:?}");
        // Five rounds reach p <= 0.05 before the samples separate: less
        // than the 4% that full separation takes here.
        let old = [1.0, 1.01, 0.99, 1.02, 0.98];
        let five = compare(&old, &old.map(|v| v * 0.9)).unwrap();
        assert!(five.detectable < 0.04 - 1e-6 && five.detectable > 0.0, "{five:?}");
        // Two rounds each can never be significant: 1/6 > 0.05.
        let few = compare(&[1.0, 1.0], &[0.5, 0.5]).unwrap();
        assert!(few.detectable.is_infinite() && few.p_fall > ALPHA);
        assert_eq!(compare(&[], &[1.0]), None);
    }
}
