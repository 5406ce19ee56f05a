//! Adding the application's own commands to DPDK's telemetry socket
//! (`/var/run/dpdk/<prefix>/dpdk_telemetry.v2`), beside `/ethdev/stats`.
//!
//! Telemetry answers from its own thread, so a command's source must be
//! cheap and must only read what the lcores write (l3fwd-rs sums its
//! per-lcore counters, which are atomics). Query it with DPDK's
//! `dpdk-telemetry.py -f <prefix>` or any `SOCK_SEQPACKET` client.

use std::collections::HashMap;
use std::ffi::{c_char, c_int, CStr, CString};
use std::sync::{Mutex, OnceLock};

use crate::eal::Eal;
use crate::error::{DpdkError, Result};
use crate::sys;

/// Produces the name/value pairs a command answers with.
type Source = Box<dyn Fn() -> Vec<(String, u64)> + Send + Sync>;

/// Commands registered by this process, by name: DPDK's callback carries no
/// user pointer, so one callback finds the source by the command it got.
fn sources() -> &'static Mutex<HashMap<String, Source>> {
    static SOURCES: OnceLock<Mutex<HashMap<String, Source>>> = OnceLock::new();
    SOURCES.get_or_init(Default::default)
}

impl Eal {
    /// Registers telemetry command `cmd` (e.g. `/l3fwd/stats`), answering with a
    /// dictionary of counters from `source`.
    ///
    /// The name must start with `/` (DPDK refuses others); the last source
    /// registered under a name is the one that answers. With EAL's
    /// `--no-telemetry` there is no socket, so nothing asks.
    ///
    /// ```
    /// let eal = dpdk::Eal::for_tests(&[])?;
    /// use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
    /// use std::sync::Arc;
    ///
    /// let rx = Arc::new(AtomicU64::new(0));
    /// let seen = Arc::clone(&rx);
    /// eal.register_telemetry("/doc/stats", "packets seen", move || {
    ///     vec![("rx".to_string(), seen.load(Relaxed))]
    /// })?;
    /// rx.store(42, Relaxed); // `/doc/stats` now answers {"rx": 42}
    ///
    /// assert!(eal.register_telemetry("no-slash", "refused", Vec::new).is_err());
    /// # Ok::<(), dpdk::DpdkError>(())
    /// ```
    pub fn register_telemetry<F>(&self, cmd: &str, help: &str, source: F) -> Result<()>
    where
        F: Fn() -> Vec<(String, u64)> + Send + Sync + 'static,
    {
        let c_cmd = CString::new(cmd).map_err(|_| DpdkError::invalid("telemetry command", "contains a NUL byte"))?;
        let c_help = CString::new(help).map_err(|_| DpdkError::invalid("telemetry help", "contains a NUL byte"))?;
        sources()
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(cmd.to_owned(), Box::new(source));
        // SAFETY: DPDK copies the command name and help text; the callback is a
        // plain function valid for the life of the process.
        let ret = unsafe { sys::rte_telemetry_register_cmd(c_cmd.as_ptr(), Some(answer), c_help.as_ptr()) };
        if ret != 0 {
            return Err(DpdkError::from_code(
                format!("cannot register telemetry command {cmd}"),
                ret,
            ));
        }
        Ok(())
    }
}

unsafe extern "C" fn answer(cmd: *const c_char, _params: *const c_char, d: *mut sys::rte_tel_data) -> c_int {
    // SAFETY: telemetry passes the NUL-terminated command it matched.
    let cmd = unsafe { CStr::from_ptr(cmd) }.to_string_lossy();
    let pairs = match sources().lock().unwrap_or_else(|e| e.into_inner()).get(cmd.as_ref()) {
        Some(source) => source(),
        None => return -(sys::EINVAL as c_int),
    };
    // SAFETY: d is the response object telemetry handed us for this call.
    unsafe { sys::rte_tel_data_start_dict(d) };
    for (name, value) in pairs {
        let Ok(name) = CString::new(name) else { continue };
        // SAFETY: d is valid for the call; telemetry copies the name.
        #[cfg(not(dpdk_ge_2311))]
        unsafe {
            sys::rte_tel_data_add_dict_u64(d, name.as_ptr(), value)
        };
        // SAFETY: as above (the *_uint adder since 23.03; *_u64 went in 25.11).
        #[cfg(dpdk_ge_2311)]
        unsafe {
            sys::rte_tel_data_add_dict_uint(d, name.as_ptr(), value)
        };
    }
    0
}
