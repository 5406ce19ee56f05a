//! FIBs changed in place while lcores read them. From 24.11 rte_fib, and
//! from 25.11 rte_fib6, take the lcores' RCU QSBR variable
//! (`rte_fib_rcu_qsbr_add`): a tbl8 group a change unlinks then waits in a
//! defer queue until every lcore has passed a quiescent state, and only
//! then goes back to the free groups, so `rte_fib_add` and
//! `rte_fib_delete` may run while lookups do. Before those releases a FIB
//! changes only while nobody reads it (and l3fwd-rs swaps a rebuilt one
//! in instead).
//!
//! A [`LiveFib`] is the one writer (not `Sync`, changes through `&mut`);
//! [`FibReader`]s are the lcores' lookup handles. The FIB and the QSBR
//! variable its defer queue reads live as long as either.
//!
//! DPDK's own reclaim is not enough: an allocation that finds no free
//! group reclaims one from the queue, but an add whose prefix ends inside
//! a /24 first makes sure of two free groups, so once every group waits in
//! the queue such adds fail for good (24.11 and 25.11 alike). The writer
//! therefore drains the queue itself before each add (the queue's pointer
//! is read back from the tables' head, whose layout the lookups already
//! rely on), and on a full table waits for one grace period and tries
//! again.

use std::cell::Cell;
use std::marker::PhantomData;
use std::ops::Deref;
use std::ptr::NonNull;
use std::sync::Arc;

use super::{check_hop, Dir24_8, Fib, Fib6, Trie};
use crate::error::{DpdkError, Result};
use crate::rcu::Qsbr;
use crate::sys;

/// rte_fib or rte_fib6: what a [`LiveFib`] changes.
pub trait FibTable: sealed::Table {}

impl FibTable for Fib {}
impl FibTable for Fib6 {}

mod sealed {
    use super::*;

    /// What [`LiveFib`] does to its table, per family; callable only here.
    pub trait Table: Send + Sync + Sized {
        /// An address as the family's `add` takes it.
        type Addr: Copy;
        /// Whether this DPDK's library takes an RCU QSBR variable.
        const TAKES_RCU: bool;
        /// Attaches `qsbr`: in defer-queue mode with room for every tbl8
        /// group if the tables were recognised, and then returns the
        /// queue; in blocking mode (each freed group waits for a grace
        /// period in the call) if not.
        fn attach(&mut self, qsbr: &Qsbr) -> Result<Option<Queue>>;
        /// Adds or replaces a route.
        ///
        /// # Safety
        ///
        /// The caller is the table's one writer, and lookups may run only
        /// if [`Table::attach`] succeeded.
        unsafe fn add_shared(&self, ip: Self::Addr, depth: u8, next_hop: u64) -> Result<()>;
        /// Deletes a route (`ENOENT` if it is not there).
        ///
        /// # Safety
        ///
        /// As for [`Table::add_shared`].
        unsafe fn delete_shared(&self, ip: Self::Addr, depth: u8) -> Result<()>;
        /// The tbl8 groups taken (in `linked`) and in all, if the tables
        /// were recognised.
        ///
        /// # Safety
        ///
        /// Called by the table's one writer (it alone changes the counts).
        unsafe fn groups(&self) -> Option<Tbl8Use>;
    }
}

/// A FIB's RCU defer queue.
type Queue = NonNull<sys::rte_rcu_qsbr_dq>;

/// The rte_fib_rcu_config / rte_fib6_rcu_config (same fields) of `qsbr`
/// for tables whose head `$head` (a [`Dir24_8`] or [`Trie`]) may have been
/// recognised: defer-queue mode (the writer never waits for the lcores),
/// its queue holding every group (a full queue leaks the group it cannot
/// take: "Failed to push QSBR FIFO"); blocking mode without the head.
#[cfg(dpdk_ge_2411)]
macro_rules! rcu_config {
    ($config:ident, $dq:expr, $sync:expr, $qsbr:expr, $head:expr) => {
        match $head {
            Some(head) => sys::$config {
                v: $qsbr.raw(),
                mode: $dq,
                dq_size: head.number_tbl8s,
                reclaim_thd: 0,
                reclaim_max: 0,
            },
            None => sys::$config {
                v: $qsbr.raw(),
                mode: $sync,
                dq_size: 0,
                reclaim_thd: 0,
                reclaim_max: 0,
            },
        }
    };
}

