//! Ethernet ports: configuration, queues, bursts, MAC address and counters.
//!
//! Who may do what to a port is carried by types:
//! - a [`Port`] comes only from [`Eal::take_ports`], once per port id;
//! - [`Port::configure`] (once) hands out one [`RxSlot`] / [`TxSlot`] per
//!   queue, and setting a queue up consumes its slot, so each queue gets
//!   exactly one [`RxQueue`] or [`TxQueue`], the only handle that polls it;
//! - every queue handle keeps the port (and the pools its RX rings use)
//!   alive; [`Port::stop`] and [`Port::close`] refuse while any of them
//!   exists, so no thread can be polling a port being stopped.

use std::ffi::CStr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use crate::eal::{Eal, SingleRxPool};
use crate::error::{DpdkError, Result};
use crate::mbuf::MbufArray;
use crate::mempool::Mempool;
use crate::sys;

/// Facts about a port, from `rte_eth_dev_info_get`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PortInfo {
    /// Device name, e.g. `net_pcap0`.
    pub name: String,
    /// Driver name, e.g. `net_pcap`.
    pub driver: String,
    /// Most RX queues the device supports.
    pub max_rx_queues: u16,
    /// Most TX queues the device supports.
    pub max_tx_queues: u16,
    /// RX queues configured (0 before [`Port::configure`]).
    pub rx_queues: u16,
    /// TX queues configured (0 before [`Port::configure`]).
    pub tx_queues: u16,
    /// RSS hash functions the device offers (`RTE_ETH_RSS_*` bits).
    pub rss_offloads: u64,
    /// TX offloads the device offers (`RTE_ETH_TX_OFFLOAD_*` bits).
    pub tx_offloads: u64,
    /// Largest MTU the device takes (`u16::MAX`: not reported).
    pub max_mtu: u16,
    /// Largest frame the device receives.
    pub max_rx_pktlen: u32,
}

/// A port's link, from `rte_eth_link_get_nowait`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Link {
    /// The link is up.
    pub up: bool,
    /// Speed in Mbit/s (0 if unknown).
    pub speed_mbps: u32,
    /// Full duplex, else half.
    pub full_duplex: bool,
}

/// How to configure a port: the parts of `rte_eth_conf` a forwarder sets.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct EthConf {
    /// RSS hash functions to spread received packets over the RX queues
    /// with (0: no RSS).
    pub rss_hash: u64,
    /// TX offloads for the whole port. [`tx_offload_fast_free`] needs
    /// [`EthConf::fast_free`].
    pub tx_offloads: u64,
    /// MTU to set; the driver default if None.
    pub mtu: Option<u16>,
    /// A fixed link speed, autonegotiation off; None autonegotiates
    /// (advertising every speed the device has).
    pub link_speed: Option<LinkSpeed>,
    /// The proof that every mbuf comes from one pool, without which
    /// [`tx_offload_fast_free`] is refused (in `tx_offloads` and in the
    /// port's TX queues' offloads).
    pub fast_free: Option<SingleRxPool>,
}

/// One link speed with autonegotiation off (`rte_eth_conf.link_speeds` =
/// `RTE_ETH_LINK_SPEED_FIXED` and that speed's bit), for links that stay
/// down when autonegotiating. Only speeds ethdev has a full-duplex bit for
/// are made: ethdev takes one speed, never a set, when it is fixed.
///
/// ```
/// assert_eq!(dpdk::LinkSpeed::fixed(10_000).map(|s| s.mbps()), Some(10_000));
/// assert!(dpdk::LinkSpeed::fixed(12_345).is_none());
/// ```
///
/// A speed ethdev does not know cannot be made any other way:
///
/// ```compile_fail
/// let speed = dpdk::LinkSpeed { mbps: 12_345, bits: 1 };
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LinkSpeed {
    mbps: u32,
    bits: u32,
}

impl LinkSpeed {
    /// `mbps` (one of ethdev's `RTE_ETH_SPEED_NUM_*`: 10, 100, 1000, 2500,
    /// ... 400000), full duplex, fixed; None for a speed ethdev does not
    /// know.
    pub fn fixed(mbps: u32) -> Option<LinkSpeed> {
        // SAFETY: a pure function of its arguments.
        let speed = unsafe { sys::rte_eth_speed_bitflag(mbps, sys::RTE_ETH_LINK_FULL_DUPLEX as i32) };
        // SAFETY: reads a constant defined in the shim.
        let fixed = unsafe { sys::shim_link_speed_fixed };
        (speed != 0).then_some(LinkSpeed {
            mbps,
            bits: speed | fixed,
        })
    }

    /// The speed in Mbit/s.
    pub fn mbps(self) -> u32 {
        self.mbps
    }
}

