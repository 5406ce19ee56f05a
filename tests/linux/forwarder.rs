//! l3fwd-rs as a child process on the ports a test names, stopped with
//! SIGINT; its summary read back from `--stats-json` and stdout.

use std::fs::{self, File};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::Value;
use testkit::Scratch;

/// Up to the first "forwarding" log line (af_xdp loads a BPF program).
const START_TIMEOUT: Duration = Duration::from_secs(20);
const EXIT_TIMEOUT: Duration = Duration::from_secs(10);
const POLL: Duration = Duration::from_millis(20);

/// A running l3fwd-rs, killed on drop if still running; its EAL runtime
/// directory is removed on drop.
pub struct Forwarder {
    child: Child,
    prefix: String,
    dir: PathBuf,
    _one_at_a_time: MutexGuard<'static, ()>,
}

/// One forwarder at a time per test process: on two CPUs, two busy-polling
/// forwarders on the same CPU starve each other and the kernel's side of
/// the traffic; and DPDK 22.11's af_packet names its PACKET_FANOUT group
/// (pid ^ ifindex) & 0xffff, which two processes can share (EINVAL).
static RUNNING: Mutex<()> = Mutex::new(());

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
        // A failed test poisons the lock; the next one is unaffected.
        let one_at_a_time = RUNNING.lock().unwrap_or_else(PoisonError::into_inner);
        let prefix = format!("l3fwd-linux-{tag}");
        // 1 GB: exact match's two 4M-key tables and their RCU defer
        // queues take more than 512 MB on 24.11.
        let mut args: Vec<String> = ["--no-huge", "-m", "1024", "--no-pci", "--file-prefix", &prefix]
            .map(String::from)
            .to_vec();
        args.extend(eal.iter().cloned());
        args.push("--".into());
        args.extend(app.iter().cloned());
        for (option, text) in rules {
            let path = dir.path(&format!("{}.cfg", option.trim_start_matches('-')));
            fs::write(&path, text).expect("write rule file");
            args.push(format!("{option}={}", path.display()));
        }
        args.extend(["--stats-json".into(), dir.path("stats.json").display().to_string()]);
        let log = |name: &str| File::create(dir.path(name)).expect("create log");
        let child = Command::new(env!("CARGO_BIN_EXE_l3fwd-rs"))
            .args(&args)
            .stdin(Stdio::null())
            .stdout(log("stdout"))
            .stderr(log("stderr"))
            .spawn()
            .expect("spawn l3fwd-rs");
        let mut fwd = Forwarder {
            child,
            prefix,
            dir: dir.dir().to_path_buf(),
            _one_at_a_time: one_at_a_time,
        };
        fwd.wait_for_forwarding();
        fwd
    }

    /// `l3fwd-ctl --file-prefix PREFIX args...`: its output, panicking
    /// unless it exits successfully.
    pub fn ctl(&self, args: &[&str]) -> String {
        let out = Command::new(env!("CARGO_BIN_EXE_l3fwd-ctl"))
            .args(["--file-prefix", &self.prefix])
            .args(args)
            .output()
            .expect("run l3fwd-ctl");
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

    fn log(&self, name: &str) -> String {
        fs::read_to_string(self.dir.join(name)).unwrap_or_default()
    }

    fn wait_for_forwarding(&mut self) {
        let start = Instant::now();
        while !self.log("stderr").contains(": forwarding") {
            if let Some(status) = self.child.try_wait().expect("wait for l3fwd-rs") {
                panic!("l3fwd-rs exited before forwarding: {status}\n{}", self.log("stderr"));
            }
            assert!(
                start.elapsed() < START_TIMEOUT,
                "l3fwd-rs not forwarding after {START_TIMEOUT:?}\n{}",
                self.log("stderr")
            );
            thread::sleep(POLL);
        }
    }

    /// SIGINT, then the summary. Panics unless it exits successfully.
    pub fn stop(mut self) -> Summary {
        super::run("kill", &["-INT", &self.child.id().to_string()]);
        let deadline = Instant::now() + EXIT_TIMEOUT;
        let status = loop {
            if let Some(status) = self.child.try_wait().expect("wait for l3fwd-rs") {
                break status;
            }
            assert!(
                Instant::now() < deadline,
                "l3fwd-rs: no exit within {EXIT_TIMEOUT:?} of SIGINT"
            );
            thread::sleep(POLL);
        };
        let (stdout, stderr) = (self.log("stdout"), self.log("stderr"));
        assert!(
            status.success(),
            "l3fwd-rs: {status}\n--- stdout\n{stdout}\n--- stderr\n{stderr}"
        );
        let text = fs::read_to_string(self.dir.join("stats.json")).expect("read --stats-json output");
        Summary {
            json: serde_json::from_str(&text).expect("--stats-json parses"),
            stdout,
            stderr,
        }
    }
}

impl Drop for Forwarder {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
        // EAL's runtime files (root: the tests run only as root).
        let _ = fs::remove_dir_all(Path::new("/var/run/dpdk").join(&self.prefix));
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
