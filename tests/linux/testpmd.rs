//! `dpdk-testpmd` (Debian package dpdk) as a traffic source or sink on one
//! virtual port, polling on CPU 0 (`--lcores '0@0,1@0'`: its main and
//! forwarding lcores share CPU 0) so that l3fwd-rs has CPU 1 to itself.

use std::fs::{self, File};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use testkit::Scratch;

/// Its periodic statistics (`--stats-period`) come every this often.
pub const STATS_PERIOD: Duration = Duration::from_secs(1);

/// A running testpmd, killed on drop if still running.
pub struct TestPmd {
    child: Child,
    log: PathBuf,
    prefix: String,
}

impl TestPmd {
    /// Starts testpmd on `vdevs` (ports 0, 1, ...) in forward mode `mode`
    /// (txonly, rxonly, flowgen, io); returns once it forwards and has
    /// printed its first statistics (its ports are connected by then).
    pub fn start(dir: &Scratch, name: &str, vdevs: &[String], mode: &str) -> TestPmd {
        let prefix = format!("l3fwd-testpmd-{}-{name}", std::process::id());
        let log = dir.path(&format!("testpmd-{name}.log"));
        let child = Command::new("dpdk-testpmd")
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
            ])
            .stdin(Stdio::null())
            .stdout(File::create(&log).expect("create testpmd log"))
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn dpdk-testpmd (Debian package dpdk)");
        let pmd = TestPmd { child, log, prefix };
        let start = Instant::now();
        while !pmd.output().contains("NIC statistics for port 0") {
            assert!(
                start.elapsed() < Duration::from_secs(20),
                "testpmd {name} did not start:\n{}",
                pmd.output()
            );
            thread::sleep(Duration::from_millis(50));
        }
        pmd
    }

    pub fn output(&self) -> String {
        fs::read_to_string(&self.log).unwrap_or_default()
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
        super::run("kill", &["-INT", &self.child.id().to_string()]);
        let deadline = Instant::now() + Duration::from_secs(10);
        while self.child.try_wait().expect("wait for testpmd").is_none() {
            assert!(
                Instant::now() < deadline,
                "testpmd: no exit after SIGINT\n{}",
                self.output()
            );
            thread::sleep(Duration::from_millis(50));
        }
        self.output()
    }
}

impl Drop for TestPmd {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
        let _ = fs::remove_dir_all(PathBuf::from("/var/run/dpdk").join(&self.prefix));
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
