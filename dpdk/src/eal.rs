//! EAL start and stop, lcores, ports, and the TSC clock.

use std::ffi::{c_char, CString};
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use crate::error::{DpdkError, Result};
use crate::runtime_files::{remove_unless_shared, runtime_dir_for};
use crate::sys;

/// The initialised Environment Abstraction Layer: the proof that EAL is up,
/// which every constructor of a DPDK object borrows.
///
/// A handle: clones share one EAL, and every object made with it (pool,
/// port, queue, table) keeps a clone, so `rte_eal_cleanup` runs only when
/// the last of them is gone and the worker lcores have finished their jobs.
/// No order of drops can use DPDK after its cleanup.
///
/// Without an `Eal` there is nothing to build DPDK objects with:
///
/// ```compile_fail
/// // Needs `&Eal` as its first argument: does not compile without one.
/// let pool = dpdk::Mempool::create("pool", 1024, 32, 0);
/// ```
///
/// ```compile_fail
/// let lpm = dpdk::Lpm::new("v4", 0, 16, 16);
/// ```
#[derive(Clone)]
pub struct Eal(Arc<EalState>);

struct EalState {
    /// Whether [`Eal::take_ports`] has handed the ports out.
    ports_taken: AtomicBool,
    /// The pools RX queues fill from, for MBUF_FAST_FREE's rule.
    rx_pools: Mutex<RxPools>,
    /// Pools whose last handle went while a job could still be returning
    /// mbufs to them: freed after every lcore is waited for, at cleanup.
    deferred_pools: Mutex<Vec<DeferredPool>>,
    /// `Eal::serve_packet_capture` started DPDK's capture server.
    pdump: AtomicBool,
}

/// Which pools the RX queues of this EAL have filled from. Mbufs enter the
/// process only through RX queues, so when one pool fills every RX queue,
/// every mbuf any TX queue sees comes from it: MBUF_FAST_FREE's condition.
#[derive(Default)]
struct RxPools {
    /// The first pool an RX queue was set up with (its address).
    first: Option<usize>,
    /// An RX queue was set up with another pool than `first`.
    several: bool,
    /// [`Eal::single_rx_pool`] was granted: no second pool may fill an RX
    /// queue from now on.
    single: bool,
}

/// A pool to free at EAL cleanup (see [`Eal::defer_pool_free`]).
struct DeferredPool(std::ptr::NonNull<sys::rte_mempool>);

// SAFETY: a pointer nobody uses until the cleanup frees it, on the main lcore.
unsafe impl Send for DeferredPool {}

/// The proof that one mempool fills every RX queue of this process, which
/// [`EthConf::fast_free`](crate::EthConf::fast_free) requires for
/// `RTE_ETH_TX_OFFLOAD_MBUF_FAST_FREE`: with it a driver frees sent mbufs in
/// bulk into the pool of the first one, so mbufs of a second pool on one TX
/// queue would end up in the wrong pool (its counts wrong, and the other
/// pool freed while its mbufs live on). Made by [`Eal::single_rx_pool`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SingleRxPool(());

/// The runtime folder this process made as EAL's primary, removed when
/// the process exits (see [`remove_unless_shared`]): after
/// `rte_eal_cleanup` when the last handle went, but also where EAL is never
/// cleaned up (the shared EAL of tests, a pool kept because mbufs never
/// came back) or did not start (a failed `rte_eal_init`). Not for a
/// secondary (the folder is its primary's), nor for a folder that was there
/// before (another run's, perhaps alive under `--no-shconf`, where EAL
/// takes no lock).
static OWN_RUNTIME_DIR: OnceLock<PathBuf> = OnceLock::new();

/// The argv of each `rte_eal_init` call and its strings as they were
/// before EAL permuted and overwrote its entries, kept for the life of the
/// process (EAL may keep pointers into them): held here rather than
/// forgotten, so a leak checker (the fuzz targets' LeakSanitizer) sees
/// them in use, as they are.
struct EalArgv {
    _argv: Vec<*mut c_char>,
    _strings: Vec<*mut c_char>,
}

