//! The control thread: periodic rate lines, the `--duration` timer, and the
//! totals printed at exit. It never forwards and runs off the lcores' CPUs.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::Arc;
use std::time::{Duration, Instant};

use dpdk::QUEUE_STATS;
use serde::Serialize;

use crate::counters::{DropReason, LcoreStats, Role, Totals};
use crate::ctl::Socket;
use crate::live::{Command, Tables, RELOAD_READ_TIMEOUT};
use crate::outln;
use crate::pool_watch::{PoolWatch, WATCH_PERIOD};
use crate::setup::Dataplane;

/// What the control thread watches.
pub struct Control {
    /// The enabled ports, whose rates it prints.
    pub ports: Vec<u16>,
    pub lcores: Vec<Arc<LcoreStats>>,
    pub quit: Arc<AtomicBool>,
    /// Print rates every this often (None: never).
    pub interval: Option<Duration>,
    /// Stop forwarding after this long (None: run until a signal).
    pub duration: Option<Duration>,
    /// The live tables, changed here only.
    pub tables: Box<dyn Tables>,
    /// Set by SIGHUP: reload the rule files.
    pub reload: Arc<AtomicBool>,
    /// `l3fwd-ctl`'s socket.
    pub socket: Socket,
    /// Ports whose pools ran empty.
    pub pools: PoolWatch,
}

/// Packets received from and sent to one port: `(rx, tx)`.
type PortPackets = (u64, u64);

/// Packets the lcores received from and sent to `port`: exact
/// whatever the driver reports (net_memif's own counters read zero once
/// its peer is gone, and went backwards in the rate lines).
fn port_packets(port: u16, lcores: &[Arc<LcoreStats>]) -> PortPackets {
    lcores
        .iter()
        .map(|l| l.counters.port_totals(port))
        .fold((0, 0), |(rx, tx), (r, t)| (rx + r, tx + t))
}

/// [`port_packets`] of every port.
fn snapshot(ports: &[u16], lcores: &[Arc<LcoreStats>]) -> Vec<PortPackets> {
    ports.iter().map(|&p| port_packets(p, lcores)).collect()
}

/// Forwarding shorter than this gives no rate: what the ports (or an
/// eventdev RX adapter) took before a stop early in set-up, over next to
/// no time, would read as hundreds of Mpps.
const MIN_RATE_SECS: f64 = 0.1;

/// Millions of packets a second, if `secs` is long enough to mean one.
fn mpps(packets: u64, secs: f64) -> Option<f64> {
    (secs >= MIN_RATE_SECS).then(|| packets as f64 / secs / 1e6)
}

/// A rate as the lines print it, `width` wide with 3 decimals, or `n/a`.
fn shown(rate: Option<f64>, width: usize) -> String {
    match rate {
        Some(r) => format!("{r:width$.3}"),
        None => format!("{:>width$}", "n/a"),
    }
}

/// Sum of the lcores' counters.
pub fn totals(lcores: &[Arc<LcoreStats>]) -> Totals {
    lcores.iter().map(|l| l.counters.totals()).sum()
}

impl Control {
    /// Runs until `quit` is set (by a signal or by the duration).
    pub fn run(mut self) {
        let start = Instant::now();
        let mut last = (start, snapshot(&self.ports, &self.lcores), self.lcore_totals());
        let mut last_watch = start;
        // Shorter while clients send commands.
        let (idle_tick, busy_tick) = (Duration::from_millis(20), Duration::from_millis(1));
        let mut tick = idle_tick;
        // A SIGHUP's reload waits here while its rule files are read.
        let mut hangup: Option<Instant> = None;
        while !self.quit.load(Relaxed) {
            std::thread::sleep(tick);
            if self.reload.swap(false, Relaxed) {
                hangup.get_or_insert_with(Instant::now);
            }
            if let Some(since) = hangup {
                if self.tables.rules_read() {
                    hangup = None;
                    match &self.tables.execute(&[Command::Reload])[..] {
                        [Err(e)] => log::warn!("SIGHUP: reload failed: {e}"),
                        _ => log::info!("SIGHUP: rule files reloaded"),
                    }
                } else if since.elapsed() >= RELOAD_READ_TIMEOUT {
                    hangup = None;
                    self.tables.abandon_read();
                    log::warn!(
                        "SIGHUP: reload failed: the rule files were not read within {} s \
                         (a FIFO without a writer?); the tables in use are unchanged",
                        RELOAD_READ_TIMEOUT.as_secs()
                    );
                }
            }
            tick = if self.socket.serve(self.tables.as_mut()) {
                busy_tick
            } else {
                idle_tick
            };
            let now = Instant::now();
            if self.duration.is_some_and(|d| now - start >= d) {
                self.quit.store(true, Relaxed);
                break;
            }
            if now - last_watch >= WATCH_PERIOD {
                self.pools.sample(|port| port_packets(port, &self.lcores).0);
                last_watch = now;
            }
            if let Some(iv) = self.interval {
                if now - last.0 >= iv {
                    let (stats, lcores) = (snapshot(&self.ports, &self.lcores), self.lcore_totals());
                    self.print_rates(now - last.0, (&last.1, &stats), (&last.2, &lcores));
                    last = (now, stats, lcores);
                }
            }
        }
        self.socket.stop();
    }

    fn lcore_totals(&self) -> Vec<Totals> {
        self.lcores.iter().map(|l| l.counters.totals()).collect()
    }

    /// One line: each port's rates, the drops, and each lcore's load over
    /// the interval; `ports` and `lcores` are the counters before and after.
    fn print_rates(&self, elapsed: Duration, ports: (&[PortPackets], &[PortPackets]), lcores: (&[Totals], &[Totals])) {
        let secs = elapsed.as_secs_f64();
        let mut line = String::new();
        let mut tx_all = 0;
        let (before, after) = ports;
        for ((p, b), a) in self.ports.iter().zip(before).zip(after) {
            let (rx, tx) = (a.0 - b.0, a.1 - b.1);
            tx_all += tx;
            let empty = if self.pools.is_starved(*p) { " pool empty" } else { "" };
            line += &format!(
                "port {p}: rx {} tx {} Mpps{empty} | ",
                shown(mpps(rx, secs), 7),
                shown(mpps(tx, secs), 7)
            );
        }
        let t = totals(&self.lcores);
        line += &format!("total tx {} Mpps | {}", shown(mpps(tx_all, secs), 7), drops(&t));
        for ((l, b), a) in self.lcores.iter().zip(lcores.0).zip(lcores.1) {
            line += &format!(" | lcore {}: {}", l.lcore, a.since(b).load());
        }
        outln!("{line}");
    }
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
    pub fn collect(dataplane: &Dataplane, lcores: &[Arc<LcoreStats>], secs: f64) -> Summary {
        let ports: Vec<PortSummary> = dataplane
            .ports
            .iter()
            .map(|port| {
                let s = port.stats().unwrap_or_default();
                let (rx, tx) = port_packets(port.id(), lcores);
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
                    pool_empty_seconds: dataplane.pool_empty.seconds(port.id()),
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

    /// Writes the JSON form to `path` (see [`crate::stats_json::write`]).
    pub fn write_json(&self, path: &Path) -> std::io::Result<()> {
        let text = serde_json::to_string_pretty(self).map_err(std::io::Error::other)?;
        crate::stats_json::write(path, &(text + "\n"))
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
fn drops(t: &Totals) -> String {
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
