//! The event device: configuration, queues, ports and links, start and
//! stop; and the worker's side, dequeued events and their way to the TX
//! adapter.
//!
//! Who may do what is carried by types:
//! - an [`EventDev`] comes from [`EventDev::take`], once per process;
//! - [`EventDev::configure`] hands out one [`EventPortSlot`] per event
//!   port, consumed by the port's setup, so each port has one
//!   [`EventPort`]; that handle is `Send` but neither `Clone` nor `Sync`:
//!   it moves into the one lcore that dequeues and enqueues on it;
//! - an [`Event`] owns its mbuf: forwarding moves it, dropping frees it;
//!   a dequeued vector is an [`EventVector`], which owns its packets alike;
//! - ports and adapters keep the device open, and [`EventDev::stop`]
//!   refuses while any of them exists; the device frees at stop the mbufs
//!   of the events still inside it.

use std::cell::Cell;
use std::ffi::CStr;
use std::marker::PhantomData;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

use crate::eal::Eal;
use crate::error::{DpdkError, Result};
use crate::event::vector::{EventVector, VectorLimits, VectorPool};
use crate::mbuf::Mbuf;
use crate::sys;

/// The device a process uses: the first, as C l3fwd uses.
const DEV_ID: u8 = 0;
/// Most events one [`EventPort::dequeue`] takes (C's MAX_PKT_BURST).
pub const MAX_DEQUEUE: usize = 32;

/// How an event queue hands the events of one flow to the worker ports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SchedType {
    /// Spread over ports; their enqueues are put back into arrival order.
    Ordered,
    /// A flow is on one port at a time: its events stay in order.
    Atomic,
    /// Spread over ports with no order kept.
    Parallel,
}

impl SchedType {
    pub(crate) fn raw(self) -> u8 {
        (match self {
            SchedType::Ordered => sys::RTE_SCHED_TYPE_ORDERED,
            SchedType::Atomic => sys::RTE_SCHED_TYPE_ATOMIC,
            SchedType::Parallel => sys::RTE_SCHED_TYPE_PARALLEL,
        }) as u8
    }
}

/// Facts about the event device, from `rte_event_dev_info_get`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventDevInfo {
    /// Driver name, e.g. `event_sw`.
    pub driver: String,
    pub max_queues: u8,
    pub max_queue_flows: u32,
    pub max_ports: u8,
    pub max_dequeue_depth: u32,
    pub max_enqueue_depth: u32,
    pub max_events: i32,
    /// Queues take events of every scheduling type
    /// (RTE_EVENT_DEV_CAP_QUEUE_ALL_TYPES).
    pub all_types: bool,
    /// Bursts of more than one event (RTE_EVENT_DEV_CAP_BURST_MODE).
    pub burst: bool,
    /// The device schedules by itself, without a service core
    /// (RTE_EVENT_DEV_CAP_DISTRIBUTED_SCHED).
    pub distributed: bool,
}

/// The parts of `rte_event_dev_config` l3fwd sets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EventDevConfig {
    pub queues: u8,
    pub ports: u8,
    pub events_limit: i32,
    pub queue_flows: u32,
    pub dequeue_depth: u32,
    pub enqueue_depth: u32,
}

/// The parts of `rte_event_queue_conf` l3fwd sets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EventQueueConfig {
    pub sched: SchedType,
    /// Accept events of every scheduling type.
    pub all_types: bool,
    /// Linked to one port only (the TX adapter's).
    pub single_link: bool,
    /// Highest priority, else normal.
    pub highest_priority: bool,
    pub atomic_flows: u32,
    pub order_sequences: u32,
}

/// An event port's depths (`rte_event_port_conf`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EventPortConfig {
    pub dequeue_depth: u16,
    pub enqueue_depth: u16,
    pub new_event_threshold: i32,
}

impl EventPortConfig {
    pub(crate) fn raw(&self) -> sys::rte_event_port_conf {
        sys::rte_event_port_conf {
            new_event_threshold: self.new_event_threshold,
            dequeue_depth: self.dequeue_depth,
            enqueue_depth: self.enqueue_depth,
            event_port_cfg: 0,
        }
    }
}