/// `RTE_ETH_RSS_IP`: RSS over IPv4 and IPv6 addresses.
pub fn rss_ip() -> u64 {
    // SAFETY: reads a constant defined in the shim.
    unsafe { sys::shim_rss_ip }
}

/// `RTE_ETH_RSS_UDP | RTE_ETH_RSS_TCP | RTE_ETH_RSS_SCTP`: RSS over the
/// transport ports too.
pub fn rss_l4() -> u64 {
    // SAFETY: reads a constant defined in the shim.
    unsafe { sys::shim_rss_l4 }
}

/// `RTE_ETH_TX_OFFLOAD_MBUF_FAST_FREE`: the driver may free sent mbufs in
/// bulk (all from one pool, reference count 1).
///
/// A driver such as i40e then frees a whole burst into the pool of its
/// first mbuf, so mbufs of a second pool on one TX queue would land in the
/// wrong pool, and their own pool could be freed while they live on. A
/// port takes it only with [`EthConf::fast_free`], a [`SingleRxPool`]: one
/// pool fills every RX queue of the process, and mbufs come only from RX
/// queues.
///
/// ```
/// let eal = dpdk::Eal::for_tests(&["--vdev=net_null0", "--vdev=net_null1"])?;
/// let mut ports = eal.take_ports()?;
/// let fast_free = dpdk::EthConf { tx_offloads: dpdk::tx_offload_fast_free(), ..Default::default() };
/// // Without the proof, the offload is refused...
/// let error = ports[0].configure(1, 1, &fast_free).unwrap_err().to_string();
/// assert!(error.contains("Eal::single_rx_pool"), "{error}");
///
/// // ...and with RX queues on two pools (one per port), there is none to have.
/// let pools = [
///     dpdk::Mempool::create(eal, "doc_ff_0", 1024, 32, 0)?,
///     dpdk::Mempool::create(eal, "doc_ff_1", 1024, 32, 0)?,
/// ];
/// let mut rx = Vec::new();
/// for (port, pool) in ports.iter_mut().zip(&pools) {
///     let slots = port.configure(1, 1, &dpdk::EthConf::default())?;
///     let tx_slot = slots.tx.into_iter().next().unwrap();
///     // Nor on a TX queue of a port configured without it.
///     assert!(port.setup_tx_queue(tx_slot, 128, 0, dpdk::tx_offload_fast_free()).is_err());
///     rx.push(port.setup_rx_queue(slots.rx.into_iter().next().unwrap(), 128, 0, pool)?);
/// }
/// assert!(eal.single_rx_pool().is_err());
/// # Ok::<(), dpdk::DpdkError>(())
/// ```
///
/// Once granted, the proof holds: no RX queue may fill from a second pool.
///
/// ```
/// let eal = dpdk::Eal::for_tests(&["--vdev=net_null0", "--vdev=net_null1"])?;
/// let mut ports = eal.take_ports()?;
/// let offered = ports[0].info()?.tx_offloads & dpdk::tx_offload_fast_free();
/// let conf = dpdk::EthConf {
///     tx_offloads: offered, // net_null offers none: asking would fail in DPDK
///     fast_free: Some(eal.single_rx_pool()?),
///     ..Default::default()
/// };
/// let pools = [
///     dpdk::Mempool::create(eal, "doc_one", 1024, 32, 0)?,
///     dpdk::Mempool::create(eal, "doc_two", 1024, 32, 0)?,
/// ];
/// let mut slots0 = ports[0].configure(1, 1, &conf)?;
/// let mut slots1 = ports[1].configure(2, 1, &conf)?;
/// let rx0 = ports[0].setup_rx_queue(slots0.rx.remove(0), 128, 0, &pools[0])?;
/// let rx1 = ports[1].setup_rx_queue(slots1.rx.remove(0), 128, 0, &pools[0])?; // the same pool
/// let error = ports[1].setup_rx_queue(slots1.rx.remove(0), 128, 0, &pools[1]).err().unwrap();
/// assert!(error.to_string().contains("MBUF_FAST_FREE is on"), "{error}");
/// let tx0 = ports[0].setup_tx_queue(slots0.tx.remove(0), 128, 0, offered)?;
/// # Ok::<(), dpdk::DpdkError>(())
/// ```
pub fn tx_offload_fast_free() -> u64 {
    // SAFETY: reads a constant defined in the shim.
    unsafe { sys::shim_tx_offload_fast_free }
}

/// `RTE_ETH_TX_OFFLOAD_MULTI_SEGS`: frames may span several mbufs.
pub fn tx_offload_multi_segs() -> u64 {
    // SAFETY: reads a constant defined in the shim.
    unsafe { sys::shim_tx_offload_multi_segs }
}

