//! The eth RX and TX adapters: the bridges between ethdev queues and the
//! event device. An adapter takes the queue handles it serves (so no lcore
//! polls them, and their port cannot stop under it) and gives them back
//! when it is freed, after stopping.
//!
//! The adapters find their ethdevs with `RTE_ETH_FOREACH_DEV`, which skips
//! owned ports, in their set-up and in the TX adapter's periodic flush:
//! [`Eal::take_ports`](crate::Eal::take_ports) gives its ports no owner.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use crate::error::{DpdkError, Result};
use crate::event::device::{DevLife, EventDev, EventPortConfig, SchedType};
use crate::event::service::{self, Service};
use crate::event::vector::VectorConfig;
use crate::port::{RxQueue, TxQueue};
use crate::sys;

/// The adapter id of each kind l3fwd uses (C uses 0 for both).
const ADAPTER_ID: u8 = 0;

/// The eth RX adapter: receives on the RX queues it holds and enqueues a
/// new event per packet to the event queue each was added with.
///
/// Stopping it would strand the events it buffered (those the device had
/// no room for yet) and the vectors it is filling: their mbufs would leak.
/// So it stops in two steps: once its `closed` flag is set, a callback on
/// each RX queue frees what the queue brings before the adapter sees it,
/// while the adapter flushes its buffer into the device and sends its
/// vectors as they time out; dropped, it stops.
pub struct RxAdapter {
    queues: Vec<WatchedQueue>,
    /// Read by the queues' callbacks, through pointers, until they are removed.
    closed: Arc<AtomicBool>,
    started: bool,
    _dev: Arc<DevLife>,
}

/// An RX queue the adapter serves, with its callback.
struct WatchedQueue {
    queue: RxQueue,
    /// DPDK's handle of the callback (null if it could not be added).
    cb: *const std::ffi::c_void,
    /// Packets the callback freed; written by it, through a pointer.
    dropped: Arc<AtomicU64>,
    /// The callback's argument, pointing at `closed` and `dropped`.
    _arg: Box<sys::shim_drop_when>,
}

/// The eth TX adapter: sends the events' mbufs on the TX queues it holds
/// (the mbuf's port, its TX queue from `rte_event_eth_tx_adapter_txq_set`).
pub struct TxAdapter {
    queues: Vec<TxQueue>,
    started: bool,
    _dev: Arc<DevLife>,
}

/// Whether the device sends for the TX adapter itself (INTERNAL_PORT) on
/// `eth_port`: C's choice between its internal-port and generic paths.
pub fn tx_internal_port(dev: &EventDev, eth_port: u16) -> Result<bool> {
    let mut caps = 0;
    // SAFETY: caps is a valid out-parameter.
    let ret = unsafe { sys::rte_event_eth_tx_adapter_caps_get(dev.id(), eth_port, &mut caps) };
    if ret != 0 {
        return Err(DpdkError::from_code(
            format!("cannot get TX adapter caps of port {eth_port}"),
            ret,
        ));
    }
    Ok(caps & sys::RTE_EVENT_ETH_TX_ADAPTER_CAP_INTERNAL_PORT != 0)
}

/// What the RX adapter has done, for a drain to know when it is over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RxAdapterStats {
    /// Events it enqueued to the device.
    pub enqueued: u64,
    /// Events it holds, waiting for room in the device.
    pub buffered: u64,
}

/// A read-only view of the RX adapter's counters, for any thread.
#[derive(Debug, Clone)]
pub struct RxAdapterWatch(u8, Vec<(u16, Arc<AtomicU64>)>);

impl RxAdapterWatch {
    /// Packets freed on arrival once the adapter was closed, by ethdev
    /// port (a port per RX queue).
    pub fn dropped(&self) -> impl Iterator<Item = (u16, u64)> + '_ {
        self.1.iter().map(|(port, n)| (*port, n.load(Ordering::Relaxed)))
    }

    /// The counters now; `None` once the adapter is gone.
    pub fn stats(&self) -> Option<RxAdapterStats> {
        let mut s = sys::rte_event_eth_rx_adapter_stats::default();
        // SAFETY: s is a valid out-parameter; DPDK checks the adapter id,
        // and reading counters races only with their monotonic updates.
        let ret = unsafe { sys::rte_event_eth_rx_adapter_stats_get(self.0, &mut s) };
        (ret == 0).then_some(RxAdapterStats {
            enqueued: s.rx_enq_count,
            buffered: s.rx_event_buf_count,
        })
    }
}

