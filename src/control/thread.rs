//! The control thread: periodic rate lines, the `--duration` timer, the
//! live tables' changes and the pool watch. It never forwards and runs off
//! the lcores' CPUs.

use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::control::live::{Tables, RELOAD_READ_TIMEOUT};
use crate::control::metrics::Metrics;
use crate::control::protocol::Command;
use crate::control::socket::Socket;
use crate::dataplane::counters::{LcoreStats, Totals};
use crate::dataplane::pool_watch::{PoolWatch, WATCH_PERIOD};
use crate::outln;

use crate::control::summary::{drops, mpps, port_packets, shown, totals, PortPackets};

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
    /// `--metrics`' endpoint.
    pub metrics: Option<Metrics>,
}

/// [`port_packets`] of every port.
fn snapshot(ports: &[u16], lcores: &[Arc<LcoreStats>]) -> Vec<PortPackets> {
    ports.iter().map(|&p| port_packets(p, lcores)).collect()
}

impl Control {
    /// Runs until `quit` is set (by a signal or by the duration).
    pub fn run(mut self) {
        let start = Instant::now();
        let mut last = (start, snapshot(&self.ports, &self.lcores), self.lcore_totals());
        let mut last_watch = start;
        // Shorter while clients send commands or scrape.
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
            let commands = self.socket.serve(self.tables.as_mut());
            let scrapes = self.metrics.as_mut().is_some_and(|m| m.serve(self.tables.as_mut()));
            tick = if commands || scrapes { busy_tick } else { idle_tick };
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
