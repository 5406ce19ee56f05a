//! The control thread: periodic rate lines, the `--duration` timer, and the
//! totals printed at exit. It never forwards and runs off the lcores' CPUs.

use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::Arc;
use std::time::{Duration, Instant};

use dpdk::PortStats;

use crate::counters::{LcoreCounters, Totals};

/// What the control thread watches.
pub struct Control {
    pub ports: Vec<u16>,
    pub counters: Vec<Arc<LcoreCounters>>,
    pub quit: Arc<AtomicBool>,
    /// Print rates every this often (None: never).
    pub interval: Option<Duration>,
    /// Stop forwarding after this long (None: run until a signal).
    pub duration: Option<Duration>,
}

/// Port counters at one instant.
fn snapshot(ports: &[u16]) -> Vec<PortStats> {
    ports.iter().map(|&p| PortStats::read(p).unwrap_or_default()).collect()
}

fn mpps(packets: u64, secs: f64) -> f64 {
    if secs > 0.0 {
        packets as f64 / secs / 1e6
    } else {
        0.0
    }
}

impl Control {
    /// Sum of the lcores' counters.
    pub fn totals(&self) -> Totals {
        self.counters.iter().map(|c| c.totals()).sum()
    }

    /// Runs until `quit` is set (by a signal or by the duration).
    pub fn run(self) {
        let start = Instant::now();
        let mut last = (start, snapshot(&self.ports));
        let tick = Duration::from_millis(20);
        while !self.quit.load(Relaxed) {
            std::thread::sleep(tick);
            let now = Instant::now();
            if self.duration.is_some_and(|d| now - start >= d) {
                self.quit.store(true, Relaxed);
                break;
            }
            if let Some(iv) = self.interval {
                if now - last.0 >= iv {
                    let stats = snapshot(&self.ports);
                    self.print_rates(now - last.0, &last.1, &stats);
                    last = (now, stats);
                }
            }
        }
    }

    fn print_rates(&self, elapsed: Duration, before: &[PortStats], after: &[PortStats]) {
        let secs = elapsed.as_secs_f64();
        let mut line = String::new();
        let mut tx_all = 0;
        for ((p, b), a) in self.ports.iter().zip(before).zip(after) {
            let (rx, tx) = (a.rx_packets - b.rx_packets, a.tx_packets - b.tx_packets);
            tx_all += tx;
            line += &format!("port {p}: rx {:7.3} tx {:7.3} Mpps | ", mpps(rx, secs), mpps(tx, secs));
        }
        let t = self.totals();
        println!(
            "{line}total tx {:7.3} Mpps | dropped: invalid {} runt {} tx-full {}",
            mpps(tx_all, secs),
            t.dropped_invalid,
            t.dropped_runt,
            t.dropped_tx_full
        );
    }
}

/// Prints per-port and forwarding totals after the lcores stopped; `secs` is
/// how long forwarding ran.
pub fn print_summary(ports: &[u16], totals: &Totals, secs: f64) {
    println!("\n==== l3fwd-rs summary ({secs:.1} s) ====");
    for (p, s) in ports.iter().zip(snapshot(ports)) {
        println!(
            "port {p}: rx {} tx {} ({:.3} / {:.3} Mpps) rx-missed {} rx-nombuf {} tx-errors {}",
            s.rx_packets,
            s.tx_packets,
            mpps(s.rx_packets, secs),
            mpps(s.tx_packets, secs),
            s.rx_missed,
            s.rx_nombuf,
            s.tx_errors
        );
    }
    println!(
        "forwarded: rx {} tx {} | dropped: invalid {} runt {} tx-full {}",
        totals.rx, totals.tx, totals.dropped_invalid, totals.dropped_runt, totals.dropped_tx_full
    );
}