/// Queues whose packets the port counts one by one (DPDK's
/// RTE_ETHDEV_QUEUE_STAT_CNTRS, private since 25.11, where it is 16 as
/// before); later queues only add to the totals.
#[cfg(not(dpdk_ge_2511))]
pub const QUEUE_STATS: usize = sys::RTE_ETHDEV_QUEUE_STAT_CNTRS as usize;
#[cfg(dpdk_ge_2511)]
pub const QUEUE_STATS: usize = 16;

/// What DPDK's packet capture (`dpdk-dumpcap`, `dpdk-pdump`) took of a
/// port's packets, from `rte_pdump_stats`: zeros until a capture ran.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CaptureStats {
    /// Packets copied for the capture.
    pub copied: u64,
    /// Packets the capture's filter passed over.
    pub filtered: u64,
    /// Packets the capture lost: no mbuf for the copy, or its ring full.
    pub lost: u64,
}

/// Port counters, from `rte_eth_stats_get`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PortStats {
    /// Packets received.
    pub rx_packets: u64,
    /// Packets sent.
    pub tx_packets: u64,
    /// Bytes received.
    pub rx_bytes: u64,
    /// Bytes sent.
    pub tx_bytes: u64,
    /// Packets the NIC dropped because RX rings were full.
    pub rx_missed: u64,
    /// Erroneous received packets.
    pub rx_errors: u64,
    /// Failed transmissions.
    pub tx_errors: u64,
    /// RX failures for want of an mbuf.
    pub rx_nombuf: u64,
    /// Packets received per RX queue, for the first [`QUEUE_STATS`] queues.
    pub rx_queue_packets: [u64; QUEUE_STATS],
    /// Packets sent per TX queue, for the first [`QUEUE_STATS`] queues.
    pub tx_queue_packets: [u64; QUEUE_STATS],
}

/// What keeps a port open: shared by the [`Port`] and its queue handles;
/// the last to go stops and closes a port left
/// configured (so that an error leaves no port running, and a pcap port
/// completes its files), then lets go of the pools its RX rings used.
struct PortLife {
    id: u16,
    /// Configured and not yet closed.
    configured: Mutex<bool>,
    /// Configured with [`EthConf::fast_free`]: its TX queues may ask for
    /// MBUF_FAST_FREE.
    fast_free: AtomicBool,
    /// The pools RX queues were set up with: freed after the port closes.
    pools: Mutex<Vec<Mempool>>,
    eal: Eal,
}

impl PortLife {
    fn info(&self) -> Result<PortInfo> {
        let info = raw_info(self.id)?;
        // SAFETY: a valid port's info has a valid device whose name is a
        // NUL-terminated string owned by the bus; copied at once.
        let name = unsafe { CStr::from_ptr(sys::rte_dev_name(info.device)) }
            .to_string_lossy()
            .into_owned();
        let driver = match info.driver_name.is_null() {
            true => String::new(),
            // SAFETY: a non-null driver name is a NUL-terminated static
            // string of the driver; copied at once.
            false => unsafe { CStr::from_ptr(info.driver_name) }
                .to_string_lossy()
                .into_owned(),
        };
        Ok(PortInfo {
            name,
            driver,
            max_rx_queues: info.max_rx_queues,
            max_tx_queues: info.max_tx_queues,
            rx_queues: info.nb_rx_queues,
            tx_queues: info.nb_tx_queues,
            rss_offloads: info.flow_type_rss_offloads,
            tx_offloads: info.tx_offload_capa,
            max_mtu: info.max_mtu,
            max_rx_pktlen: info.max_rx_pktlen,
        })
    }

    fn stats(&self) -> Result<PortStats> {
        let mut s = sys::rte_eth_stats::default();
        // SAFETY: s is a valid out-parameter; stats reads are thread-safe,
        // and the port is open while this PortLife lives.
        let ret = unsafe { sys::rte_eth_stats_get(self.id, &mut s) };
        if ret != 0 {
            return Err(DpdkError::from_code(
                format!("cannot read stats of port {}", self.id),
                ret,
            ));
        }
        Ok(PortStats {
            rx_packets: s.ipackets,
            tx_packets: s.opackets,
            rx_bytes: s.ibytes,
            tx_bytes: s.obytes,
            rx_missed: s.imissed,
            rx_errors: s.ierrors,
            tx_errors: s.oerrors,
            rx_nombuf: s.rx_nombuf,
            rx_queue_packets: self.queue_packets(&s, "rx"),
            tx_queue_packets: self.queue_packets(&s, "tx"),
        })
    }

    /// [`CaptureStats`] of the port; None unless this process serves
    /// captures ([`crate::Eal::serve_packet_capture`]: their counters'
    /// memzone is made then).
    fn capture_stats(&self) -> Option<CaptureStats> {
        let mut s = sys::rte_pdump_stats::default();
        // SAFETY: s is a valid out-parameter; rte_pdump_stats checks the
        // port id and looks its counters' memzone up (failing without
        // one), then only reads them; the port is open while this
        // PortLife lives.
        let ret = unsafe { sys::rte_pdump_stats(self.id, &mut s) };
        (ret == 0).then_some(CaptureStats {
            copied: s.accepted,
            filtered: s.filtered,
            lost: s.nombuf + s.ringfull,
        })
    }

