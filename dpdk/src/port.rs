//! Ethernet ports: configuration, queues, bursts, MAC address and counters.

use std::ffi::{CStr, CString};

use crate::error::{DpdkError, Result};
use crate::mbuf::MbufArray;
use crate::mempool::Mempool;
use crate::sys;

/// What l3fwd asks of a port (the C sample's `port_conf` plus its options).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PortConfig {
    /// RX queues to create.
    pub rx_queues: u16,
    /// TX queues to create (one per enabled lcore in l3fwd).
    pub tx_queues: u16,
    /// RX ring size requested (the driver may adjust it).
    pub rx_desc: u16,
    /// TX ring size requested (the driver may adjust it).
    pub tx_desc: u16,
    /// Largest frame to accept (`--max-pkt-len`); the driver default if None.
    pub max_pkt_len: Option<u32>,
}

/// Facts about a port, from `rte_eth_dev_info_get`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PortInfo {
    /// Device name, e.g. `net_pcap0`.
    pub name: String,
    /// Most RX queues the device supports.
    pub max_rx_queues: u16,
    /// Most TX queues the device supports.
    pub max_tx_queues: u16,
    /// RX queues configured (0 before [`Port::configure`]).
    pub rx_queues: u16,
    /// TX queues configured (0 before [`Port::configure`]).
    pub tx_queues: u16,
}

/// Queues whose packets the port counts one by one (DPDK's
/// RTE_ETHDEV_QUEUE_STAT_CNTRS); later queues only add to the totals.
pub const QUEUE_STATS: usize = sys::RTE_ETHDEV_QUEUE_STAT_CNTRS as usize;

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

impl PortStats {
    /// Reads the counters of port `port`; safe from any thread while the
    /// port forwards.
    pub fn read(port: u16) -> Result<PortStats> {
        let mut s = sys::rte_eth_stats::default();
        // SAFETY: s is a valid out-parameter; stats reads are thread-safe.
        let ret = unsafe { sys::rte_eth_stats_get(port, &mut s) };
        if ret != 0 {
            return Err(DpdkError::from_code(format!("cannot read stats of port {port}"), ret));
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
            rx_queue_packets: s.q_ipackets,
            tx_queue_packets: s.q_opackets,
        })
    }
}

/// An ethdev port owned by the application. Each RX and TX queue handle is
/// handed out once, so no two threads can poll the same queue.
///
/// A configured port is stopped and closed when dropped, so that a setup
/// error leaves no port running (and a pcap port completes its files); drop
/// it before the mempools its RX queues use.
pub struct Port {
    id: u16,
    rx_taken: Vec<bool>,
    tx_taken: Vec<bool>,
    /// Configured and not yet closed: Drop closes it.
    configured: bool,
    started: bool,
}

impl Port {
    /// Takes port `id`, which EAL must have created.
    pub fn new(id: u16) -> Result<Port> {
        // SAFETY: a lookup in the ethdev table by value.
        if unsafe { sys::rte_eth_dev_is_valid_port(id) } == 0 {
            return Err(DpdkError::invalid(format!("port {id}"), "no such port"));
        }
        Ok(Port {
            id,
            rx_taken: Vec::new(),
            tx_taken: Vec::new(),
            configured: false,
            started: false,
        })
    }

    /// The id of the port named `name` (e.g. `net_pcap0`), if it exists.
    pub fn id_by_name(name: &str) -> Option<u16> {
        let cname = CString::new(name).ok()?;
        let mut id = 0;
        // SAFETY: cname is a valid C string and id a valid out-parameter for
        // the call.
        let ret = unsafe { sys::rte_eth_dev_get_port_by_name(cname.as_ptr(), &mut id) };
        (ret == 0).then_some(id)
    }

    /// The port id.
    pub fn id(&self) -> u16 {
        self.id
    }

    fn raw_info(&self) -> Result<sys::rte_eth_dev_info> {
        let mut info = sys::rte_eth_dev_info::default();
        // SAFETY: info is a valid out-parameter for a valid port.
        let ret = unsafe { sys::rte_eth_dev_info_get(self.id, &mut info) };
        if ret != 0 {
            return Err(DpdkError::from_code(
                format!("cannot get info of port {}", self.id),
                ret,
            ));
        }
        Ok(info)
    }

