//! Integration-test harness: runs a forwarder (l3fwd-rs or DPDK's C l3fwd)
//! as a child process on pcap ports and collects what it transmitted.
//!
//! ```ignore
//! let out = Run::new(c_l3fwd())
//!     .port(frames0)
//!     .port(frames1)
//!     .args(&["-p", "0x3", "--config", "(0,0,0),(1,0,0)", "--parse-ptype"])
//!     .run();
//! out.assert_success();
//! let sent = out.per_port();
//! ```
// Each tests/*.rs uses a different part of this module.
#![allow(dead_code)]

use std::fs::{self, File};
use std::io;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard, OnceLock, PoisonError};

use std::thread;
use std::time::{Duration, Instant};
pub use testkit::Scratch;

/// A run is over once its files have not moved for this long...
const QUIET: Duration = Duration::from_millis(300);
/// ...but not before this: EAL init alone takes a few hundred ms.
const MIN_RUN: Duration = Duration::from_secs(1);
/// A forwarder still busy after this is stuck.
const MAX_RUN: Duration = Duration::from_secs(20);
/// Time to exit after SIGINT, or for a CLI run to finish.
const EXIT_TIMEOUT: Duration = Duration::from_secs(10);
const POLL: Duration = Duration::from_millis(50);

pub fn workspace() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Our forwarder.
pub fn l3fwd_rs() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_l3fwd-rs"))
}

/// The build folder of this test build (target/, or the one of another
/// DPDK: `make test DPDK=24.11` builds in target/dpdk-24.11).
pub fn target_dir() -> &'static Path {
    Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .expect("CARGO_TARGET_TMPDIR is <target>/tmp")
}

/// DPDK's C l3fwd of the DPDK these tests are built on (that release's
/// examples/l3fwd), built once per test process by
/// scripts/build-c-l3fwd.sh into this build's folder.
pub fn c_l3fwd() -> PathBuf {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        let out = target_dir().join("c-l3fwd");
        let status = Command::new(workspace().join("scripts/build-c-l3fwd.sh"))
            .arg(&out)
            .status()
            .expect("run scripts/build-c-l3fwd.sh");
        assert!(status.success(), "scripts/build-c-l3fwd.sh: {status}");
        out.join("dpdk-l3fwd")
    })
    .clone()
}

/// The long options of the C l3fwd [`c_l3fwd`] builds: the
/// `CMD_LINE_OPT_*` strings of its main.c. They change between releases
/// (and stable updates backport some): `--hash-entry-num` went in 23.03,
/// `--mbcache` and `--rx-burst` came in 24.11, `--eth-link-speed` in 25.11.
pub fn c_l3fwd_options() -> &'static [String] {
    static OPTIONS: OnceLock<Vec<String>> = OnceLock::new();
    OPTIONS.get_or_init(|| {
        let examples = std::env::var("DPDK_EXAMPLES").unwrap_or_else(|_| "/usr/share/dpdk/examples".into());
        let main = Path::new(&examples).join("l3fwd/main.c");
        let source = fs::read_to_string(&main).unwrap_or_else(|e| panic!("{}: {e}", main.display()));
        source
            .lines()
            .filter_map(|line| line.strip_prefix("#define CMD_LINE_OPT_"))
            .filter_map(|rest| rest.split('"').nth(1))
            .map(str::to_owned)
            .collect()
    })
}

/// Two ports' worth of generated traffic (600 frames each, seeds `seed`
/// and `seed + 1000`) without runts, which the C sample reads past: what
/// the comparisons with C send. `em` aims it at the exact-match rules.
pub fn traffic(seed: u64, em: bool) -> [Vec<Vec<u8>>; 2] {
    let mix = trafficgen::Mix {
        runt: 0,
        ..trafficgen::Mix::default()
    };
    let opts = trafficgen::GenOpts {
        em,
        ..trafficgen::GenOpts::default()
    };
    [
        trafficgen::generate(seed, 600, &mix, &opts),
        trafficgen::generate(seed + 1000, 600, &mix, &opts),
    ]
}

/// `-p` and `--config` of most runs: ports 0 and 1, each with one RX queue
/// polled by lcore 0.
pub const TWO_PORTS: &[&str] = &["-p", "0x3", "--config", "(0,0,0),(1,0,0)"];

