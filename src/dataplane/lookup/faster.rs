//! Choosing between two ways of making the same lookups by timing both on
//! the live traffic. Which is faster depends on where the table's reads
//! land, which the traffic decides, not the table's size alone: LPM's
//! IPv4 lookups made as each packet is parsed win while the reads hit the
//! caches, and made after the parse, in one tight loop, win once they
//! miss (many misses then in flight at once).

/// Packets each way is timed on at a time: about 64 full rounds, 40 us at
/// 100 Mpps.
const SLICE_PACKETS: u64 = 1 << 12;
/// Slices of each way in a trial, in turn, each of the second compared
/// with the first's just before it: an interrupt or a burst of other work
/// spoils one pair, not the verdict.
const PAIRS: u32 = 8;
/// Packets the faster way then runs for before both are timed again, as
/// the traffic may have changed: the trials are under 2% of the packets.
const KEEP_PACKETS: u64 = 1 << 22;

/// Which of two ways that give the same answers an lcore runs now. A
/// trial times `PAIRS` pairs of slices, the first way then the second,
/// `SLICE_PACKETS` each; the way that took fewer cycles a packet in
/// most pairs (the first on a tie) runs for `KEEP_PACKETS`, then the
/// next trial starts.
#[derive(Debug, Default)]
pub struct FasterOfTwo {
    /// The way running now: read for every packet, so a plain flag.
    second: bool,
    phase: Phase,
    /// Cycles and packets timed in this slice (or keep) so far.
    cycles: u64,
    packets: u64,
    /// The first way's slice of the pair being timed.
    first: (u64, u64),
    /// Pairs timed in this trial, and those the second way won.
    pairs: u32,
    second_won: u32,
}

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
enum Phase {
    #[default]
    TimeFirst,
    TimeSecond,
    Keep,
}

impl FasterOfTwo {
    /// Whether the second way runs now.
    #[inline(always)]
    pub fn second(&self) -> bool {
        self.second
    }

    /// One way, `second` or the first, when no trial is to choose
    /// (`timed` is not called).
    pub fn only(second: bool) -> FasterOfTwo {
        FasterOfTwo {
            second,
            ..FasterOfTwo::default()
        }
    }

    /// `packets` were forwarded in `cycles` by the way running now.
    #[inline(always)]
    pub fn timed(&mut self, cycles: u64, packets: u64) {
        self.cycles = self.cycles.saturating_add(cycles);
        self.packets += packets;
        let length = match self.phase {
            Phase::Keep => KEEP_PACKETS,
            _ => SLICE_PACKETS,
        };
        if self.packets >= length {
            self.next();
        }
    }

    /// The next slice, or the end of a trial or a keep.
    #[cold]
    fn next(&mut self) {
        let timed = (std::mem::take(&mut self.cycles), std::mem::take(&mut self.packets));
        (self.phase, self.second) = match self.phase {
            Phase::TimeFirst => {
                self.first = timed;
                (Phase::TimeSecond, true)
            }
            Phase::TimeSecond => {
                self.pairs += 1;
                self.second_won += u32::from(fewer_cycles_a_packet(timed, self.first));
                if self.pairs < PAIRS {
                    (Phase::TimeFirst, false)
                } else {
                    let second = self.second_won > PAIRS / 2;
                    (self.pairs, self.second_won) = (0, 0);
                    (Phase::Keep, second)
                }
            }
            Phase::Keep => (Phase::TimeFirst, false),
        };
    }
}

/// Whether `a` (cycles, packets) took fewer cycles a packet than `b`.
fn fewer_cycles_a_packet(a: (u64, u64), b: (u64, u64)) -> bool {
    u128::from(a.0) * u128::from(b.1) < u128::from(b.0) * u128::from(a.1)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Packets of one trial.
    const TRIAL_PACKETS: u64 = 2 * PAIRS as u64 * SLICE_PACKETS;

    /// Runs `choice` over `packets` in rounds of 64, a round taking
    /// `cost(way, round)` cycles a packet (way: whether the second);
    /// returns how many packets each way forwarded.
    fn run(choice: &mut FasterOfTwo, packets: u64, cost: impl Fn(bool, u64) -> u64) -> (u64, u64) {
        let mut by_way = (0, 0);
        for round in 0..packets / 64 {
            let second = choice.second();
            *(if second { &mut by_way.1 } else { &mut by_way.0 }) += 64;
            choice.timed(64 * cost(second, round), 64);
        }
        by_way
    }

    /// The first way takes `first` cycles a packet, the second `second`.
    fn costs(first: u64, second: u64) -> impl Fn(bool, u64) -> u64 {
        move |way, _| if way { second } else { first }
    }

    #[test]
    fn times_both_then_keeps_the_faster() {
        let mut choice = FasterOfTwo::default();
        assert!(!choice.second(), "the first way starts");
        let half = TRIAL_PACKETS / 2;
        assert_eq!(run(&mut choice, TRIAL_PACKETS, costs(30, 20)), (half, half));
        assert!(choice.second(), "the second took fewer cycles");
        assert_eq!(run(&mut choice, KEEP_PACKETS, costs(30, 20)), (0, KEEP_PACKETS));
        // The traffic changed: the next trial finds the first faster.
        assert_eq!(run(&mut choice, TRIAL_PACKETS, costs(20, 30)), (half, half));
        assert!(!choice.second());
        assert_eq!(run(&mut choice, KEEP_PACKETS, costs(20, 30)), (KEEP_PACKETS, 0));
    }

    #[test]
    fn a_tie_keeps_the_first() {
        let mut choice = FasterOfTwo::default();
        run(&mut choice, TRIAL_PACKETS, costs(25, 25));
        assert!(!choice.second());
    }

    /// A few slices slowed tenfold (an interrupt, another process) while
    /// the second way ran do not make the first look faster.
    #[test]
    fn slow_slices_spoil_pairs_not_the_verdict() {
        let rounds_a_slice = SLICE_PACKETS / 64;
        let spoiled = |round: u64| [1, 5, 9].contains(&(round / rounds_a_slice));
        let mut choice = FasterOfTwo::default();
        run(&mut choice, TRIAL_PACKETS, |second, round| match second {
            true if spoiled(round) => 300,
            true => 28,
            false => 30,
        });
        assert!(choice.second(), "the second won 5 pairs of 8");
    }

    #[test]
    fn idle_rounds_and_huge_cycle_counts_do_no_harm() {
        let mut choice = FasterOfTwo::default();
        choice.timed(u64::MAX, 0);
        choice.timed(u64::MAX, SLICE_PACKETS);
        assert!(choice.second(), "the first slice ended");
        choice.timed(1, SLICE_PACKETS);
        assert!(!choice.second(), "the second slice ended");
    }

    #[test]
    fn cycles_a_packet_compare_without_overflow() {
        assert!(fewer_cycles_a_packet((u64::MAX - 1, u64::MAX), (u64::MAX, u64::MAX)));
        assert!(!fewer_cycles_a_packet((10, 1), (19, 2)));
        assert!(fewer_cycles_a_packet((9, 1), (19, 2)));
    }
}