    /// Device name and queue limits.
    pub fn info(&self) -> Result<PortInfo> {
        let info = self.raw_info()?;
        // SAFETY: a valid port's info has a valid device whose name is a
        // NUL-terminated string owned by the bus; copied at once.
        let name = unsafe { CStr::from_ptr(sys::rte_dev_name(info.device)) }
            .to_string_lossy()
            .into_owned();
        Ok(PortInfo {
            name,
            max_rx_queues: info.max_rx_queues,
            max_tx_queues: info.max_tx_queues,
            rx_queues: info.nb_rx_queues,
            tx_queues: info.nb_tx_queues,
        })
    }

    /// Configures the port as l3fwd does: RSS over IP when the device has
    /// several RX queues, no RX offloads (the packet checks are ours), fast
    /// mbuf free on TX when supported. Returns the RX and TX ring sizes the
    /// driver accepted.
    pub fn configure(&mut self, conf: &PortConfig) -> Result<(u16, u16)> {
        let info = self.raw_info()?;
        let mut c = sys::rte_eth_conf::default();
        if info.max_rx_queues > 1 {
            c.rxmode.mq_mode = sys::rte_eth_rx_mq_mode_RTE_ETH_MQ_RX_RSS;
            // SAFETY: reads a constant defined in the shim.
            c.rx_adv_conf.rss_conf.rss_hf = unsafe { sys::l3fwd_rss_ip } & info.flow_type_rss_offloads;
        }
        c.txmode.mq_mode = sys::rte_eth_tx_mq_mode_RTE_ETH_MQ_TX_NONE;
        // SAFETY: reads constants defined in the shim.
        let (fast_free, multi_segs) = unsafe { (sys::l3fwd_tx_offload_fast_free, sys::l3fwd_tx_offload_multi_segs) };
        if info.tx_offload_capa & fast_free != 0 {
            c.txmode.offloads |= fast_free;
        }
        if let Some(len) = conf.max_pkt_len {
            c.rxmode.mtu = len.saturating_sub(overhead_len(&info));
            if c.rxmode.mtu > sys::RTE_ETHER_MTU {
                c.txmode.offloads |= multi_segs;
            }
        }
        // SAFETY: c is a fully initialised configuration for a valid port.
        let ret = unsafe { sys::rte_eth_dev_configure(self.id, conf.rx_queues, conf.tx_queues, &c) };
        if ret < 0 {
            return Err(DpdkError::from_code(
                format!(
                    "cannot configure port {} with {} RX and {} TX queues",
                    self.id, conf.rx_queues, conf.tx_queues
                ),
                ret,
            ));
        }
        self.configured = true;
        let (mut rxd, mut txd) = (conf.rx_desc, conf.tx_desc);
        // SAFETY: rxd and txd are valid in/out parameters.
        let ret = unsafe { sys::rte_eth_dev_adjust_nb_rx_tx_desc(self.id, &mut rxd, &mut txd) };
        if ret < 0 {
            return Err(DpdkError::from_code(
                format!("cannot adjust ring sizes of port {}", self.id),
                ret,
            ));
        }
        self.rx_taken = vec![false; conf.rx_queues as usize];
        self.tx_taken = vec![false; conf.tx_queues as usize];
        Ok((rxd, txd))
    }

    /// Sets up RX queue `queue` with `desc` descriptors filled from `pool`,
    /// and hands out its only handle.
    pub fn setup_rx_queue(&mut self, queue: u16, desc: u16, socket: u32, pool: &Mempool) -> Result<RxQueue> {
        take_once(&mut self.rx_taken, queue, self.id, "RX")?;
        let info = self.raw_info()?;
        let rxconf = info.default_rxconf;
        // SAFETY: rxconf is valid for the call; the pool outlives the queue
        // by Mempool's contract (freed after the port is closed).
        let ret = unsafe { sys::rte_eth_rx_queue_setup(self.id, queue, desc, socket, &rxconf, pool.as_ptr()) };
        if ret < 0 {
            return Err(DpdkError::from_code(
                format!("cannot set up RX queue {queue} of port {}", self.id),
                ret,
            ));
        }
        Ok(RxQueue { port: self.id, queue })
    }

