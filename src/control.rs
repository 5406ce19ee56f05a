//! The control thread: periodic rate lines, the `--duration` timer, and the
//! totals printed at exit. It never forwards and runs off the lcores' CPUs.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::Arc;
use std::time::{Duration, Instant};

use dpdk::PortStats;
use serde::Serialize;

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

/// Totals of one port over the run.
#[derive(Debug, Serialize)]
pub struct PortSummary {
    pub port: u16,
    pub rx_packets: u64,
    pub tx_packets: u64,
    pub rx_mpps: f64,
    pub tx_mpps: f64,
    pub rx_missed: u64,
    pub rx_nombuf: u64,
    pub tx_errors: u64,
}

/// What a run did: printed at exit and written by `--stats-json`.
#[derive(Debug, Serialize)]
pub struct Summary {
    pub seconds: f64,
    pub ports: Vec<PortSummary>,
    pub tx_mpps: f64,
    pub forwarded: Totals,
    /// Mbufs taken from the pools before the ports started and after they
    /// closed: equal unless something leaked.
    pub mbufs_in_use: [u64; 2],
}

impl Summary {
    /// Reads the port counters now; `secs` is how long forwarding ran.
    pub fn collect(ports: &[u16], forwarded: Totals, secs: f64) -> Summary {
        let ports: Vec<PortSummary> = ports
            .iter()
            .zip(snapshot(ports))
            .map(|(&port, s)| PortSummary {
                port,
                rx_packets: s.rx_packets,
                tx_packets: s.tx_packets,
                rx_mpps: mpps(s.rx_packets, secs),
                tx_mpps: mpps(s.tx_packets, secs),
                rx_missed: s.rx_missed,
                rx_nombuf: s.rx_nombuf,
                tx_errors: s.tx_errors,
            })
            .collect();
        let tx_mpps = ports.iter().map(|p| p.tx_mpps).sum();
        Summary {
            seconds: secs,
            ports,
            tx_mpps,
            forwarded,
            mbufs_in_use: [0; 2],
        }
    }

    /// The human-readable form.
    pub fn print(&self) {
        println!("\n==== l3fwd-rs summary ({:.1} s) ====", self.seconds);
        for p in &self.ports {
            println!(
                "port {}: rx {} tx {} ({:.3} / {:.3} Mpps) rx-missed {} rx-nombuf {} tx-errors {}",
                p.port, p.rx_packets, p.tx_packets, p.rx_mpps, p.tx_mpps, p.rx_missed, p.rx_nombuf, p.tx_errors
            );
        }
        let t = &self.forwarded;
        println!(
            "forwarded: rx {} tx {} | dropped: invalid {} runt {} tx-full {} | total tx {:.3} Mpps",
            t.rx, t.tx, t.dropped_invalid, t.dropped_runt, t.dropped_tx_full, self.tx_mpps
        );
        println!(
            "mbufs in use: {} before start, {} after shutdown",
            self.mbufs_in_use[0], self.mbufs_in_use[1]
        );
    }

    /// Writes the JSON form to `path`.
    pub fn write_json(&self, path: &Path) -> std::io::Result<()> {
        let text = serde_json::to_string_pretty(self).map_err(std::io::Error::other)?;
        std::fs::write(path, text + "\n")
    }
}