// SAFETY: Rust never reads through these pointers again; they are only kept
// reachable, whichever thread holds them.
unsafe impl Send for EalArgv {}

impl EalArgv {
    fn keep(argv: Vec<*mut c_char>, strings: Vec<*mut c_char>) {
        static KEPT: Mutex<Vec<EalArgv>> = Mutex::new(Vec::new());
        let kept = EalArgv {
            _argv: argv,
            _strings: strings,
        };
        KEPT.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).push(kept);
    }
}

fn remove_at_exit(dir: PathBuf) {
    extern "C" fn remove() {
        if let Some(dir) = OWN_RUNTIME_DIR.get() {
            if let Err(file) = remove_unless_shared(dir) {
                log::info!(
                    "EAL runtime folder {} kept: {} is in use by another process",
                    dir.display(),
                    file.display()
                );
            }
        }
    }
    if OWN_RUNTIME_DIR.set(dir).is_ok() {
        // SAFETY: `remove` is an extern "C" fn of no arguments, as atexit
        // wants; it only reads a set OnceLock and removes files.
        unsafe { sys::shim_atexit(Some(remove)) };
    }
}

impl Eal {
    /// Initialises EAL with `args` (program name first, then EAL arguments:
    /// everything before `--` on l3fwd's command line). EAL starts once per
    /// process: a second call fails.
    pub fn init(args: &[String]) -> Result<Eal> {
        let mut argv: Vec<*mut c_char> = Vec::with_capacity(args.len() + 1);
        for a in args {
            let c = CString::new(a.as_str()).map_err(|_| DpdkError::invalid("EAL argument", "contains a NUL byte"))?;
            // EAL may keep pointers into argv (device arguments, the file
            // prefix) for the life of the process, so the strings are never
            // freed: [`EalArgv`] keeps them.
            argv.push(c.into_raw());
        }
        argv.push(std::ptr::null_mut());
        let argc = args.len() as i32;
        let runtime_dir = runtime_dir_for(args);
        let runtime_dir_existed = runtime_dir.exists();
        let strings = argv.clone();
        // SAFETY: argv holds argc valid NUL-terminated strings followed by a
        // NULL, all kept for the life of the process (EalArgv); EAL may
        // permute the array, which is ours and not read again.
        let ret = unsafe { sys::rte_eal_init(argc, argv.as_mut_ptr()) };
        EalArgv::keep(argv, strings);
        if ret < 0 {
            // EAL's own messages above name the bad argument or the clash
            // (e.g. a --file-prefix in use); it does not always set rte_errno.
            // SAFETY: reads this thread's rte_errno through the shim.
            let errno = unsafe { sys::shim_errno() };
            let what = "cannot initialise EAL (see EAL's messages above)";
            if !runtime_dir_existed {
                remove_at_exit(runtime_dir);
            }
            return Err(match errno {
                0 => DpdkError::invalid(what, "no reason given"),
                e => DpdkError::from_code(what, -e),
            });
        }
        // SAFETY: EAL is up; reads its configuration.
        let primary = unsafe { sys::rte_eal_process_type() } == sys::rte_proc_type_t_RTE_PROC_PRIMARY;
        if primary && !runtime_dir_existed {
            remove_at_exit(started_runtime_dir());
        }
        Ok(Eal(Arc::new(EalState {
            ports_taken: AtomicBool::new(false),
            rx_pools: Mutex::new(RxPools::default()),
            deferred_pools: Mutex::new(Vec::new()),
            pdump: AtomicBool::new(false),
        })))
    }

    /// The `--no-huge` memory of [`Eal::for_tests`]: enough for the largest
    /// tables the tests and benchmarks build (4M exact-match rules). It is
    /// reserved address space; pages are touched only as tables use them.
    pub const TEST_MEMORY_MB: u32 = 4096;

