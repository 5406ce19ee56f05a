//! Bringing the plan to life: ports configured, mempools sized, queues set
//! up and handed to the lcores that own them, as C l3fwd's
//! `l3fwd_poll_resource_setup` does.

use std::collections::btree_map::Entry;
use std::collections::BTreeMap;

use dpdk::{Eal, EthConf, Mempool, Port, PortInfo, RxSlot, SingleRxPool};

use crate::cli::plan::Plan;
use crate::cli::Args;
use crate::dataplane::forward::{LcoreQueues, TxPort, TxPorts};
use crate::dataplane::packet::{default_dest_mac, eth_rewrite};
use crate::dataplane::pool_watch::PoolEmpty;
use crate::dataplane::sockets;

/// Per-lcore mbuf cache the C sample's NB_MBUF counts (MEMPOOL_CACHE_SIZE
/// of its release; later C counts it even when `--mbcache` sets another
/// cache size).
const MEMPOOL_CACHE: u32 = crate::DEFAULT_MBCACHE;
/// Smallest pool the C sample creates.
const MIN_MBUFS: u32 = 8192;
/// Ethernet header, CRC and standard MTU (RTE_ETHER_HDR_LEN, _CRC_LEN, _MTU).
const ETHER_HDR_LEN: u32 = 14;
const ETHER_CRC_LEN: u32 = 4;
const ETHER_MTU: u32 = 1500;

/// Configured (not yet started) ports, their pools and the lcores' queues.
pub struct ConfiguredPorts {
    pub ports: Vec<Port>,
    /// One per lcore of the plan, in its order.
    pub lcores: Vec<LcoreQueues>,
    pub pools: Vec<Mempool>,
    /// Per enabled port, the pools its RX queues fill from.
    pub port_pools: Vec<(u16, Vec<Mempool>)>,
    /// The seconds each port's pools were empty, counted while forwarding.
    pub pool_empty: PoolEmpty,
}

impl ConfiguredPorts {
    /// Mbufs taken from the pools.
    pub fn mbufs_in_use(&self) -> u64 {
        self.pools.iter().map(|p| u64::from(p.in_use())).sum()
    }
}

/// What receiving needs free in the pools, about: a burst per RX queue
/// and per TX buffer (each lcore has one per port), and each lcore's
/// cache, twice over for the mbufs in flight.
fn mbufs_to_receive(rx_queues: usize, lcores: usize, ports: usize, args: &Args) -> u64 {
    let burst = args.rx_burst.max(args.tx_burst) as u64;
    2 * ((rx_queues + lcores * ports) as u64 * burst + lcores as u64 * u64::from(args.mbcache))
}

/// After the ports started: if their drivers took so much of the pools
/// that too few mbufs are left to receive (a pcap port with infinite_rx
/// keeps one per frame of its file), says so in one warning, with the
/// `--num-mbufs` that leaves room, rather than forwarding nothing in
/// silence.
pub fn warn_if_pools_starved(pools: &[Mempool], rx_queues: usize, lcores: usize, ports: usize, args: &Args) {
    let (held, size) = pools.iter().fold((0u64, 0u64), |(h, s), p| {
        (h + u64::from(p.in_use()), s + u64::from(p.size()))
    });
    let need = mbufs_to_receive(rx_queues, lcores, ports, args);
    let left = size - held.min(size);
    if left >= need {
        return;
    }
    // --num-mbufs sizes each pool: the fullest one decides.
    let fullest = pools.iter().map(|p| u64::from(p.in_use())).max().unwrap_or(0);
    log::warn!(
        "mbufs: the ports' drivers hold {held} of the pools' {size} before forwarding (a pcap port with \
         infinite_rx keeps one per frame of its file), leaving {left} where receiving needs about {need}: \
         little or nothing will be forwarded; give --num-mbufs {} or more",
        fullest + need
    );
}

/// C l3fwd's NB_MBUF: RX and TX rings, per-lcore bursts of `burst`
/// packets and caches, at least 8192 (unless `--num-mbufs` gives the size).
fn mbuf_count(ports: u32, rx_queues: u32, rxd: u32, tx_queues: u32, txd: u32, lcores: u32, burst: u32) -> u32 {
    let need = ports * rx_queues * rxd + ports * lcores * burst + ports * tx_queues * txd + lcores * MEMPOOL_CACHE;
    need.max(MIN_MBUFS)
}

/// A pool of `n` mbufs with a per-lcore cache of `cache` must hold what
/// rte_mempool lets a cache grow to (1.5 times its size), or creating it
/// fails with a bare EINVAL.
fn check_cache_fits(n: u32, cache: u32) -> Result<(), String> {
    let flush_threshold = u64::from(cache) * 3 / 2;
    if flush_threshold > u64::from(n) {
        return Err(format!(
            "--num-mbufs {n} is below what a per-lcore mbuf cache of {cache} needs ({flush_threshold}): \
             raise --num-mbufs or lower --mbcache"
        ));
    }
    Ok(())
}