    /// Sets up TX queue `queue` with `desc` descriptors and hands out its
    /// only handle.
    pub fn setup_tx_queue(&mut self, queue: u16, desc: u16, socket: u32) -> Result<TxQueue> {
        take_once(&mut self.tx_taken, queue, self.id, "TX")?;
        let info = self.raw_info()?;
        let mut txconf = info.default_txconf;
        // SAFETY: reads a constant defined in the shim.
        let fast_free = unsafe { sys::l3fwd_tx_offload_fast_free };
        txconf.offloads = info.tx_offload_capa & fast_free;
        // SAFETY: txconf is valid for the call.
        let ret = unsafe { sys::rte_eth_tx_queue_setup(self.id, queue, desc, socket, &txconf) };
        if ret < 0 {
            return Err(DpdkError::from_code(
                format!("cannot set up TX queue {queue} of port {}", self.id),
                ret,
            ));
        }
        Ok(TxQueue { port: self.id, queue })
    }

    /// Turns on promiscuous mode (`-P`).
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
        // SAFETY: a control call on a configured port.
        let ret = unsafe { sys::rte_eth_dev_start(self.id) };
        if ret < 0 {
            return Err(DpdkError::from_code(format!("cannot start port {}", self.id), ret));
        }
        self.started = true;
        Ok(())
    }

    /// Stops the port: the driver takes back what its rings hold. Call only
    /// when no lcore polls its queues any more.
    pub fn stop(&mut self) -> Result<()> {
        if !self.started {
            return Ok(());
        }
        self.started = false;
        // SAFETY: a control call on a started port whose queue handles are
        // no longer used (the caller waited for the lcores).
        let ret = unsafe { sys::rte_eth_dev_stop(self.id) };
        if ret != 0 {
            return Err(DpdkError::from_code(format!("cannot stop port {}", self.id), ret));
        }
        Ok(())
    }

    /// Stops (if started) and closes the port: a pcap port completes its
    /// output files, and the driver frees the mbufs it keeps.
    pub fn close(mut self) -> Result<()> {
        self.stop()?;
        self.configured = false;
        // SAFETY: a control call on a stopped port whose queue handles are
        // no longer used; closed once (`configured` is now false).
        let ret = unsafe { sys::rte_eth_dev_close(self.id) };
        if ret != 0 {
            return Err(DpdkError::from_code(format!("cannot close port {}", self.id), ret));
        }
        Ok(())
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

impl Drop for Port {
    /// Stops and closes a port an error left configured; errors are moot
    /// here, as the caller is already failing.
    fn drop(&mut self) {
        if self.configured {
            self.configured = false;
            // SAFETY: control calls on a port this handle configured and
            // did not close; by the type's contract no lcore polls it.
            unsafe {
                if self.started {
                    sys::rte_eth_dev_stop(self.id);
                }
                sys::rte_eth_dev_close(self.id);
            }
        }
    }
}

fn take_once(taken: &mut [bool], queue: u16, port: u16, kind: &str) -> Result<()> {
    match taken.get_mut(queue as usize) {
        None => Err(DpdkError::invalid(
            format!("{kind} queue {queue} of port {port}"),
            "not configured",
        )),
        Some(true) => Err(DpdkError::invalid(
            format!("{kind} queue {queue} of port {port}"),
            "already set up",
        )),
        Some(t) => {
            *t = true;
            Ok(())
        }
    }
}

/// Bytes a frame adds to the MTU: C l3fwd's eth_dev_get_overhead_len.
fn overhead_len(info: &sys::rte_eth_dev_info) -> u32 {
    let ether_overhead = sys::RTE_ETHER_HDR_LEN + sys::RTE_ETHER_CRC_LEN;
    if info.max_mtu != u16::MAX && info.max_rx_pktlen > info.max_mtu as u32 {
        info.max_rx_pktlen - info.max_mtu as u32
    } else {
        ether_overhead
    }
}

/// The one handle to an RX queue; poll it from one lcore only.
pub struct RxQueue {
    port: u16,
    queue: u16,
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
        let (slots, room) = into.raw_free_slots();
        // SAFETY: `slots` has room for `room` pointers; the driver writes
        // that many owned mbufs at most, which `grow` then records. &mut self
        // makes this thread the queue's only poller.
        let n = unsafe { sys::l3fwd_rx_burst(self.port, self.queue, slots, room as u16) } as usize;
        into.grow(n);
        n
    }
}

/// The one handle to a TX queue; send on it from one lcore only.
pub struct TxQueue {
    port: u16,
    queue: u16,
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
        // freeing. &mut self makes this thread the queue's only user.
        let sent = unsafe { sys::l3fwd_tx_burst(self.port, self.queue, from.raw_ptrs(), n as u16) } as usize;
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
            unsafe { sys::l3fwd_tx_burst(self.port, self.queue, none.as_mut_ptr(), 0) };
        }
    }
}
