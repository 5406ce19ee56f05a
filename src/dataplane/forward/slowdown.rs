//! A build made slower on purpose, for `l3fwd-bench calibrate` alone: with
//! the `calibration-slowdown` feature, every busy poll round is stretched so
//! that it lasts 1 / (1 - [`FRACTION`]) as long, and a lcore-bound rate falls
//! by that fraction, in every mode and cell alike. The calibration checks
//! that the rate verdicts flag it. Without the feature, [`ENABLED`] is false
//! and the loop's call compiles to nothing.

/// Whether this build is the slowed one.
pub const ENABLED: bool = cfg!(feature = "calibration-slowdown");

/// The share of the rate the slowed build loses: 5%.
pub const FRACTION: (u64, u64) = (5, 100);

/// Spins after a busy round that began at TSC `round_start`, until the
/// round has taken 1 / (1 - FRACTION) of the time its work took.
#[inline(never)]
pub fn stretch(round_start: u64) {
    let worked = dpdk::rdtsc().wrapping_sub(round_start);
    let extra = worked * FRACTION.0 / (FRACTION.1 - FRACTION.0);
    let until = round_start.wrapping_add(worked + extra);
    while (until.wrapping_sub(dpdk::rdtsc()) as i64) > 0 {
        std::hint::spin_loop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Total ticks and ticks of work of one stretched round.
    fn stretched_round() -> (u64, u64) {
        let start = dpdk::rdtsc();
        // Some work, long against the clock reads around it.
        while dpdk::rdtsc().wrapping_sub(start) < 2_000_000 {
            std::hint::spin_loop();
        }
        let worked = dpdk::rdtsc() - start;
        stretch(start);
        (dpdk::rdtsc() - start, worked)
    }

    #[test]
    fn a_round_is_stretched_by_the_fraction_of_its_length() {
        let rounds: Vec<(u64, u64)> = (0..5).map(|_| stretched_round()).collect();
        // Never shorter than 100/95 of the work, whatever the scheduler does...
        assert!(
            rounds.iter().all(|&(total, worked)| total * 95 >= worked * 100),
            "{rounds:?}"
        );
        // ...and, in a round it did not preempt, no longer than the clock
        // reads around it add.
        assert!(
            rounds.iter().any(|&(total, worked)| total * 95 < worked * 101),
            "{rounds:?}"
        );
    }
}