impl RxAdapter {
    /// A view of its counters.
    pub fn watch(&self) -> RxAdapterWatch {
        let dropped = self.queues.iter().map(|w| (w.queue.port(), Arc::clone(&w.dropped)));
        RxAdapterWatch(ADAPTER_ID, dropped.collect())
    }

    /// Creates the RX adapter of `dev`; where it needs an event port of its
    /// own, it gets one configured as `conf` (the device must be stopped).
    /// Once `closed` is set, it frees what it receives.
    pub fn create(dev: &mut EventDev, conf: &EventPortConfig, closed: Arc<AtomicBool>) -> Result<RxAdapter> {
        let mut raw = conf.raw();
        // SAFETY: raw is valid for the call (the adapter copies it); the
        // device is configured and stopped.
        let ret = unsafe { sys::rte_event_eth_rx_adapter_create(ADAPTER_ID, dev.id(), &mut raw) };
        if ret != 0 {
            return Err(DpdkError::from_code("cannot create the eth RX adapter", ret));
        }
        Ok(RxAdapter {
            queues: Vec::new(),
            closed,
            started: false,
            _dev: Arc::clone(&dev.life),
        })
    }

    /// Hands RX queue `queue` to the adapter: its packets become new
    /// events on event queue `event_queue`, scheduled as `sched`; with
    /// `vectors`, events of vectors of its packets, from the device's pool
    /// ([`EventDev::create_vector_pool`]).
    pub fn add(
        &mut self,
        queue: RxQueue,
        event_queue: u8,
        sched: SchedType,
        vectors: Option<VectorConfig>,
    ) -> Result<()> {
        let mut conf = sys::rte_event_eth_rx_adapter_queue_conf::default();
        if let Some(v) = vectors {
            let pool = self
                ._dev
                .vectors
                .get()
                .ok_or_else(|| DpdkError::invalid("event vectors", "the event device has no vector pool"))?;
            conf.rx_queue_flags |= sys::RTE_EVENT_ETH_RX_ADAPTER_QUEUE_EVENT_VECTOR;
            conf.vector_sz = v.size;
            conf.vector_timeout_ns = v.timeout_ns;
            conf.vector_mp = pool.as_ptr();
        }
        // SAFETY: writes plain fields of the event template (a union of
        // integers and bitfields) the adapter copies into each new event.
        unsafe {
            let ev = &mut conf.ev.__bindgen_anon_1.__bindgen_anon_1;
            ev.queue_id = event_queue;
            ev.set_sched_type(sched.raw());
            ev.priority = sys::RTE_EVENT_DEV_PRIORITY_NORMAL as u8;
        }
        let (port, q) = (queue.port(), queue.queue());
        // SAFETY: conf is valid; the adapter polls the queue from now on,
        // and its only handle is kept here until the adapter is freed.
        let ret = unsafe { sys::rte_event_eth_rx_adapter_queue_add(ADAPTER_ID, port, i32::from(q), &conf) };
        if ret != 0 {
            return Err(DpdkError::from_code(
                format!("cannot add RX queue {q} of port {port} to the RX adapter"),
                ret,
            ));
        }
        let dropped = Arc::new(AtomicU64::new(0));
        let arg = Box::new(sys::shim_drop_when {
            closed: self.closed.as_ptr() as *const u8,
            dropped: dropped.as_ptr(),
        });
        // SAFETY: the callback reads the flag and adds to the counter
        // (atomically) and frees the mbufs the queue hands it; both and
        // their pointers (`arg`) live here until the callback is removed,
        // after the adapter stopped polling the queue.
        let cb = unsafe { sys::shim_rx_drop_when(port, q, &*arg) };
        // Kept even without its callback: the adapter polls the queue.
        self.queues.push(WatchedQueue {
            queue,
            cb,
            dropped,
            _arg: arg,
        });
        if cb.is_null() {
            return Err(DpdkError::from_errno(format!(
                "cannot watch RX queue {q} of port {port}"
            )));
        }
        Ok(())
    }

    /// The adapter's service, if it needs a service core.
    pub fn service(&self) -> Result<Option<Service>> {
        let mut id = 0;
        // SAFETY: id is a valid out-parameter.
        let ret = unsafe { sys::rte_event_eth_rx_adapter_service_id_get(ADAPTER_ID, &mut id) };
        service::from_lookup(ret, id, "the eth RX adapter")
    }

    /// Starts receiving.
    pub fn start(&mut self) -> Result<()> {
        // SAFETY: a control call on the adapter this handle created.
        let ret = unsafe { sys::rte_event_eth_rx_adapter_start(ADAPTER_ID) };
        if ret != 0 {
            return Err(DpdkError::from_code("cannot start the eth RX adapter", ret));
        }
        self.started = true;
        Ok(())
    }
}

