//! Tables that change while lcores read them: DPDK's RCU in its QSBR form
//! (`rte_rcu_qsbr`) and a [`Live`] value swapped under it.
//!
//! Readers never lock. Each reader (a forwarding lcore) registers with the
//! QSBR variable, goes online, and reports a *quiescent state* between two
//! uses of the table (every few poll rounds): a moment at which it holds no
//! reference into it. The writer (a control thread) swaps a new table in
//! and may free the old one once every reader online at the swap has
//! reported a quiescent state since: a *grace period*.
//!
//! The types carry the rules:
//! - a [`Guard`] (what [`Online::read`] gives) borrows the [`Online`]
//!   reader, and [`Online::quiescent`] takes it mutably, so no table
//!   reference lives across a quiescent state:
//!
//! ```compile_fail
//! use std::sync::Arc;
//! let live = Arc::new(dpdk::Live::new(dpdk::Qsbr::new(1).unwrap(), 1));
//! let mut reader = live.register(0).unwrap();
//! let mut online = reader.online();
//! let table = online.read();
//! online.quiescent(); // `online` is still borrowed by `table`
//! assert_eq!(*table, 1);
//! ```
//!
//! - [`Live::swap`] hands the old value back as [`Retired`], which cannot
//!   be read; [`Retired::synchronize`] waits for the grace period and only
//!   then returns it:
//!
//! ```compile_fail
//! use std::sync::Arc;
//! let live = Arc::new(dpdk::Live::new(dpdk::Qsbr::new(1).unwrap(), 1));
//! let old = live.swap(2);
//! assert_eq!(*old, 1); // a Retired value has no Deref
//! ```
//!
//! The whole cycle, a reader on another thread:
//!
//! ```
//! use std::sync::Arc;
//! let live = Arc::new(dpdk::Live::new(dpdk::Qsbr::new(1)?, String::from("v1")));
//! let mut reader = live.register(0)?;
//! let lcore = std::thread::spawn(move || {
//!     let mut online = reader.online();
//!     while *online.read() != "v2" {
//!         online.quiescent(); // once per poll round
//!     }
//! });
//! let old = live.swap(String::from("v2"));
//! assert_eq!(old.synchronize(), "v1"); // no reader can see "v1" now
//! lcore.join().unwrap();
//! # Ok::<(), dpdk::DpdkError>(())
//! ```

use std::alloc::{alloc_zeroed, dealloc, Layout};
use std::marker::PhantomData;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicPtr, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use crate::error::{DpdkError, Result};
use crate::sys;

/// Every QSBR variable alive in this process (their addresses), for a
/// grace period over all of them ([`grace_over_every_variable`]).
static VARIABLES: Mutex<Vec<usize>> = Mutex::new(Vec::new());

fn variables() -> MutexGuard<'static, Vec<usize>> {
    VARIABLES.lock().unwrap_or_else(|e| e.into_inner())
}

/// Waits for a grace period of every QSBR variable: every reader online
/// now, on any of them, has reported a quiescent state since or gone
/// offline. Readers report between poll rounds, so no forwarding lcore is
/// still inside a burst it began before the call. Never call it from a
/// reader.
pub(crate) fn grace_over_every_variable() {
    // Held throughout: a variable cannot be freed while it is waited on.
    let variables = variables();
    for &raw in variables.iter() {
        let raw = raw as *mut sys::rte_rcu_qsbr;
        // SAFETY: listed by `Qsbr::new` once initialised, and unlisted by
        // its drop (under this lock) before it is freed.
        unsafe { sys::shim_rcu_qsbr_wait(raw, sys::shim_rcu_qsbr_start(raw)) };
    }
}

/// One `rte_rcu_qsbr` variable for up to `max_readers` readers, ids
/// `0..max_readers`.
pub struct Qsbr {
    raw: NonNull<sys::rte_rcu_qsbr>,
    layout: Layout,
    /// Which reader ids are taken: DPDK accepts a second registration of
    /// one id silently, which would let two threads report for one.
    taken: Mutex<Vec<bool>>,
}

// SAFETY: every rte_rcu_qsbr function may be called from any thread: the
// variable's fields are read and written with atomics (DPDK's documented
// multi-reader, multi-writer use); `taken` is behind a mutex.
unsafe impl Send for Qsbr {}
// SAFETY: as for Send.
unsafe impl Sync for Qsbr {}