    /// Packets per queue of `dir` ("rx" or "tx"), from the stats read.
    #[cfg(not(dpdk_ge_2511))]
    fn queue_packets(&self, s: &sys::rte_eth_stats, dir: &str) -> [u64; QUEUE_STATS] {
        match dir {
            "rx" => s.q_ipackets,
            _ => s.q_opackets,
        }
    }

    /// Packets per queue of `dir` ("rx" or "tx"): since 25.11 not in
    /// `rte_eth_stats` but in the xstats ethdev makes of the same counters
    /// (`rx_q0_packets`, ...); a queue the port lacks reads 0.
    #[cfg(dpdk_ge_2511)]
    fn queue_packets(&self, _: &sys::rte_eth_stats, dir: &str) -> [u64; QUEUE_STATS] {
        std::array::from_fn(|q| {
            let Ok(name) = std::ffi::CString::new(format!("{dir}_q{q}_packets")) else {
                return 0;
            };
            let (mut id, mut value) = (0u64, 0u64);
            // SAFETY: name is NUL-terminated, id and value valid
            // out-parameters; the port is open while this PortLife lives.
            let found = unsafe {
                sys::rte_eth_xstats_get_id_by_name(self.id, name.as_ptr(), &mut id) == 0
                    && sys::rte_eth_xstats_get_by_id(self.id, &id, &mut value, 1) == 1
            };
            if found {
                value
            } else {
                0
            }
        })
    }

