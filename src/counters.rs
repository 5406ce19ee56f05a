//! Per-lcore forwarding counters: each set in its own cache line, written
//! only by its lcore, read by the control thread.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// Counters of one forwarding lcore.
#[repr(align(64))]
#[derive(Debug, Default)]
pub struct LcoreCounters {
    rx: AtomicU64,
    tx: AtomicU64,
    dropped_invalid: AtomicU64,
    dropped_runt: AtomicU64,
    dropped_tx_full: AtomicU64,
    /// By port id (none with `Default`).
    by_port: Box<[PortCounters]>,
}

/// What one lcore received from and sent to one port: the per-port
/// figures of the rate lines and the summary. Counted here rather than
/// read from the driver because some drivers lose theirs: net_memif
/// reports zeros once its peer has disconnected (its stats walk only the
/// rings of a live connection), which at shutdown is the usual case.
#[repr(align(64))]
#[derive(Debug, Default)]
struct PortCounters {
    rx: AtomicU64,
    tx: AtomicU64,
}

/// A plain snapshot of counters, summable across lcores.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, serde::Serialize)]
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
}

/// Adds `n` to a counter only this lcore writes: a plain load and store, no
/// locked read-modify-write on the fast path.
#[inline(always)]
fn bump(c: &AtomicU64, n: u64) {
    c.store(c.load(Relaxed) + n, Relaxed);
}

impl LcoreCounters {
    /// Counters for ports 0..ports.
    pub fn for_ports(ports: usize) -> LcoreCounters {
        LcoreCounters {
            by_port: (0..ports).map(|_| PortCounters::default()).collect(),
            ..LcoreCounters::default()
        }
    }

    /// `n` packets received from `port`.
    #[inline(always)]
    pub fn add_rx(&self, port: u16, n: u64) {
        bump(&self.rx, n);
        if let Some(p) = self.by_port.get(usize::from(port)) {
            bump(&p.rx, n);
        }
    }

    /// `n` packets handed to a TX queue of `port`.
    #[inline(always)]
    pub fn add_tx(&self, port: u16, n: u64) {
        bump(&self.tx, n);
        if let Some(p) = self.by_port.get(usize::from(port)) {
            bump(&p.tx, n);
        }
    }

    /// Packets received from and sent to `port` so far: `(rx, tx)`.
    pub fn port_totals(&self, port: u16) -> (u64, u64) {
        self.by_port
            .get(usize::from(port))
            .map_or((0, 0), |p| (p.rx.load(Relaxed), p.tx.load(Relaxed)))
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

    /// The counters as name/value pairs, for telemetry.
    pub fn named(t: &Totals) -> Vec<(String, u64)> {
        [
            ("rx", t.rx),
            ("tx", t.tx),
            ("dropped_invalid", t.dropped_invalid),
            ("dropped_runt", t.dropped_runt),
            ("dropped_tx_full", t.dropped_tx_full),
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
        }
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
        let a = LcoreCounters::for_ports(2);
        a.add_rx(0, 5);
        a.add_tx(1, 3);
        a.add_runt(1);
        a.add_invalid(1);
        let b = LcoreCounters::for_ports(2);
        b.add_rx(1, 2);
        b.add_tx_full(2);
        let t: Totals = [a.totals(), b.totals()].into_iter().sum();
        assert_eq!(
            t,
            Totals {
                rx: 7,
                tx: 3,
                dropped_invalid: 1,
                dropped_runt: 1,
                dropped_tx_full: 2
            }
        );
        assert_eq!(
            (a.port_totals(0), a.port_totals(1), b.port_totals(1)),
            ((5, 0), (0, 3), (2, 0))
        );
        assert_eq!(a.port_totals(7), (0, 0), "no counters for a port past the end");
    }
}