/// What l3fwd asks of a port (the C sample's `port_conf` plus its options):
/// RSS over IP (and the L4 ports, with `rss_l4`) when the device has
/// several RX queues and `--disable-rss` is not given, no RX offloads (the packet checks are ours, so
/// `--relax-rx-offload` has nothing to relax), fast mbuf free on TX when
/// offered and one pool holds every mbuf (`fast_free`), multi-segment TX
/// for jumbo frames.
fn port_conf(info: &PortInfo, opts: &Args, rss_l4: bool, fast_free: Option<SingleRxPool>) -> EthConf {
    let rss = if rss_l4 {
        dpdk::rss_ip() | dpdk::rss_l4()
    } else {
        dpdk::rss_ip()
    };
    let mut conf = EthConf {
        rss_hash: if info.max_rx_queues > 1 && !opts.disable_rss {
            rss & info.rss_offloads
        } else {
            0
        },
        tx_offloads: fast_free_offload(info, fast_free),
        mtu: None,
        link_speed: opts.eth_link_speed,
        fast_free,
    };
    if let Some(len) = opts.max_pkt_len {
        let mtu = len.saturating_sub(overhead_len(info));
        conf.mtu = Some(u16::try_from(mtu).unwrap_or(u16::MAX));
        if mtu > ETHER_MTU {
            conf.tx_offloads |= dpdk::tx_offload_multi_segs();
        }
    }
    conf
}

/// Fails, naming the limit and what would work, where `--max-pkt-len`
/// asks for more than `port` takes: ethdev would refuse the configuration
/// with a bare EINVAL.
fn check_frame_size(port: u16, info: &PortInfo, conf: &EthConf, max_pkt_len: Option<u32>) -> Result<(), String> {
    let (Some(len), Some(mtu)) = (max_pkt_len, conf.mtu) else {
        return Ok(());
    };
    let at_most = |limit: String| format!("--max-pkt-len {len}: port {port} ({}) takes {limit}", info.name);
    if len > info.max_rx_pktlen {
        return Err(at_most(format!("frames of at most {} bytes", info.max_rx_pktlen)));
    }
    if info.max_mtu != u16::MAX && mtu > info.max_mtu {
        return Err(at_most(format!(
            "an MTU of at most {} (frames of {len} bytes need {mtu})",
            info.max_mtu
        )));
    }
    let multi_segs = dpdk::tx_offload_multi_segs();
    if conf.tx_offloads & multi_segs != 0 && info.tx_offloads & multi_segs == 0 {
        let standard = ETHER_MTU + overhead_len(info);
        return Err(format!(
            "--max-pkt-len {len}: port {port} ({}) has no multi-segment TX, which an MTU above {ETHER_MTU} \
             needs (a frame larger than an mbuf is sent in several, as in C l3fwd); --max-pkt-len {standard} \
             or less works on it, jumbo frames need a port with multi-segment TX (most NICs' drivers, net_ring)",
            info.name
        ));
    }
    Ok(())
}

/// MBUF_FAST_FREE if the port offers it and one pool holds every mbuf.
fn fast_free_offload(info: &PortInfo, fast_free: Option<SingleRxPool>) -> u64 {
    match fast_free {
        Some(_) => info.tx_offloads & dpdk::tx_offload_fast_free(),
        None => 0,
    }
}

/// Whether the plan makes one mempool only, the condition of
/// MBUF_FAST_FREE: a driver frees a burst's mbufs into one pool. With
/// `--per-port-pool` (a pool per port), or lcores on several sockets (a
/// pool per socket), one TX queue carries mbufs of several pools. (C l3fwd
/// turns fast free on with `--per-port-pool` too, and loses mbufs to the
/// wrong pool on drivers such as i40e.)
fn one_pool(opts: &Args, sockets: usize) -> bool {
    !opts.per_port_pool && sockets <= 1
}

/// Bytes a frame adds to the MTU: C l3fwd's eth_dev_get_overhead_len.
fn overhead_len(info: &PortInfo) -> u32 {
    if info.max_mtu != u16::MAX && info.max_rx_pktlen > u32::from(info.max_mtu) {
        info.max_rx_pktlen - u32::from(info.max_mtu)
    } else {
        ETHER_HDR_LEN + ETHER_CRC_LEN
    }
}

