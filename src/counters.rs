//! Per-lcore forwarding counters: each set in its own cache line, written
//! only by its lcore, read by the control thread.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use serde::Serialize;

/// One forwarding lcore as everyone but the lcore itself sees it: which
/// queues it polls and its counters. Shared (`Arc`) between the lcore, the
/// control thread, telemetry and the summary.
#[derive(Debug, Serialize)]
pub struct LcoreStats {
    pub lcore: u32,
    /// The `(port, queue)` pairs it polls.
    pub rx_queues: Vec<(u16, u16)>,
    #[serde(flatten)]
    pub counters: LcoreCounters,
}

/// Counters of one forwarding lcore.
#[repr(align(64))]
#[derive(Debug, Default)]
pub struct LcoreCounters {
    rx: AtomicU64,
    tx: AtomicU64,
    dropped_invalid: AtomicU64,
    dropped_runt: AtomicU64,
    dropped_tx_full: AtomicU64,
    dropped_unroutable: AtomicU64,
}

/// A plain snapshot of counters, summable across lcores.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Totals {
    /// Packets received.
    pub rx: u64,
    /// Packets handed to a TX queue.
    pub tx: u64,
    /// IPv4 packets dropped for an invalid header (RFC 1812 checks).
    pub dropped_invalid: u64,
    /// Frames shorter than the headers they announce.
    pub dropped_runt: u64,
    /// Packets a TX queue refused.
    pub dropped_tx_full: u64,
    /// Packets routed to a port the lcore cannot send on. The tables hold
    /// routes to enabled ports only, so this stays 0; a route is counted
    /// here rather than trusted.
    pub dropped_unroutable: u64,
}

/// Adds `n` to a counter only this lcore writes: a plain load and store, no
/// locked read-modify-write on the fast path.
#[inline(always)]
fn bump(c: &AtomicU64, n: u64) {
    c.store(c.load(Relaxed) + n, Relaxed);
}

impl LcoreCounters {
    #[inline(always)]
    pub fn add_rx(&self, n: u64) {
        bump(&self.rx, n);
    }
    #[inline(always)]
    pub fn add_tx(&self, n: u64) {
        bump(&self.tx, n);
    }
    #[inline(always)]
    pub fn add_invalid(&self, n: u64) {
        bump(&self.dropped_invalid, n);
    }
    #[inline(always)]
    pub fn add_runt(&self, n: u64) {
        bump(&self.dropped_runt, n);
    }
    #[inline(always)]
    pub fn add_tx_full(&self, n: u64) {
        bump(&self.dropped_tx_full, n);
    }
    #[inline(always)]
    pub fn add_unroutable(&self, n: u64) {
        bump(&self.dropped_unroutable, n);
    }

    /// The counters as name/value pairs, for telemetry.
    pub fn named(t: &Totals) -> Vec<(String, u64)> {
        [
            ("rx", t.rx),
            ("tx", t.tx),
            ("dropped_invalid", t.dropped_invalid),
            ("dropped_runt", t.dropped_runt),
            ("dropped_tx_full", t.dropped_tx_full),
            ("dropped_unroutable", t.dropped_unroutable),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v))
        .collect()
    }

    /// A snapshot, readable from any thread.
    pub fn totals(&self) -> Totals {
        Totals {
            rx: self.rx.load(Relaxed),
            tx: self.tx.load(Relaxed),
            dropped_invalid: self.dropped_invalid.load(Relaxed),
            dropped_runt: self.dropped_runt.load(Relaxed),
            dropped_tx_full: self.dropped_tx_full.load(Relaxed),
            dropped_unroutable: self.dropped_unroutable.load(Relaxed),
        }
    }
}

/// Serialised as a snapshot of the counters.
impl Serialize for LcoreCounters {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.totals().serialize(s)
    }
}

impl std::ops::Add for Totals {
    type Output = Totals;
    fn add(self, o: Totals) -> Totals {
        Totals {
            rx: self.rx + o.rx,
            tx: self.tx + o.tx,
            dropped_invalid: self.dropped_invalid + o.dropped_invalid,
            dropped_runt: self.dropped_runt + o.dropped_runt,
            dropped_tx_full: self.dropped_tx_full + o.dropped_tx_full,
            dropped_unroutable: self.dropped_unroutable + o.dropped_unroutable,
        }
    }
}

impl std::iter::Sum for Totals {
    fn sum<I: Iterator<Item = Totals>>(iter: I) -> Totals {
        iter.fold(Totals::default(), |a, b| a + b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_live_in_their_own_cache_line() {
        assert_eq!(std::mem::align_of::<LcoreCounters>(), 64);
        assert_eq!(std::mem::size_of::<LcoreCounters>() % 64, 0);
    }

    #[test]
    fn totals_add_up() {
        let a = LcoreCounters::default();
        a.add_rx(5);
        a.add_tx(3);
        a.add_runt(1);
        a.add_invalid(1);
        let b = LcoreCounters::default();
        b.add_rx(2);
        b.add_tx_full(2);
        b.add_unroutable(3);
        let t: Totals = [a.totals(), b.totals()].into_iter().sum();
        assert_eq!(
            t,
            Totals {
                rx: 7,
                tx: 3,
                dropped_invalid: 1,
                dropped_runt: 1,
                dropped_tx_full: 2,
                dropped_unroutable: 3,
            }
        );
    }
}
