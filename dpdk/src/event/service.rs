//! Service cores: lcores EAL reserves (`-s COREMASK`, `-S LIST`) to run
//! DPDK's software services, here the software event scheduler and the
//! eth adapters.

use std::ffi::CStr;
use std::time::{Duration, Instant};

use crate::eal::Eal;
use crate::error::{DpdkError, Result};
use crate::sys;

/// Waits until each running service lcore has ended the loop it was in at
/// the call, so that no service function (an eth adapter's bursts) begun
/// before it still runs. A second at most: a service lcore that stops
/// counting loops is stopping.
pub(crate) fn wait_for_a_loop_of_each_lcore() {
    let loops = |lcore: u32| {
        let mut n = 0u64;
        // SAFETY: a valid attribute id and an out-parameter; an lcore that
        // is not a service lcore is refused (n stays 0).
        unsafe { sys::rte_service_lcore_attr_get(lcore, sys::RTE_SERVICE_LCORE_ATTR_LOOPS, &mut n) };
        n
    };
    let deadline = Instant::now() + Duration::from_secs(1);
    for (lcore, at_call) in service_lcores().into_iter().map(|l| (l, loops(l))) {
        // SAFETY: a service lcore id; a read of its state.
        let running = || unsafe { sys::rte_service_lcore_may_be_active(lcore) } == 1;
        while loops(lcore) == at_call && running() && Instant::now() < deadline {
            std::thread::yield_now();
        }
    }
}

/// EAL's service lcores (none without `-s` or `-S`).
fn service_lcores() -> Vec<u32> {
    let mut list = vec![0u32; sys::RTE_MAX_LCORE as usize];
    // SAFETY: list has room for RTE_MAX_LCORE ids.
    let n = unsafe { sys::rte_service_lcore_list(list.as_mut_ptr(), list.len() as u32) };
    list.truncate(usize::try_from(n).unwrap_or(0));
    list
}

/// A DPDK service (a scheduler or an adapter) that needs a service core.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Service(u32);

/// A service id lookup's answer: the service, none (`-ESRCH`: the device
/// does the work itself), or an error.
pub(crate) fn from_lookup(ret: i32, id: u32, what: &str) -> Result<Option<Service>> {
    match ret {
        0 => Ok(Some(Service(id))),
        r if r == -(sys::ESRCH as i32) => Ok(None),
        r => Err(DpdkError::from_code(format!("cannot get the service of {what}"), r)),
    }
}

impl Service {
    /// The service's name, e.g. `evdev_sw0_service`.
    pub fn name(&self) -> String {
        // SAFETY: a valid service id; the name is a NUL-terminated string
        // owned by the service registry, copied at once.
        let p = unsafe { sys::rte_service_get_name(self.0) };
        if p.is_null() {
            return format!("service {}", self.0);
        }
        // SAFETY: non-null, as above.
        unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
    }
}

/// The service lcores, and the services this process runs on them. When
/// dropped, the services stop running and the lcores it started stop.
pub struct ServiceCores {
    lcores: Vec<u32>,
    started: Vec<u32>,
    services: Vec<Service>,
    _eal: Eal,
}

impl ServiceCores {
    /// EAL's service lcores (none without `-s` or `-S`).
    pub fn new(eal: &Eal) -> ServiceCores {
        ServiceCores {
            lcores: service_lcores(),
            started: Vec::new(),
            services: Vec::new(),
            _eal: eal.clone(),
        }
    }

    /// The service lcores' ids.
    pub fn lcores(&self) -> &[u32] {
        &self.lcores
    }

    /// Runs `service` on the service lcore with the fewest services (C
    /// l3fwd's `l3fwd_service_enable`), starting that lcore; returns it.
    pub fn run(&mut self, service: Service) -> Result<u32> {
        let what = || format!("cannot run {} on a service core", service.name());
        let mut best: Option<(u32, i32)> = None;
        for &lcore in &self.lcores {
            // SAFETY: a valid service id and a service lcore of EAL's list.
            let count = unsafe {
                sys::rte_service_map_lcore_set(service.0, lcore, 0);
                sys::rte_service_lcore_count_services(lcore)
            };
            if best.is_none_or(|(_, c)| count < c) {
                best = Some((lcore, count));
            }
        }
        let Some((lcore, _)) = best else {
            return Err(DpdkError::invalid(
                what(),
                "there is none: give one with -s COREMASK or -S LIST",
            ));
        };
        // SAFETY: as above; setting the service's application runstate and
        // mapping are thread-safe control calls.
        let ret = unsafe { sys::rte_service_map_lcore_set(service.0, lcore, 1) };
        if ret != 0 {
            return Err(DpdkError::from_code(what(), ret));
        }
        // SAFETY: as above.
        unsafe {
            sys::rte_service_runstate_set(service.0, 1);
            sys::rte_service_set_runstate_mapped_check(service.0, 0);
        }
        self.services.push(service);
        if !self.started.contains(&lcore) {
            // SAFETY: a service lcore EAL reserved, not yet started here.
            let ret = unsafe { sys::rte_service_lcore_start(lcore) };
            if ret != 0 && ret != -(sys::EALREADY as i32) {
                return Err(DpdkError::from_code(format!("cannot start service lcore {lcore}"), ret));
            }
            self.started.push(lcore);
        }
        Ok(lcore)
    }
}

impl Drop for ServiceCores {
    fn drop(&mut self) {
        // SAFETY: control calls on services and lcores this value started;
        // a service stopped first lets its lcore stop.
        unsafe {
            for s in &self.services {
                sys::rte_service_runstate_set(s.0, 0);
            }
            for &lcore in &self.started {
                sys::rte_service_lcore_stop(lcore);
            }
        }
    }
}
