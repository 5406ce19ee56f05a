//! The port/queue/lcore plan: how many queues each port gets, which RX
//! queues each lcore polls, and which TX queue it sends on.
//!
//! Mirrors C l3fwd's `check_lcore_params`, `check_port_config`,
//! `get_port_n_rx_queues`, `init_lcore_rx_queues` and the TX queue setup loop
//! of its `main`, but on plain data (the EAL facts are passed in), so that it
//! is testable without DPDK and fails with a message instead of `rte_exit`.

use crate::cli::portmask::PortMask;
use std::collections::HashMap;
use std::fmt;

/// One `(port,queue,lcore)` tuple of `--config`: RX queue `queue` of `port`
/// is polled by `lcore`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConfigEntry {
    pub port: u16,
    pub queue: u16,
    pub lcore: u32,
}

impl fmt::Display for ConfigEntry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "({},{},{})", self.port, self.queue, self.lcore)
    }
}

/// What one port supports, from `rte_eth_dev_info_get`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PortCaps {
    pub max_rx_queues: u16,
    pub max_tx_queues: u16,
}

/// The EAL facts the plan depends on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Topology {
    /// Existing ports; the index is the port id.
    pub ports: Vec<PortCaps>,
    /// Enabled lcore ids, ascending (the main lcore included).
    pub lcores: Vec<u32>,
    pub main_lcore: u32,
}

/// Queue counts to configure one enabled port with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PortPlan {
    pub port: u16,
    pub n_rx_queues: u16,
    pub n_tx_queues: u16,
}

/// What one enabled lcore does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LcorePlan {
    pub lcore: u32,
    /// Whether this is the EAL main lcore (it forwards too, as in C).
    pub is_main: bool,
    /// `(port, queue)` pairs to poll, in `--config` order; empty: the lcore idles.
    pub rx_queues: Vec<(u16, u16)>,
    /// The TX queue id this lcore owns on every enabled port (it transmits
    /// on all of them, since a route may point to any and a lookup miss
    /// goes back out of the input port): its index among the enabled
    /// lcores, as in C, so no two lcores share a TX queue.
    pub tx_queue: u16,
}

/// The whole plan: every enabled port (ascending) and every enabled lcore
/// (ascending, the order C assigns TX queues in).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    pub ports: Vec<PortPlan>,
    pub lcores: Vec<LcorePlan>,
    /// Ports the mask enables that do not exist: skipped, as C skips them.
    pub missing_ports: Vec<u16>,
}

impl Plan {
    /// A plan that forwards to `ports`, one queue each and no lcores: for
    /// tests of what the ports decide.
    #[cfg(test)]
    pub fn forwarding_to(ports: &[u16]) -> Plan {
        let port = |&port: &u16| PortPlan {
            port,
            n_rx_queues: 1,
            n_tx_queues: 1,
        };
        Plan {
            ports: ports.iter().map(port).collect(),
            lcores: Vec::new(),
            missing_ports: Vec::new(),
        }
    }

    /// Whether `port` is enabled and exists: the ports a route added while
    /// forwarding may name.
    pub fn forwards_to(&self, port: u16) -> bool {
        self.ports.iter().any(|p| p.port == port)
    }

    /// Whether rules and routes to `port` are loaded: the portmask enables
    /// it, as in C, whether it exists or not. Packets routed to a missing
    /// port are dropped as unroutable (the lcore has no TX queue there),
    /// never sent back out of their input port as a miss would be.
    pub fn loads_routes_to(&self, port: u16) -> bool {
        self.forwards_to(port) || self.missing_ports.contains(&port)
    }
}

/// Why the `--config` / portmask pair does not fit the EAL topology.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PlanError {
    LcoreNotEnabled { entry: ConfigEntry, lcores: Vec<u32> },
    PortNotInMask { entry: ConfigEntry, portmask: PortMask },
    ConfigPortMissing { entry: ConfigEntry, n_ports: usize },
    DuplicateQueue { entry: ConfigEntry, first: ConfigEntry },
    QueueOutOfSequence { entry: ConfigEntry, expected: u16 },
    TooManyRxQueues { port: u16, requested: u16, max: u16 },
    TooManyTxQueues { port: u16, requested: u16, max: u16 },
}

