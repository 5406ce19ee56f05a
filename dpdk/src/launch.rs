//! Running closures on worker lcores and on control threads.
//!
//! EAL starts one pinned thread per lcore of `-l`/`--lcores` at init; the
//! main lcore is the calling thread, the others wait for work.
//! [`MainLcore::launch`] gives a waiting worker a Rust closure
//! (`rte_eal_remote_launch`), [`MainLcore::wait`] collects its result.
//! Threads that do not forward (statistics, timers) go through
//! [`Eal::spawn_control_thread`] (`rte_ctrl_thread_create`): a thread spawned
//! with `std::thread` after EAL init would inherit the main lcore's CPU
//! affinity and compete with the forwarding loop on that CPU.
//!
//! The closures are boxed and passed through DPDK's `void *` argument; each
//! box is reclaimed exactly once, by the thread that runs it or, if the
//! launch fails, by the launcher.
//!
//! # Who may launch
//!
//! `rte_eal_remote_launch` and `rte_eal_wait_lcore` are for the main lcore
//! only, index `lcore_config[]` with the id unchecked, and write a worker's
//! job (`f`, `arg`) without a lock: two threads launching on one worker race.
//! So launching takes a [`MainLcore`], which only the main lcore's thread
//! can make ([`Eal::main_lcore_token`]) and which cannot leave that thread
//! (it is neither `Send` nor `Sync`): every launch and wait of the process
//! runs on that one thread, one after another. Each call also checks that
//! the id is an enabled worker lcore before DPDK sees it.
//!
//! ```compile_fail
//! // The token stays on the main lcore's thread: not Send.
//! let eal = dpdk::Eal::for_tests(&[]).unwrap();
//! let main = eal.main_lcore_token().unwrap();
//! std::thread::spawn(move || main.wait(1));
//! ```

use std::ffi::{c_int, c_void, CString};
use std::marker::PhantomData;

use crate::eal::{current_lcore, Eal};
use crate::error::{DpdkError, Result};
use crate::sys;

type LcoreJob = Box<dyn FnOnce() -> i32 + Send>;
type ControlJob = Box<dyn FnOnce() + Send>;

/// The main lcore's right to start jobs on worker lcores and wait for
/// them: made by [`Eal::main_lcore_token`] on the main lcore's thread only,
/// and neither `Send` nor `Sync`, so it never leaves that thread.
pub struct MainLcore {
    eal: Eal,
    main: u32,
    /// A raw pointer makes the token `!Send` and `!Sync`.
    _on_this_thread: PhantomData<*const ()>,
}

impl Eal {
    /// The [`MainLcore`] token; fails unless the calling thread is the main
    /// lcore (the thread that initialised EAL).
    ///
    /// ```
    /// let eal = dpdk::Eal::for_tests(&[])?;
    /// assert!(eal.main_lcore_token().is_ok()); // this thread started EAL
    /// let other = eal.clone();
    /// let off_main = std::thread::spawn(move || other.main_lcore_token().is_err());
    /// assert!(off_main.join().unwrap()); // no other thread can launch
    /// # Ok::<(), dpdk::DpdkError>(())
    /// ```
    pub fn main_lcore_token(&self) -> Result<MainLcore> {
        let main = self.main_lcore();
        let here = current_lcore();
        if here != main {
            return Err(DpdkError::invalid(
                "launching on worker lcores",
                format!("only the main lcore ({main}) may, and this thread is not it"),
            ));
        }
        Ok(MainLcore {
            eal: self.clone(),
            main,
            _on_this_thread: PhantomData,
        })
    }
}

impl MainLcore {
    /// The main lcore's id.
    pub fn lcore(&self) -> u32 {
        self.main
    }

    /// Fails unless `lcore` is an enabled lcore other than the main one:
    /// the only ids `lcore_config[]` may be indexed with for a launch.
    fn check_worker(&self, lcore: u32, action: &str) -> Result<()> {
        let what = || format!("cannot {action} lcore {lcore}");
        if lcore >= sys::RTE_MAX_LCORE {
            return Err(DpdkError::invalid(
                what(),
                format!("lcore ids are below {}", sys::RTE_MAX_LCORE),
            ));
        }
        if lcore == self.main {
            return Err(DpdkError::invalid(
                what(),
                "it is the main lcore, which runs its share itself",
            ));
        }
        // SAFETY: rte_lcore_is_enabled bounds-checks the id itself (and it
        // is below RTE_MAX_LCORE anyway); it reads EAL's lcore roles.
        if unsafe { sys::rte_lcore_is_enabled(lcore) } == 0 {
            return Err(DpdkError::invalid(what(), "not an enabled lcore (-l/--lcores)"));
        }
        Ok(())
    }