/// What keeps the device open: shared by the [`EventDev`], its ports and
/// the adapters; the last to go stops and closes it.
pub(crate) struct DevLife {
    pub(crate) id: u8,
    configured: AtomicBool,
    started: AtomicBool,
    /// Mbufs the device freed at stop (its stop-flush callback counts
    /// here; boxed so that the address DPDK keeps never moves).
    freed_at_stop: Box<AtomicU64>,
    /// The RX adapter's vectors, if it makes any; freed after the device
    /// is closed (a field, dropped after `drop` closed it).
    pub(crate) vectors: OnceLock<VectorPool>,
    _eal: Eal,
}

impl Drop for DevLife {
    fn drop(&mut self) {
        if self.configured.load(Ordering::Relaxed) {
            // SAFETY: the last handle is going: no port dequeues and no
            // adapter runs.
            unsafe {
                if self.started.load(Ordering::Relaxed) {
                    sys::rte_event_dev_stop(self.id);
                }
                sys::rte_event_dev_close(self.id);
            }
        }
    }
}

static TAKEN: AtomicBool = AtomicBool::new(false);

/// The event device, owned.
///
/// Without one (no `--vdev=event_sw0`) there is nothing to take:
///
/// ```
/// let eal = dpdk::Eal::for_tests(&[])?;
/// let error = dpdk::EventDev::take(eal).err().unwrap().to_string();
/// assert!(error.contains("no event device"), "{error}");
/// # Ok::<(), dpdk::DpdkError>(())
/// ```
///
/// A port's slot is consumed by its setup, so no event port gets two
/// handles:
///
/// ```compile_fail
/// # let eal = dpdk::Eal::for_tests(&["--vdev=event_sw0"]).unwrap();
/// # let mut dev = dpdk::EventDev::take(eal).unwrap();
/// # let conf = dpdk::EventDevConfig { queues: 1, ports: 1, events_limit: 1024, queue_flows: 64,
/// #     dequeue_depth: 16, enqueue_depth: 16 };
/// # let port_conf = dpdk::EventPortConfig { dequeue_depth: 16, enqueue_depth: 16, new_event_threshold: 1024 };
/// let mut slots = dev.configure(&conf).unwrap();
/// let slot = slots.remove(0);
/// let a = dev.setup_port(slot, &port_conf, dpdk::TxPath::Direct);
/// let b = dev.setup_port(slot, &port_conf, dpdk::TxPath::Direct); // use of moved value
/// ```
///
/// Without the second setup, the same code compiles and runs:
///
/// ```
/// # let eal = dpdk::Eal::for_tests(&["--vdev=event_sw0"]).unwrap();
/// # let mut dev = dpdk::EventDev::take(eal).unwrap();
/// # let conf = dpdk::EventDevConfig { queues: 1, ports: 1, events_limit: 1024, queue_flows: 64,
/// #     dequeue_depth: 16, enqueue_depth: 16 };
/// # let port_conf = dpdk::EventPortConfig { dequeue_depth: 16, enqueue_depth: 16, new_event_threshold: 1024 };
/// let mut slots = dev.configure(&conf).unwrap();
/// let slot = slots.remove(0);
/// let a = dev.setup_port(slot, &port_conf, dpdk::TxPath::Direct).unwrap();
/// // The port keeps the device open: stopping it is refused until it goes.
/// assert!(dev.stop().is_err());
/// drop(a);
/// assert_eq!(dev.stop().unwrap(), 0);
/// ```
pub struct EventDev {
    pub(crate) life: Arc<DevLife>,
}

/// The right to set up one event port, handed out once per port by
/// [`EventDev::configure`].
#[derive(Debug)]
pub struct EventPortSlot {
    port: u8,
}

impl EventDev {
    /// The process's event device (the first); fails if there is none or
    /// it was taken already.
    pub fn take(eal: &Eal) -> Result<EventDev> {
        // SAFETY: reads EAL's event device count; EAL is up.
        if unsafe { sys::rte_event_dev_count() } == 0 {
            return Err(DpdkError::invalid(
                "no event device",
                "give one to EAL, e.g. --vdev=event_sw0",
            ));
        }
        if TAKEN.swap(true, Ordering::Relaxed) {
            return Err(DpdkError::invalid("event device 0", "already taken"));
        }
        Ok(EventDev {
            life: Arc::new(DevLife {
                id: DEV_ID,
                configured: AtomicBool::new(false),
                started: AtomicBool::new(false),
                freed_at_stop: Box::new(AtomicU64::new(0)),
                vectors: OnceLock::new(),
                _eal: eal.clone(),
            }),
        })
    }

