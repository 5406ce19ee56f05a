//! DPDK's packet capture (librte_pdump) served to `dpdk-dumpcap` and
//! `dpdk-pdump`, and the wait that makes the end of a capture safe on
//! DPDK before 25.11.

use crate::eal::Eal;
use crate::error::{DpdkError, Result};
use crate::event::service;
use crate::{rcu, sys};

impl Eal {
    /// Serves DPDK's packet capture (`rte_pdump_init`), so that
    /// `dpdk-dumpcap` and `dpdk-pdump`, run as secondary processes, can
    /// capture this process's ports. Until one asks, nothing runs on the
    /// data path: the capture's RX and TX callbacks are installed on the
    /// queues it names only while it captures. Where EAL runs without
    /// multi-process support (`--in-memory`, `--no-shconf`) no tool can
    /// attach, and this does nothing.
    ///
    /// When a capture ends, the removal of its callbacks waits until no
    /// lcore can be inside one (DPDK before 25.11 did not): every thread
    /// that sends or receives must be an online reader of a [`Qsbr`]
    /// variable, reporting between its bursts, or a service lcore.
    ///
    /// [`Qsbr`]: crate::Qsbr
    pub fn serve_packet_capture(&self) -> Result<()> {
        self.serve_capture_once(|| {
            // SAFETY: EAL is up (an Eal exists); registers DPDK's capture
            // request handler and its statistics memzone.
            let ret = unsafe { sys::rte_pdump_init() };
            if ret != 0 {
                return Err(DpdkError::from_errno("cannot serve packet capture"));
            }
            // SAFETY: a plain function that lives as long as the process.
            unsafe { sys::shim_set_callback_grace(Some(capture_callback_removed)) };
            Ok(())
        })
    }
}

/// Runs on EAL's multi-process thread once DPDK's packet capture removed
/// one of its RX or TX callbacks (before DPDK 25.11, see the shim), before
/// the tool that asked hears back and frees what the callback copies into:
/// returns when no lcore can still be inside it. The forwarding lcores'
/// bursts run between their RCU quiescent states; the eth adapters' run in
/// service lcore loops.
extern "C" fn capture_callback_removed() {
    rcu::grace_over_every_variable();
    service::wait_for_a_loop_of_each_lcore();
}