    /// Initialises EAL once per process and shares it: for tests and
    /// benchmarks that need DPDK objects (tables, pools) but not ports. Later
    /// calls with the same `args` return the first result; a call with
    /// other ones is refused, since it would silently get an EAL it did not
    /// ask for. The EAL is never cleaned up, but its runtime folder goes
    /// when the process exits.
    pub fn init_shared(args: &[String]) -> Result<&'static Eal> {
        static SHARED: OnceLock<(Vec<String>, Result<Eal>)> = OnceLock::new();
        let (first, eal) = SHARED.get_or_init(|| (args.to_vec(), Eal::init(args)));
        if first != args {
            let why = format!("this process's EAL was started with {first:?}, not {args:?}");
            return Err(DpdkError::invalid("shared EAL arguments", why));
        }
        eal.as_ref().map_err(Clone::clone)
    }

    /// [`Eal::init_shared`] as tests and examples want it: no hugepages or
    /// PCI devices, [`TEST_MEMORY_MB`](Self::TEST_MEMORY_MB) of memory, quiet
    /// logs, lcore 0 (unless `extra` names lcores), a file prefix of this
    /// process's own, then `extra` (e.g. `--vdev=net_null0`).
    ///
    /// The memory is not the caller's to choose: the first call in a process
    /// starts the EAL for all, so a size per test would give every test the
    /// size of whichever ran first.
    ///
    /// ```
    /// let eal = dpdk::Eal::for_tests(&[])?;
    /// assert_eq!(eal.lcores(), [0]);
    /// # Ok::<(), dpdk::DpdkError>(())
    /// ```
    pub fn for_tests(extra: &[&str]) -> Result<&'static Eal> {
        let exe = std::env::current_exe().ok();
        let name = exe
            .as_deref()
            .and_then(|p| p.file_stem())
            .map_or("dpdk-test".into(), |s| s.to_string_lossy().into_owned());
        let prefix = format!("{name}-{}", std::process::id());
        let memory = Self::TEST_MEMORY_MB.to_string();
        let mut args = vec![name.as_str(), "--no-huge", "-m", &memory, "--no-pci"];
        args.extend(["--log-level", "error", "--file-prefix", &prefix]);
        if !extra.iter().any(|a| *a == "-l" || a.starts_with("--lcores")) {
            args.extend(["-l", "0"]);
        }
        args.extend(extra);
        let args: Vec<String> = args.into_iter().map(String::from).collect();
        Eal::init_shared(&args)
    }

    /// True the first time only: [`Eal::take_ports`] hands the ports out
    /// once.
    pub(crate) fn first_port_claim(&self) -> bool {
        !self.0.ports_taken.swap(true, Ordering::AcqRel)
    }

    /// Starts DPDK's capture server by `start` unless it runs already,
    /// and records it for the cleanup to stop (see `crate::capture`).
    pub(crate) fn serve_capture_once(&self, start: impl FnOnce() -> Result<()>) -> Result<()> {
        if self.0.pdump.load(Ordering::Acquire) {
            return Ok(());
        }
        start()?;
        self.0.pdump.store(true, Ordering::Release);
        Ok(())
    }

    /// The id of the port named `name` (e.g. `net_pcap0`), if it exists.
    pub fn port_id_by_name(&self, name: &str) -> Option<u16> {
        let cname = CString::new(name).ok()?;
        let mut id = 0;
        // SAFETY: cname is a valid C string and id a valid out-parameter for
        // the call.
        let ret = unsafe { sys::rte_eth_dev_get_port_by_name(cname.as_ptr(), &mut id) };
        (ret == 0).then_some(id)
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

    /// NUMA socket of an lcore; `None` if `lcore` is not below
    /// [`MAX_LCORES`](crate::MAX_LCORES) (`rte_lcore_to_socket_id` indexes
    /// EAL's lcore table with the id unchecked).
    ///
    /// ```
    /// let eal = dpdk::Eal::for_tests(&[])?;
    /// assert_eq!(eal.lcore_socket(0), Some(0));
    /// assert_eq!(eal.lcore_socket(dpdk::MAX_LCORES), None);
    /// assert_eq!(eal.lcore_socket(u32::MAX), None);
    /// # Ok::<(), dpdk::DpdkError>(())
    /// ```
    pub fn lcore_socket(&self, lcore: u32) -> Option<u32> {
        if lcore >= sys::RTE_MAX_LCORE {
            return None;
        }
        // SAFETY: lcore is below RTE_MAX_LCORE (checked above), the size of
        // the lcore table the call reads; EAL filled it at init.
        Some(unsafe { sys::rte_lcore_to_socket_id(lcore) })
    }

    /// The proof MBUF_FAST_FREE needs ([`SingleRxPool`]): from now on, every
    /// RX queue of this process fills from one pool, the one the RX queues
    /// set up so far used (or, if there are none yet, the first to come).
    /// Fails if RX queues were set up with two pools already; once granted,
    /// setting an RX queue up with a second pool fails.
    pub fn single_rx_pool(&self) -> Result<SingleRxPool> {
        let mut rx = self.0.rx_pools.lock().unwrap_or_else(|e| e.into_inner());
        if rx.several {
            return Err(DpdkError::invalid(
                "MBUF_FAST_FREE",
                "RX queues fill from several mempools, whose mbufs one TX queue would free into one pool",
            ));
        }
        rx.single = true;
        Ok(SingleRxPool(()))
    }

    /// Records that an RX queue fills from `pool`; refused if that breaks
    /// a [`SingleRxPool`] granted before.
    pub(crate) fn note_rx_pool(&self, pool: *const sys::rte_mempool) -> Result<()> {
        let mut rx = self.0.rx_pools.lock().unwrap_or_else(|e| e.into_inner());
        let pool = pool as usize;
        match rx.first {
            None => rx.first = Some(pool),
            Some(first) if first == pool => {}
            Some(_) if rx.single => {
                return Err(DpdkError::invalid(
                    "RX queue with a second mempool",
                    "MBUF_FAST_FREE is on (Eal::single_rx_pool): every RX queue must fill from one pool",
                ))
            }
            Some(_) => rx.several = true,
        }
        Ok(())
    }

    /// Whether a pool may be freed now: this is the main lcore and every
    /// worker lcore has been waited for, so no job is running that could be
    /// returning an mbuf into the pool's per-lcore cache (which lives in
    /// the pool's memory) as the pool goes.
    pub(crate) fn all_lcores_idle(&self) -> bool {
        // SAFETY: reads EAL's configuration, set by init.
        let main = unsafe { sys::rte_get_main_lcore() };
        if current_lcore() != main {
            // The main lcore may be running, returning mbufs into its cache.
            return false;
        }
        // Only the main lcore launches (crate::MainLcore is !Send), and it is
        // busy here: a worker seen idle stays idle until this returns.
        let idle = self.lcores().into_iter().filter(|&l| l != main).all(|l| {
            // SAFETY: l is an enabled lcore, below RTE_MAX_LCORE.
            let state = unsafe { sys::rte_eal_get_lcore_state(l) };
            state == sys::rte_lcore_state_t_WAIT
        });
        // What the workers did before they went idle happens before what
        // the caller does next (the pairing release is EAL's state store).
        std::sync::atomic::fence(Ordering::Acquire);
        idle
    }

    /// Keeps `pool` (every mbuf back in it) until EAL's cleanup, which frees
    /// it after waiting for every lcore.
    pub(crate) fn defer_pool_free(&self, pool: std::ptr::NonNull<sys::rte_mempool>) {
        self.0
            .deferred_pools
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(DeferredPool(pool));
    }

    /// This instance's runtime directory (`/var/run/dpdk/PREFIX` for root,
    /// where EAL keeps its sockets): per `--file-prefix`, so a tool finds
    /// an instance by its prefix.
    ///
    /// ```
    /// let eal = dpdk::Eal::for_tests(&[])?;
    /// assert!(eal.runtime_dir().is_dir());
    /// # Ok::<(), dpdk::DpdkError>(())
    /// ```
    pub fn runtime_dir(&self) -> PathBuf {
        started_runtime_dir()
    }

    /// TSC ticks per second, as EAL measured them.
    pub fn tsc_hz(&self) -> u64 {
        // SAFETY: reads a value EAL computed at init.
        unsafe { sys::rte_get_tsc_hz() }
    }

    /// The widest SIMD registers, in bits, that vector paths may use:
    /// EAL's default (256 on x86) or `--force-max-simd-bitwidth`'s.
    pub fn max_simd_bitwidth(&self) -> u16 {
        // SAFETY: reads a value EAL set at init.
        unsafe { sys::rte_vect_get_max_simd_bitwidth() }
    }
}

