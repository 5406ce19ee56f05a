//! EAL start and stop, lcores, and the TSC clock.

use std::ffi::{c_char, CString};
use std::sync::OnceLock;

use crate::error::{DpdkError, Result};
use crate::sys;

/// The initialised Environment Abstraction Layer. Created once per process;
/// dropping it calls `rte_eal_cleanup`, so drop every other DPDK object first.
pub struct Eal {
    _private: (),
}

impl Eal {
    /// Initialises EAL with `args` (program name first, then EAL arguments:
    /// everything before `--` on l3fwd's command line).
    pub fn init(args: &[String]) -> Result<Eal> {
        let mut argv: Vec<*mut c_char> = Vec::with_capacity(args.len() + 1);
        for a in args {
            let c = CString::new(a.as_str()).map_err(|_| DpdkError::invalid("EAL argument", "contains a NUL byte"))?;
            // EAL may keep pointers into argv (device arguments, the file
            // prefix) for the life of the process, so the strings are leaked.
            argv.push(c.into_raw());
        }
        argv.push(std::ptr::null_mut());
        let argc = args.len() as i32;
        // SAFETY: argv holds argc valid NUL-terminated strings followed by a
        // NULL, all leaked so they outlive EAL; EAL may permute the array,
        // which is ours and not read again.
        let ret = unsafe { sys::rte_eal_init(argc, argv.as_mut_ptr()) };
        std::mem::forget(argv);
        if ret < 0 {
            // EAL's own messages above name the bad argument or the clash
            // (e.g. a --file-prefix in use); it does not always set rte_errno.
            // SAFETY: reads this thread's rte_errno through the shim.
            let errno = unsafe { sys::l3fwd_errno() };
            let what = "cannot initialise EAL (see EAL's messages above)";
            return Err(match errno {
                0 => DpdkError::invalid(what, "no reason given"),
                e => DpdkError::from_code(what, -e),
            });
        }
        Ok(Eal { _private: () })
    }

    /// Initialises EAL once per process and shares it: for tests and
    /// benchmarks that need DPDK objects (tables, pools) but not ports. Later
    /// calls return the first result; the EAL is never cleaned up.
    pub fn init_shared(args: &[String]) -> Result<&'static Eal> {
        static SHARED: OnceLock<Result<Eal>> = OnceLock::new();
        SHARED.get_or_init(|| Eal::init(args)).as_ref().map_err(Clone::clone)
    }

    /// The enabled lcores, ascending (main lcore included).
    pub fn lcores(&self) -> Vec<u32> {
        let mut out = Vec::new();
        // SAFETY: RTE_MAX_LCORE starts the walk; rte_get_next_lcore only reads
        // EAL's lcore table, set up by init.
        let mut id = unsafe { sys::rte_get_next_lcore(u32::MAX, 0, 0) };
        while id < sys::RTE_MAX_LCORE {
            out.push(id);
            // SAFETY: as above, with the previous lcore id.
            id = unsafe { sys::rte_get_next_lcore(id, 0, 0) };
        }
        out
    }

    /// The lcore this (main) thread runs as.
    pub fn main_lcore(&self) -> u32 {
        // SAFETY: reads EAL's configuration, set by init.
        unsafe { sys::rte_get_main_lcore() }
    }

    /// NUMA socket of an lcore.
    pub fn lcore_socket(&self, lcore: u32) -> u32 {
        // SAFETY: a read of EAL's lcore table; out-of-range ids return
        // SOCKET_ID_ANY rather than reading out of bounds.
        unsafe { sys::rte_lcore_to_socket_id(lcore) }
    }

    /// Number of ethdev ports EAL created (vdevs and probed devices).
    pub fn port_count(&self) -> u16 {
        // SAFETY: reads the ethdev port table.
        unsafe { sys::rte_eth_dev_count_avail() }
    }
}

impl Drop for Eal {
    fn drop(&mut self) {
        // SAFETY: called once, after the application dropped its DPDK
        // objects (ports closed, pools freed).
        unsafe {
            sys::rte_eal_cleanup();
        }
    }
}

/// The lcore the calling thread runs as (`u32::MAX` outside EAL threads).
pub fn current_lcore() -> u32 {
    // SAFETY: reads a thread-local through the shim.
    unsafe { sys::l3fwd_lcore_id() }
}

/// TSC ticks per second, as EAL measured them.
pub fn tsc_hz() -> u64 {
    // SAFETY: reads a value EAL computed at init.
    unsafe { sys::rte_get_tsc_hz() }
}

/// The CPU's time-stamp counter: the cheap clock of the forwarding loop.
#[inline(always)]
pub fn rdtsc() -> u64 {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: RDTSC has no memory effects and exists on every x86_64 CPU.
    unsafe {
        core::arch::x86_64::_rdtsc()
    }
    #[cfg(not(target_arch = "x86_64"))]
    // SAFETY: the shim reads the cycle counter; no memory effects.
    unsafe {
        sys::l3fwd_rdtsc()
    }
}
