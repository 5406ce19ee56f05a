//! l3fwd-rs as a child process on the ports a test names, stopped with
//! SIGINT; its summary read back from `--stats-json` and stdout.

use std::fs;
use std::sync::MutexGuard;
use std::time::Duration;

use serde_json::Value;
use testkit::{l3fwd_rs, one_at_a_time, Process, Run, Scratch};

/// Up to the first "forwarding" log line (af_xdp loads a BPF program).
const START_TIMEOUT: Duration = Duration::from_secs(20);

/// A running l3fwd-rs ([`testkit::Process`]), one at a time per test
/// process ([`testkit::one_at_a_time`]: two busy-polling forwarders on
/// one CPU starve each other and the kernel's side of the traffic).
pub struct Forwarder {
    process: Process,
    stats: std::path::PathBuf,
    _one_at_a_time: MutexGuard<'static, ()>,
}

/// What l3fwd-rs reported at exit.
pub struct Summary {
    /// The `--stats-json` document.
    pub json: Value,
    pub stdout: String,
    pub stderr: String,
}

impl Forwarder {
    /// Starts l3fwd-rs with `eal` arguments (lcores and vdevs; memory and
    /// file prefix are added) and `app` arguments, and waits until it
    /// forwards. The rule files are written to `dir` first.
    pub fn start(dir: &Scratch, tag: &str, eal: &[String], app: &[String], rules: &[(&str, String)]) -> Forwarder {
        let one_at_a_time = one_at_a_time();
        // 1 GB: exact match's two 4M-key tables and their RCU defer
        // queues take more than 512 MB on 24.11.
        let mut run = Run::new(l3fwd_rs()).memory_mb(1024).stats_json();
        for arg in eal {
            run = run.eal_arg(arg);
        }
        for arg in app {
            run = run.arg(arg);
        }
        for (option, text) in rules {
            let path = dir.file(&format!("{}.cfg", option.trim_start_matches('-')), text);
            run = run.arg(format!("{option}={path}"));
        }
        Forwarder {
            process: run.start(dir, &format!("linux-{tag}"), START_TIMEOUT),
            stats: dir.path("stats.json"),
            _one_at_a_time: one_at_a_time,
        }
    }

    /// `l3fwd-ctl --file-prefix PREFIX args...`: its output, panicking
    /// unless it exits successfully.
    pub fn ctl(&self, args: &[&str]) -> String {
        let out = testkit::ctl(self.process.prefix(), args, "");
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(
            out.status.success(),
            "l3fwd-ctl {}: {}\n{stdout}{}",
            args.join(" "),
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        stdout
    }

    /// SIGINT, then the summary. Panics unless it exits successfully.
    pub fn stop(self) -> Summary {
        let exit = self.process.stop_cleanly();
        let text = fs::read_to_string(&self.stats).expect("read --stats-json output");
        Summary {
            json: serde_json::from_str(&text).expect("--stats-json parses"),
            stdout: exit.stdout,
            stderr: exit.stderr,
        }
    }
}

impl Summary {
    fn port(&self, port: usize) -> &Value {
        &self.json["ports"][port]
    }

    /// Packets port `port` received and sent, as its summary line says.
    pub fn port_rx_tx(&self, port: usize) -> (u64, u64) {
        let p = self.port(port);
        (p["rx_packets"].as_u64().unwrap(), p["tx_packets"].as_u64().unwrap())
    }

    /// Packets per RX queue of `port`.
    pub fn rx_queue_packets(&self, port: usize) -> Vec<u64> {
        self.port(port)["rx_queue_packets"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_u64().unwrap())
            .collect()
    }

    /// A counter of the lcores' totals (`rx`, `tx`, `dropped_invalid`...).
    pub fn forwarded(&self, name: &str) -> u64 {
        self.json["forwarded"][name]
            .as_u64()
            .unwrap_or_else(|| panic!("no forwarded.{name} in {}", self.json))
    }

    /// The `mbufs in use: ...` line of the printed summary.
    pub fn mbufs_line(&self) -> &str {
        self.stdout
            .lines()
            .find(|l| l.starts_with("mbufs in use:"))
            .unwrap_or_else(|| panic!("no 'mbufs in use' line in\n{}", self.stdout))
    }

    /// Every packet received was sent or counted as dropped, and no mbuf
    /// went missing: what every run must show.
    pub fn assert_conserved(&self) {
        testkit::assert_accounted(&self.json, 0);
        let in_use = &self.json["mbufs_in_use"];
        // What a driver keeps after its port closed (af_xdp's fill rings)
        // keeps its pool: the summary says so, as the pool's warning does.
        let kept = self.json["mbufs_after_close"].as_u64().expect("mbufs_after_close");
        let warned = self.stderr.contains("mbufs never came back");
        assert_eq!(
            kept > 0,
            warned,
            "the summary and the pool's warning disagree: {}\n{}",
            self.mbufs_line(),
            self.stderr
        );
        assert_eq!(
            self.mbufs_line().contains("none leaked"),
            in_use[0].as_u64() > Some(0) && kept == 0,
            "{}",
            self.mbufs_line()
        );
    }
}