impl Drop for EalState {
    /// The last handle is gone: every DPDK object made with it is too.
    fn drop(&mut self) {
        // Waiting for the workers and cleaning up are the main thread's to
        // do; a last handle dropped elsewhere leaves EAL up until exit.
        // SAFETY: reads EAL's configuration, set by init.
        if current_lcore() != unsafe { sys::rte_get_main_lcore() } {
            return;
        }
        // SAFETY: on the main lcore (checked above). The wait lets worker
        // lcores finish their jobs, which own their DPDK objects.
        unsafe { sys::rte_eal_mp_wait_lcore() };
        let deferred = std::mem::take(self.deferred_pools.get_mut().unwrap_or_else(|e| e.into_inner()));
        for pool in deferred {
            // SAFETY: every lcore has been waited for, so no job can be
            // returning mbufs to the pool; its last handle is gone (so none
            // can be taken) and all were back in it when it went.
            unsafe { sys::rte_mempool_free(pool.0.as_ptr()) }
        }
        if *self.pdump.get_mut() {
            // SAFETY: rte_pdump_init succeeded in this process; every
            // lcore has been waited for, so no RX or TX burst runs a
            // capture callback.
            unsafe { sys::rte_pdump_uninit() };
        }
        crate::runtime_files::hang_up_telemetry_clients(&started_runtime_dir());
        // SAFETY: no object of this EAL is left (each holds a handle) and
        // every lcore has been waited for.
        unsafe {
            sys::rte_eal_cleanup();
        }
        log::debug!("EAL cleaned up");
    }
}