    /// What the RX adapter of this device offers on `eth_port`; an error if it
    /// makes no vectors there (no `RTE_EVENT_ETH_RX_ADAPTER_CAP_EVENT_VECTOR`).
    pub fn vector_limits(&self, eth_port: u16) -> Result<VectorLimits> {
        let mut caps = 0;
        // SAFETY: caps is a valid out-parameter.
        let ret = unsafe { sys::rte_event_eth_rx_adapter_caps_get(self.id(), eth_port, &mut caps) };
        if ret != 0 {
            return Err(DpdkError::from_code(
                format!("cannot get RX adapter caps of port {eth_port}"),
                ret,
            ));
        }
        VectorLimits::supported(caps, eth_port)?;
        let mut l = sys::rte_event_eth_rx_adapter_vector_limits::default();
        // SAFETY: l is a valid out-parameter.
        let ret = unsafe { sys::rte_event_eth_rx_adapter_vector_limits_get(self.id(), eth_port, &mut l) };
        if ret != 0 {
            return Err(DpdkError::from_code(
                format!("cannot get the RX adapter's vector limits on port {eth_port}"),
                ret,
            ));
        }
        Ok(VectorLimits {
            min_size: l.min_sz,
            max_size: l.max_sz,
            power_of_2: l.log2_sz != 0,
            min_timeout_ns: l.min_timeout_ns,
            max_timeout_ns: l.max_timeout_ns,
            software: caps & sys::RTE_EVENT_ETH_RX_ADAPTER_CAP_INTERNAL_PORT == 0,
        })
    }

    /// The device id.
    pub fn id(&self) -> u8 {
        self.life.id
    }

    /// Driver, limits and capabilities.
    pub fn info(&self) -> Result<EventDevInfo> {
        let i = self.raw_info()?;
        let driver = if i.driver_name.is_null() {
            String::new()
        } else {
            // SAFETY: a non-null driver name is a NUL-terminated string
            // owned by the driver; copied at once.
            unsafe { CStr::from_ptr(i.driver_name) }.to_string_lossy().into_owned()
        };
        let cap = |bit: u32| i.event_dev_cap & bit != 0;
        // SAFETY: the shim's constants are initialised C constants, never
        // written.
        let (all_types, burst, distributed) = unsafe {
            (
                sys::shim_event_dev_cap_queue_all_types,
                sys::shim_event_dev_cap_burst_mode,
                sys::shim_event_dev_cap_distributed_sched,
            )
        };
        Ok(EventDevInfo {
            driver,
            max_queues: i.max_event_queues,
            max_queue_flows: i.max_event_queue_flows,
            max_ports: i.max_event_ports,
            max_dequeue_depth: i.max_event_port_dequeue_depth.into(),
            max_enqueue_depth: i.max_event_port_enqueue_depth,
            max_events: i.max_num_events,
            all_types: cap(all_types),
            burst: cap(burst),
            distributed: cap(distributed),
        })
    }

    fn raw_info(&self) -> Result<sys::rte_event_dev_info> {
        let mut i = sys::rte_event_dev_info::default();
        // SAFETY: i is a valid out-parameter for a device that exists.
        let ret = unsafe { sys::rte_event_dev_info_get(self.id(), &mut i) };
        if ret != 0 {
            return Err(DpdkError::from_code("cannot get event device info", ret));
        }
        Ok(i)
    }