impl Qsbr {
    /// A QSBR variable for `max_readers` readers (at least one).
    pub fn new(max_readers: u32) -> Result<Qsbr> {
        let what = || format!("cannot create an RCU QSBR variable for {max_readers} readers");
        if max_readers == 0 {
            return Err(DpdkError::invalid(what(), "it needs at least one reader"));
        }
        // SAFETY: a pure size computation.
        let size = unsafe { sys::rte_rcu_qsbr_get_memsize(max_readers) };
        let layout = Layout::from_size_align(size, sys::RTE_CACHE_LINE_SIZE as usize)
            .map_err(|e| DpdkError::invalid(what(), e.to_string()))?;
        // SAFETY: `layout` has a non-zero size (the variable's header is
        // one cache line at least).
        let raw = NonNull::new(unsafe { alloc_zeroed(layout) }.cast::<sys::rte_rcu_qsbr>())
            .ok_or_else(|| DpdkError::invalid(what(), "out of memory"))?;
        // SAFETY: `raw` is `rte_rcu_qsbr_get_memsize(max_readers)` bytes,
        // cache-line aligned, as rte_rcu_qsbr_init requires.
        let rc = unsafe { sys::rte_rcu_qsbr_init(raw.as_ptr(), max_readers) };
        let qsbr = Qsbr {
            raw,
            layout,
            taken: Mutex::new(vec![false; max_readers as usize]),
        };
        match rc {
            0 => {
                variables().push(qsbr.raw.as_ptr() as usize);
                Ok(qsbr)
            }
            rc => Err(DpdkError::from_code(what(), rc)),
        }
    }

    /// Waits until every reader online now has reported a quiescent state
    /// or gone offline (returns at once when none is online). Never call
    /// it from a thread holding an [`Online`] reader of this variable: it
    /// would wait for itself.
    pub(crate) fn wait_for_readers_from(&self, token: u64) {
        // SAFETY: the variable is initialised and alive (we borrow it).
        unsafe { sys::shim_rcu_qsbr_wait(self.raw.as_ptr(), token) }
    }

    /// Waits for a whole grace period from now (see
    /// [`Qsbr::wait_for_readers_from`] for the thread it may run on).
    pub(crate) fn synchronize(&self) {
        self.wait_for_readers_from(self.start());
    }

    /// The variable, for DPDK libraries that attach to it.
    pub(crate) fn raw(&self) -> *mut sys::rte_rcu_qsbr {
        self.raw.as_ptr()
    }

    /// Whether every reader online when `token` was taken has reported a
    /// quiescent state since (or gone offline), without waiting.
    pub(crate) fn passed(&self, token: u64) -> bool {
        // SAFETY: the variable is initialised and alive (we borrow it).
        unsafe { sys::shim_rcu_qsbr_passed(self.raw.as_ptr(), token) != 0 }
    }

    /// Starts a grace period and returns its token.
    pub(crate) fn start(&self) -> u64 {
        // SAFETY: the variable is initialised and alive; the start is an
        // atomic increment, safe beside other writers.
        unsafe { sys::shim_rcu_qsbr_start(self.raw.as_ptr()) }
    }
}

impl Drop for Qsbr {
    fn drop(&mut self) {
        variables().retain(|&raw| raw != self.raw.as_ptr() as usize);
        // SAFETY: allocated in `new` with this layout; no reader is left
        // (each holds an Arc of what holds this variable).
        unsafe { dealloc(self.raw.as_ptr().cast(), self.layout) }
    }
}

/// A value readers use without locking while a writer replaces it: the
/// current one is read through an [`Online`] reader; [`Live::swap`] puts
/// a new one in and retires the old.
pub struct Live<T> {
    /// Shared with the tables that wait on it (an rte_hash's defer queue,
    /// a [`crate::LiveLpm`]'s unlinked tbl8 groups).
    qsbr: Arc<Qsbr>,
    current: AtomicPtr<T>,
}

// SAFETY: the value is reached from several threads (`T: Sync`) and moves
// to the writer's thread when retired (`T: Send`).
unsafe impl<T: Send + Sync> Send for Live<T> {}
// SAFETY: as for Send.
unsafe impl<T: Send + Sync> Sync for Live<T> {}