/// EAL's runtime folder; only called once `rte_eal_init` succeeded.
fn started_runtime_dir() -> PathBuf {
    // SAFETY: EAL is up (see above); the result points to EAL's own
    // NUL-terminated path, valid for the process's life, copied here.
    let dir = unsafe { std::ffi::CStr::from_ptr(sys::rte_eal_get_runtime_dir()) };
    PathBuf::from(std::ffi::OsStr::from_bytes(dir.to_bytes()))
}

/// The lcore the calling thread runs as (`u32::MAX` outside EAL threads).
pub fn current_lcore() -> u32 {
    // SAFETY: reads a thread-local through the shim.
    unsafe { sys::shim_lcore_id() }
}

/// The version of the DPDK libraries this process runs on, as
/// `rte_version()` gives it ("DPDK 24.11.8"): the shared library loaded,
/// whose release line is the one built against ([`crate::BUILT_ON`]). Needs no
/// EAL.
///
/// ```
/// let line: Vec<&str> = dpdk::BUILT_ON.split('.').take(2).collect();
/// assert!(dpdk::version().starts_with(&format!("DPDK {}", line.join("."))));
/// ```
pub fn version() -> &'static str {
    static VERSION: OnceLock<String> = OnceLock::new();
    VERSION.get_or_init(|| {
        // SAFETY: rte_version fills a static buffer on its first call (the
        // OnceLock makes that one call) and returns it, NUL-terminated and
        // never freed.
        let text = unsafe { std::ffi::CStr::from_ptr(sys::rte_version()) };
        text.to_string_lossy().into_owned()
    })
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
        sys::shim_rdtsc()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shared_eal_refuses_a_caller_asking_for_other_arguments() {
        Eal::for_tests(&[]).expect("EAL init");
        let refused = Eal::for_tests(&["--vdev=net_null0"])
            .err()
            .expect("other arguments refused");
        assert!(refused.to_string().contains("started with"), "{refused}");
        assert!(Eal::for_tests(&[]).is_ok(), "the same arguments get the same EAL");
    }
}