    /// Configures the device (once) and hands out one slot per port. The
    /// device frees, when it stops, the mbufs of the events still in it.
    pub fn configure(&mut self, conf: &EventDevConfig) -> Result<Vec<EventPortSlot>> {
        if self.life.configured.load(Ordering::Relaxed) {
            return Err(DpdkError::invalid("event device", "already configured"));
        }
        #[cfg_attr(not(dpdk_ge_2411), allow(unused_mut))]
        let mut c = sys::rte_event_dev_config {
            nb_event_queues: conf.queues,
            nb_event_ports: conf.ports,
            nb_events_limit: conf.events_limit,
            nb_event_queue_flows: conf.queue_flows,
            nb_event_port_dequeue_depth: conf.dequeue_depth,
            nb_event_port_enqueue_depth: conf.enqueue_depth,
            ..Default::default()
        };
        #[cfg(dpdk_ge_2411)]
        {
            c.preschedule_type = preschedule(self.raw_info()?.event_dev_cap);
        }
        // SAFETY: c is a fully initialised configuration of a stopped device.
        let ret = unsafe { sys::rte_event_dev_configure(self.id(), &c) };
        if ret < 0 {
            return Err(DpdkError::from_code(
                format!(
                    "cannot configure the event device with {} queues and {} ports",
                    conf.queues, conf.ports
                ),
                ret,
            ));
        }
        self.life.configured.store(true, Ordering::Relaxed);
        let freed = self.life.freed_at_stop.as_ptr();
        // SAFETY: the callback frees only mbufs of events the device still
        // holds at stop (every event carries an mbuf: nothing else can be
        // enqueued); `freed` lives in the boxed counter, which outlives the
        // device (DevLife closes it before the box goes).
        let ret = unsafe { sys::shim_event_dev_free_on_stop(self.id(), freed) };
        if ret != 0 {
            return Err(DpdkError::from_code(
                "cannot register the event device's stop flush",
                ret,
            ));
        }
        Ok((0..conf.ports).map(|port| EventPortSlot { port }).collect())
    }

    /// Creates the pool of `count` vectors of up to `size` packets the RX
    /// adapter makes vectors from (once).
    pub fn create_vector_pool(&mut self, count: u32, size: u16) -> Result<()> {
        let pool = VectorPool::create(count, size)?;
        self.life
            .vectors
            .set(pool)
            .map_err(|_| DpdkError::invalid("event vector pool", "already created"))
    }

    /// Vectors not back in their pool (0 without vectors).
    pub fn vectors_in_use(&self) -> u32 {
        self.life.vectors.get().map_or(0, VectorPool::in_use)
    }

    /// Sets event queue `id` up.
    pub fn setup_queue(&mut self, id: u8, conf: &EventQueueConfig) -> Result<()> {
        // SAFETY: as in info: initialised C constants.
        let (all_types, single_link) = unsafe {
            (
                sys::shim_event_queue_cfg_all_types,
                sys::shim_event_queue_cfg_single_link,
            )
        };
        let mut cfg = 0;
        if conf.all_types {
            cfg |= all_types;
        }
        if conf.single_link {
            cfg |= single_link;
        }
        let q = sys::rte_event_queue_conf {
            nb_atomic_flows: conf.atomic_flows,
            nb_atomic_order_sequences: conf.order_sequences,
            event_queue_cfg: cfg,
            schedule_type: conf.sched.raw(),
            priority: if conf.highest_priority {
                sys::RTE_EVENT_DEV_PRIORITY_HIGHEST
            } else {
                sys::RTE_EVENT_DEV_PRIORITY_NORMAL
            } as u8,
            ..Default::default()
        };
        // SAFETY: q is fully initialised; the device is configured, stopped.
        let ret = unsafe { sys::rte_event_queue_setup(self.id(), id, &q) };
        if ret < 0 {
            return Err(DpdkError::from_code(format!("cannot set up event queue {id}"), ret));
        }
        Ok(())
    }

    /// The driver's default depths for event port `port`.
    pub fn default_port_config(&self, port: u8) -> Result<EventPortConfig> {
        let mut c = sys::rte_event_port_conf::default();
        // SAFETY: c is a valid out-parameter of a configured device.
        let ret = unsafe { sys::rte_event_port_default_conf_get(self.id(), port, &mut c) };
        if ret < 0 {
            return Err(DpdkError::from_code("cannot get the default event port config", ret));
        }
        Ok(EventPortConfig {
            dequeue_depth: c.dequeue_depth,
            enqueue_depth: c.enqueue_depth,
            new_event_threshold: c.new_event_threshold,
        })
    }