    /// Starts `job` on worker lcore `lcore`; collect its result with
    /// [`MainLcore::wait`].
    ///
    /// Fails if `lcore` is not an enabled worker (the main lcore included) or is
    /// still running an earlier job; `job` is then dropped without running.
    /// The job owns what it captures (`Send + 'static`): this is how l3fwd-rs
    /// hands each lcore its queues and buffers, which no other thread can
    /// then reach.
    ///
    /// ```
    /// // Two lcores on CPU 0 (runs on a one-CPU machine too): 0 is the main
    /// // lcore, 1 a worker.
    /// let eal = dpdk::Eal::for_tests(&["--lcores", "0@0,1@0"])?;
    /// let main = eal.main_lcore_token()?;
    /// assert_eq!(main.lcore(), 0);
    ///
    /// let owned = vec![1, 2, 3]; // moved into the job
    /// main.launch(1, move || {
    ///     assert_eq!(dpdk::current_lcore(), 1);
    ///     owned.iter().sum()
    /// })?;
    /// assert_eq!(main.wait(1)?, 6);
    /// // The main lcore is not a worker: it runs its share itself.
    /// assert!(main.launch(0, || 0).is_err());
    /// # Ok::<(), dpdk::DpdkError>(())
    /// ```
    ///
    /// An id that is not an enabled lcore never reaches DPDK (which would
    /// index its lcore table with it unchecked):
    ///
    /// ```
    /// let eal = dpdk::Eal::for_tests(&["--lcores", "0@0,1@0"])?;
    /// let main = eal.main_lcore_token()?;
    /// for (bad, why) in [
    ///     (2, "not an enabled lcore"),
    ///     (dpdk::MAX_LCORES - 1, "not an enabled lcore"),
    ///     (dpdk::MAX_LCORES, "lcore ids are below"),
    ///     (u32::MAX, "lcore ids are below"),
    /// ] {
    ///     let ran = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    ///     let flag = ran.clone();
    ///     let job = move || { flag.store(true, std::sync::atomic::Ordering::Relaxed); 0 };
    ///     let error = main.launch(bad, job).unwrap_err().to_string();
    ///     assert!(error.starts_with(&format!("cannot launch on lcore {bad}: {why}")), "{error}");
    ///     let error = main.wait(bad).unwrap_err().to_string();
    ///     assert!(error.starts_with(&format!("cannot wait for lcore {bad}: {why}")), "{error}");
    ///     assert!(!ran.load(std::sync::atomic::Ordering::Relaxed));
    /// }
    /// // Waiting on itself would never end.
    /// assert!(main.wait(0).unwrap_err().to_string().contains("it is the main lcore"));
    /// # Ok::<(), dpdk::DpdkError>(())
    /// ```
    pub fn launch<F>(&self, lcore: u32, job: F) -> Result<()>
    where
        F: FnOnce() -> i32 + Send + 'static,
    {
        self.check_worker(lcore, "launch on")?;
        let boxed: Box<LcoreJob> = Box::new(Box::new(job));
        let arg = Box::into_raw(boxed) as *mut c_void;
        // SAFETY: `lcore` is an enabled worker lcore (checked above), so it
        // indexes EAL's lcore table in bounds and has a thread to run the
        // job; this thread is the main lcore and the only one holding
        // MainLcore tokens (they are !Send), so no other thread writes the
        // worker's job concurrently. run_lcore_job takes back ownership of
        // `arg` exactly once on the worker; if the launch fails it never
        // runs, and we reclaim it here.
        let ret = unsafe { sys::rte_eal_remote_launch(Some(run_lcore_job), arg, lcore) };
        if ret != 0 {
            // SAFETY: the launch failed, so the worker never saw `arg`.
            drop(unsafe { Box::from_raw(arg as *mut LcoreJob) });
            return Err(DpdkError::from_code(format!("cannot launch on lcore {lcore}"), ret));
        }
        Ok(())
    }

    /// Waits for the job on worker `lcore` to finish and returns its result
    /// (the job's return value; 0 at once if nothing was launched there).
    /// Fails, without waiting, if `lcore` is not an enabled worker lcore.
    /// See [`MainLcore::launch`].
    pub fn wait(&self, lcore: u32) -> Result<i32> {
        self.check_worker(lcore, "wait for")?;
        // SAFETY: `lcore` is an enabled worker (checked above), so the wait
        // indexes EAL's lcore table in bounds and ends when its job does;
        // this is the main lcore's thread (the token cannot leave it).
        Ok(unsafe { sys::rte_eal_wait_lcore(lcore) })
    }

