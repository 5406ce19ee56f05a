//! What a run did, printed at exit and written by `--stats-json`.

use std::path::Path;
use std::sync::Arc;

use dpdk::QUEUE_STATS;
use serde::Serialize;

use crate::dataplane::counters::{DropReason, LcoreStats, Role, Totals};
use crate::dataplane::setup::ConfiguredPorts;
use crate::outln;

/// Packets received from and sent to one port: `(rx, tx)`.
pub(super) type PortPackets = (u64, u64);

/// Packets the lcores received from and sent to `port`: exact
/// whatever the driver reports (net_memif's own counters read zero once
/// its peer is gone, and went backwards in the rate lines).
pub(super) fn port_packets(port: u16, lcores: &[Arc<LcoreStats>]) -> PortPackets {
    lcores
        .iter()
        .map(|l| l.counters.port_totals(port))
        .fold((0, 0), |(rx, tx), (r, t)| (rx + r, tx + t))
}

/// Forwarding shorter than this gives no rate: what the ports (or an
/// eventdev RX adapter) took before a stop early in set-up, over next to
/// no time, would read as hundreds of Mpps.
const MIN_RATE_SECS: f64 = 0.1;

/// Millions of packets a second, if `secs` is long enough to mean one.
pub(super) fn mpps(packets: u64, secs: f64) -> Option<f64> {
    (secs >= MIN_RATE_SECS).then(|| packets as f64 / secs / 1e6)
}

/// A rate as the lines print it, `width` wide with 3 decimals, or `n/a`.
pub(super) fn shown(rate: Option<f64>, width: usize) -> String {
    match rate {
        Some(r) => format!("{r:width$.3}"),
        None => format!("{:>width$}", "n/a"),
    }
}

/// Sum of the lcores' counters.
pub fn totals(lcores: &[Arc<LcoreStats>]) -> Totals {
    lcores.iter().map(|l| l.counters.totals()).sum()
}

/// Totals of one port over the run.
#[derive(Debug, Serialize)]
pub struct PortSummary {
    pub port: u16,
    /// Packets the lcores received from the port and handed to its TX
    /// queues (counted by l3fwd-rs; the rest of the line is the driver's).
    pub rx_packets: u64,
    pub tx_packets: u64,
    /// None (null) when forwarding ran too short to give a rate.
    pub rx_mpps: Option<f64>,
    pub tx_mpps: Option<f64>,
    pub rx_missed: u64,
    pub rx_nombuf: u64,
    pub tx_errors: u64,
    /// Seconds the pools its RX queues fill from were empty while it
    /// received nothing: starved, not idle.
    pub pool_empty_seconds: u64,
    /// Packets received per RX queue (the first 16 queues), as the driver
    /// reports them (net_memif: zero once its peer has gone).
    pub rx_queue_packets: Vec<u64>,
    /// Packets sent per TX queue (the first 16 queues).
    pub tx_queue_packets: Vec<u64>,
    /// Packets `dpdk-dumpcap` (or `dpdk-pdump`) had copied, and lost.
    pub captured: u64,
    pub capture_lost: u64,
}

/// What a run did: printed at exit and written by `--stats-json`.
#[derive(Debug, Serialize)]
pub struct Summary {
    pub seconds: f64,
    pub ports: Vec<PortSummary>,
    pub tx_mpps: Option<f64>,
    /// The sum over the lcores.
    pub forwarded: Totals,
    /// What each forwarding lcore did.
    pub lcores: Vec<Arc<LcoreStats>>,
    /// Mbufs taken from the pools before the ports started and after they
    /// stopped: equal unless something leaked (or a port's peer, such as a
    /// net_ring, still holds what was sent to it).
    pub mbufs_in_use: [u64; 2],
    /// Mbufs still taken once the ports closed: a driver that never gives
    /// its rings' back (af_xdp's fill rings), or a leak. Their pool is
    /// kept rather than freed under them.
    pub mbufs_after_close: u64,
}