    /// Sets up an event port and hands out its only handle, which sends to
    /// the TX adapter as [`TxPath`] says.
    pub fn setup_port(&mut self, slot: EventPortSlot, conf: &EventPortConfig, tx: TxPath) -> Result<EventPort> {
        let raw = conf.raw();
        // SAFETY: raw is valid; the device is configured and stopped.
        let ret = unsafe { sys::rte_event_port_setup(self.id(), slot.port, &raw) };
        if ret < 0 {
            return Err(DpdkError::from_code(
                format!("cannot set up event port {}", slot.port),
                ret,
            ));
        }
        Ok(EventPort {
            dev: self.id(),
            port: slot.port,
            tx,
            round: Vec::with_capacity(MAX_DEQUEUE),
            out: Vec::with_capacity(MAX_DEQUEUE),
            raw: [sys::rte_event::default(); MAX_DEQUEUE],
            _life: Arc::clone(&self.life),
            _one_lcore: PhantomData,
        })
    }

    /// Starts the device.
    pub fn start(&mut self) -> Result<()> {
        // SAFETY: a control call on a configured device.
        let ret = unsafe { sys::rte_event_dev_start(self.id()) };
        if ret < 0 {
            return Err(DpdkError::from_code("cannot start the event device", ret));
        }
        self.life.started.store(true, Ordering::Relaxed);
        Ok(())
    }

    /// Stops the device, freeing the mbufs of the events still inside it;
    /// returns how many it freed. Refused while a port or an adapter exists.
    pub fn stop(&mut self) -> Result<u64> {
        if Arc::get_mut(&mut self.life).is_none() {
            return Err(DpdkError::invalid(
                "cannot stop the event device",
                "its ports or adapters are still in use",
            ));
        }
        if self.life.started.swap(false, Ordering::Relaxed) {
            // SAFETY: no port or adapter handle exists (checked above), so
            // nothing dequeues or enqueues.
            unsafe { sys::rte_event_dev_stop(self.id()) };
        }
        Ok(self.life.freed_at_stop.load(Ordering::Relaxed))
    }

    /// The device's scheduling service, if it needs a service core.
    pub fn service(&self) -> Result<Option<crate::Service>> {
        let mut id = 0;
        // SAFETY: id is a valid out-parameter.
        let ret = unsafe { sys::rte_event_dev_service_id_get(self.id(), &mut id) };
        crate::event::service::from_lookup(ret, id, "the event device")
    }
}

/// How a worker's events reach the TX adapter: C's two paths.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TxPath {
    /// Forwarded to this event queue, which the TX adapter's port is linked
    /// to (the generic, service-core path; `L3FWD_EVENT_TX_ENQ`).
    Queue(u8),
    /// Straight into the device's own TX adapter port
    /// (`rte_event_eth_tx_adapter_enqueue`, INTERNAL_PORT devices;
    /// `L3FWD_EVENT_TX_DIRECT`).
    Direct,
}

/// A packet event the worker dequeued (vector events come as
/// [`EventVector`]s): it owns its mbuf (dropping the event frees it) and
/// remembers its place in its dequeue round, where
/// [`EventPort::forward`] puts it back. There is no second handle to its
/// packet:
///
/// ```compile_fail
/// fn twin<T: Clone>(_: &T) {}
/// fn check(event: &dpdk::Event) { twin(event) } // Event is not Clone
/// ```
pub struct Event {
    raw: sys::rte_event,
    slot: u8,
}

// SAFETY: an Event owns its mbuf exclusively, as an Mbuf does.
unsafe impl Send for Event {}

impl Event {
    /// The packet.
    #[inline(always)]
    pub fn mbuf(&self) -> &Mbuf {
        // SAFETY: an Event is made for a non-vector event only, and those
        // carry a non-null mbuf (only the RX adapter creates events, and
        // workers forward them); Mbuf is a transparent NonNull<rte_mbuf>,
        // laid out as the union's pointer.
        unsafe { &*(std::ptr::addr_of!(self.raw.__bindgen_anon_2.mbuf) as *const Mbuf) }
    }

