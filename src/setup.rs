//! Bringing the plan to life: ports configured, mempools sized, queues set
//! up and handed to the lcores that own them, as C l3fwd's
//! `l3fwd_poll_resource_setup` does.

use std::collections::btree_map::Entry;
use std::collections::BTreeMap;

use dpdk::{Eal, Mempool, Port, PortConfig, RxQueue};

use crate::cli::Args;
use crate::forward::TxPort;
use crate::packet::{default_dest_mac, eth_rewrite};
use crate::plan::Plan;
use crate::BURST;

/// Per-lcore mbuf cache of the pools (the C sample's MEMPOOL_CACHE_SIZE).
const MEMPOOL_CACHE: u32 = 256;
/// Smallest pool the C sample creates.
const MIN_MBUFS: u32 = 8192;

/// The queues one lcore polls and sends on.
pub struct LcoreQueues {
    pub lcore: u32,
    pub rx: Vec<RxQueue>,
    /// TX side by port id; None for ports not enabled.
    pub tx: Vec<Option<TxPort>>,
    pub tx_ports: Vec<u16>,
}

/// Configured (not yet started) ports, their pools and the lcores' queues.
pub struct Dataplane {
    pub ports: Vec<Port>,
    pub lcores: Vec<LcoreQueues>,
    /// Declared last: dropped after the ports' queues stop using them.
    pub pools: Vec<Mempool>,
}

/// C l3fwd's NB_MBUF: RX and TX rings, per-lcore bursts and caches, at
/// least 8192 (unless `--num-mbufs` gives the size).
fn mbuf_count(ports: u32, rx_queues: u32, rxd: u32, tx_queues: u32, txd: u32, lcores: u32) -> u32 {
    let need =
        ports * rx_queues * rxd + ports * lcores * BURST as u32 + ports * tx_queues * txd + lcores * MEMPOOL_CACHE;
    need.max(MIN_MBUFS)
}

/// Configures every port of the plan and sets up its queues.
pub fn build(eal: &Eal, plan: &Plan, args: &Args) -> Result<Dataplane, Box<dyn std::error::Error>> {
    let n_lcores = plan.lcores.len() as u32;
    let socket_of = |lcore: u32| if args.no_numa { 0 } else { eal.lcore_socket(lcore) };
    let mut pools: BTreeMap<(u16, u32), Mempool> = BTreeMap::new();
    let mut ports = Vec::new();
    let mut lcores: Vec<LcoreQueues> = plan
        .lcores
        .iter()
        .map(|l| LcoreQueues {
            lcore: l.lcore,
            rx: Vec::new(),
            tx: (0..dpdk::MAX_PORTS).map(|_| None).collect(),
            tx_ports: l.tx_ports.clone(),
        })
        .collect();
    let mut rings = BTreeMap::new();

    for pp in &plan.ports {
        let mut port = Port::new(pp.port)?;
        let conf = PortConfig {
            rx_queues: pp.n_rx_queues,
            tx_queues: pp.n_tx_queues,
            rx_desc: args.rx_queue_size,
            tx_desc: args.tx_queue_size,
            max_pkt_len: args.max_pkt_len,
        };
        let (rxd, txd) = port.configure(&conf)?;
        rings.insert(pp.port, rxd);
        let mac = port.mac()?;
        let dest = args
            .eth_dest
            .iter()
            .rev()
            .find(|d| d.port == pp.port)
            .map_or_else(|| default_dest_mac(pp.port), |d| d.mac);
        log::info!(
            "port {} ({}): {} RX / {} TX queues, address {}, destination {}",
            pp.port,
            port.info()?.name,
            pp.n_rx_queues,
            pp.n_tx_queues,
            fmt_mac(&mac),
            fmt_mac(&dest)
        );
        let eth = eth_rewrite(dest, mac);

        // One pool for all ports (or one per port with --per-port-pool) on
        // each socket used, sized as the C sample sizes it or by --num-mbufs.
        let (key_port, nports) = if args.per_port_pool {
            (pp.port, 1)
        } else {
            (0, plan.ports.len() as u32)
        };
        for l in &plan.lcores {
            let socket = socket_of(l.lcore);
            if let Entry::Vacant(slot) = pools.entry((key_port, socket)) {
                let n = args.num_mbufs.unwrap_or_else(|| {
                    mbuf_count(
                        nports,
                        pp.n_rx_queues as u32,
                        rxd as u32,
                        pp.n_tx_queues as u32,
                        txd as u32,
                        n_lcores,
                    )
                });
                let pool = Mempool::create(
                    &format!("mbuf_pool_{key_port}_{socket}"),
                    n,
                    MEMPOOL_CACHE,
                    socket as i32,
                )?;
                log::info!("mempool for port key {key_port} socket {socket}: {n} mbufs");
                slot.insert(pool);
            }
        }

        for (lq, l) in lcores.iter_mut().zip(&plan.lcores) {
            let q = port.setup_tx_queue(l.tx_queue, txd, socket_of(l.lcore))?;
            lq.tx[pp.port as usize] = Some(TxPort::new(q, eth));
        }
        ports.push(port);
    }

    for (lq, l) in lcores.iter_mut().zip(&plan.lcores) {
        let socket = socket_of(l.lcore);
        for &(port_id, queue) in &l.rx_queues {
            let key_port = if args.per_port_pool { port_id } else { 0 };
            let pool = &pools[&(key_port, socket)];
            let port = ports
                .iter_mut()
                .find(|p| p.id() == port_id)
                .ok_or("RX queue on a port that is not set up")?;
            let rxd = rings[&port_id];
            lq.rx.push(port.setup_rx_queue(queue, rxd, socket, pool)?);
        }
    }

    Ok(Dataplane {
        ports,
        lcores,
        pools: pools.into_values().collect(),
    })
}

/// `aa:bb:cc:dd:ee:ff`.
pub fn fmt_mac(m: &[u8; 6]) -> String {
    m.iter().map(|b| format!("{b:02x}")).collect::<Vec<_>>().join(":")
}