impl Summary {
    /// Reads the port and lcore counters now; `secs` is how long
    /// forwarding ran.
    pub fn collect(configured: &ConfiguredPorts, lcores: &[Arc<LcoreStats>], secs: f64) -> Summary {
        let ports: Vec<PortSummary> = configured
            .ports
            .iter()
            .map(|port| {
                let s = port.stats().unwrap_or_default();
                let (rx, tx) = port_packets(port.id(), lcores);
                let capture = port.capture_stats().unwrap_or_default();
                let info = port.info();
                let (rxq, txq) = info.map_or((0, 0), |i| (i.rx_queues as usize, i.tx_queues as usize));
                PortSummary {
                    port: port.id(),
                    rx_packets: rx,
                    tx_packets: tx,
                    rx_mpps: mpps(rx, secs),
                    tx_mpps: mpps(tx, secs),
                    rx_missed: s.rx_missed,
                    rx_nombuf: s.rx_nombuf,
                    tx_errors: s.tx_errors,
                    pool_empty_seconds: configured.pool_empty.seconds(port.id()),
                    rx_queue_packets: s.rx_queue_packets[..rxq.min(QUEUE_STATS)].to_vec(),
                    tx_queue_packets: s.tx_queue_packets[..txq.min(QUEUE_STATS)].to_vec(),
                    captured: capture.copied,
                    capture_lost: capture.lost,
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
            mbufs_after_close: 0,
        }
    }

    /// The human-readable form.
    pub fn print(&self) {
        outln!("\n==== l3fwd-rs summary ({:.1} s) ====", self.seconds);
        for p in &self.ports {
            outln!(
                "port {}: rx {} tx {} ({} / {} Mpps) rx-missed {} rx-nombuf {} tx-errors {}{}",
                p.port,
                p.rx_packets,
                p.tx_packets,
                shown(p.rx_mpps, 0),
                shown(p.tx_mpps, 0),
                p.rx_missed,
                p.rx_nombuf,
                p.tx_errors,
                per_queue(" | rx per queue", &p.rx_queue_packets)
            );
            if p.captured + p.capture_lost > 0 {
                outln!(
                    "port {}: a packet capture copied {} packets and lost {}",
                    p.port,
                    p.captured,
                    p.capture_lost
                );
            }
            if p.pool_empty_seconds > 0 {
                outln!(
                    "port {}: its pool was empty for {} s while it received nothing: give --num-mbufs more",
                    p.port,
                    p.pool_empty_seconds
                );
            }
        }
        // With one lcore its line would repeat the total.
        if self.lcores.len() > 1 {
            for l in &self.lcores {
                let does = match l.role {
                    Role::Poll => {
                        let queues: Vec<String> = l.rx_queues.iter().map(|(p, q)| format!("({p},{q})")).collect();
                        format!("polling {}", queues.join(" "))
                    }
                    Role::EventWorker => "event worker".to_owned(),
                    Role::RxAdapter => "RX adapter, after the stop".to_owned(),
                };
                outln!("lcore {} {does}: {}", l.lcore, counts(&l.counters.totals()));
            }
        }
        outln!(
            "forwarded: {} | total tx {} Mpps",
            counts(&self.forwarded),
            shown(self.tx_mpps, 0)
        );
        for l in self.lcores.iter().filter(|l| l.role != Role::RxAdapter) {
            outln!("lcore {} load: {}", l.lcore, l.counters.totals().load());
        }
        let [before, after] = self.mbufs_in_use;
        outln!(
            "mbufs in use: {before} before start, {after} after shutdown{}",
            mbufs_note(before, after, self.mbufs_after_close)
        );
    }

    /// Writes the JSON form to `path` (see [`crate::control::stats_json::write`]).
    pub fn write_json(&self, path: &Path) -> std::io::Result<()> {
        let text = serde_json::to_string_pretty(self).map_err(std::io::Error::other)?;
        crate::control::stats_json::write(path, &(text + "\n"))
    }
}

/// What the mbuf counts mean: the drivers' own (RX rings, fill rings:
/// taken at queue setup) when they are the same before and after, and
/// whether the drivers gave them back when their ports closed; mbufs not
/// returned when more are out after.
fn mbufs_note(before: u64, after: u64, after_close: u64) -> String {
    match after.checked_sub(before) {
        Some(0) if before > 0 && after_close == 0 => {
            " (held by the drivers' RX and fill rings, given back when the ports closed: none leaked)".into()
        }
        Some(0) if before > 0 => format!(
            " (held by the drivers' RX and fill rings; {after_close} still held after the ports closed: \
             a driver keeps them (af_xdp its fill rings'), so their pool is kept, not freed)"
        ),
        Some(0) | None => String::new(),
        Some(more) => format!(" ({more} not returned: leaked, or still held by a port's peer)"),
    }
}

/// `rx N tx N | dropped: ...`.
fn counts(t: &Totals) -> String {
    format!("rx {} tx {} | {}", t.rx, t.tx, drops(t))
}

/// `dropped: invalid N runt N tx-full N ...`, every [`DropReason`] reason.
pub(super) fn drops(t: &Totals) -> String {
    DropReason::ALL.iter().fold("dropped:".to_owned(), |s, &d| {
        format!("{s} {} {}", d.label(), t.dropped(d))
    })
}

/// `label a b c` for a port with several queues; nothing for one.
fn per_queue(label: &str, packets: &[u64]) -> String {
    if packets.len() < 2 {
        return String::new();
    }
    packets.iter().fold(label.to_owned(), |s, n| format!("{s} {n}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mbuf_line_says_what_the_drivers_kept_once_the_ports_closed() {
        assert!(mbufs_note(4096, 4096, 0).contains("given back when the ports closed: none leaked"));
        let kept = mbufs_note(4096, 4096, 4096);
        assert!(kept.contains("4096 still held after the ports closed"), "{kept}");
        assert!(!kept.contains("none leaked"), "{kept}");
        assert!(mbufs_note(0, 5, 5).contains("5 not returned"));
        assert_eq!(mbufs_note(0, 0, 0), "");
    }
}