    /// The packet, writable.
    #[inline(always)]
    pub fn mbuf_mut(&mut self) -> &mut Mbuf {
        // SAFETY: as in `mbuf`, with exclusive access through &mut self.
        unsafe { &mut *(std::ptr::addr_of_mut!(self.raw.__bindgen_anon_2.mbuf) as *mut Mbuf) }
    }
}

impl Drop for Event {
    fn drop(&mut self) {
        // SAFETY: the event owns its mbuf (see `mbuf`); it is not used after.
        unsafe { sys::shim_event_free(&self.raw) }
    }
}

/// One place of a dequeue round: released (the packet was dropped) or
/// forwarded to the TX adapter.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Slot {
    Released,
    Forwarded,
}

/// The one handle to an event port: dequeue and enqueue on it from one
/// lcore. `Send`, so it can move into that lcore's job, but neither `Clone`
/// nor `Sync`:
///
/// ```compile_fail
/// fn shared<T: Sync>(_: &T) {}
/// fn check(port: &dpdk::EventPort) { shared(port) } // EventPort is not Sync
/// ```
///
/// ```compile_fail
/// fn twin<T: Clone>(_: &T) {}
/// fn check(port: &dpdk::EventPort) { twin(port) } // EventPort is not Clone
/// ```
///
/// It moves into the lcore's job (it is `Send`):
///
/// ```
/// fn movable<T: Send>(_: T) {}
/// fn check(port: dpdk::EventPort) { movable(port) }
/// ```
///
/// A round is what one [`EventPort::dequeue`] returned. Each event goes
/// back by [`EventPort::forward`] (or is dropped), and
/// [`EventPort::send_round`] enqueues the round in the order it came: a
/// forward for each forwarded event, a release for each dropped one. The
/// scheduler matches a port's enqueues to its dequeues in order (atomic
/// flow locks, ordered sequence numbers), so the order is kept whatever
/// order the events were forwarded in.
pub struct EventPort {
    dev: u8,
    port: u8,
    tx: TxPath,
    /// The round's events, by slot; owned mbufs where `Forwarded`.
    round: Vec<(sys::rte_event, Slot)>,
    /// The round as enqueued (kept to reuse its allocation).
    out: Vec<sys::rte_event>,
    /// Where a dequeue lands.
    raw: [sys::rte_event; MAX_DEQUEUE],
    _life: Arc<DevLife>,
    /// Makes the handle `!Sync` (and keeps it `Send`).
    _one_lcore: PhantomData<Cell<()>>,
}

// SAFETY: the handle's raw events are plain data whose mbufs it owns; an
// event port may be used by any one thread at a time (the lcore it moved
// to), which `!Sync` and `&mut self` ensure.
unsafe impl Send for EventPort {}

impl EventPort {
    /// The port id.
    pub fn id(&self) -> u8 {
        self.port
    }

    /// Links the port to `queues`: it dequeues what they schedule.
    pub fn link(&mut self, queues: &[u8]) -> Result<()> {
        // SAFETY: queues holds queues.len() ids; NULL priorities mean normal.
        let n = unsafe {
            sys::rte_event_port_link(
                self.dev,
                self.port,
                queues.as_ptr(),
                std::ptr::null(),
                queues.len() as u16,
            )
        };
        if n != queues.len() as i32 {
            return Err(DpdkError::from_errno(format!(
                "cannot link event port {} to queues {queues:?}",
                self.port
            )));
        }
        Ok(())
    }

    /// Dequeues up to `max` events (at most [`MAX_DEQUEUE`]), packet
    /// events into `into` and vectors into `vectors`, starting a new
    /// round; sends the previous one first if it was not sent. Returns how
    /// many arrived.
    #[inline(always)]
    pub fn dequeue(&mut self, into: &mut Vec<Event>, vectors: &mut Vec<EventVector>, max: usize) -> usize {
        if !self.round.is_empty() {
            self.send_round(|| false);
        }
        let max = max.min(MAX_DEQUEUE);
        // SAFETY: `raw` has room for `max` events; &mut self makes this
        // thread the port's only user, and the device is open while the
        // handle lives.
        let n =
            unsafe { sys::shim_event_dequeue_burst(self.dev, self.port, self.raw.as_mut_ptr(), max as u16) } as usize;
        for (slot, raw) in self.raw[..n].iter().enumerate() {
            // Dequeued events own their mbufs: the round keeps the event's
            // scheduling fields only, as a release until forwarded.
            self.round.push((*raw, Slot::Released));
            // SAFETY: reads the event's type field.
            if unsafe { sys::shim_event_is_vector(raw) } != 0 {
                // SAFETY: a dequeued vector event carries a non-null vector
                // (the RX adapter's), owned from here by the EventVector.
                let vec = unsafe { NonNull::new_unchecked(raw.__bindgen_anon_2.vec) };
                // SAFETY: as above; no one else holds it.
                vectors.push(unsafe { EventVector::from_raw(vec, slot as u8) });
            } else {
                into.push(Event {
                    raw: *raw,
                    slot: slot as u8,
                });
            }
        }
        n
    }