    fn is_configured(&self) -> bool {
        *self.configured.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Drop for PortLife {
    /// Stops and closes a port left configured; errors are moot here (the
    /// application is failing, or closed the port already).
    fn drop(&mut self) {
        if self.is_configured() {
            // SAFETY: control calls on a port this handle configured and did
            // not close; the last handle is going, so no queue is polled.
            // Stopping a stopped port is a no-op.
            unsafe {
                sys::rte_eth_dev_stop(self.id);
                sys::rte_eth_dev_close(self.id);
            }
        }
    }
}

fn fast_free_refused(port: u16) -> DpdkError {
    DpdkError::invalid(
        format!("MBUF_FAST_FREE on port {port}"),
        "needs EthConf::fast_free (Eal::single_rx_pool): one pool for every mbuf",
    )
}

fn raw_info(id: u16) -> Result<sys::rte_eth_dev_info> {
    let mut info = sys::rte_eth_dev_info::default();
    // SAFETY: info is a valid out-parameter for a port id EAL made.
    let ret = unsafe { sys::rte_eth_dev_info_get(id, &mut info) };
    if ret != 0 {
        return Err(DpdkError::from_code(format!("cannot get info of port {id}"), ret));
    }
    Ok(info)
}

/// An ethdev port, owned: handed out once by [`Eal::take_ports`].
///
/// ```
/// let eal = dpdk::Eal::for_tests(&["--vdev=net_null0"])?;
/// let mut port = eal.take_ports()?.remove(0);
/// let pool = dpdk::Mempool::create(eal, "doc_port_pool", 1024, 32, 0)?;
/// let slots = port.configure(1, 1, &dpdk::EthConf::default())?;
/// let [rx_slot] = <[_; 1]>::try_from(slots.rx).ok().unwrap();
/// let rx = port.setup_rx_queue(rx_slot, 128, 0, &pool)?;
/// port.start()?;
/// // A queue handle keeps the port running: stopping is refused...
/// assert!(port.stop().is_err());
/// drop(rx);
/// // ...until every handle is gone.
/// port.close()?;
/// # Ok::<(), dpdk::DpdkError>(())
/// ```
///
/// A queue's slot is consumed by its setup, so no queue gets two handles:
///
/// ```compile_fail
/// # let eal = dpdk::Eal::for_tests(&["--vdev=net_null0"]).unwrap();
/// # let mut port = eal.take_ports().unwrap().remove(0);
/// # let pool = dpdk::Mempool::create(eal, "p", 1024, 32, 0).unwrap();
/// let mut slots = port.configure(1, 1, &dpdk::EthConf::default()).unwrap();
/// let slot = slots.rx.remove(0);
/// let a = port.setup_rx_queue(slot, 128, 0, &pool);
/// let b = port.setup_rx_queue(slot, 128, 0, &pool); // use of moved value
/// ```
pub struct Port {
    id: u16,
    life: Arc<PortLife>,
    started: bool,
}

/// Reads one port's counters from any thread ([`Port::stats_reader`]);
/// once the port is closed, a read fails.
pub struct StatsReader(Arc<PortLife>);

impl StatsReader {
    pub fn port(&self) -> u16 {
        self.0.id
    }

    /// The port's counters now; an error once the port is closed (its id
    /// may then name another port).
    pub fn stats(&self) -> Result<PortStats> {
        // Held across the read: the port cannot close meanwhile.
        let configured = self.0.configured.lock().unwrap_or_else(|e| e.into_inner());
        if !*configured {
            return Err(DpdkError::invalid(format!("port {}", self.0.id), "closed"));
        }
        self.0.stats()
    }

    /// [`Port::capture_stats`]; None once the port is closed.
    pub fn capture_stats(&self) -> Option<CaptureStats> {
        let configured = self.0.configured.lock().unwrap_or_else(|e| e.into_inner());
        configured.then(|| self.0.capture_stats()).flatten()
    }
}

/// The right to set up one RX queue of a configured port, handed out once
/// per queue by [`Port::configure`].
#[derive(Debug)]
pub struct RxSlot {
    port: u16,
    queue: u16,
}

/// The right to set up one TX queue of a configured port, handed out once
/// per queue by [`Port::configure`].
#[derive(Debug)]
pub struct TxSlot {
    port: u16,
    queue: u16,
}

impl RxSlot {
    /// Queue id.
    pub fn queue(&self) -> u16 {
        self.queue
    }
}

impl TxSlot {
    /// Queue id.
    pub fn queue(&self) -> u16 {
        self.queue
    }
}

/// What [`Port::configure`] hands out: a slot per queue, by queue id.
#[derive(Debug)]
pub struct QueueSlots {
    /// RX queue slots, queue 0 first.
    pub rx: Vec<RxSlot>,
    /// TX queue slots, queue 0 first.
    pub tx: Vec<TxSlot>,
}

impl Eal {
    /// Hands out every port EAL created (vdevs and probed devices) that no
    /// one owns, in id order: the only way to get a [`Port`], and only once
    /// per EAL (EAL starts once per process), so each port has one handle.
    /// Walks the ports as `RTE_ETH_FOREACH_DEV` does: ids can have gaps,
    /// and a port another driver owns (a fail-safe port's sub-devices) is
    /// not handed out. Fails if the ports were handed out before.
    ///
    /// The ports are not given a DPDK owner (`rte_eth_dev_owner_set`): an
    /// owned port is hidden from `RTE_ETH_FOREACH_DEV` in every process,
    /// so DPDK's own multi-process tools (`dpdk-proc-info`,
    /// `dpdk-dumpcap`) and the event eth adapters would not find them.
    ///
    /// ```
    /// let eal = dpdk::Eal::for_tests(&["--vdev=net_null0"])?;
    /// let ports = eal.take_ports()?;
    /// assert_eq!(ports.len(), 1);
    /// assert!(eal.take_ports().is_err()); // never twice
    /// # Ok::<(), dpdk::DpdkError>(())
    /// ```
    ///
    /// A fail-safe port owns its sub-device, which is not handed out: here
    /// the ports are `net_null0` (0), the fail-safe port (1), its
    /// sub-device `net_null1` (2) and `net_null2` (3).
    ///
    /// ```
    /// let eal = dpdk::Eal::for_tests(&[
    ///     "--vdev=net_null0",
    ///     "--vdev=net_failsafe0,dev(net_null1)",
    ///     "--vdev=net_null2",
    /// ])?;
    /// let sub = eal.port_id_by_name("net_null1").expect("the sub-device is a port");
    /// let ids: Vec<u16> = eal.take_ports()?.iter().map(|p| p.id()).collect();
    /// assert!(!ids.contains(&sub), "{ids:?} includes {sub}, which net_failsafe0 owns");
    /// for name in ["net_null0", "net_failsafe0", "net_null2"] {
    ///     assert!(ids.contains(&eal.port_id_by_name(name).unwrap()), "{name} missing from {ids:?}");
    /// }
    /// assert_eq!(ids.len(), 3);
    /// # Ok::<(), dpdk::DpdkError>(())
    /// ```
    ///
    /// A port is not `Clone`, so a second handle cannot be made:
    ///
    /// ```compile_fail
    /// # let eal = dpdk::Eal::for_tests(&["--vdev=net_null0"]).unwrap();
    /// let ports = eal.take_ports().unwrap();
    /// let again = ports[0].clone();
    /// ```
    pub fn take_ports(&self) -> Result<Vec<Port>> {
        if !self.first_port_claim() {
            return Err(DpdkError::invalid("ports", "already handed out"));
        }
        let no_owner = u64::from(sys::RTE_ETH_DEV_NO_OWNER);
        let mut ports = Vec::new();
        // SAFETY: walks the ethdev port table from id 0; ids at or past
        // RTE_MAX_ETHPORTS end the walk.
        let mut next = unsafe { sys::rte_eth_find_next_owned_by(0, no_owner) };
        while next < u64::from(sys::RTE_MAX_ETHPORTS) {
            let id = next as u16;
            ports.push(Port::taken(self.clone(), id));
            // SAFETY: as above, from the next id (at most RTE_MAX_ETHPORTS).
            next = unsafe { sys::rte_eth_find_next_owned_by(id + 1, no_owner) };
        }
        Ok(ports)
    }
}

impl Port {
    pub(crate) fn taken(eal: Eal, id: u16) -> Port {
        Port {
            id,
            life: Arc::new(PortLife {
                id,
                configured: Mutex::new(false),
                fast_free: AtomicBool::new(false),
                pools: Mutex::new(Vec::new()),
                eal,
            }),
            started: false,
        }
    }

    /// The port id.
    pub fn id(&self) -> u16 {
        self.id
    }

    /// Device name, queue limits and offload capabilities.
    pub fn info(&self) -> Result<PortInfo> {
        self.life.info()
    }

    /// The port's counters now.
    pub fn stats(&self) -> Result<PortStats> {
        self.life.stats()
    }

    /// What packet captures took of the port's packets (see
    /// [`CaptureStats`]); None unless this process serves captures.
    pub fn capture_stats(&self) -> Option<CaptureStats> {
        self.life.capture_stats()
    }

    /// A reader of the port's counters for another thread (the control
    /// thread's metrics): it reads, and can do nothing else.
    pub fn stats_reader(&self) -> StatsReader {
        StatsReader(Arc::clone(&self.life))
    }

    /// Configures the port with `rx_queues` and `tx_queues` queues as `conf`
    /// says, and hands out one slot per queue. Once per port.
    pub fn configure(&mut self, rx_queues: u16, tx_queues: u16, conf: &EthConf) -> Result<QueueSlots> {
        let mut configured = self.life.configured.lock().unwrap_or_else(|e| e.into_inner());
        if *configured {
            return Err(DpdkError::invalid(format!("port {}", self.id), "already configured"));
        }
        if conf.tx_offloads & tx_offload_fast_free() != 0 && conf.fast_free.is_none() {
            return Err(fast_free_refused(self.id));
        }
        let mut c = sys::rte_eth_conf::default();
        if conf.rss_hash != 0 {
            c.rxmode.mq_mode = sys::rte_eth_rx_mq_mode_RTE_ETH_MQ_RX_RSS;
            c.rx_adv_conf.rss_conf.rss_hf = conf.rss_hash;
        }
        c.txmode.mq_mode = sys::rte_eth_tx_mq_mode_RTE_ETH_MQ_TX_NONE;
        c.txmode.offloads = conf.tx_offloads;
        c.link_speeds = conf.link_speed.map_or(0, |s| s.bits);
        if let Some(mtu) = conf.mtu {
            c.rxmode.mtu = mtu.into();
        }
        // SAFETY: c is a fully initialised configuration for a valid port.
        let ret = unsafe { sys::rte_eth_dev_configure(self.id, rx_queues, tx_queues, &c) };
        if ret < 0 {
            return Err(DpdkError::from_code(
                format!(
                    "cannot configure port {} with {rx_queues} RX and {tx_queues} TX queues",
                    self.id
                ),
                ret,
            ));
        }
        *configured = true;
        self.life.fast_free.store(conf.fast_free.is_some(), Ordering::Relaxed);
        let port = self.id;
        Ok(QueueSlots {
            rx: (0..rx_queues).map(|queue| RxSlot { port, queue }).collect(),
            tx: (0..tx_queues).map(|queue| TxSlot { port, queue }).collect(),
        })
    }

    /// The ring sizes the driver accepts for requested `rx` and `tx` sizes.
    pub fn adjust_ring_sizes(&self, rx: u16, tx: u16) -> Result<(u16, u16)> {
        let (mut rxd, mut txd) = (rx, tx);
        // SAFETY: rxd and txd are valid in/out parameters.
        let ret = unsafe { sys::rte_eth_dev_adjust_nb_rx_tx_desc(self.id, &mut rxd, &mut txd) };
        if ret < 0 {
            return Err(DpdkError::from_code(
                format!("cannot adjust ring sizes of port {}", self.id),
                ret,
            ));
        }
        Ok((rxd, txd))
    }

    fn check_slot(&self, slot_port: u16, kind: &str, queue: u16) -> Result<()> {
        if slot_port == self.id {
            Ok(())
        } else {
            Err(DpdkError::invalid(
                format!("{kind} queue {queue} of port {slot_port}"),
                format!("set up on port {}", self.id),
            ))
        }
    }

    /// Sets up an RX queue with `desc` descriptors filled from `pool`, and
    /// hands out its only handle. The port keeps `pool` until it closes.
    pub fn setup_rx_queue(&mut self, slot: RxSlot, desc: u16, socket: u32, pool: &Mempool) -> Result<RxQueue> {
        let queue = slot.queue;
        self.check_slot(slot.port, "RX", queue)?;
        self.life.eal.note_rx_pool(pool.as_ptr())?;
        let rxconf = raw_info(self.id)?.default_rxconf;
        // SAFETY: rxconf is valid for the call; the pool stays alive as long
        // as the port (kept in `pools` below, freed after the close).
        let ret = unsafe { sys::rte_eth_rx_queue_setup(self.id, queue, desc, socket, &rxconf, pool.as_ptr()) };
        if ret < 0 {
            return Err(DpdkError::from_code(
                format!("cannot set up RX queue {queue} of port {}", self.id),
                ret,
            ));
        }
        self.life
            .pools
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(pool.clone());
        Ok(RxQueue {
            port: self.id,
            queue,
            _life: Arc::clone(&self.life),
        })
    }

    /// Sets up a TX queue with `desc` descriptors and `offloads` (of those
    /// the device offers), and hands out its only handle.
    /// [`tx_offload_fast_free`] is refused unless the port was configured
    /// with [`EthConf::fast_free`].
    pub fn setup_tx_queue(&mut self, slot: TxSlot, desc: u16, socket: u32, offloads: u64) -> Result<TxQueue> {
        let queue = slot.queue;
        self.check_slot(slot.port, "TX", queue)?;
        if offloads & tx_offload_fast_free() != 0 && !self.life.fast_free.load(Ordering::Relaxed) {
            return Err(fast_free_refused(self.id));
        }
        let mut txconf = raw_info(self.id)?.default_txconf;
        txconf.offloads = offloads;
        // SAFETY: txconf is valid for the call.
        let ret = unsafe { sys::rte_eth_tx_queue_setup(self.id, queue, desc, socket, &txconf) };
        if ret < 0 {
            return Err(DpdkError::from_code(
                format!("cannot set up TX queue {queue} of port {}", self.id),
                ret,
            ));
        }
        Ok(TxQueue {
            port: self.id,
            queue,
            _life: Arc::clone(&self.life),
        })
    }

    /// Turns on promiscuous mode.
    pub fn enable_promiscuous(&mut self) -> Result<()> {
        // SAFETY: a control call on a valid port.
        let ret = unsafe { sys::rte_eth_promiscuous_enable(self.id) };
        if ret != 0 {
            return Err(DpdkError::from_code(
                format!("cannot enable promiscuous mode on port {}", self.id),
                ret,
            ));
        }
        Ok(())
    }

    /// Starts the port.
    pub fn start(&mut self) -> Result<()> {
        // SAFETY: a control call on a valid port (DPDK refuses to start an
        // unconfigured one).
        let ret = unsafe { sys::rte_eth_dev_start(self.id) };
        if ret < 0 {
            return Err(DpdkError::from_code(format!("cannot start port {}", self.id), ret));
        }
        self.started = true;
        Ok(())
    }

    /// Fails unless this is the port's last handle: no queue handle exists,
    /// so no other thread can be using the port.
    fn check_unshared(&mut self, action: &str) -> Result<()> {
        match Arc::get_mut(&mut self.life) {
            Some(_) => Ok(()),
            None => Err(DpdkError::invalid(
                format!("cannot {action} port {}", self.id),
                "its queues are still in use",
            )),
        }
    }

    /// Stops the port: the driver takes back what its rings hold. Refused
    /// while a queue handle exists.
    pub fn stop(&mut self) -> Result<()> {
        self.check_unshared("stop")?;
        if !self.started {
            return Ok(());
        }
        self.started = false;
        // SAFETY: a control call on a started port; no queue handle exists
        // (checked above), so no thread polls it.
        let ret = unsafe { sys::rte_eth_dev_stop(self.id) };
        if ret != 0 {
            return Err(DpdkError::from_code(format!("cannot stop port {}", self.id), ret));
        }
        Ok(())
    }

    /// Stops (if started) and closes the port: a pcap port completes its
    /// output files, and the driver frees the mbufs it keeps. Refused while
    /// a queue handle exists.
    pub fn close(mut self) -> Result<()> {
        self.stop()?;
        let mut configured = self.life.configured.lock().unwrap_or_else(|e| e.into_inner());
        if !std::mem::replace(&mut *configured, false) {
            return Ok(());
        }
        // SAFETY: a control call on a stopped, configured port with no queue
        // handle (checked by stop); closed once (`configured` is now false).
        let ret = unsafe { sys::rte_eth_dev_close(self.id) };
        if ret != 0 {
            return Err(DpdkError::from_code(format!("cannot close port {}", self.id), ret));
        }
        Ok(())
    }

    /// The port's link now, without waiting for it.
    pub fn link(&self) -> Result<Link> {
        let mut l = sys::rte_eth_link::default();
        // SAFETY: l is a valid out-parameter for a port this handle owns.
        let ret = unsafe { sys::rte_eth_link_get_nowait(self.id, &mut l) };
        if ret != 0 {
            return Err(DpdkError::from_code(
                format!("cannot get the link of port {}", self.id),
                ret,
            ));
        }
        // Since 24.07 the fields are in a union with one 64-bit word.
        #[cfg(dpdk_ge_2407)]
        // SAFETY: a union of integers, any bits valid; rte_eth_link_get
        // wrote the struct view.
        let l = unsafe { l.__bindgen_anon_1.__bindgen_anon_1 };
        Ok(Link {
            up: l.link_status() != 0,
            speed_mbps: l.link_speed,
            full_duplex: l.link_duplex() != 0,
        })
    }

    /// The port's MAC address.
    pub fn mac(&self) -> Result<[u8; 6]> {
        let mut a = sys::rte_ether_addr::default();
        // SAFETY: a is a valid out-parameter.
        let ret = unsafe { sys::rte_eth_macaddr_get(self.id, &mut a) };
        if ret != 0 {
            return Err(DpdkError::from_code(format!("cannot get MAC of port {}", self.id), ret));
        }
        Ok(a.addr_bytes)
    }
}

/// The one handle to an RX queue; poll it from one lcore only. It keeps
/// its port open.
pub struct RxQueue {
    port: u16,
    queue: u16,
    _life: Arc<PortLife>,
}

impl RxQueue {
    /// Port id.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Queue id.
    pub fn queue(&self) -> u16 {
        self.queue
    }

    /// Receives up to the free room of `into`; returns how many arrived.
    #[inline(always)]
    pub fn recv<const N: usize>(&mut self, into: &mut MbufArray<N>) -> usize {
        self.recv_at_most(into, N)
    }

    /// Receives up to `max` packets, and no more than the free room of
    /// `into`; returns how many arrived.
    #[inline(always)]
    pub fn recv_at_most<const N: usize>(&mut self, into: &mut MbufArray<N>, max: usize) -> usize {
        let (slots, room) = into.raw_free_slots();
        let room = room.min(max).min(usize::from(u16::MAX));
        // SAFETY: `slots` has room for `room` pointers; the driver writes
        // that many owned mbufs at most, which `grow` then records. &mut self
        // makes this thread the queue's only poller, and the port is open
        // while this handle lives.
        let n = unsafe { sys::shim_rx_burst(self.port, self.queue, slots, room as u16) } as usize;
        into.grow(n);
        n
    }
}

/// The one handle to a TX queue; send on it from one lcore only. It keeps
/// its port open.
pub struct TxQueue {
    port: u16,
    queue: u16,
    _life: Arc<PortLife>,
}

impl TxQueue {
    /// Port id.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Queue id.
    pub fn queue(&self) -> u16 {
        self.queue
    }

    /// Sends what `from` holds; the packets the driver took leave `from`,
    /// the ones it refused stay (in order) for the caller to retry or free.
    #[inline(always)]
    pub fn send<const N: usize>(&mut self, from: &mut MbufArray<N>) -> usize {
        let n = from.len();
        if n == 0 {
            return 0;
        }
        // SAFETY: the first n slots hold owned mbufs; the driver takes
        // ownership of the first `sent`, which forget_first releases without
        // freeing. &mut self makes this thread the queue's only user, and
        // the port is open while this handle lives.
        let sent = unsafe { sys::shim_tx_burst(self.port, self.queue, from.raw_ptrs(), n as u16) } as usize;
        from.forget_first(sent);
        sent
    }

    /// Has the driver free the mbufs of packets it has finished sending.
    /// Some drivers keep each sent mbuf until they next look at their
    /// completions: net_af_xdp frees a burst's mbufs on its next TX call,
    /// so after the last one they would read as leaked. Uses
    /// `rte_eth_tx_done_cleanup` where the driver has it, else an empty TX
    /// burst (on which net_af_xdp reaps its completion ring).
    pub fn reclaim_sent(&mut self) {
        // SAFETY: &mut self makes this thread the queue's only user; the
        // cleanup frees only mbufs the driver owns and is done with.
        let cleaned = unsafe { sys::rte_eth_tx_done_cleanup(self.port, self.queue, 0) };
        if cleaned < 0 {
            let mut none: [*mut sys::rte_mbuf; 1] = [std::ptr::null_mut()];
            // SAFETY: a burst of zero packets: the driver reads no slot.
            unsafe { sys::shim_tx_burst(self.port, self.queue, none.as_mut_ptr(), 0) };
        }
    }
}