    /// Waits for every worker lcore to finish its job
    /// (`rte_eal_mp_wait_lcore`).
    pub fn wait_all(&self) {
        // SAFETY: on the main lcore's thread (the token cannot leave it);
        // the call walks EAL's own list of worker lcores.
        unsafe { sys::rte_eal_mp_wait_lcore() }
    }

    /// The EAL this token belongs to.
    pub fn eal(&self) -> &Eal {
        &self.eal
    }
}

unsafe extern "C" fn run_lcore_job(arg: *mut c_void) -> c_int {
    // SAFETY: `arg` came from Box::into_raw in MainLcore::launch and is
    // reclaimed only here.
    let job = unsafe { Box::from_raw(arg as *mut LcoreJob) };
    job()
}

/// A non-forwarding thread made by `rte_ctrl_thread_create` (before
/// 23.11; `rte_thread_create_control` since): EAL pins it to
/// the CPUs not used by lcores, so it never steals a forwarding core.
///
/// Join it with [`ControlThread::join`]; dropping it without joining
/// leaves the thread running, never joined.
pub struct ControlThread(ThreadId);

#[cfg(not(dpdk_ge_2311))]
type ThreadId = sys::pthread_t;
#[cfg(dpdk_ge_2311)]
type ThreadId = sys::rte_thread_t;

impl Eal {
    /// Starts `job` on a new control thread named `name` (at most 15 bytes).
    ///
    /// EAL pins the thread to the CPUs EAL started with minus the lcores' own
    /// (all of them if every CPU is an lcore). l3fwd-rs runs its statistics
    /// and `--duration` timer this way.
    ///
    /// ```
    /// let eal = dpdk::Eal::for_tests(&[])?;
    /// let (tx, rx) = std::sync::mpsc::channel();
    /// let thread = eal.spawn_control_thread("doc-ctrl", move || {
    ///     // Not an lcore: EAL reports no lcore id here.
    ///     tx.send(dpdk::current_lcore()).unwrap();
    /// })?;
    /// thread.join();
    /// assert_eq!(rx.recv().unwrap(), u32::MAX);
    /// # Ok::<(), dpdk::DpdkError>(())
    /// ```
    pub fn spawn_control_thread<F>(&self, name: &str, job: F) -> Result<ControlThread>
    where
        F: FnOnce() + Send + 'static,
    {
        let cname = CString::new(name).map_err(|_| DpdkError::invalid("thread name", "contains a NUL byte"))?;
        let boxed: Box<ControlJob> = Box::new(Box::new(job));
        let arg = Box::into_raw(boxed) as *mut c_void;
        let mut tid = ThreadId::default();
        // SAFETY: tid and cname are valid for the call; run_control_job takes
        // ownership of `arg` once; on failure it never runs and we reclaim it.
        #[cfg(not(dpdk_ge_2311))]
        let ret = unsafe {
            sys::rte_ctrl_thread_create(&mut tid, cname.as_ptr(), std::ptr::null(), Some(run_control_job), arg)
        };
        // SAFETY: as above (rte_thread_create_control, which replaced
        // rte_ctrl_thread_create in 23.11, pins it the same way).
        #[cfg(dpdk_ge_2311)]
        let ret = unsafe { sys::rte_thread_create_control(&mut tid, cname.as_ptr(), Some(run_control_job), arg) };
        if ret != 0 {
            // SAFETY: the thread was not created, so nothing else owns `arg`.
            drop(unsafe { Box::from_raw(arg as *mut ControlJob) });
            return Err(DpdkError::from_code(format!("cannot start thread {name}"), -ret.abs()));
        }
        Ok(ControlThread(tid))
    }
}

impl ControlThread {
    /// Waits for the thread to end (`pthread_join`). See
    /// [`Eal::spawn_control_thread`].
    pub fn join(self) {
        // SAFETY: the thread was created joinable and is joined once (join
        // consumes self).
        #[cfg(not(dpdk_ge_2311))]
        unsafe {
            sys::pthread_join(self.0, std::ptr::null_mut());
        }
        // SAFETY: as above.
        #[cfg(dpdk_ge_2311)]
        unsafe {
            sys::rte_thread_join(self.0, std::ptr::null_mut());
        }
    }
}

#[cfg(not(dpdk_ge_2311))]
unsafe extern "C" fn run_control_job(arg: *mut c_void) -> *mut c_void {
    // SAFETY: `arg` came from Box::into_raw in spawn_control_thread and is
    // reclaimed only here.
    let job = unsafe { Box::from_raw(arg as *mut ControlJob) };
    job();
    std::ptr::null_mut()
}

#[cfg(dpdk_ge_2311)]
unsafe extern "C" fn run_control_job(arg: *mut c_void) -> u32 {
    // SAFETY: as above.
    let job = unsafe { Box::from_raw(arg as *mut ControlJob) };
    job();
    0
}