impl sealed::Table for Fib {
    type Addr = u32;
    const TAKES_RCU: bool = cfg!(dpdk_ge_2411);

    #[cfg(dpdk_ge_2411)]
    fn attach(&mut self, qsbr: &Qsbr) -> Result<Option<Queue>> {
        // SAFETY: the head of a recognised FIB, which nobody else uses yet.
        let head = self.tables.map(|t| unsafe { t.as_ref() });
        let mut config = rcu_config!(
            rte_fib_rcu_config,
            sys::rte_fib_qsbr_mode_RTE_FIB_QSBR_MODE_DQ,
            sys::rte_fib_qsbr_mode_RTE_FIB_QSBR_MODE_SYNC,
            qsbr,
            head
        );
        // SAFETY: the FIB is alive and ours (&mut); config is valid for the
        // call, and the caller keeps qsbr alive as long as the FIB.
        let ret = unsafe { sys::rte_fib_rcu_qsbr_add(self.raw.as_ptr(), &mut config) };
        code(ret, "cannot attach RCU to the IPv4 FIB")?;
        Ok(self.tables.and_then(|t| {
            // SAFETY: as above; rte_fib_rcu_qsbr_add wrote the head's RCU fields.
            let head = unsafe { t.as_ref() };
            head.rcu.queue_of(head.rcu_mode, qsbr.raw())
        }))
    }

    #[cfg(not(dpdk_ge_2411))]
    fn attach(&mut self, _qsbr: &Qsbr) -> Result<Option<Queue>> {
        Err(DpdkError::invalid("rte_fib", "takes no RCU before DPDK 24.11"))
    }

    unsafe fn add_shared(&self, ip: u32, depth: u8, next_hop: u64) -> Result<()> {
        check_hop(next_hop)?;
        // SAFETY: the FIB is alive; the caller is its one writer, and
        // rte_fib defers the reuse of what it unlinks (attach).
        let ret = unsafe { sys::rte_fib_add(self.raw.as_ptr(), ip, depth, next_hop) };
        code(ret, "cannot add IPv4 route")
    }

    unsafe fn delete_shared(&self, ip: u32, depth: u8) -> Result<()> {
        // SAFETY: as in add_shared.
        let ret = unsafe { sys::rte_fib_delete(self.raw.as_ptr(), ip, depth) };
        code(ret, "cannot delete IPv4 route")
    }

    unsafe fn groups(&self) -> Option<Tbl8Use> {
        // SAFETY: the head of a recognised FIB; its counts change only in
        // the writer's calls, and the caller is the writer.
        self.tables.map(|t| unsafe { Tbl8Use::of_dir24_8(t.as_ref()) })
    }
}

impl sealed::Table for Fib6 {
    type Addr = [u8; 16];
    const TAKES_RCU: bool = cfg!(dpdk_ge_2511);

    #[cfg(dpdk_ge_2511)]
    fn attach(&mut self, qsbr: &Qsbr) -> Result<Option<Queue>> {
        // SAFETY: as for Fib.
        let head = self.tables.map(|t| unsafe { t.as_ref() });
        let mut config = rcu_config!(
            rte_fib6_rcu_config,
            sys::rte_fib6_qsbr_mode_RTE_FIB6_QSBR_MODE_DQ,
            sys::rte_fib6_qsbr_mode_RTE_FIB6_QSBR_MODE_SYNC,
            qsbr,
            head
        );
        // SAFETY: as for Fib.
        let ret = unsafe { sys::rte_fib6_rcu_qsbr_add(self.raw.as_ptr(), &mut config) };
        code(ret, "cannot attach RCU to the IPv6 FIB")?;
        Ok(self.tables.and_then(|t| {
            // SAFETY: as for Fib.
            let head = unsafe { t.as_ref() };
            head.rcu.queue_of(head.rcu_mode, qsbr.raw())
        }))
    }

    #[cfg(not(dpdk_ge_2511))]
    fn attach(&mut self, _qsbr: &Qsbr) -> Result<Option<Queue>> {
        Err(DpdkError::invalid("rte_fib6", "takes no RCU before DPDK 25.11"))
    }