/// Configures every port of the plan and sets up its queues; the other
/// ports of `ports` are left alone (and dropped).
pub fn build(
    eal: &Eal,
    ports: Vec<Port>,
    plan: &Plan,
    opts: &Args,
    rss_l4: bool,
) -> Result<ConfiguredPorts, Box<dyn std::error::Error>> {
    let n_lcores = plan.lcores.len() as u32;
    let socket_of = |lcore: u32| sockets::socket_of(eal, opts.no_numa, lcore);
    let mut pools: BTreeMap<(u16, u32), Mempool> = BTreeMap::new();
    let sockets: std::collections::BTreeSet<u32> = plan.lcores.iter().map(|l| socket_of(l.lcore)).collect();
    // The proof the safe layer asks for MBUF_FAST_FREE; none if RX queues
    // used several pools before (they do not: set-up starts here).
    let fast_free = if one_pool(opts, sockets.len()) {
        eal.single_rx_pool().ok()
    } else {
        None
    };
    let mut configured = Vec::new();
    let mut lcores: Vec<LcoreQueues> = plan
        .lcores
        .iter()
        .map(|l| LcoreQueues {
            lcore: l.lcore,
            rx: Vec::new(),
            tx: TxPorts::default(),
        })
        .collect();
    let mut ports: Vec<Option<Port>> = ports.into_iter().map(Some).collect();

    for pp in &plan.ports {
        let mut port = ports
            .iter_mut()
            .find(|p| p.as_ref().is_some_and(|p| p.id() == pp.port))
            .and_then(Option::take)
            .ok_or_else(|| format!("port {} does not exist", pp.port))?;
        let info = port.info()?;
        let conf = port_conf(&info, opts, rss_l4, fast_free);
        check_frame_size(pp.port, &info, &conf, opts.max_pkt_len)?;
        let slots = port.configure(pp.n_rx_queues, pp.n_tx_queues, &conf)?;
        let (rxd, txd) = port.adjust_ring_sizes(opts.rx_queue_size, opts.tx_queue_size)?;
        let mac = port.mac()?;
        let dest = opts
            .eth_dest
            .iter()
            .rev()
            .find(|d| d.port == pp.port)
            .map_or_else(|| default_dest_mac(pp.port), |d| d.mac);
        log::info!(
            "port {} ({}): {} RX / {} TX queues, address {}, destination {}",
            pp.port,
            info.name,
            pp.n_rx_queues,
            pp.n_tx_queues,
            fmt_mac(&mac),
            fmt_mac(&dest)
        );
        if let Some(speed) = conf.link_speed {
            log::info!(
                "port {}: link speed fixed at {} Mbit/s, autonegotiation off",
                pp.port,
                speed.mbps()
            );
        }
        let eth = eth_rewrite(dest, mac);

        // One pool for all ports (or one per port with --per-port-pool) on
        // each socket used, sized as the C sample sizes it or by --num-mbufs.
        let (key_port, nports) = if opts.per_port_pool {
            (pp.port, 1)
        } else {
            (0, plan.ports.len() as u32)
        };
        for l in &plan.lcores {
            let socket = socket_of(l.lcore);
            if let Entry::Vacant(slot) = pools.entry((key_port, socket)) {
                let n = opts.num_mbufs.unwrap_or_else(|| {
                    mbuf_count(
                        nports,
                        pp.n_rx_queues as u32,
                        rxd as u32,
                        pp.n_tx_queues as u32,
                        txd as u32,
                        n_lcores,
                        opts.rx_burst.max(opts.tx_burst) as u32,
                    )
                });
                check_cache_fits(n, opts.mbcache)?;
                // A big pool takes seconds to fill (1M mbufs: about 7 s on
                // 4 KB pages): say so before, not only after.
                log::info!("mempool for port key {key_port} socket {socket}: making {n} mbufs");
                let started = std::time::Instant::now();
                let pool = Mempool::create(
                    eal,
                    &format!("mbuf_pool_{key_port}_{socket}"),
                    n,
                    opts.mbcache,
                    socket as i32,
                )?;
                log::info!(
                    "mempool for port key {key_port} socket {socket}: {n} mbufs made in {:.1?}",
                    started.elapsed()
                );
                slot.insert(pool);
            }
        }

        // TX queue i belongs to the i-th lcore; RX queues to the lcores
        // that poll them.
        let tx_offloads = fast_free_offload(&info, fast_free);
        for ((lq, l), slot) in lcores.iter_mut().zip(&plan.lcores).zip(slots.tx) {
            let q = port.setup_tx_queue(slot, txd, socket_of(l.lcore), tx_offloads)?;
            lq.tx.insert(pp.port, TxPort::new(q, eth, opts.tx_burst));
        }
        let mut rx_slots: Vec<Option<RxSlot>> = slots.rx.into_iter().map(Some).collect();
        for (lq, l) in lcores.iter_mut().zip(&plan.lcores) {
            let socket = socket_of(l.lcore);
            for &(port_id, queue) in l.rx_queues.iter().filter(|(p, _)| *p == pp.port) {
                let slot = rx_slots
                    .get_mut(usize::from(queue))
                    .and_then(Option::take)
                    .ok_or_else(|| format!("RX queue {queue} of port {port_id} is not in the plan"))?;
                let key_port = if opts.per_port_pool { port_id } else { 0 };
                lq.rx
                    .push(port.setup_rx_queue(slot, rxd, socket, &pools[&(key_port, socket)])?);
            }
        }
        configured.push(port);
    }
    // Each lcore polls its queues in --config order, as in C.
    for (lq, l) in lcores.iter_mut().zip(&plan.lcores) {
        lq.rx
            .sort_by_key(|q| l.rx_queues.iter().position(|&pq| pq == (q.port(), q.queue())));
    }

    let port_pools: Vec<(u16, Vec<Mempool>)> = plan
        .ports
        .iter()
        .map(|pp| {
            let key_port = if opts.per_port_pool { pp.port } else { 0 };
            let of_port = pools.iter().filter(|((k, _), _)| *k == key_port);
            (pp.port, of_port.map(|(_, pool)| pool.clone()).collect())
        })
        .collect();
    let enabled: Vec<u16> = plan.ports.iter().map(|pp| pp.port).collect();
    Ok(ConfiguredPorts {
        ports: configured,
        lcores,
        pools: pools.into_values().collect(),
        port_pools,
        pool_empty: PoolEmpty::for_ports(&enabled),
    })
}