impl Drop for RxAdapter {
    /// Stops receiving and frees the adapter; then its queues' handles go.
    fn drop(&mut self) {
        // SAFETY: control calls on the adapter this handle created; after
        // stop its service touches no queue, and after free nothing does.
        unsafe {
            if self.started {
                sys::rte_event_eth_rx_adapter_stop(ADAPTER_ID);
            }
            for WatchedQueue { queue: q, cb, .. } in &self.queues {
                sys::rte_event_eth_rx_adapter_queue_del(ADAPTER_ID, q.port(), i32::from(q.queue()));
                if !cb.is_null() {
                    sys::shim_rx_drop_when_remove(q.port(), q.queue(), *cb);
                }
            }
            sys::rte_event_eth_rx_adapter_free(ADAPTER_ID);
        }
    }
}

impl TxAdapter {
    /// Creates the TX adapter of `dev` (see [`RxAdapter::create`]).
    pub fn create(dev: &mut EventDev, conf: &EventPortConfig) -> Result<TxAdapter> {
        let mut raw = conf.raw();
        // SAFETY: as in RxAdapter::create.
        let ret = unsafe { sys::rte_event_eth_tx_adapter_create(ADAPTER_ID, dev.id(), &mut raw) };
        if ret != 0 {
            return Err(DpdkError::from_code("cannot create the eth TX adapter", ret));
        }
        Ok(TxAdapter {
            queues: Vec::new(),
            started: false,
            _dev: Arc::clone(&dev.life),
        })
    }

    /// Hands TX queue `queue` to the adapter. Whatever it still buffers for
    /// the queue when it is freed, it frees.
    pub fn add(&mut self, queue: TxQueue) -> Result<()> {
        let (port, q) = (queue.port(), queue.queue());
        // SAFETY: the adapter sends on the queue from now on; its only
        // handle is kept here until the adapter is freed.
        let ret = unsafe { sys::rte_event_eth_tx_adapter_queue_add(ADAPTER_ID, port, i32::from(q)) };
        if ret != 0 {
            return Err(DpdkError::from_code(
                format!("cannot add TX queue {q} of port {port} to the TX adapter"),
                ret,
            ));
        }
        self.queues.push(queue);
        Ok(())
    }

    /// Links the adapter's event port to event queue `queue` (the generic
    /// path: workers forward to that queue).
    pub fn link(&mut self, dev: &EventDev, queue: u8) -> Result<()> {
        let mut port = 0;
        // SAFETY: port is a valid out-parameter.
        let ret = unsafe { sys::rte_event_eth_tx_adapter_event_port_get(ADAPTER_ID, &mut port) };
        if ret != 0 {
            return Err(DpdkError::from_code("cannot get the TX adapter's event port", ret));
        }
        // SAFETY: one queue id; NULL priorities mean normal.
        let n = unsafe { sys::rte_event_port_link(dev.id(), port, &queue, std::ptr::null(), 1) };
        if n != 1 {
            return Err(DpdkError::from_errno(format!(
                "cannot link the TX adapter's event port {port} to queue {queue}"
            )));
        }
        Ok(())
    }

    /// The adapter's service, if it needs a service core.
    pub fn service(&self) -> Result<Option<Service>> {
        let mut id = 0;
        // SAFETY: id is a valid out-parameter.
        let ret = unsafe { sys::rte_event_eth_tx_adapter_service_id_get(ADAPTER_ID, &mut id) };
        service::from_lookup(ret, id, "the eth TX adapter")
    }

    /// Starts sending.
    pub fn start(&mut self) -> Result<()> {
        // SAFETY: a control call on the adapter this handle created.
        let ret = unsafe { sys::rte_event_eth_tx_adapter_start(ADAPTER_ID) };
        if ret != 0 {
            return Err(DpdkError::from_code("cannot start the eth TX adapter", ret));
        }
        self.started = true;
        Ok(())
    }
}

impl Drop for TxAdapter {
    /// Stops sending and frees the adapter (and what it buffered); then its
    /// queues' handles go.
    fn drop(&mut self) {
        // SAFETY: as in RxAdapter's drop.
        unsafe {
            if self.started {
                sys::rte_event_eth_tx_adapter_stop(ADAPTER_ID);
            }
            for q in &self.queues {
                sys::rte_event_eth_tx_adapter_queue_del(ADAPTER_ID, q.port(), i32::from(q.queue()));
            }
            sys::rte_event_eth_tx_adapter_free(ADAPTER_ID);
        }
    }
}
