//! `dpdk-testpmd` (Debian package dpdk) as a traffic source or sink on one
//! virtual port, polling on CPU 0 (`--lcores '0@0,1@0'`: its main and
//! forwarding lcores share CPU 0) so that l3fwd-rs has CPU 1 to itself.

use std::process::Command;
use std::thread;
use std::time::Duration;

use testkit::{Process, Scratch, Stop};

/// Its periodic statistics (`--stats-period`) come every this often.
pub const STATS_PERIOD: Duration = Duration::from_secs(1);

/// A running testpmd ([`testkit::Process`]).
pub struct TestPmd(Process);

impl TestPmd {
    /// Starts testpmd on `vdevs` (ports 0, 1, ...) in forward mode `mode`
    /// (txonly, rxonly, flowgen, io); returns once it forwards and has
    /// printed its first statistics (its ports are connected by then).
    pub fn start(dir: &Scratch, name: &str, vdevs: &[String], mode: &str) -> TestPmd {
        let prefix = testkit::unique_prefix(&format!("testpmd-{name}"));
        let mut command = Command::new("dpdk-testpmd");
        command
            .args([
                "--lcores",
                "0@0,1@0",
                "--no-huge",
                "-m",
                "256",
                "--no-pci",
                "--file-prefix",
                &prefix,
            ])
            .args(vdevs.iter().map(|vdev| format!("--vdev={vdev}")))
            .args([
                "--",
                &format!("--forward-mode={mode}"),
                "--stats-period",
                "1",
                "--total-num-mbufs",
                "4096",
            ]);
        let logs = dir.path(&format!("testpmd-{name}"));
        let mut pmd = Process::spawn(command, &prefix, &logs, Stop::Sigint)
            .unwrap_or_else(|err| panic!("spawn dpdk-testpmd (Debian package dpdk): {err}"));
        let started = pmd.wait_until(Duration::from_secs(20), |p| {
            p.stdout().contains("NIC statistics for port 0")
        });
        assert!(started.is_ok(), "testpmd {name} did not start: {}", pmd.describe());
        TestPmd(pmd)
    }

    pub fn output(&self) -> String {
        self.0.stdout()
    }

    /// The last `key: N` testpmd printed so far.
    pub fn last_count(&self, key: &str) -> u64 {
        last_count(&self.output(), key)
    }

    /// Waits until the periodic `key` count stops moving (a sink once the
    /// source has stopped and the forwarder drained); returns it.
    pub fn settled_count(&self, key: &str) -> u64 {
        let mut last = self.last_count(key);
        for _ in 0..5 {
            thread::sleep(STATS_PERIOD + Duration::from_millis(200));
            let now = self.last_count(key);
            if now == last {
                return now;
            }
            last = now;
        }
        panic!("testpmd's {key} still moving:\n{}", self.output());
    }

    /// SIGINT: testpmd stops forwarding, prints its totals and exits.
    /// Returns everything it printed.
    pub fn stop(mut self) -> String {
        self.0
            .stop()
            .unwrap_or_else(|e| panic!("testpmd: {e}: {}", self.0.describe()));
        self.output()
    }
}

/// The last `key: N` (`RX-packets`, `TX-packets`) in testpmd's output: at
/// exit, its totals.
pub fn last_count(output: &str, key: &str) -> u64 {
    let needle = format!("{key}:");
    let at = output.rfind(&needle).unwrap_or_else(|| panic!("no {key} in\n{output}"));
    output[at + needle.len()..]
        .split_whitespace()
        .next()
        .unwrap()
        .parse()
        .unwrap()
}