    unsafe fn add_shared(&self, ip: [u8; 16], depth: u8, next_hop: u64) -> Result<()> {
        check_hop(next_hop)?;
        // SAFETY: ip is 16 bytes; otherwise as for Fib.
        let ret = unsafe { sys::rte_fib6_add(self.raw.as_ptr(), ip.as_ptr().cast(), depth, next_hop) };
        code(ret, "cannot add IPv6 route")
    }

    unsafe fn delete_shared(&self, ip: [u8; 16], depth: u8) -> Result<()> {
        // SAFETY: as in add_shared.
        let ret = unsafe { sys::rte_fib6_delete(self.raw.as_ptr(), ip.as_ptr().cast(), depth) };
        code(ret, "cannot delete IPv6 route")
    }

    unsafe fn groups(&self) -> Option<Tbl8Use> {
        // SAFETY: as for Fib.
        self.tables.map(|t| unsafe { Tbl8Use::of_trie(t.as_ref()) })
    }
}

fn code(ret: i32, what: &str) -> Result<()> {
    match ret {
        0.. => Ok(()),
        _ => Err(DpdkError::from_code(what, ret)),
    }
}

/// A live FIB's tbl8 groups: those linked, those waiting in the defer
/// queue for a grace period, and all it has. Counted from the tables'
/// allocator (the DIR-24-8 bitmap, the trie's pool): rte_fib's own
/// `cur_tbl8s` drifts up when an add refused for want of two groups gives
/// the first one back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tbl8Use {
    pub linked: u32,
    pub awaiting_reclaim: u32,
    pub total: u32,
}

impl Tbl8Use {
    /// # Safety
    ///
    /// `head` is a recognised DIR-24-8 head, its bitmap not being written.
    unsafe fn of_dir24_8(head: &Dir24_8) -> Tbl8Use {
        // One bit per group, in u64 slabs (number_tbl8s is a multiple of 64).
        let slabs = (head.number_tbl8s / 64) as usize;
        // SAFETY: the bitmap holds `slabs` words (Dir24_8::of checked the
        // head; DPDK allocated it so).
        let taken = (0..slabs)
            .map(|i| unsafe { head.tbl8_idxes.add(i).read() }.count_ones())
            .sum();
        Tbl8Use {
            linked: taken,
            awaiting_reclaim: 0,
            total: head.number_tbl8s,
        }
    }

    /// The trie takes groups from the top of a pool: `tbl8_pool_pos` of
    /// them are out.
    fn of_trie(head: &Trie) -> Tbl8Use {
        Tbl8Use {
            linked: head.tbl8_pool_pos,
            awaiting_reclaim: 0,
            total: head.number_tbl8s,
        }
    }
}

/// A FIB and the QSBR variable its defer queue reads, dropped in that order.
struct Shared<T> {
    fib: T,
    qsbr: Option<Arc<Qsbr>>,
}

/// The writer of a FIB the lcores read through [`FibReader`]s:
///
/// ```
/// use std::sync::Arc;
/// let eal = dpdk::Eal::for_tests(&[])?;
/// let qsbr = Arc::new(dpdk::Qsbr::new(1)?);
/// let fib = dpdk::Fib::new(eal, "doc_live_fib", 0, 16, 64)?;
/// if dpdk::LiveFib::<dpdk::Fib>::SUPPORTED {
///     let mut live = dpdk::LiveFib::new(fib, &qsbr)?;
///     let reader = live.reader(); // what an lcore holds
///     let [net, host] = [[198, 18, 7, 128], [198, 18, 7, 200]].map(u32::from_be_bytes);
///     live.add(net, 25, 7)?;
///     assert_eq!(reader.lookup(host), Some(7));
///     live.delete(net, 25)?;
///     assert_eq!(reader.lookup(host), None);
///     assert!(live.delete(net, 25).is_err(), "no such route");
/// }
/// # Ok::<(), dpdk::DpdkError>(())
/// ```
pub struct LiveFib<T: FibTable> {
    shared: Arc<Shared<T>>,
    /// The FIB's defer queue, which the writer drains (None: the FIB was
    /// attached in blocking mode, with nothing to drain).
    queue: Option<Queue>,
    /// One writer: changes need &mut, and the writer stays on one thread
    /// at a time.
    _not_sync: PhantomData<Cell<()>>,
}