impl fmt::Display for PlanError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::LcoreNotEnabled { entry, lcores } => {
                let lcores: Vec<String> = lcores.iter().map(u32::to_string).collect();
                let (lcore, lcores) = (entry.lcore, lcores.join(","));
                write!(f, "lcore {lcore} in {entry} is not enabled (EAL lcores: {lcores})")
            }
            Self::PortNotInMask { entry, portmask } => write!(
                f,
                "port {} in --config {entry} is not enabled in the portmask {portmask:#x}",
                entry.port
            ),
            Self::ConfigPortMissing { entry, n_ports } => write!(
                f,
                "port {} in --config {entry} does not exist: only {n_ports} ports exist",
                entry.port
            ),
            Self::DuplicateQueue { entry, first } => write!(
                f,
                "queue {} of port {} is in --config twice: {first} and {entry}",
                entry.queue, entry.port
            ),
            Self::QueueOutOfSequence { entry, expected } => write!(
                f,
                "queue ids of port {} must be 0,1,2... in --config order: {entry} should have queue {expected}",
                entry.port
            ),
            Self::TooManyRxQueues { port, requested, max } => write!(
                f,
                "port {port}: --config uses {requested} RX queues, but the port supports at most {max}"
            ),
            Self::TooManyTxQueues { port, requested, max } => write!(
                f,
                "port {port}: {requested} lcores need {requested} TX queues, but the port supports at most {max}"
            ),
        }
    }
}

impl std::error::Error for PlanError {}

impl Plan {
    /// Checks `config` against the portmask and the topology, and lays out
    /// queues and lcores.
    pub fn build(config: &[ConfigEntry], portmask: PortMask, topology: &Topology) -> Result<Self, PlanError> {
        for entry in config {
            check_entry(entry, portmask, topology)?;
        }
        let (enabled, missing_ports): (Vec<u16>, Vec<u16>) = portmask
            .ports()
            .partition(|&port| usize::from(port) < topology.ports.len());
        if !missing_ports.is_empty() {
            log::warn!(
                "portmask {portmask:#x} enables ports {missing_ports:?}, which do not exist ({} ports exist): not set up, as in C l3fwd; packets routed there are dropped as unroutable",
                topology.ports.len()
            );
        }
        check_duplicates(config)?;
        let rx_counts = rx_queue_counts(config, topology.ports.len())?;
        let n_tx_queues = tx_queue_count(topology);
        let ports = enabled
            .iter()
            .map(|&port| port_plan(port, rx_counts[usize::from(port)], n_tx_queues, topology))
            .collect::<Result<_, _>>()?;
        let lcores = (0..n_tx_queues)
            .zip(&topology.lcores)
            .map(|(tx_queue, &lcore)| LcorePlan {
                lcore,
                is_main: lcore == topology.main_lcore,
                rx_queues: rx_queues_of(lcore, config),
                tx_queue,
            })
            .collect();
        Ok(Self {
            ports,
            lcores,
            missing_ports,
        })
    }
}

/// One tuple's lcore and port, in the order C checks them.
fn check_entry(entry: &ConfigEntry, portmask: PortMask, topology: &Topology) -> Result<(), PlanError> {
    if !topology.lcores.contains(&entry.lcore) {
        return Err(PlanError::LcoreNotEnabled {
            entry: *entry,
            lcores: topology.lcores.clone(),
        });
    }
    if !portmask.contains(entry.port) {
        return Err(PlanError::PortNotInMask {
            entry: *entry,
            portmask,
        });
    }
    if usize::from(entry.port) >= topology.ports.len() {
        return Err(PlanError::ConfigPortMissing {
            entry: *entry,
            n_ports: topology.ports.len(),
        });
    }
    Ok(())
}

/// Checked before the sequence, which a duplicate also breaks, for a clearer message.
fn check_duplicates(config: &[ConfigEntry]) -> Result<(), PlanError> {
    let mut first_use = HashMap::new();
    for entry in config {
        if let Some(first) = first_use.insert((entry.port, entry.queue), *entry) {
            return Err(PlanError::DuplicateQueue { entry: *entry, first });
        }
    }
    Ok(())
}

/// RX queues per port id, as C's `get_port_n_rx_queues`: in `--config` order,
/// a port's queue ids must be 0, 1, 2...
fn rx_queue_counts(config: &[ConfigEntry], n_ports: usize) -> Result<Vec<u16>, PlanError> {
    let mut counts = vec![0u16; n_ports];
    for entry in config {
        let next = &mut counts[usize::from(entry.port)];
        if entry.queue != *next {
            return Err(PlanError::QueueOutOfSequence {
                entry: *entry,
                expected: *next,
            });
        }
        // Saturating: ids are below 1024 (RTE_MAX_QUEUES_PER_PORT) anyway.
        *next = next.saturating_add(1);
    }
    Ok(counts)
}