/// A forwarder run on virtual ports: port P is the P-th [`Run::port`],
/// [`Run::port_queues`] or [`Run::ring_port`] call, `net_pcapP` or
/// `net_ringP`.
pub struct Run {
    bin: PathBuf,
    ports: Vec<PortSpec>,
    infinite_rx: bool,
    lcores: String,
    tx_files: Option<usize>,
    memory_mb: u32,
    eal_args: Vec<String>,
    app_args: Vec<String>,
    stop: Option<(&'static str, Duration)>,
    stats_json: bool,
}

/// One virtual port of a [`Run`].
enum PortSpec {
    /// A pcap port with one RX queue per input file (frames each).
    Pcap(Vec<Vec<Vec<u8>>>),
    /// A net_ring port with its default rings: what it sends on a queue
    /// comes back on the RX queue of the same id.
    Ring,
}

impl Run {
    /// A run of `bin` on EAL lcore 0 and no ports yet.
    pub fn new(bin: impl Into<PathBuf>) -> Self {
        Run {
            bin: bin.into(),
            ports: Vec::new(),
            infinite_rx: false,
            lcores: "0".into(),
            tx_files: None,
            memory_mb: 512,
            eal_args: Vec::new(),
            app_args: Vec::new(),
            stop: None,
            stats_json: false,
        }
    }

    /// Adds the next port, receiving `frames` once.
    pub fn port(self, frames: Vec<Vec<u8>>) -> Self {
        self.port_queues(vec![frames])
    }

    /// Adds the next port with one RX queue per element of `queues`, each
    /// receiving its frames once.
    pub fn port_queues(mut self, queues: Vec<Vec<Vec<u8>>>) -> Self {
        self.ports.push(PortSpec::Pcap(queues));
        self
    }

    /// Adds the next port as a net_ring looping back what it sends.
    pub fn ring_port(mut self) -> Self {
        self.ports.push(PortSpec::Ring);
        self
    }

    /// pcap ports replay their input forever (`infinite_rx=1`): the run
    /// never goes idle, so stop it with [`Run::stop_with`].
    pub fn infinite_rx(mut self) -> Self {
        self.infinite_rx = true;
        self
    }

    /// Sends `signal` ("INT", "TERM", ...) once the forwarder has forwarded
    /// for `after`, instead of waiting for it to go idle.
    pub fn stop_with(mut self, signal: &'static str, after: Duration) -> Self {
        self.stop = Some((signal, after));
        self
    }

    /// Asks for `--stats-json` and puts what it wrote in [`Outcome::stats`].
    pub fn stats_json(mut self) -> Self {
        self.stats_json = true;
        self
    }

    /// The EAL lcore list (`-l`), e.g. "0" or "0-1", or map to CPUs
    /// (`--lcores`), e.g. "0@0,1@0,2@1" (then give [`Run::tx_files`]).
    pub fn lcores(mut self, list: &str) -> Self {
        self.lcores = list.into();
        self
    }

    /// TX pcap files (= TX queues) per port. The default is the number of
    /// lcores in the `-l` list: l3fwd sets up one TX queue per lcore on
    /// every port, and a pcap port has one TX queue per `tx_pcap=` file.
    pub fn tx_files(mut self, count: usize) -> Self {
        self.tx_files = Some(count);
        self
    }

    /// EAL memory (`-m`) in MB; 512 unless a test needs large tables.
    pub fn memory_mb(mut self, mb: u32) -> Self {
        self.memory_mb = mb;
        self
    }

    /// More EAL arguments, after the harness's own.
    pub fn eal_args(mut self, args: &[&str]) -> Self {
        self.eal_args.extend(args.iter().map(|&a| a.into()));
        self
    }

    /// Application arguments (after `--`).
    pub fn args(mut self, args: &[&str]) -> Self {
        self.app_args.extend(args.iter().map(|&a| a.into()));
        self
    }

    /// [`TWO_PORTS`] as application arguments.
    pub fn two_ports(self) -> Self {
        self.args(TWO_PORTS)
    }

    /// The command line, from the EAL arguments (`vdevs` last) to the
    /// application's.
    fn command_line(&self, prefix: &str, vdevs: Vec<String>) -> Vec<String> {
        let mut args = virtual_eal(self.memory_mb, prefix, &self.eal_args);
        // A map of lcores to CPUs (`0@0,1@0`) is --lcores; a list, -l.
        let flag = if self.lcores.contains('@') { "--lcores" } else { "-l" };
        args.extend([flag.into(), self.lcores.clone()]);
        args.extend(self.eal_args.iter().cloned());
        args.extend(vdevs);
        args.push("--".into());
        args.extend(self.app_args.iter().cloned());
        args
    }

