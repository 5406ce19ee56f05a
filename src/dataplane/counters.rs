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
    pub role: Role,
    /// The `(port, queue)` pairs it polls.
    pub rx_queues: Vec<(u16, u16)>,
    #[serde(flatten)]
    pub counters: LcoreCounters,
}

/// What an lcore does, as the summary and `--stats-json` say it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// Polls its RX queues and forwards (poll mode).
    Poll,
    /// Dequeues events from its event port and forwards them (eventdev mode).
    EventWorker,
    /// Runs the eth RX adapter (a service lcore): counts only what the
    /// adapter freed on arrival after a stop.
    RxAdapter,
}

/// Declares the counters once, each a line: the counts, then the drop
/// reasons (`Variant: json_field = "label"`). Generates `LcoreCounters`
/// (an atomic each, plus the per-port counts), `Totals` (a plain snapshot,
/// summable across lcores), [`DropReason`] with `add_drop` and each reason's
/// label, and the snapshot, difference, sum and names that telemetry, the
/// rate lines, the summary and `--stats-json` use.
macro_rules! counters {
    (
        $($(#[$doc:meta])* $name:ident,)*
        ;
        $($(#[$drop_doc:meta])* $reason:ident: $field:ident = $label:literal,)*
    ) => {
        /// Why a packet was dropped: each reason is counted apart.
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub enum DropReason {
            $($(#[$drop_doc])* $reason,)*
        }

        impl DropReason {
            /// Every reason, in the order the rate lines list them.
            pub const ALL: [DropReason; [$($label),*].len()] = [$(DropReason::$reason),*];

            /// Its name in the rate lines and the summary.
            pub fn label(self) -> &'static str {
                match self {
                    $(DropReason::$reason => $label,)*
                }
            }
        }

        /// Counters of one forwarding lcore.
        #[repr(align(64))]
        #[derive(Debug, Default)]
        pub struct LcoreCounters {
            $($name: AtomicU64,)*
            /// By [`DropReason`] reason.
            drops: [AtomicU64; DropReason::ALL.len()],
            /// By port id (none with `Default`).
            by_port: Box<[PortCounters]>,
        }

        /// A plain snapshot of counters, summable across lcores.
        #[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Serialize)]
        pub struct Totals {
            $($(#[$doc])* pub $name: u64,)*
            $($(#[$drop_doc])* pub $field: u64,)*
        }

        impl Totals {
            /// The counts since `earlier` (a snapshot of the same counters).
            pub fn since(&self, earlier: &Totals) -> Totals {
                Totals {
                    $($name: self.$name.saturating_sub(earlier.$name),)*
                    $($field: self.$field.saturating_sub(earlier.$field),)*
                }
            }

            /// The packets dropped for `reason`.
            pub fn dropped(&self, reason: DropReason) -> u64 {
                match reason {
                    $(DropReason::$reason => self.$field,)*
                }
            }
        }

        impl std::ops::Add for Totals {
            type Output = Totals;
            fn add(self, o: Totals) -> Totals {
                Totals {
                    $($name: self.$name + o.$name,)*
                    $($field: self.$field + o.$field,)*
                }
            }
        }

        impl LcoreCounters {
            /// The counters as name/value pairs, for telemetry (the names
            /// of `--stats-json`).
            pub fn named(t: &Totals) -> Vec<(String, u64)> {
                vec![
                    $((stringify!($name).to_owned(), t.$name),)*
                    $((stringify!($field).to_owned(), t.$field),)*
                ]
            }

            /// A snapshot, readable from any thread.
            pub fn totals(&self) -> Totals {
                Totals {
                    $($name: self.$name.load(Relaxed),)*
                    $($field: self.drops[DropReason::$reason as usize].load(Relaxed),)*
                }
            }
        }
    };
}

counters! {
    /// Packets received.
    rx,
    /// Packets handed to a TX queue.
    tx,
    /// TSC cycles of the loop rounds that received packets (VPP's and
    /// OVS's "busy" cycles): what forwarding cost, idle polling left out.
    busy_cycles,
    /// RX queue polls.
    polls,
    /// Polls that brought nothing.
    empty_polls,
    /// Events dequeued (eventdev mode): packets, or vectors of them.
    events,
    ;
    /// IPv4 packets dropped for an invalid header (RFC 1812 checks).
    Invalid: dropped_invalid = "invalid",
    /// Frames shorter than the headers they announce.
    Runt: dropped_runt = "runt",
    /// Packets a TX queue refused.
    TxFull: dropped_tx_full = "tx-full",
    /// Packets routed to a port the lcore cannot send on. The tables hold
    /// routes to enabled ports only, so this stays 0; a route is counted
    /// here rather than trusted.
    Unroutable: dropped_unroutable = "unroutable",
    /// Packets an ACL deny rule matched.
    Denied: dropped_denied = "denied",
    /// Packets no rule matched in a mode that drops them (ACL; its
    /// non-IP frames too).
    NoRule: dropped_no_rule = "no-rule",
    /// Packets whose bytes another holder can see (a shared or cloned
    /// mbuf, which no PMD we know hands out): rewriting them in place, as
    /// C does, would change that holder's packet.
    Shared: dropped_shared = "shared",
    /// Packets the eventdev RX adapter freed on arrival after a stop, while
    /// the workers drained what was in flight.
    AtStop: dropped_at_stop = "at-stop",
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

/// How hard an lcore works, derived from its [`Totals`], as VPP's `show
/// runtime` and OVS's `pmd-perf-show` report it.
#[derive(Debug, Default, Clone, Copy, PartialEq, Serialize)]
pub struct Load {
    /// Busy cycles per received packet.
    pub cycles_per_packet: f64,
    /// Packets per poll that brought any (burst fill; at most 32).
    pub packets_per_poll: f64,
    /// Share of polls that brought nothing (0..1): the idle headroom.
    pub empty_poll_share: f64,
}

impl Totals {
    /// The load these counts show (zeros where nothing was counted).
    pub fn load(&self) -> Load {
        let ratio = |a: u64, b: u64| if b == 0 { 0.0 } else { a as f64 / b as f64 };
        Load {
            cycles_per_packet: ratio(self.busy_cycles, self.rx),
            packets_per_poll: ratio(self.rx, self.polls - self.empty_polls.min(self.polls)),
            empty_poll_share: ratio(self.empty_polls, self.polls),
        }
    }
}

/// `52.3 cycles/pkt, 31.9 pkts/poll, 0.1% polls empty`.
impl std::fmt::Display for Load {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{:.1} cycles/pkt, {:.1} pkts/poll, {:.1}% polls empty",
            self.cycles_per_packet,
            self.packets_per_poll,
            self.empty_poll_share * 100.0
        )
    }
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
    /// `n` packets dropped for `reason`.
    #[inline(always)]
    pub fn add_drop(&self, reason: DropReason, n: u64) {
        bump(&self.drops[reason as usize], n);
    }
    #[inline(always)]
    pub fn add_busy_cycles(&self, n: u64) {
        bump(&self.busy_cycles, n);
    }
    /// Counts `polls` RX polls, `empty` of which brought nothing.
    #[inline(always)]
    pub fn add_polls(&self, polls: u64, empty: u64) {
        bump(&self.polls, polls);
        bump(&self.empty_polls, empty);
    }

    /// Counts events dequeued.
    #[inline(always)]
    pub fn add_events(&self, n: u64) {
        bump(&self.events, n);
    }
}

/// Serialised as a snapshot of the counters and the load they show.
impl Serialize for LcoreCounters {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct Snapshot {
            #[serde(flatten)]
            totals: Totals,
            load: Load,
        }
        let totals = self.totals();
        Snapshot {
            totals,
            load: totals.load(),
        }
        .serialize(s)
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
        a.add_drop(DropReason::Runt, 1);
        a.add_drop(DropReason::Invalid, 1);
        let b = LcoreCounters::for_ports(2);
        b.add_rx(1, 2);
        b.add_drop(DropReason::TxFull, 2);
        b.add_drop(DropReason::Unroutable, 3);
        a.add_drop(DropReason::Denied, 4);
        b.add_drop(DropReason::NoRule, 5);
        a.add_drop(DropReason::AtStop, 6);
        b.add_drop(DropReason::Shared, 7);
        b.add_busy_cycles(70);
        b.add_polls(4, 1);
        b.add_events(6);
        let t: Totals = [a.totals(), b.totals()].into_iter().sum();
        assert_eq!(
            t,
            Totals {
                rx: 7,
                tx: 3,
                busy_cycles: 70,
                polls: 4,
                empty_polls: 1,
                events: 6,
                dropped_invalid: 1,
                dropped_runt: 1,
                dropped_tx_full: 2,
                dropped_unroutable: 3,
                dropped_denied: 4,
                dropped_no_rule: 5,
                dropped_shared: 7,
                dropped_at_stop: 6,
            }
        );
        let dropped: Vec<u64> = DropReason::ALL.iter().map(|&d| t.dropped(d)).collect();
        assert_eq!(dropped, [1, 1, 2, 3, 4, 5, 7, 6]);
        let named = LcoreCounters::named(&t);
        assert!(named.contains(&("dropped_no_rule".to_owned(), 5)), "{named:?}");
        assert_eq!(named.len(), 6 + DropReason::ALL.len());
        let load = t.load();
        assert_eq!(load.cycles_per_packet, 10.0);
        assert!((load.packets_per_poll - 7.0 / 3.0).abs() < 1e-9);
        assert_eq!(load.empty_poll_share, 0.25);
        assert_eq!(t.since(&t), Totals::default());
        assert_eq!(Totals::default().load(), Load::default());
        assert_eq!(
            (a.port_totals(0), a.port_totals(1), b.port_totals(1)),
            ((5, 0), (0, 3), (2, 0))
        );
        assert_eq!(a.port_totals(7), (0, 0), "no counters for a port past the end");
    }
}
