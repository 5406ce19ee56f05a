//! A safe layer over the installed DPDK (22.11 or later; tested on 22.11,
//! 24.11 and 25.11): bindings (bindgen and a C
//! shim for DPDK's `static inline` functions) and the types a forwarder
//! needs. Every `unsafe` block of the project lives in this crate, each
//! with a `SAFETY:` note; the other crates forbid `unsafe`.
//!
//! Layering: bindings (private) -> safe types ([`Eal`], [`Mempool`],
//! [`Port`], [`MbufArray`], [`Lpm`], [`Lpm6`], [`Fib`], [`Fib6`], [`Acl`],
//! [`struct@Hash`], lcore
//! launch, telemetry) -> the application. Nothing here is specific to
//! l3fwd: what to ask of a port, which offloads to turn on, is the
//! application's choice.
//!
//! # Ownership is the safety argument
//!
//! The rules of DPDK's C API are carried by types, not comments:
//! - [`Eal`] is the proof that EAL is up: every constructor borrows it,
//!   and every object keeps a handle, so `rte_eal_cleanup` runs only after
//!   the last object is gone;
//! - ports come from [`Eal::take_ports`], once each; a configured port
//!   hands out one slot per queue, consumed by the queue's setup, so each
//!   queue has exactly one [`RxQueue`] or [`TxQueue`] and two lcores cannot
//!   poll one queue;
//! - queue handles keep their port open and the port keeps the pools its
//!   rings use; [`Port::stop`] and [`Port::close`] refuse while a handle
//!   exists, so no port stops under a polling lcore;
//! - an [`Mbuf`] is one packet buffer, freed when dropped, sent by moving
//!   it; a pool whose mbufs are not all back is never freed;
//! - a table takes `&mut self` to change and `&self` to look up, so it is
//!   shared read-only between lcores once built; a table written whole
//!   ([`FrozenLpm`]) has no way to change at all; an IPv4 table changed
//!   in place while lcores read it ([`LiveLpm`]) has one writer handle,
//!   not `Sync`, and the lcores get [`LpmReader`]s, which cannot write; a
//!   tbl8 group it unlinks waits for a grace period of the lcores' QSBR
//!   variable before it is linked again;
//! - a table replaced while lcores read it is a [`Live`] value under RCU
//!   QSBR: a reader's [`Guard`] cannot outlive its next quiescent state,
//!   and the value swapped out comes back [`Retired`], freed only after a
//!   grace period.
//!
//! # Examples
//!
//! ## EAL, a pool and a table
//!
//! Start EAL without hugepages or NICs, build a pool and a table, and
//! look an address up. Each process initialises EAL once; tests share one
//! through [`Eal::init_shared`] (or [`Eal::for_tests`]), each process with
//! its own `--file-prefix`.
//!
//! ```
//! let prefix = format!("doc-dpdk-{}", std::process::id());
//! let args: Vec<String> = ["doc", "--no-huge", "-m", "256", "--no-pci", "-l", "0",
//!     "--log-level", "error", "--file-prefix", &prefix]
//!     .iter().map(|s| s.to_string()).collect();
//! let eal = dpdk::Eal::init_shared(&args)?;
//! assert_eq!(eal.lcores(), [0]);
//!
//! let pool = dpdk::Mempool::create(eal, "doc_pool", 1024, 32, 0)?;
//! assert_eq!(pool.in_use(), 0);
//!
//! let mut lpm = dpdk::Lpm::new(eal, "doc_lpm", 0, 16, 16)?;
//! lpm.add(u32::from_be_bytes([198, 18, 1, 0]), 24, 1)?;
//! assert_eq!(lpm.lookup(u32::from_be_bytes([198, 18, 1, 7])), Some(1));
//! # Ok::<(), dpdk::DpdkError>(())
//! ```
//!
//! ## A burst from RX to TX
//!
//! A burst from a `net_null` port (it "receives" 64-byte frames as fast as
//! it is polled), rewritten and sent back out:
//!
//! ```
//! let eal = dpdk::Eal::for_tests(&["--vdev=net_null0"])?;
//! let mut port = eal.take_ports()?.remove(0);
//! let pool = dpdk::Mempool::create(eal, "doc_mbufs", 1024, 32, 0)?;
//! let slots = port.configure(1, 1, &dpdk::EthConf::default())?;
//! let (rxd, txd) = port.adjust_ring_sizes(128, 128)?;
//! let (rx_slot, tx_slot) = (slots.rx.into_iter().next().unwrap(), slots.tx.into_iter().next().unwrap());
//! let mut rx = port.setup_rx_queue(rx_slot, rxd, 0, &pool)?;
//! let mut tx = port.setup_tx_queue(tx_slot, txd, 0, 0)?;
//! port.start()?;
//!
//! let mut burst = dpdk::MbufArray::<32>::new();
//! let n = rx.recv(&mut burst);
//! assert!(n > 0 && burst.len() == n);
//! for m in burst.as_mut_slice() {
//!     assert_eq!(m.data().len(), 64);
//!     let frame = m.try_data_mut().expect("an RX mbuf is its own");
//!     frame[..6].copy_from_slice(&[0x02, 0, 0, 0, 0, 1]); // destination MAC
//!     assert!(m.data().get(60..68).is_none()); // no byte past the end
//! }
//! let sent = tx.send(&mut burst);          // what the driver took left the array
//! assert_eq!(sent + burst.len(), n);
//! burst.free_all();                        // whatever it refused is ours to free
//! assert!(burst.is_empty());
//!
//! drop((rx, tx));                          // the queues keep the port open...
//! port.close()?;                           // ...so they go first
//! assert_eq!(pool.in_use(), 0);            // every mbuf came back
//! # Ok::<(), dpdk::DpdkError>(())
//! ```