/// One TX queue per enabled lcore on every port, as in C.
fn tx_queue_count(topology: &Topology) -> u16 {
    u16::try_from(topology.lcores.len()).unwrap_or(u16::MAX)
}

fn port_plan(port: u16, n_rx_queues: u16, n_tx_queues: u16, topology: &Topology) -> Result<PortPlan, PlanError> {
    let caps = topology.ports[usize::from(port)];
    if n_rx_queues > caps.max_rx_queues {
        return Err(PlanError::TooManyRxQueues {
            port,
            requested: n_rx_queues,
            max: caps.max_rx_queues,
        });
    }
    if n_tx_queues > caps.max_tx_queues {
        return Err(PlanError::TooManyTxQueues {
            port,
            requested: n_tx_queues,
            max: caps.max_tx_queues,
        });
    }
    Ok(PortPlan {
        port,
        n_rx_queues,
        n_tx_queues,
    })
}

fn rx_queues_of(lcore: u32, config: &[ConfigEntry]) -> Vec<(u16, u16)> {
    config
        .iter()
        .filter(|entry| entry.lcore == lcore)
        .map(|entry| (entry.port, entry.queue))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entries(tuples: &[(u16, u16, u32)]) -> Vec<ConfigEntry> {
        tuples
            .iter()
            .map(|&(port, queue, lcore)| ConfigEntry { port, queue, lcore })
            .collect()
    }

    fn entry(port: u16, queue: u16, lcore: u32) -> ConfigEntry {
        ConfigEntry { port, queue, lcore }
    }

    /// `n_ports` ports supporting 16 queues each way, the given lcores, main first.
    fn topology(n_ports: usize, lcores: &[u32]) -> Topology {
        let caps = PortCaps {
            max_rx_queues: 16,
            max_tx_queues: 16,
        };
        Topology {
            ports: vec![caps; n_ports],
            lcores: lcores.to_vec(),
            main_lcore: lcores[0],
        }
    }

    fn error(tuples: &[(u16, u16, u32)], portmask: u32, topology: &Topology) -> String {
        Plan::build(&entries(tuples), PortMask::from_bits(portmask), topology)
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn c_default_config() {
        let config = entries(&[
            (0, 0, 2),
            (0, 1, 2),
            (0, 2, 2),
            (1, 0, 2),
            (1, 1, 2),
            (1, 2, 2),
            (2, 0, 2),
            (3, 0, 3),
            (3, 1, 3),
        ]);
        let plan = Plan::build(&config, PortMask::from_bits(0xf), &topology(4, &[0, 1, 2, 3])).unwrap();
        let rx: Vec<u16> = plan.ports.iter().map(|p| p.n_rx_queues).collect();
        assert_eq!(rx, [3, 3, 1, 2]);
        assert!(plan.ports.iter().all(|p| p.n_tx_queues == 4));
        let lcore2 = &plan.lcores[2];
        assert_eq!(lcore2.lcore, 2);
        assert_eq!(lcore2.rx_queues.len(), 7);
        assert_eq!(lcore2.rx_queues[3], (1, 0));
        assert_eq!(plan.lcores[3].rx_queues, [(3, 0), (3, 1)]);
        assert!(plan.lcores[0].rx_queues.is_empty() && plan.lcores[0].is_main);
        assert!(!plan.lcores[3].is_main);
        for (index, lcore) in plan.lcores.iter().enumerate() {
            assert_eq!(usize::from(lcore.tx_queue), index);
        }
    }

    #[test]
    fn sparse_lcores_and_ports() {
        let topology = topology(4, &[1, 4, 9]);
        let config = entries(&[(2, 0, 9), (0, 0, 4), (2, 1, 4)]);
        let plan = Plan::build(&config, PortMask::from_bits(0b101), &topology).unwrap();
        assert_eq!(
            plan.ports,
            [
                PortPlan {
                    port: 0,
                    n_rx_queues: 1,
                    n_tx_queues: 3
                },
                PortPlan {
                    port: 2,
                    n_rx_queues: 2,
                    n_tx_queues: 3
                },
            ]
        );
        let lcores: Vec<(u32, u16)> = plan.lcores.iter().map(|l| (l.lcore, l.tx_queue)).collect();
        assert_eq!(lcores, [(1, 0), (4, 1), (9, 2)]);
        assert_eq!(plan.lcores[1].rx_queues, [(0, 0), (2, 1)]);
        assert_eq!(plan.lcores[2].rx_queues, [(2, 0)]);
    }

    #[test]
    fn enabled_port_without_rx_queue_still_gets_tx_queues() {
        let plan = Plan::build(&entries(&[(0, 0, 0)]), PortMask::from_bits(0b11), &topology(2, &[0, 1])).unwrap();
        assert_eq!(
            plan.ports[1],
            PortPlan {
                port: 1,
                n_rx_queues: 0,
                n_tx_queues: 2
            }
        );
    }

    #[test]
    fn lcore_not_enabled() {
        assert_eq!(
            error(&[(0, 0, 5)], 1, &topology(2, &[0, 1])),
            "lcore 5 in (0,0,5) is not enabled (EAL lcores: 0,1)"
        );
    }

    #[test]
    fn config_port_not_in_portmask() {
        assert_eq!(
            error(&[(0, 0, 1), (2, 0, 1)], 0x3, &topology(3, &[0, 1])),
            "port 2 in --config (2,0,1) is not enabled in the portmask 0x3"
        );
    }

    #[test]
    fn config_port_missing() {
        assert_eq!(
            error(&[(4, 0, 1)], 0x10, &topology(2, &[0, 1])),
            "port 4 in --config (4,0,1) does not exist: only 2 ports exist"
        );
    }

    #[test]
    fn portmask_ports_that_do_not_exist_are_skipped() {
        let plan = Plan::build(&entries(&[(0, 0, 1)]), PortMask::from_bits(0x7), &topology(2, &[0, 1])).unwrap();
        assert_eq!(plan.ports.iter().map(|p| p.port).collect::<Vec<_>>(), [0, 1]);
        assert_eq!(plan.missing_ports, [2]);
        // Routes to the missing port are loaded, as in C; not to a disabled one.
        assert!(plan.loads_routes_to(1) && plan.loads_routes_to(2) && !plan.loads_routes_to(3));
        let plan = Plan::build(&[], PortMask::from_bits(u32::MAX), &topology(2, &[0])).unwrap();
        assert_eq!(plan.missing_ports, (2..32).collect::<Vec<_>>());
        assert!(plan.loads_routes_to(31) && !plan.loads_routes_to(32));
    }

    #[test]
    fn duplicate_queue() {
        assert_eq!(
            error(&[(0, 0, 0), (0, 1, 0), (0, 1, 1)], 1, &topology(1, &[0, 1])),
            "queue 1 of port 0 is in --config twice: (0,1,0) and (0,1,1)"
        );
    }

    #[test]
    fn queues_out_of_sequence() {
        let topology = topology(2, &[0, 1]);
        assert_eq!(
            error(&[(0, 0, 0), (1, 0, 0), (0, 2, 1)], 3, &topology),
            "queue ids of port 0 must be 0,1,2... in --config order: (0,2,1) should have queue 1"
        );
        let message = error(&[(0, 1, 0), (0, 0, 0)], 1, &topology);
        assert!(message.ends_with("(0,1,0) should have queue 0"), "{message}");
    }

    #[test]
    fn rx_queue_limit() {
        let mut topology = topology(1, &[0]);
        topology.ports[0].max_rx_queues = 2;
        assert!(Plan::build(&entries(&[(0, 0, 0), (0, 1, 0)]), PortMask::from_bits(1), &topology).is_ok());
        assert_eq!(
            error(&[(0, 0, 0), (0, 1, 0), (0, 2, 0)], 1, &topology),
            "port 0: --config uses 3 RX queues, but the port supports at most 2"
        );
    }

    #[test]
    fn tx_queue_limit() {
        let mut topology = topology(2, &[0, 1, 2]);
        topology.ports[1].max_tx_queues = 2;
        assert_eq!(
            error(&[(0, 0, 0)], 3, &topology),
            "port 1: 3 lcores need 3 TX queues, but the port supports at most 2"
        );
        topology.ports[1].max_tx_queues = 3;
        assert!(Plan::build(&entries(&[(0, 0, 0)]), PortMask::from_bits(3), &topology).is_ok());
    }

    #[test]
    fn checks_follow_c_order() {
        // An entry with both a disabled lcore and a port outside the mask
        // reports the lcore first, as check_lcore_params runs first in C.
        let message = error(&[(1, 0, 7)], 1, &topology(2, &[0]));
        assert!(message.starts_with("lcore 7"), "{message}");
        assert_eq!(entry(1, 2, 3).to_string(), "(1,2,3)");
    }
}