    /// The forwarder as a command with file prefix `prefix`, in the
    /// workspace, for a test that runs and watches the process itself; its
    /// ports are the vdevs of [`Run::eal_args`] (`net_null0`, ...).
    pub fn command(&self, prefix: &str) -> Command {
        assert!(self.ports.is_empty(), "Run::command takes its vdevs from eal_args");
        assert!(!self.stats_json, "Run::command: pass --stats-json with args");
        let mut command = Command::new(&self.bin);
        command
            .args(self.command_line(prefix, Vec::new()))
            .env("RUST_LOG", LOG_FILTER)
            .current_dir(workspace());
        command
    }

    /// Runs the forwarder until it has been idle for a while (or as
    /// [`Run::stop_with`] says), stops it with SIGINT and collects what it
    /// sent. Panics if it does not settle or stop.
    pub fn run(self) -> Outcome {
        let scratch = RunDir::new();
        let tx_files = self.tx_files.unwrap_or_else(|| lcore_count(&self.lcores));
        let mut vdevs = Vec::new();
        let mut outputs = Vec::new();
        for (port, spec) in self.ports.iter().enumerate() {
            let PortSpec::Pcap(queues) = spec else {
                vdevs.push(format!("--vdev=net_ring{port}"));
                outputs.push(Vec::new());
                continue;
            };
            let inputs: Vec<_> = (0..queues.len())
                .map(|queue| scratch.dir.join(format!("in_{port}_{queue}.pcap")))
                .collect();
            for (input, frames) in inputs.iter().zip(queues) {
                trafficgen::write_pcap(input, frames).expect("write input pcap");
            }
            let files: Vec<_> = (0..tx_files)
                .map(|queue| scratch.dir.join(format!("out_{port}_{queue}.pcap")))
                .collect();
            vdevs.push(pcap_vdev(port, &inputs, &files, self.infinite_rx));
            outputs.push(files);
        }
        let mut args = self.command_line(&scratch.prefix, vdevs);
        let stats_path = scratch.dir.join("stats.json");
        if self.stats_json {
            args.extend(["--stats-json".into(), stats_path.display().to_string()]);
        }

        let mut child = scratch.spawn(&self.bin, &args);
        let mut before_stop = Vec::new();
        let exited = match self.stop {
            Some((signal, after)) => child.wait_for_stderr(&scratch, "forwarding").or_else(|| {
                thread::sleep(after);
                child.signal(signal);
                None
            }),
            None => child
                .wait_for_main_loop(&scratch)
                .or_else(|| child.wait_until_idle(&scratch.dir))
                .or_else(|| {
                    // What was sent while forwarding, before shutdown flushes.
                    before_stop = scratch.read_outputs(&outputs);
                    child.signal("INT");
                    None
                }),
        };
        let status = exited.unwrap_or_else(|| {
            child
                .wait_timeout(EXIT_TIMEOUT)
                .unwrap_or_else(|| panic!("{}: no exit within {EXIT_TIMEOUT:?} of a signal", scratch.describe()))
        });
        let mut outcome = scratch.outcome(&self.bin, status, &outputs);
        outcome.before_stop = before_stop;
        if self.stats_json {
            // Unparsable (a run that failed before writing it) is None: the
            // test's exit-status check then shows why, with the stderr.
            outcome.stats = fs::read_to_string(&stats_path)
                .ok()
                .and_then(|text| serde_json::from_str(&text).ok());
        }
        outcome
    }
}

/// Runs `bin` with the harness's EAL arguments, `eal_args`, `--`, `app_args`,
/// and waits for it to exit by itself (for command-line error tests).
pub fn run_cli(bin: &Path, eal_args: &[&str], app_args: &[&str]) -> Outcome {
    let scratch = RunDir::new();
    let eal_args: Vec<String> = eal_args.iter().map(|&a| a.into()).collect();
    let mut args = virtual_eal(512, &scratch.prefix, &eal_args);
    args.extend(eal_args);
    args.push("--".into());
    args.extend(app_args.iter().map(|&a| a.into()));
    let mut child = scratch.spawn(bin, &args);
    let status = child
        .wait_timeout(EXIT_TIMEOUT)
        .unwrap_or_else(|| panic!("{}: still running after {EXIT_TIMEOUT:?}", scratch.describe()));
    scratch.outcome(bin, status, &[])
}

/// What a forwarder did.
pub struct Outcome {
    pub status: ExitStatus,
    pub stdout: String,
    pub stderr: String,
    /// Per port, per TX file (queue), the frames written there.
    pub outputs: Vec<Vec<Vec<Vec<u8>>>>,
    /// The same, read while the forwarder still ran, just before SIGINT
    /// (empty if it exited by itself).
    pub before_stop: Vec<Vec<Vec<Vec<u8>>>>,
    /// What `--stats-json` wrote, with [`Run::stats_json`].
    pub stats: Option<serde_json::Value>,
    /// EAL started (it logged the CPUs it found).
    pub eal_started: bool,
    /// l3fwd-rs ran `rte_eal_cleanup` (its debug line says so). Every run
    /// of it also checks its EAL runtime folder went.
    pub eal_cleaned_up: bool,
}

impl Outcome {
    /// Frames sent by each port, its TX files concatenated in queue order
    /// (so in sending order only with one TX file per port).
    pub fn per_port(&self) -> Vec<Vec<Vec<u8>>> {
        self.outputs.iter().map(|files| files.concat()).collect()
    }