#![deny(clippy::undocumented_unsafe_blocks)]

mod acl;
mod capture;
mod eal;
pub mod eal_args;
mod error;
mod event;
mod fib;
mod hash;
mod launch;
mod lpm;
mod lpm6;
mod mbuf;
mod mempool;
mod port;
mod rcu;
mod runtime_files;
mod simd;
mod telemetry;
#[cfg(test)]
#[path = "../build/version.rs"]
mod version;

/// Raw bindings generated by bindgen from the installed DPDK headers, plus
/// the C shim's `shim_*` wrappers for DPDK's `static inline` functions
/// (`rte_eth_rx_burst`, `rte_eth_tx_burst`, `rte_pktmbuf_free`, ...).
/// Private: everything a user needs has a safe wrapper.
mod sys {
    #![allow(missing_docs)]
    #![allow(non_upper_case_globals, non_camel_case_types, non_snake_case, dead_code, clippy::all)]
    #![allow(unnecessary_transmutes)]
    #![allow(clippy::undocumented_unsafe_blocks)]
    include!(concat!(env!("OUT_DIR"), "/bindings.rs"));
}

/// The DPDK the crate was built against, as pkg-config gave it
/// (`pkg-config --modversion libdpdk`, e.g. "24.11.8").
pub const BUILT_ON: &str = env!("DPDK_BUILT_ON");

mod release {
    //! `RELEASE`, written by build.rs.
    include!(concat!(env!("OUT_DIR"), "/release.rs"));
}

/// The release line built against as YYMM (2211 for 22.11, 2411 for
/// 24.11): for what the application does differently per release, as the
/// C sample of that release does.
pub use release::RELEASE;

/// Ports this DPDK build can address (`RTE_MAX_ETHPORTS`): port ids are
/// below it.
pub const MAX_PORTS: u16 = sys::RTE_MAX_ETHPORTS as u16;

/// Lcores this DPDK build can address (`RTE_MAX_LCORE`): lcore ids are
/// below it.
pub const MAX_LCORES: u32 = sys::RTE_MAX_LCORE;

/// Queues of each kind a port can have (`RTE_MAX_QUEUES_PER_PORT`): queue
/// ids are below it.
pub const MAX_QUEUES_PER_PORT: u16 = sys::RTE_MAX_QUEUES_PER_PORT as u16;

pub use acl::{Acl, AclRule, ClassifyAlg, FieldDef, FieldKind, FieldValue, MAX_PRIORITY as ACL_MAX_PRIORITY};
pub use eal::{current_lcore, rdtsc, version, Eal, SingleRxPool};
pub use error::{DpdkError, Result};
pub use event::adapter::{tx_internal_port, RxAdapter, RxAdapterStats, RxAdapterWatch, TxAdapter};
pub use event::device::{
    Event, EventDev, EventDevConfig, EventDevInfo, EventPort, EventPortConfig, EventPortSlot, EventQueueConfig,
    SchedType, TxPath, MAX_DEQUEUE,
};
pub use event::service::{Service, ServiceCores};
pub use event::vector::{EventVector, VectorConfig, VectorLimits};
pub use fib::{Fib, Fib6, FibReader, FibTable, LiveFib, Tbl8Use};
pub use hash::{Hash, HashWriter, HASH_BULK_MAX};
pub use launch::{ControlThread, MainLcore};
pub use lpm::{FrozenLpm, LiveLpm, Lpm, LpmReader, LpmTable, Slot, Tbl24, Tbl8Groups, Tbl8sFull};
pub use lpm6::{lpm6_entry, LiveLpm6, Lpm6, Lpm6Reader};
pub use mbuf::{prefetch, Drain, Mbuf, MbufArray, ZipTake};
pub use mempool::Mempool;
pub use port::{
    rss_ip, rss_l4, tx_offload_fast_free, tx_offload_multi_segs, CaptureStats, EthConf, Link, LinkSpeed, Port,
    PortInfo, PortStats, QueueSlots, RxQueue, RxSlot, StatsReader, TxQueue, TxSlot, QUEUE_STATS,
};
pub use rcu::{Guard, Live, Online, Qsbr, Reader, Retired};
pub use runtime_files::{runtime_dir_of, DEFAULT_FILE_PREFIX};
pub use simd::{Simd, TaggedWord};