    /// Puts vector `v` back into its round, its kept packets bound each for
    /// its port (see [`EventVector::refill`]): it leaves with
    /// [`EventPort::send_round`]. A vector that kept nothing goes back to
    /// its pool, its event released.
    #[inline(always)]
    pub fn forward_vector(&mut self, v: EventVector) {
        if usize::from(v.slot) >= self.round.len() {
            // Not of this round: never so in l3fwd-rs's loop; freed rather
            // than sent against another event's place.
            return drop(v);
        }
        let (vec, slot, kept) = v.into_kept();
        let (Some((raw, state)), true) = (self.round.get_mut(usize::from(slot)), kept > 0) else {
            // SAFETY: the vector is owned and holds no packet.
            unsafe { sys::shim_vector_put(vec.as_ptr()) };
            return;
        };
        raw.__bindgen_anon_2.vec = vec.as_ptr();
        *state = Slot::Forwarded;
        let queue = match self.tx {
            TxPath::Queue(q) => i32::from(q),
            TxPath::Direct => -1,
        };
        // SAFETY: the vector is owned, now by the round, and its first
        // `kept` mbufs are owned and bound for a port; the call writes the
        // vector's length and the event's op and queue.
        unsafe { sys::shim_vector_event_to_tx(raw, kept, queue) };
    }

    /// Puts `event` back into its round, bound for ethdev port `eth_port`
    /// (TX queue 0): it leaves with [`EventPort::send_round`].
    #[inline(always)]
    pub fn forward(&mut self, event: Event, eth_port: u16) {
        let event = std::mem::ManuallyDrop::new(event);
        let Some((raw, state)) = self.round.get_mut(usize::from(event.slot)) else {
            // Not of this round: never so in l3fwd-rs's loop; its packet is
            // freed rather than sent against another event's place.
            drop(std::mem::ManuallyDrop::into_inner(event));
            return;
        };
        *raw = event.raw;
        *state = Slot::Forwarded;
        let queue = match self.tx {
            TxPath::Queue(q) => i32::from(q),
            TxPath::Direct => -1,
        };
        // SAFETY: the event owns a valid mbuf (see Event::mbuf), now held by
        // the round; the call writes its port and TX queue and the event's op.
        unsafe { sys::shim_event_to_tx(raw, eth_port, queue) };
    }

    /// Enqueues the round in dequeue order, retrying until the device takes
    /// it all or `give_up` says so; frees the packets of what is left then.
    pub fn send_round(&mut self, give_up: impl Fn() -> bool) {
        let mut out = std::mem::take(&mut self.out);
        out.clear();
        match self.tx {
            TxPath::Queue(_) => {
                for (raw, state) in self.round.iter_mut() {
                    if *state == Slot::Released {
                        // SAFETY: sets the op of a plain event copy.
                        unsafe { sys::shim_event_release(raw) };
                    }
                }
                out.extend(self.round.iter().map(|(raw, _)| *raw));
                let taken = self.enqueue(&mut out, &give_up, |dev, port, ev, n| {
                    // SAFETY: ev holds n events, each a release or a forward
                    // of an event this port dequeued.
                    unsafe { sys::shim_event_enqueue_burst(dev, port, ev, n) }
                });
                self.free_forwarded_from(taken);
            }
            TxPath::Direct => {
                // Dropped packets' events are released implicitly, by the
                // next dequeue, as in C.
                self.round.retain(|(_, s)| *s == Slot::Forwarded);
                out.extend(self.round.iter().map(|(raw, _)| *raw));
                let taken = self.enqueue(&mut out, &give_up, |dev, port, ev, n| {
                    // SAFETY: ev holds n forwards of events this port
                    // dequeued, each with its mbuf's port and TX queue set.
                    unsafe { sys::shim_event_tx_adapter_enqueue(dev, port, ev, n) }
                });
                self.free_forwarded_from(taken);
            }
        }
        self.out = out;
        self.round.clear();
    }