// SAFETY: the writer may move to another thread (the control thread
// takes it over); the queue is used only through &mut self, and the FIB
// (Send + Sync) and Qsbr are shared through Arc.
unsafe impl<T: FibTable> Send for LiveFib<T> {}

impl<T: FibTable> LiveFib<T> {
    /// Whether this DPDK's library changes `T` in place under RCU: rte_fib
    /// from 24.11, rte_fib6 from 25.11.
    pub const SUPPORTED: bool = T::TAKES_RCU;

    /// `fib`, to be changed in place while lcores that report quiescent
    /// states on `qsbr` read it. Fails where [`LiveFib::SUPPORTED`] is
    /// false, or if DPDK cannot make the defer queue.
    pub fn new(mut fib: T, qsbr: &Arc<Qsbr>) -> Result<LiveFib<T>> {
        let queue = fib.attach(qsbr)?;
        Ok(LiveFib {
            shared: Arc::new(Shared {
                fib,
                qsbr: Some(Arc::clone(qsbr)),
            }),
            queue,
            _not_sync: PhantomData,
        })
    }

    /// Frees the groups in the defer queue whose grace period has passed;
    /// returns how many still wait.
    fn reclaim(&mut self) -> u32 {
        let Some(queue) = self.queue else {
            return 0;
        };
        let mut pending = 0;
        let null = std::ptr::null_mut();
        // SAFETY: the queue of our FIB, alive with it; only its writer
        // (self, &mut) enqueues or reclaims. n = all; one count wanted.
        unsafe { sys::rte_rcu_qsbr_dq_reclaim(queue.as_ptr(), u32::MAX, null, &mut pending, null) };
        pending
    }

    /// A lookup handle for an lcore.
    pub fn reader(&self) -> FibReader<T> {
        FibReader(Arc::clone(&self.shared))
    }

    /// Adds `ip/depth -> next_hop`, or replaces the next hop of the prefix;
    /// lookups see it on return. Fails when the FIB is out of routes or
    /// tbl8 groups (a group unlinked by a delete is free again once every
    /// lcore has passed a quiescent state).
    pub fn add(&mut self, ip: T::Addr, depth: u8, next_hop: u64) -> Result<()> {
        self.reclaim();
        // SAFETY: self is the one writer (not Clone, not Sync, &mut), and
        // new attached the RCU variable the lcores report on.
        match unsafe { self.shared.fib.add_shared(ip, depth, next_hop) } {
            Err(e) if e.is_out_of_space() && self.queue.is_some() => {
                // Groups may wait for the lcores: one grace period frees them.
                if let Some(qsbr) = &self.shared.qsbr {
                    qsbr.synchronize();
                }
                self.reclaim();
                // SAFETY: as above.
                unsafe { self.shared.fib.add_shared(ip, depth, next_hop) }
            }
            done => done,
        }
    }

    /// Deletes the route `ip/depth`; fails (`ENOENT`) if it is not there.
    pub fn delete(&mut self, ip: T::Addr, depth: u8) -> Result<()> {
        // SAFETY: as in add.
        unsafe { self.shared.fib.delete_shared(ip, depth) }
    }

    /// The tbl8 groups, once those whose grace period has passed are
    /// reclaimed (None if the tables' layout was not recognised).
    pub fn tbl8_groups(&mut self) -> Option<Tbl8Use> {
        let pending = self.reclaim();
        // SAFETY: self is the one writer.
        let taken = unsafe { self.shared.fib.groups() }?;
        Some(Tbl8Use {
            linked: taken.linked - pending,
            awaiting_reclaim: pending,
            total: taken.total,
        })
    }
}

/// An lcore's lookup handle of a FIB: that of a [`LiveFib`], or of one
/// that no longer changes (`From<Fib>`). Keeps the FIB alive.
pub struct FibReader<T>(Arc<Shared<T>>);

impl<T> Clone for FibReader<T> {
    fn clone(&self) -> Self {
        FibReader(Arc::clone(&self.0))
    }
}

