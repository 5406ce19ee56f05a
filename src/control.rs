//! The control thread: periodic rate lines, the `--duration` timer, and the
//! totals printed at exit. It never forwards and runs off the lcores' CPUs.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::Arc;
use std::time::{Duration, Instant};

use dpdk::{Port, PortStats, PortStatsReader, QUEUE_STATS};
use serde::Serialize;

use crate::counters::{LcoreStats, Totals};
use crate::outln;

/// What the control thread watches.
pub struct Control {
    pub ports: Vec<PortStatsReader>,
    pub lcores: Vec<Arc<LcoreStats>>,
    pub quit: Arc<AtomicBool>,
    /// Print rates every this often (None: never).
    pub interval: Option<Duration>,
    /// Stop forwarding after this long (None: run until a signal).
    pub duration: Option<Duration>,
}

/// Port counters at one instant.
fn snapshot(ports: &[PortStatsReader]) -> Vec<PortStats> {
    ports.iter().map(|p| p.stats().unwrap_or_default()).collect()
}

fn mpps(packets: u64, secs: f64) -> f64 {
    if secs > 0.0 {
        packets as f64 / secs / 1e6
    } else {
        0.0
    }
}

/// Sum of the lcores' counters.
pub fn totals(lcores: &[Arc<LcoreStats>]) -> Totals {
    lcores.iter().map(|l| l.counters.totals()).sum()
}

impl Control {
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
            let p = p.port();
            line += &format!("port {p}: rx {:7.3} tx {:7.3} Mpps | ", mpps(rx, secs), mpps(tx, secs));
        }
        let t = totals(&self.lcores);
        outln!("{line}total tx {:7.3} Mpps | {}", mpps(tx_all, secs), drops(&t));
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
    /// Packets received per RX queue (the first 16 queues).
    pub rx_queue_packets: Vec<u64>,
    /// Packets sent per TX queue (the first 16 queues).
    pub tx_queue_packets: Vec<u64>,
}

/// What a run did: printed at exit and written by `--stats-json`.
#[derive(Debug, Serialize)]
pub struct Summary {
    pub seconds: f64,
    pub ports: Vec<PortSummary>,
    pub tx_mpps: f64,
    /// The sum over the lcores.
    pub forwarded: Totals,
    /// What each forwarding lcore did.
    pub lcores: Vec<Arc<LcoreStats>>,
    /// Mbufs taken from the pools before the ports started and after they
    /// stopped: equal unless something leaked (or a port's peer, such as a
    /// net_ring, still holds what was sent to it).
    pub mbufs_in_use: [u64; 2],
}

impl Summary {
    /// Reads the port and lcore counters now; `secs` is how long
    /// forwarding ran.
    pub fn collect(ports: &[Port], lcores: &[Arc<LcoreStats>], secs: f64) -> Summary {
        let ports: Vec<PortSummary> = ports
            .iter()
            .map(|port| {
                let s = port.stats().unwrap_or_default();
                let info = port.info();
                let (rxq, txq) = info.map_or((0, 0), |i| (i.rx_queues as usize, i.tx_queues as usize));
                PortSummary {
                    port: port.id(),
                    rx_packets: s.rx_packets,
                    tx_packets: s.tx_packets,
                    rx_mpps: mpps(s.rx_packets, secs),
                    tx_mpps: mpps(s.tx_packets, secs),
                    rx_missed: s.rx_missed,
                    rx_nombuf: s.rx_nombuf,
                    tx_errors: s.tx_errors,
                    rx_queue_packets: s.rx_queue_packets[..rxq.min(QUEUE_STATS)].to_vec(),
                    tx_queue_packets: s.tx_queue_packets[..txq.min(QUEUE_STATS)].to_vec(),
                }
            })
            .collect();
        let tx_mpps = ports.iter().map(|p| p.tx_mpps).sum();
        Summary {
            seconds: secs,
            ports,
            tx_mpps,
            forwarded: totals(lcores),
            lcores: lcores.to_vec(),
            mbufs_in_use: [0; 2],
        }
    }

    /// The human-readable form.
    pub fn print(&self) {
        outln!("\n==== l3fwd-rs summary ({:.1} s) ====", self.seconds);
        for p in &self.ports {
            outln!(
                "port {}: rx {} tx {} ({:.3} / {:.3} Mpps) rx-missed {} rx-nombuf {} tx-errors {}{}",
                p.port,
                p.rx_packets,
                p.tx_packets,
                p.rx_mpps,
                p.tx_mpps,
                p.rx_missed,
                p.rx_nombuf,
                p.tx_errors,
                per_queue(" | rx per queue", &p.rx_queue_packets)
            );
        }
        // With one lcore its line would repeat the total.
        if self.lcores.len() > 1 {
            for l in &self.lcores {
                let queues: Vec<String> = l.rx_queues.iter().map(|(p, q)| format!("({p},{q})")).collect();
                outln!(
                    "lcore {} polling {}: {}",
                    l.lcore,
                    queues.join(" "),
                    counts(&l.counters.totals())
                );
            }
        }
        outln!(
            "forwarded: {} | total tx {:.3} Mpps",
            counts(&self.forwarded),
            self.tx_mpps
        );
        outln!(
            "mbufs in use: {} before start, {} after shutdown",
            self.mbufs_in_use[0],
            self.mbufs_in_use[1]
        );
    }

    /// Writes the JSON form to `path`.
    pub fn write_json(&self, path: &Path) -> std::io::Result<()> {
        let text = serde_json::to_string_pretty(self).map_err(std::io::Error::other)?;
        std::fs::write(path, text + "\n")
    }
}

/// `rx N tx N | dropped: ...`.
fn counts(t: &Totals) -> String {
    format!("rx {} tx {} | {}", t.rx, t.tx, drops(t))
}

/// `dropped: invalid N runt N tx-full N unroutable N`.
fn drops(t: &Totals) -> String {
    format!(
        "dropped: invalid {} runt {} tx-full {} unroutable {}",
        t.dropped_invalid, t.dropped_runt, t.dropped_tx_full, t.dropped_unroutable
    )
}

/// `label a b c` for a port with several queues; nothing for one.
fn per_queue(label: &str, packets: &[u64]) -> String {
    if packets.len() < 2 {
        return String::new();
    }
    packets.iter().fold(label.to_owned(), |s, n| format!("{s} {n}"))
}