    /// The one `l3fwd-rs:` line of a run that failed cleanly: exit code 1,
    /// no panic, and exactly one such line (panics otherwise).
    pub fn error_line(&self) -> &str {
        let context = format!(
            "{}\n--- stdout\n{}\n--- stderr\n{}",
            self.status, self.stdout, self.stderr
        );
        assert_eq!(self.status.code(), Some(1), "{context}");
        assert!(!self.stderr.contains("panicked"), "{context}");
        let lines: Vec<&str> = self.stderr.lines().filter(|l| l.starts_with("l3fwd-rs:")).collect();
        assert_eq!(lines.len(), 1, "one error line: {context}");
        lines[0]
    }

    /// Panics with the forwarder's output unless it exited successfully.
    pub fn assert_success(&self) -> &Self {
        assert!(
            self.status.success(),
            "forwarder failed: {}\n--- stdout\n{}\n--- stderr\n{}",
            self.status,
            self.stdout,
            self.stderr
        );
        self
    }
}

/// `--vdev=net_pcap0,rx_pcap=F`, F a file of one 60-byte frame in `dir`:
/// a port with one RX queue (a pcap port has one per rx_pcap file) and one
/// TX queue.
pub fn one_frame_pcap_vdev(dir: &Scratch) -> String {
    let input = dir.path("one-frame.pcap");
    trafficgen::write_pcap(&input, &[vec![0u8; 60]]).expect("write input pcap");
    format!("--vdev=net_pcap0,rx_pcap={}", input.display())
}

/// EAL's arguments for virtual ports only: no hugepages (`memory_mb` of
/// plain memory) unless the test gives a `--huge-dir`, no PCI scan, files
/// under `prefix`; but for `-m` or
/// `--file-prefix` when the test's own EAL arguments (`given`) set them
/// (EAL from 25.11 refuses an option given twice).
fn virtual_eal(memory_mb: u32, prefix: &str, given: &[String]) -> Vec<String> {
    let mut args = vec!["--no-pci".to_string()];
    if !given.iter().any(|arg| arg == "--huge-dir") {
        args.push("--no-huge".into());
    }
    for (option, value) in [("-m", memory_mb.to_string()), ("--file-prefix", prefix.to_string())] {
        if !given.iter().any(|arg| arg == option) {
            args.extend([option.to_string(), value]);
        }
    }
    args
}

/// `--vdev` for pcap port `port`: one RX queue per input file, one TX
/// queue per TX file.
fn pcap_vdev(port: usize, inputs: &[PathBuf], outputs: &[PathBuf], infinite_rx: bool) -> String {
    let mut vdev = format!("--vdev=net_pcap{port}");
    for input in inputs {
        vdev += &format!(",rx_pcap={}", input.display());
    }
    for output in outputs {
        vdev += &format!(",tx_pcap={}", output.display());
    }
    if infinite_rx {
        vdev += ",infinite_rx=1";
    }
    vdev
}

/// Number of lcores in an EAL `-l` list such as "0-1,3".
fn lcore_count(list: &str) -> usize {
    list.split(',')
        .map(|range| match range.split_once('-') {
            Some((first, last)) => lcore_id(last) - lcore_id(first) + 1,
            None => 1,
        })
        .sum()
}

fn lcore_id(id: &str) -> usize {
    id.trim()
        .parse()
        .unwrap_or_else(|_| panic!("lcore list: bad id {id:?}"))
}

/// Per-run resources: a scratch directory for pcaps and logs, a unique
/// EAL file prefix, and the right to run a forwarder (one at a time per
/// test process: on two cores, parallel busy-polling forwarders starve
/// each other and the timing heuristics).
struct RunDir {
    scratch: Scratch,
    dir: PathBuf,
    prefix: String,
    _one_at_a_time: MutexGuard<'static, ()>,
}

impl RunDir {
    fn new() -> Self {
        static RUNNING: Mutex<()> = Mutex::new(());
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        // A panicking test poisons the lock; the next run is unaffected.
        let guard = RUNNING.lock().unwrap_or_else(PoisonError::into_inner);
        let scratch = Scratch::new("run");
        let name = format!("{}-{}", std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed));
        RunDir {
            dir: scratch.dir().to_path_buf(),
            scratch,
            prefix: format!("l3fwd-test-{name}"),
            _one_at_a_time: guard,
        }
    }