impl<T: Send + Sync> Live<T> {
    /// Holds `value` under `qsbr` (owned, or shared with the tables
    /// that wait on it, such as a [`crate::LiveLpm`]).
    pub fn new(qsbr: impl Into<Arc<Qsbr>>, value: T) -> Live<T> {
        Live {
            qsbr: qsbr.into(),
            current: AtomicPtr::new(Box::into_raw(Box::new(value))),
        }
    }

    /// The QSBR variable, for tables attached to it.
    pub fn qsbr(&self) -> &Arc<Qsbr> {
        &self.qsbr
    }

    /// Registers reader `id` (below the QSBR variable's `max_readers`,
    /// each id once at a time); the reader starts offline.
    pub fn register(self: &Arc<Self>, id: u32) -> Result<Reader<T>> {
        let what = || format!("cannot register RCU reader {id}");
        let mut taken = self.qsbr.taken.lock().unwrap_or_else(|e| e.into_inner());
        match taken.get_mut(id as usize) {
            None => return Err(DpdkError::invalid(what(), format!("ids are below {}", taken.len()))),
            Some(true) => return Err(DpdkError::invalid(what(), "it is registered already")),
            Some(slot) => *slot = true,
        }
        // SAFETY: the variable is initialised; `id` is below its
        // max_threads (checked above).
        let rc = unsafe { sys::rte_rcu_qsbr_thread_register(self.qsbr.raw.as_ptr(), id) };
        if rc != 0 {
            taken[id as usize] = false;
            return Err(DpdkError::from_code(what(), rc));
        }
        Ok(Reader {
            live: Arc::clone(self),
            id,
        })
    }

    /// Puts `value` in: readers see it from their next read on. The value
    /// it replaces comes back [`Retired`]: readers may still hold it.
    #[must_use = "a retired value is freed once readers are done with it: call synchronize"]
    pub fn swap(self: &Arc<Self>, value: T) -> Retired<T> {
        let old = self.current.swap(Box::into_raw(Box::new(value)), Ordering::AcqRel);
        Retired {
            // SAFETY: every pointer `current` held came from Box::into_raw,
            // and the swap made this one ours alone (readers only borrow).
            old: Some(unsafe { Box::from_raw(old) }),
            token: self.qsbr.start(),
            live: Arc::clone(self),
        }
    }
}

impl<T> Drop for Live<T> {
    fn drop(&mut self) {
        // SAFETY: from Box::into_raw; with the Live gone no reader is left
        // (each reader holds an Arc of it).
        drop(unsafe { Box::from_raw(*self.current.get_mut()) });
    }
}

/// A value swapped out of a [`Live`], which readers may still be using:
/// it cannot be read, only waited for.
pub struct Retired<T: Send + Sync> {
    old: Option<Box<T>>,
    /// The grace period started at the swap.
    token: u64,
    live: Arc<Live<T>>,
}

impl<T: Send + Sync> Retired<T> {
    /// Waits for the grace period begun at the swap (every reader online
    /// then has reported a quiescent state, or gone offline) and returns
    /// the value, which no reader can see any more. Call it on a thread
    /// that is not a reader of this value.
    pub fn synchronize(mut self) -> T {
        self.live.qsbr.wait_for_readers_from(self.token);
        match self.old.take() {
            Some(old) => *old,
            None => unreachable!("taken only here, and drop runs after"),
        }
    }
}

impl<T: Send + Sync> Drop for Retired<T> {
    /// A retired value dropped unsynchronized is still freed only after
    /// its grace period.
    fn drop(&mut self) {
        if self.old.is_some() {
            self.live.qsbr.wait_for_readers_from(self.token);
        }
    }
}

/// A registered reader of a [`Live`] value, offline: it holds no
/// reference and writers do not wait for it. Unregistered when dropped.
pub struct Reader<T: Send + Sync> {
    live: Arc<Live<T>>,
    id: u32,
}

impl<T: Send + Sync> Reader<T> {
    /// Goes online: from now until the [`Online`] drops, writers wait for
    /// this reader's quiescent states.
    pub fn online(&mut self) -> Online<'_, T> {
        // SAFETY: `id` is registered (we own the registration).
        unsafe { sys::shim_rcu_qsbr_thread_online(self.live.qsbr.raw.as_ptr(), self.id) };
        Online {
            reader: self,
            _not_send: PhantomData,
        }
    }
}