impl<T: FibTable> From<T> for FibReader<T> {
    fn from(fib: T) -> FibReader<T> {
        FibReader(Arc::new(Shared { fib, qsbr: None }))
    }
}

/// Lookups (`&self` methods: `lookup`, `lookup_bulk`) of the FIB.
impl<T> Deref for FibReader<T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.0.fib
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Eal;
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

    /// A writer changing routes while another thread looks up in a loop:
    /// every answer is one the routes gave at some point, and the groups
    /// unlinked come back once the reader reports quiescent states.
    #[test]
    fn changes_in_place_while_an_lcore_reads() {
        if !LiveFib::<Fib>::SUPPORTED {
            return;
        }
        let eal = Eal::for_tests(&[]).expect("EAL init");
        let qsbr = Arc::new(Qsbr::new(1).unwrap());
        let fib = Fib::new(eal, "live_fib_test", 0, 64, 64).unwrap();
        let mut live = LiveFib::new(fib, &qsbr).unwrap();
        let base = u32::from_be_bytes([198, 18, 7, 0]);
        live.add(base, 24, 1).unwrap();
        let reader = live.reader();
        let running = Arc::new(AtomicBool::new(true));
        let laps = Arc::new(AtomicU64::new(0));
        let lcore = {
            let live_value = Arc::new(crate::Live::new(Arc::clone(&qsbr), ()));
            let mut registered = live_value.register(0).unwrap();
            let (running, laps) = (Arc::clone(&running), Arc::clone(&laps));
            std::thread::spawn(move || {
                let mut online = registered.online();
                let mut seen = [0u64; 3];
                while running.load(Ordering::Relaxed) {
                    for host in 0..=255u32 {
                        match reader.lookup(base | host) {
                            Some(hop @ (1 | 2)) => seen[hop as usize] += 1,
                            other => panic!("{host}: {other:?}"),
                        }
                    }
                    online.quiescent();
                    laps.fetch_add(1, Ordering::Relaxed);
                }
                seen
            })
        };
        let laps_from = |first: u64| {
            while laps.load(Ordering::Relaxed) < first + 2 {
                std::thread::yield_now();
            }
        };
        laps_from(0);
        // A /25 of hop 2 in the /24 of hop 1: a group linked, unlinked,
        // 1000 times over 64 groups: each goes back after the lcore's
        // grace period (an add waits for one if all are waiting).
        for _ in 0..1000 {
            live.add(base | 128, 25, 2).unwrap();
            live.delete(base | 128, 25).unwrap();
        }
        let groups = live.tbl8_groups().expect("recognised");
        assert_eq!((groups.linked, groups.total), (0, 64), "{groups:?}");
        laps_from(laps.load(Ordering::Relaxed));
        running.store(false, Ordering::Relaxed);
        let seen = lcore.join().unwrap();
        assert!(seen[1] > 0, "{seen:?}");
        // The reader is gone (offline): groups come back at once.
        for _ in 0..200 {
            live.add(base | 128, 25, 2).unwrap();
            live.delete(base | 128, 25).unwrap();
        }
        assert!(live.delete(base, 23).unwrap_err().is_not_found());
    }

    #[test]
    fn a_release_without_rcu_says_so() {
        let eal = Eal::for_tests(&[]).expect("EAL init");
        let qsbr = Arc::new(Qsbr::new(1).unwrap());
        let fib6 = Fib6::new(eal, "live_fib6_test", 0, 16, 64).unwrap();
        match (LiveFib::<Fib6>::SUPPORTED, LiveFib::new(fib6, &qsbr)) {
            (true, Ok(mut live)) => {
                let net: std::net::Ipv6Addr = "2001:db8::".parse().unwrap();
                live.add(net.octets(), 32, 3).unwrap();
                let host: std::net::Ipv6Addr = "2001:db8::9".parse().unwrap();
                assert_eq!(live.reader().lookup(&host.octets()), Some(3));
            }
            (false, Err(e)) => assert!(e.to_string().contains("takes no RCU before DPDK 25.11"), "{e}"),
            (supported, made) => panic!("SUPPORTED {supported}, but {:?}", made.err()),
        }
    }
}