    /// Starts `bin` in the workspace (for relative rule paths), its output
    /// going to files in the run directory (pipes could fill up and block it).
    fn spawn(&self, bin: &Path, args: &[String]) -> Running {
        let log = |name| File::create(self.dir.join(name)).expect("create log file");
        let child = Command::new(bin)
            .args(args)
            .current_dir(workspace())
            .env("RUST_LOG", LOG_FILTER)
            .stdin(Stdio::null())
            .stdout(log("stdout"))
            .stderr(log("stderr"))
            .spawn()
            .unwrap_or_else(|err| panic!("spawn {}: {err}", bin.display()));
        Running(child)
    }

    fn log(&self, name: &str) -> String {
        self.scratch.read(name)
    }

    fn describe(&self) -> String {
        format!(
            "run {}\n--- stdout\n{}\n--- stderr\n{}",
            self.dir.display(),
            self.log("stdout"),
            self.log("stderr")
        )
    }

    /// Reads the TX files (a missing one, e.g. after a failed start, reads
    /// as empty).
    fn read_outputs(&self, outputs: &[Vec<PathBuf>]) -> Vec<Vec<Vec<Vec<u8>>>> {
        let read = |path: &PathBuf| match trafficgen::read_pcap(path) {
            Ok(frames) => frames,
            Err(err) if err.kind() == io::ErrorKind::NotFound => Vec::new(),
            Err(err) => panic!("{}: {err}", path.display()),
        };
        outputs.iter().map(|files| files.iter().map(read).collect()).collect()
    }

    /// Collects logs and TX files; checks that l3fwd-rs took its EAL
    /// runtime folder with it (C l3fwd leaves its own: dropping the
    /// scratch removes it).
    fn outcome(&self, bin: &Path, status: ExitStatus, outputs: &[Vec<PathBuf>]) -> Outcome {
        let runtime = dpdk::runtime_dir_of(&self.prefix);
        if bin == l3fwd_rs() {
            let left: Vec<_> =
                fs::read_dir(&runtime).map_or(Vec::new(), |dir| dir.flatten().map(|e| e.file_name()).collect());
            assert!(
                !runtime.exists(),
                "{}: left its EAL runtime folder {} ({left:?})",
                self.describe(),
                runtime.display()
            );
        }
        let stderr = self.log("stderr");
        Outcome {
            status,
            stdout: self.log("stdout"),
            eal_started: stderr.contains("EAL: Detected CPU lcores"),
            eal_cleaned_up: stderr.contains("EAL cleaned up"),
            stderr,
            outputs: self.read_outputs(outputs),
            before_stop: Vec::new(),
            stats: None,
        }
    }
}

impl Drop for RunDir {
    /// Removes EAL's runtime files (several MB per prefix, never reused);
    /// the scratch directory goes unless the test is failing.
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(dpdk::runtime_dir_of(&self.prefix));
    }
}

/// l3fwd-rs's usual log lines, and its line saying EAL was cleaned up.
const LOG_FILTER: &str = "info,dpdk::eal=debug";

/// l3fwd-rs removes the EAL runtime folder of `prefix` when it exits
/// (also after a failed start); `context` says which run left it.
pub fn assert_runtime_folder_gone(prefix: &str, context: &str) {
    let folder = dpdk::runtime_dir_of(prefix);
    let left: Vec<_> = fs::read_dir(&folder).map_or(Vec::new(), |dir| dir.flatten().map(|e| e.file_name()).collect());
    assert!(
        !folder.exists(),
        "{context}: l3fwd-rs left its EAL runtime folder {} ({left:?})",
        folder.display()
    );
}