impl<T: Send + Sync> Drop for Reader<T> {
    fn drop(&mut self) {
        // SAFETY: `id` was registered by us and is offline (an Online
        // borrows the reader, so it is gone).
        unsafe { sys::rte_rcu_qsbr_thread_unregister(self.live.qsbr.raw.as_ptr(), self.id) };
        let mut taken = self.live.qsbr.taken.lock().unwrap_or_else(|e| e.into_inner());
        taken[self.id as usize] = false;
    }
}

/// A reader online: it reads the [`Live`] value and reports quiescent
/// states on the thread that made it; offline again when dropped.
pub struct Online<'r, T: Send + Sync> {
    reader: &'r mut Reader<T>,
    /// The reader's state is per thread: online, quiescent and offline on
    /// one thread.
    _not_send: PhantomData<*const ()>,
}

impl<T: Send + Sync> Online<'_, T> {
    /// The value now; held until the next [`Online::quiescent`], which
    /// cannot be called while the [`Guard`] lives.
    #[inline(always)]
    pub fn read(&self) -> Guard<'_, T> {
        let current = self.reader.live.current.load(Ordering::Acquire);
        // SAFETY: `current` came from Box::into_raw and is freed only
        // after a grace period that waits for this online reader's next
        // quiescent state, which the guard's borrow of `self` keeps from
        // being reported while the reference lives.
        Guard(unsafe { &*current })
    }

    /// Reports a quiescent state: this reader holds no reference into the
    /// value (no [`Guard`] borrows it), so writers waiting on it may go on.
    #[inline(always)]
    pub fn quiescent(&mut self) {
        // SAFETY: `id` is registered and online (this Online exists).
        unsafe { sys::shim_rcu_qsbr_quiescent(self.reader.live.qsbr.raw.as_ptr(), self.reader.id) }
    }
}

impl<T: Send + Sync> Drop for Online<'_, T> {
    fn drop(&mut self) {
        // SAFETY: `id` is registered and online; no Guard is left (each
        // borrows this Online).
        unsafe { sys::shim_rcu_qsbr_thread_offline(self.reader.live.qsbr.raw.as_ptr(), self.reader.id) }
    }
}

/// The [`Live`] value as one read saw it, until the reader's next
/// quiescent state.
pub struct Guard<'a, T>(&'a T);

impl<T> std::ops::Deref for Guard<'_, T> {
    type Target = T;
    #[inline(always)]
    fn deref(&self) -> &T {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use std::sync::mpsc;
    use std::time::Duration;

    use super::*;

    #[test]
    fn synchronize_waits_for_a_reader_holding_the_old_value() {
        let live = Arc::new(Live::new(Qsbr::new(2).unwrap(), vec![1u8]));
        let mut reader = live.register(1).unwrap();
        let (held, holding) = mpsc::channel();
        let (release, released) = mpsc::channel::<()>();
        let lcore = std::thread::spawn(move || {
            let mut online = reader.online();
            {
                let table = online.read();
                held.send(table[0]).unwrap();
                released.recv().unwrap();
            }
            online.quiescent();
        });
        assert_eq!(holding.recv().unwrap(), 1);
        let old = live.swap(vec![2]);
        let (done, synchronized) = mpsc::channel();
        let writer = std::thread::spawn(move || done.send(old.synchronize()).unwrap());
        // The reader still holds the old value: no grace period yet.
        assert!(synchronized.recv_timeout(Duration::from_millis(200)).is_err());
        release.send(()).unwrap();
        assert_eq!(synchronized.recv().unwrap(), [1]);
        writer.join().unwrap();
        lcore.join().unwrap();
    }

    #[test]
    fn an_offline_reader_is_not_waited_for_and_ids_are_unique() {
        let live = Arc::new(Live::new(Qsbr::new(2).unwrap(), 1));
        let mut reader = live.register(0).unwrap();
        assert!(live.register(0).is_err());
        assert!(live.register(2).is_err());
        drop(reader.online());
        assert_eq!(live.swap(2).synchronize(), 1);
        assert_eq!(*reader.online().read(), 2);
        drop(reader);
        assert!(live.register(0).is_ok());
    }
}