/// `aa:bb:cc:dd:ee:ff`.
pub fn fmt_mac(m: &[u8; 6]) -> String {
    m.iter().map(|b| format!("{b:02x}")).collect::<Vec<_>>().join(":")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::rule_files::tests::args;

    fn info(max_rx_queues: u16) -> PortInfo {
        info_offering(max_rx_queues, 0)
    }

    fn info_offering(max_rx_queues: u16, tx_offloads: u64) -> PortInfo {
        PortInfo {
            name: "net_test0".into(),
            driver: "net_test".into(),
            max_rx_queues,
            max_tx_queues: 16,
            rx_queues: 0,
            tx_queues: 0,
            rss_offloads: u64::MAX,
            tx_offloads,
            max_mtu: u16::MAX,
            max_rx_pktlen: 9618,
        }
    }

    #[test]
    fn rss_on_ports_with_several_rx_queues_unless_disabled() {
        let (rss, no_rss) = (args(""), args("--disable-rss"));
        assert_eq!(port_conf(&info(4), &rss, false, None).rss_hash, dpdk::rss_ip());
        assert_eq!(port_conf(&info(4), &no_rss, false, None).rss_hash, 0);
        assert_eq!(port_conf(&info(1), &rss, false, None).rss_hash, 0);
        let acl = dpdk::rss_ip() | dpdk::rss_l4();
        assert_eq!(port_conf(&info(4), &rss, true, None).rss_hash, acl);
    }

    #[test]
    fn jumbo_frames_need_multi_segment_tx() {
        let jumbo = args("--max-pkt-len 9000");
        let (without, with) = (info(1), info_offering(1, dpdk::tx_offload_multi_segs()));
        let conf = port_conf(&without, &jumbo, false, None);
        let why = check_frame_size(0, &without, &conf, jumbo.max_pkt_len).unwrap_err();
        assert!(why.contains("has no multi-segment TX"), "{why}");
        let conf = port_conf(&with, &jumbo, false, None);
        assert_eq!(check_frame_size(0, &with, &conf, jumbo.max_pkt_len), Ok(()));
        let standard = args("--max-pkt-len 1518");
        let conf = port_conf(&without, &standard, false, None);
        assert_eq!(check_frame_size(0, &without, &conf, standard.max_pkt_len), Ok(()));
    }

    #[test]
    fn fast_free_only_with_one_pool() {
        assert!(one_pool(&args(""), 1));
        assert!(!one_pool(&args("--per-port-pool"), 1), "a pool per port");
        assert!(!one_pool(&args(""), 2), "a pool per socket");
        // Without the proof of one pool, a port offering fast free does
        // not get it.
        let offering = info_offering(4, u64::MAX);
        let conf = port_conf(&offering, &args("--per-port-pool"), false, None);
        assert_eq!(conf.tx_offloads & dpdk::tx_offload_fast_free(), 0);
        assert_eq!(conf.fast_free, None);
    }

    #[test]
    fn pool_must_hold_what_a_cache_grows_to() {
        assert!(check_cache_fits(8192, 256).is_ok());
        assert!(check_cache_fits(384, 256).is_ok());
        let error = check_cache_fits(383, 256).unwrap_err();
        assert!(
            error.starts_with("--num-mbufs 383 is below what a per-lcore mbuf cache of 256 needs (384)"),
            "{error}"
        );
        assert!(check_cache_fits(1, 0).is_ok());
    }
}