/// A forwarder process, killed if dropped while still running so that a
/// failing test leaves no busy-polling process behind.
struct Running(Child);

impl Running {
    /// Waits until the process has left the files in `dir` (its inputs and
    /// outputs) untouched for [`QUIET`], after at least [`MIN_RUN`]. Returns
    /// its status if it exited meanwhile.
    fn wait_until_idle(&mut self, dir: &Path) -> Option<ExitStatus> {
        let start = Instant::now();
        let mut last = Vec::new();
        let mut last_change = start;
        loop {
            if let Some(status) = self.0.try_wait().expect("wait for forwarder") {
                return Some(status);
            }
            let now = Instant::now();
            let offsets = open_file_offsets(self.0.id(), dir);
            if offsets != last {
                last = offsets;
                last_change = now;
            }
            if now - start >= MIN_RUN && now - last_change >= QUIET {
                return None;
            }
            assert!(
                now - start < MAX_RUN,
                "forwarder still busy after {MAX_RUN:?} in {}",
                dir.display()
            );
            thread::sleep(POLL);
        }
    }

    /// Waits until the forwarder says it entered its main loop (l3fwd-rs:
    /// "lcore N: forwarding", C: "entering main loop on lcore N" or, in
    /// eventdev mode, "entering lpm_event_loop_burst on lcore N", on either
    /// stream), so that a slow start on a loaded machine is not taken for
    /// idleness; returns its status if it exited meanwhile.
    fn wait_for_main_loop(&mut self, scratch: &RunDir) -> Option<ExitStatus> {
        self.wait_for_log(scratch, "main loop", |scratch| {
            let logs = scratch.log("stderr") + &scratch.log("stdout");
            logs.contains(": forwarding") || logs.contains("entering main loop") || logs.contains("_event_loop")
        })
    }

    /// Waits until the process's stderr contains `needle`; returns its
    /// status if it exited meanwhile.
    fn wait_for_stderr(&mut self, scratch: &RunDir, needle: &str) -> Option<ExitStatus> {
        self.wait_for_log(scratch, &format!("'{needle}'"), |scratch| {
            scratch.log("stderr").contains(needle)
        })
    }

    /// Waits until `found` sees `what` in the run's logs; returns the
    /// process's status if it exited meanwhile.
    fn wait_for_log(&mut self, scratch: &RunDir, what: &str, found: impl Fn(&RunDir) -> bool) -> Option<ExitStatus> {
        let start = Instant::now();
        loop {
            if let Some(status) = self.0.try_wait().expect("wait for forwarder") {
                return Some(status);
            }
            if found(scratch) {
                return None;
            }
            assert!(
                start.elapsed() < MAX_RUN,
                "{}: no {what} within {MAX_RUN:?}",
                scratch.describe()
            );
            thread::sleep(POLL);
        }
    }

    /// Sends `signal` ("INT", "TERM", ...).
    fn signal(&self, signal: &str) {
        let status = Command::new("kill")
            .args([&format!("-{signal}"), &self.0.id().to_string()])
            .status()
            .expect("run kill");
        assert!(status.success(), "kill -{signal} {}: {status}", self.0.id());
    }

    fn wait_timeout(&mut self, timeout: Duration) -> Option<ExitStatus> {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(status) = self.0.try_wait().expect("wait for forwarder") {
                return Some(status);
            }
            if Instant::now() >= deadline {
                return None;
            }
            thread::sleep(POLL);
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Ok(None) = self.0.try_wait() {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
}

/// The file offsets of the files under `dir` that process `pid` has open,
/// sorted. They move while the forwarder reads its pcap inputs (libpcap
/// reads ahead by blocks) and writes its outputs (the pcap PMD flushes
/// after every TX burst).
fn open_file_offsets(pid: u32, dir: &Path) -> Vec<(PathBuf, u64)> {
    let Ok(fds) = fs::read_dir(format!("/proc/{pid}/fd")) else {
        return Vec::new();
    };
    let mut offsets: Vec<_> = fds
        .flatten()
        .filter_map(|fd| {
            let target = fs::read_link(fd.path()).ok()?;
            if !target.starts_with(dir) {
                return None;
            }
            let info = fs::read_to_string(format!("/proc/{pid}/fdinfo/{}", fd.file_name().to_str()?)).ok()?;
            let pos = info.lines().find_map(|line| line.strip_prefix("pos:"))?;
            Some((target, pos.trim().parse().ok()?))
        })
        .collect();
    offsets.sort();
    offsets
}
