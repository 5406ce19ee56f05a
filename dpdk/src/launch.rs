//! Running closures on worker lcores and on control threads.

use std::ffi::{c_int, c_void, CString};

use crate::error::{DpdkError, Result};
use crate::sys;

type LcoreJob = Box<dyn FnOnce() -> i32 + Send>;
type ControlJob = Box<dyn FnOnce() + Send>;

/// Starts `job` on worker lcore `lcore`; collect its result with
/// [`wait_lcore`].
pub fn launch_on_lcore<F>(lcore: u32, job: F) -> Result<()>
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

/// Waits for the job on `lcore` to finish and returns its result.
pub fn wait_lcore(lcore: u32) -> i32 {
    // SAFETY: waits on EAL's per-lcore state; no memory is passed.
    unsafe { sys::rte_eal_wait_lcore(lcore) }
}

unsafe extern "C" fn run_lcore_job(arg: *mut c_void) -> c_int {
    // SAFETY: `arg` came from Box::into_raw in launch_on_lcore and is
    // reclaimed only here.
    let job = unsafe { Box::from_raw(arg as *mut LcoreJob) };
    job()
}

/// A non-forwarding thread made by `rte_ctrl_thread_create`: EAL pins it to
/// the CPUs not used by lcores, so it never steals a forwarding core.
pub struct ControlThread(sys::pthread_t);

/// Starts `job` on a new control thread named `name` (at most 15 bytes).
pub fn spawn_control_thread<F>(name: &str, job: F) -> Result<ControlThread>
where
    F: FnOnce() + Send + 'static,
{
    let cname = CString::new(name).map_err(|_| DpdkError::invalid("thread name", "contains a NUL byte"))?;
    let boxed: Box<ControlJob> = Box::new(Box::new(job));
    let arg = Box::into_raw(boxed) as *mut c_void;
    let mut tid: sys::pthread_t = 0;
    // SAFETY: tid and cname are valid for the call; run_control_job takes
    // ownership of `arg` once; on failure it never runs and we reclaim it.
    let ret =
        unsafe { sys::rte_ctrl_thread_create(&mut tid, cname.as_ptr(), std::ptr::null(), Some(run_control_job), arg) };
    if ret != 0 {
        // SAFETY: the thread was not created, so nothing else owns `arg`.
        drop(unsafe { Box::from_raw(arg as *mut ControlJob) });
        return Err(DpdkError::from_code(format!("cannot start thread {name}"), -ret.abs()));
    }
    Ok(ControlThread(tid))
}

impl ControlThread {
    /// Waits for the thread to end.
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