    /// Enqueues `events` with `burst` until all are taken or `give_up`;
    /// returns how many were taken.
    fn enqueue(
        &mut self,
        events: &mut [sys::rte_event],
        give_up: &impl Fn() -> bool,
        burst: impl Fn(u8, u8, *mut sys::rte_event, u16) -> u16,
    ) -> usize {
        let mut taken = 0;
        while taken < events.len() {
            let rest = &mut events[taken..];
            taken += usize::from(burst(self.dev, self.port, rest.as_mut_ptr(), rest.len() as u16));
            if taken < events.len() && give_up() {
                break;
            }
        }
        taken
    }

    /// Frees the packets of the forwarded events of the round from the
    /// `taken`-th enqueued event on: the device did not take them.
    fn free_forwarded_from(&mut self, taken: usize) {
        let rest = self.round.iter_mut().skip(taken);
        for (raw, state) in rest.filter(|(_, s)| *s == Slot::Forwarded) {
            *state = Slot::Released;
            // SAFETY: a forwarded event the device did not take still owns
            // its mbuf or vector; marked released, it is freed once.
            unsafe { sys::shim_event_free(raw) };
        }
    }

    /// Releases everything the port still holds (C's worker cleanup):
    /// sends the round, then has the driver hand back the events it keeps
    /// for this port, whose mbufs are freed. Returns how many it freed.
    pub fn quiesce(&mut self) -> u64 {
        self.send_round(|| true);
        let mut freed = 0u64;
        // SAFETY: &mut self makes this thread the port's only user; the
        // callback frees mbufs of events the port held, each once.
        unsafe { sys::shim_event_port_quiesce(self.dev, self.port, &mut freed) };
        freed
    }
}

impl Drop for EventPort {
    fn drop(&mut self) {
        // What the round still owns is freed, never leaked.
        self.free_forwarded_from(0);
    }
}

/// The pre-scheduling C l3fwd asks for from 24.11: adaptive where the
/// device offers it, else plain where it offers that, else none.
#[cfg(dpdk_ge_2411)]
fn preschedule(caps: u32) -> sys::rte_event_dev_preschedule_type {
    // SAFETY: the shim's constants are initialised C constants, never
    // written.
    let (plain, adaptive) = unsafe {
        (
            sys::shim_event_dev_cap_preschedule,
            sys::shim_event_dev_cap_preschedule_adaptive,
        )
    };
    if caps & adaptive != 0 {
        sys::rte_event_dev_preschedule_type_RTE_EVENT_PRESCHEDULE_ADAPTIVE
    } else if caps & plain != 0 {
        sys::rte_event_dev_preschedule_type_RTE_EVENT_PRESCHEDULE
    } else {
        sys::rte_event_dev_preschedule_type_RTE_EVENT_PRESCHEDULE_NONE
    }
}

#[cfg(all(test, dpdk_ge_2411))]
mod tests {
    use super::{preschedule, sys};

    #[test]
    fn preschedule_as_c_l3fwd_asks_for_it() {
        // SAFETY: shim constants.
        let (plain, adaptive) = unsafe {
            (
                sys::shim_event_dev_cap_preschedule,
                sys::shim_event_dev_cap_preschedule_adaptive,
            )
        };
        assert_eq!(
            preschedule(0),
            sys::rte_event_dev_preschedule_type_RTE_EVENT_PRESCHEDULE_NONE
        );
        assert_eq!(
            preschedule(plain),
            sys::rte_event_dev_preschedule_type_RTE_EVENT_PRESCHEDULE
        );
        assert_eq!(
            preschedule(plain | adaptive),
            sys::rte_event_dev_preschedule_type_RTE_EVENT_PRESCHEDULE_ADAPTIVE
        );
    }
}
