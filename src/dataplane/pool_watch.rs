//! Ports that receive nothing because the pool their RX queues fill from
//! is empty, told apart from ports with no traffic. A pcap port replaying
//! a file keeps one mbuf per frame, and some drivers count no `rx_nombuf`
//! when they find the pool empty: without this, a starved run shows only
//! zeros. The control thread samples every [`WATCH_PERIOD`]; the rate
//! lines, `--stats-json` and telemetry say which ports starved and for how
//! long.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::time::Duration;

use dpdk::Mempool;

/// How often the control thread looks.
pub const WATCH_PERIOD: Duration = Duration::from_secs(1);

/// A port starved over a period: it received nothing, and its pools had
/// less than one RX burst free (mbufs in the lcores' caches count as free:
/// an lcore takes from its own cache first).
fn starved(received: u64, free: u64, burst: u64) -> bool {
    received == 0 && free < burst
}

/// The periods each port spent starved, shared by the control thread (which
/// counts), telemetry and the summary.
#[derive(Debug, Clone, Default)]
pub struct PoolEmpty {
    ports: Vec<u16>,
    periods: Arc<[AtomicU64]>,
}

impl PoolEmpty {
    /// For `ports`, none starved yet.
    pub fn for_ports(ports: &[u16]) -> PoolEmpty {
        PoolEmpty {
            ports: ports.to_vec(),
            periods: ports.iter().map(|_| AtomicU64::new(0)).collect(),
        }
    }

    /// Seconds (watch periods) `port` spent with an empty pool.
    pub fn seconds(&self, port: u16) -> u64 {
        self.ports
            .iter()
            .position(|&p| p == port)
            .map_or(0, |i| self.periods[i].load(Relaxed) * WATCH_PERIOD.as_secs())
    }

    /// `(port, seconds)` for every port.
    pub fn all(&self) -> impl Iterator<Item = (u16, u64)> + '_ {
        self.ports.iter().map(|&p| (p, self.seconds(p)))
    }
}

/// One port under watch.
struct Watched {
    port: u16,
    /// The pools its RX queues fill from.
    pools: Vec<Mempool>,
    /// Packets received up to the last sample.
    received: u64,
    /// Whether the last period starved.
    starved: bool,
}

/// The control thread's side: samples the ports' pools.
pub struct PoolWatch {
    ports: Vec<Watched>,
    counts: PoolEmpty,
    burst: u64,
}

impl PoolWatch {
    /// Watches each `(port, pools its RX queues fill from)`, counting into
    /// `counts` (made for the same ports); `burst` is the RX burst.
    pub fn new(port_pools: Vec<(u16, Vec<Mempool>)>, counts: PoolEmpty, burst: usize) -> PoolWatch {
        PoolWatch {
            ports: port_pools
                .into_iter()
                .map(|(port, pools)| Watched {
                    port,
                    pools,
                    received: 0,
                    starved: false,
                })
                .collect(),
            counts,
            burst: burst as u64,
        }
    }

    /// Ends a period: `received(port)` gives what each port received so far.
    pub fn sample(&mut self, received: impl Fn(u16) -> u64) {
        for (w, count) in self.ports.iter_mut().zip(self.counts.periods.iter()) {
            let now = received(w.port);
            let free: u64 = w.pools.iter().map(|p| u64::from(p.size() - p.in_use())).sum();
            w.starved = starved(now - w.received.min(now), free, self.burst);
            w.received = now;
            if w.starved {
                count.fetch_add(1, Relaxed);
            }
        }
    }

    /// Whether `port`'s last period starved.
    pub fn is_starved(&self, port: u16) -> bool {
        self.ports.iter().any(|w| w.port == port && w.starved)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_port_starves_only_when_it_received_nothing_from_a_pool_without_a_burst_free() {
        assert!(starved(0, 0, 32));
        assert!(starved(0, 31, 32));
        assert!(!starved(0, 32, 32), "idle with room to receive: no traffic");
        assert!(!starved(1, 0, 32), "it received: the pool refills");
    }

    #[test]
    fn periods_are_counted_per_port() {
        let empty = PoolEmpty::for_ports(&[0, 3]);
        let mut watch = PoolWatch::new(vec![(0, Vec::new()), (3, Vec::new())], empty.clone(), 32);
        // No pools: nothing free. Port 3 receives in the first period.
        watch.sample(|port| if port == 3 { 10 } else { 0 });
        assert!(watch.is_starved(0) && !watch.is_starved(3));
        watch.sample(|port| if port == 3 { 10 } else { 0 });
        assert!(watch.is_starved(3), "nothing more received");
        assert_eq!(empty.all().collect::<Vec<_>>(), [(0, 2), (3, 1)]);
        assert_eq!(empty.seconds(7), 0, "a port not watched");
    }
}
