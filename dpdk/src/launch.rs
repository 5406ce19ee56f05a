//! Running closures on worker lcores and on control threads.
//!
//! EAL starts one pinned thread per lcore of `-l`/`--lcores` at init; the
//! main lcore is the calling thread, the others wait for work.
//! [`Eal::launch_on_lcore`] gives a waiting worker a Rust closure
//! (`rte_eal_remote_launch`), [`Eal::wait_lcore`] collects its result.
//! Threads that do not forward (statistics, timers) go through
//! [`Eal::spawn_control_thread`] (`rte_ctrl_thread_create`): a thread spawned
//! with `std::thread` after EAL init would inherit the main lcore's CPU
//! affinity and compete with the forwarding loop on that CPU.
//!
//! The closures are boxed and passed through DPDK's `void *` argument; each
//! box is reclaimed exactly once, by the thread that runs it or, if the
//! launch fails, by the launcher.

use std::ffi::{c_int, c_void, CString};

use crate::eal::Eal;
use crate::error::{DpdkError, Result};
use crate::sys;

type LcoreJob = Box<dyn FnOnce() -> i32 + Send>;
type ControlJob = Box<dyn FnOnce() + Send>;

impl Eal {
    /// Starts `job` on worker lcore `lcore`; collect its result with
    /// [`Eal::wait_lcore`].
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
    /// let eal = dpdk::Eal::for_tests(256, &["--lcores", "0@0,1@0"])?;
    /// assert_eq!(eal.main_lcore(), 0);
    ///
    /// let owned = vec![1, 2, 3]; // moved into the job
    /// eal.launch_on_lcore(1, move || {
    ///     assert_eq!(dpdk::current_lcore(), 1);
    ///     owned.iter().sum()
    /// })?;
    /// assert_eq!(eal.wait_lcore(1), 6);
    /// // The main lcore is not a worker: it runs its share itself.
    /// assert!(eal.launch_on_lcore(0, || 0).is_err());
    /// # Ok::<(), dpdk::DpdkError>(())
    /// ```
    pub fn launch_on_lcore<F>(&self, lcore: u32, job: F) -> Result<()>
    where
        F: FnOnce() -> i32 + Send + 'static,
    {
        let boxed: Box<LcoreJob> = Box::new(Box::new(job));
        let arg = Box::into_raw(boxed) as *mut c_void;
        // SAFETY: run_lcore_job takes back ownership of `arg` exactly once on the
        // worker; if the launch fails it never runs, and we reclaim it here.
        let ret = unsafe { sys::rte_eal_remote_launch(Some(run_lcore_job), arg, lcore) };
        if ret != 0 {
            // SAFETY: the launch failed, so the worker never saw `arg`.
            drop(unsafe { Box::from_raw(arg as *mut LcoreJob) });
            return Err(DpdkError::from_code(format!("cannot launch on lcore {lcore}"), ret));
        }
        Ok(())
    }

    /// Waits for the job on `lcore` to finish and returns its result (the job's
    /// return value; 0 at once if nothing was launched there). See
    /// [`Eal::launch_on_lcore`].
    pub fn wait_lcore(&self, lcore: u32) -> i32 {
        // SAFETY: waits on EAL's per-lcore state; no memory is passed.
        unsafe { sys::rte_eal_wait_lcore(lcore) }
    }
}

unsafe extern "C" fn run_lcore_job(arg: *mut c_void) -> c_int {
    // SAFETY: `arg` came from Box::into_raw in launch_on_lcore and is
    // reclaimed only here.
    let job = unsafe { Box::from_raw(arg as *mut LcoreJob) };
    job()
}

/// A non-forwarding thread made by `rte_ctrl_thread_create`: EAL pins it to
/// the CPUs not used by lcores, so it never steals a forwarding core.
///
/// Join it with [`ControlThread::join`]; dropping it without joining
/// leaves the thread running, never joined.
pub struct ControlThread(sys::pthread_t);

impl Eal {
    /// Starts `job` on a new control thread named `name` (at most 15 bytes).
    ///
    /// EAL pins the thread to the CPUs EAL started with minus the lcores' own
    /// (all of them if every CPU is an lcore). l3fwd-rs runs its statistics
    /// and `--duration` timer this way.
    ///
    /// ```
    /// let eal = dpdk::Eal::for_tests(256, &[])?;
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
        let mut tid: sys::pthread_t = 0;
        // SAFETY: tid and cname are valid for the call; run_control_job takes
        // ownership of `arg` once; on failure it never runs and we reclaim it.
        let ret = unsafe {
            sys::rte_ctrl_thread_create(&mut tid, cname.as_ptr(), std::ptr::null(), Some(run_control_job), arg)
        };
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
    /// [`spawn_control_thread`].
    pub fn join(self) {
        // SAFETY: the thread was created joinable and is joined once (join
        // consumes self).
        unsafe {
            sys::pthread_join(self.0, std::ptr::null_mut());
        }
    }
}

unsafe extern "C" fn run_control_job(arg: *mut c_void) -> *mut c_void {
    // SAFETY: `arg` came from Box::into_raw in spawn_control_thread and is
    // reclaimed only here.
    let job = unsafe { Box::from_raw(arg as *mut ControlJob) };
    job();
    std::ptr::null_mut()
}
