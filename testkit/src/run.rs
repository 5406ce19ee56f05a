//! A forwarder (l3fwd-rs or DPDK's C l3fwd) on virtual ports, as a child
//! process: [`Run`] says how; [`Run::run`] replays pcap ports until the
//! forwarder goes idle and collects what it sent, [`Run::start`] hands a
//! running [`Process`] to the test, [`run_cli`] waits for a run that ends
//! by itself.
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

use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Output, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{MutexGuard, OnceLock};
use std::thread;
use std::time::{Duration, Instant};

use crate::process::{one_at_a_time, Process, Stop, EXIT_TIMEOUT};
use crate::{binary, workspace, Scratch};

/// A run is over once its files have not moved for this long...
const QUIET: Duration = Duration::from_millis(300);
/// ...but not before this: EAL init alone takes a few hundred ms.
const MIN_RUN: Duration = Duration::from_secs(1);
/// A forwarder still busy after this is stuck; also the longest start.
const MAX_RUN: Duration = Duration::from_secs(20);
const POLL: Duration = Duration::from_millis(50);

/// l3fwd-rs's usual log lines, and its line saying EAL was cleaned up.
const LOG_FILTER: &str = "info,dpdk::eal=debug";

/// Our forwarder.
pub fn l3fwd_rs() -> PathBuf {
    binary("l3fwd-rs", "l3fwd-rs")
}

/// Its control client.
pub fn l3fwd_ctl() -> PathBuf {
    binary("l3fwd-rs", "l3fwd-ctl")
}

/// The build folder of the calling test (`target/`, or the one of another
/// DPDK: `make test DPDK=24.11` builds in `target/dpdk-24.11`): above
/// `PROFILE/deps/`, where test binaries are.
pub fn target_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("test binary path");
    exe.ancestors().nth(3).expect("target/PROFILE/deps/TEST").to_path_buf()
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

/// `l3fwd-ctl --file-prefix PREFIX args...` with `stdin` as its input:
/// what it did, whatever that is.
pub fn ctl(prefix: &str, args: &[&str], stdin: &str) -> Output {
    let mut child = Command::new(l3fwd_ctl())
        .arg("--file-prefix")
        .arg(prefix)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run l3fwd-ctl");
    child
        .stdin
        .take()
        .expect("its stdin")
        .write_all(stdin.as_bytes())
        .expect("write to l3fwd-ctl");
    child.wait_with_output().expect("wait for l3fwd-ctl")
}

/// `--vdev=net_pcap0,rx_pcap=F`, F a file of one 60-byte frame in `dir`:
/// a port with one RX queue (a pcap port has one per rx_pcap file) and one
/// TX queue.
pub fn one_frame_pcap_vdev(dir: &Scratch) -> String {
    let input = dir.path("one-frame.pcap");
    trafficgen::write_pcap(&input, &[vec![0u8; 60]]).expect("write input pcap");
    format!("--vdev=net_pcap0,rx_pcap={}", input.display())
}

/// `-p` and `--config` of most runs: ports 0 and 1, each with one RX queue
/// polled by lcore 0.
pub const TWO_PORTS: &[&str] = &["-p", "0x3", "--config", "(0,0,0),(1,0,0)"];

/// An EAL file prefix unique to this process and call: `l3fwd-test-NAME-PID-N`.
pub fn unique_prefix(name: &str) -> String {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    format!(
        "l3fwd-test-{name}-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
}

/// A forwarder run on virtual ports: port P is the P-th [`Run::port`],
/// [`Run::port_queues`] or [`Run::ring_port`] call, `net_pcapP` or
/// `net_ringP`, then the vdevs of [`Run::eal_args`].
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

    /// Asks for `--stats-json` and puts what it wrote in [`Outcome::stats`]
    /// ([`Run::run`]), or in the file `stats.json` of the scratch
    /// directory ([`Run::start`]).
    pub fn stats_json(mut self) -> Self {
        self.stats_json = true;
        self
    }

    /// The EAL lcore list (`-l`), e.g. "0" or "0-1", or map to CPUs
    /// (`--lcores`), e.g. "0@0,1@0,2@1" (then give [`Run::tx_files`]).
    /// Left out when [`Run::eal_args`] has `-l` or `--lcores`.
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
    pub fn eal_args(self, args: &[&str]) -> Self {
        args.iter().fold(self, |run, &arg| run.eal_arg(arg))
    }

    /// One more EAL argument.
    pub fn eal_arg(mut self, arg: impl Into<String>) -> Self {
        self.eal_args.push(arg.into());
        self
    }

    /// Application arguments (after `--`).
    pub fn args(self, args: &[&str]) -> Self {
        args.iter().fold(self, |run, &arg| run.arg(arg))
    }

    /// One more application argument.
    pub fn arg(mut self, arg: impl Into<String>) -> Self {
        self.app_args.push(arg.into());
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
        if !self.eal_args.iter().any(|a| a == "-l" || a == "--lcores") {
            // A map of lcores to CPUs (`0@0,1@0`) is --lcores; a list, -l.
            let flag = if self.lcores.contains('@') { "--lcores" } else { "-l" };
            args.extend([flag.into(), self.lcores.clone()]);
        }
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
            // Relative rule paths (configs/...) are the workspace's.
            .current_dir(workspace());
        command
    }

    /// Starts the forwarder on the vdevs of [`Run::eal_args`], with a
    /// unique file prefix (`name` in it) and its logs (`l3fwd.stdout`,
    /// `.stderr`) and `--stats-json` (`stats.json`, with
    /// [`Run::stats_json`]) in `dir`, and waits until it forwards ("lcore
    /// N: forwarding" on its stderr, at most `timeout`). Panics, with its
    /// logs, if it exits first.
    pub fn start(mut self, dir: &Scratch, name: &str, timeout: Duration) -> Process {
        if std::mem::take(&mut self.stats_json) {
            let path = dir.path("stats.json").display().to_string();
            self.app_args.extend(["--stats-json".into(), path]);
        }
        let prefix = unique_prefix(name);
        let mut process = Process::spawn(self.command(&prefix), &prefix, &dir.path("l3fwd"), Stop::Sigint)
            .unwrap_or_else(|err| panic!("start {}: {err}", self.bin.display()));
        process.wait_for_stderr(": forwarding", timeout);
        process
    }

    /// Runs the forwarder until it has been idle for a while (or as
    /// [`Run::stop_with`] says), stops it with SIGINT and collects what it
    /// sent. Panics if it does not settle or stop. One run at a time per
    /// test process ([`one_at_a_time`]).
    pub fn run(self) -> Outcome {
        let run = RunDir::new();
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
                .map(|queue| run.dir.path(&format!("in_{port}_{queue}.pcap")))
                .collect();
            for (input, frames) in inputs.iter().zip(queues) {
                trafficgen::write_pcap(input, frames).expect("write input pcap");
            }
            let files: Vec<_> = (0..tx_files)
                .map(|queue| run.dir.path(&format!("out_{port}_{queue}.pcap")))
                .collect();
            vdevs.push(pcap_vdev(port, &inputs, &files, self.infinite_rx));
            outputs.push(files);
        }
        let mut args = self.command_line(&run.prefix, vdevs);
        let stats_path = run.dir.path("stats.json");
        if self.stats_json {
            args.extend(["--stats-json".into(), stats_path.display().to_string()]);
        }

        let mut child = run.spawn(&self.bin, &args);
        let mut before_stop = Vec::new();
        let exited = match self.stop {
            Some((signal, after)) => wait_for_log(&mut child, "'forwarding'", |p| p.stderr().contains("forwarding"))
                .or_else(|| {
                    thread::sleep(after);
                    signal_or_panic(&child, signal);
                    None
                }),
            None => wait_for_main_loop(&mut child)
                .or_else(|| wait_until_idle(&mut child, run.dir.dir()))
                .or_else(|| {
                    // What was sent while forwarding, before shutdown flushes.
                    before_stop = read_outputs(&outputs);
                    signal_or_panic(&child, "INT");
                    None
                }),
        };
        let status = exited.unwrap_or_else(|| {
            child
                .wait_timeout(EXIT_TIMEOUT)
                .unwrap_or_else(|| panic!("no exit within {EXIT_TIMEOUT:?} of a signal: {}", child.describe()))
        });
        let mut outcome = outcome(&child, &self.bin, status, &outputs);
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
    let run = RunDir::new();
    let eal_args: Vec<String> = eal_args.iter().map(|&a| a.into()).collect();
    let mut args = virtual_eal(512, &run.prefix, &eal_args);
    args.extend(eal_args);
    args.push("--".into());
    args.extend(app_args.iter().map(|&a| a.into()));
    let mut child = run.spawn(bin, &args);
    let status = child
        .wait_timeout(EXIT_TIMEOUT)
        .unwrap_or_else(|| panic!("still running after {EXIT_TIMEOUT:?}: {}", child.describe()));
    outcome(&child, bin, status, &[])
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

/// EAL's arguments for virtual ports only: no hugepages (`memory_mb` of
/// plain memory) unless the test gives a `--huge-dir`, no PCI scan, files
/// under `prefix`; but for `-m` or `--file-prefix` when the test's own EAL
/// arguments (`given`) set them (EAL from 25.11 refuses an option given
/// twice).
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
pub fn pcap_vdev(port: usize, inputs: &[PathBuf], outputs: &[PathBuf], infinite_rx: bool) -> String {
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

/// Per-run resources of [`Run::run`] and [`run_cli`]: a scratch directory
/// for pcaps and logs, a unique EAL file prefix, and the right to run a
/// forwarder ([`one_at_a_time`]).
struct RunDir {
    dir: Scratch,
    prefix: String,
    _one_at_a_time: MutexGuard<'static, ()>,
}

impl RunDir {
    fn new() -> Self {
        let guard = one_at_a_time();
        RunDir {
            dir: Scratch::new("run"),
            prefix: unique_prefix("run"),
            _one_at_a_time: guard,
        }
    }

    /// Starts `bin` in the workspace (for relative rule paths).
    fn spawn(&self, bin: &Path, args: &[String]) -> Process {
        let mut command = Command::new(bin);
        command.args(args).current_dir(workspace()).env("RUST_LOG", LOG_FILTER);
        Process::spawn(command, &self.prefix, &self.dir.path("forwarder"), Stop::Sigint)
            .unwrap_or_else(|err| panic!("spawn {}: {err}", bin.display()))
    }
}

fn signal_or_panic(child: &Process, signal: &str) {
    child
        .signal(signal)
        .unwrap_or_else(|err| panic!("{err}: {}", child.describe()));
}

/// Reads the TX files (a missing one, e.g. after a failed start, reads as
/// empty).
fn read_outputs(outputs: &[Vec<PathBuf>]) -> Vec<Vec<Vec<Vec<u8>>>> {
    let read = |path: &PathBuf| match trafficgen::read_pcap(path) {
        Ok(frames) => frames,
        Err(err) if err.kind() == io::ErrorKind::NotFound => Vec::new(),
        Err(err) => panic!("{}: {err}", path.display()),
    };
    outputs.iter().map(|files| files.iter().map(read).collect()).collect()
}

/// Collects logs and TX files; checks that l3fwd-rs took its EAL runtime
/// folder with it (C l3fwd leaves its own: dropping the process removes
/// it).
fn outcome(child: &Process, bin: &Path, status: ExitStatus, outputs: &[Vec<PathBuf>]) -> Outcome {
    if bin == l3fwd_rs() {
        let runtime = dpdk::runtime_dir_of(child.prefix());
        let left: Vec<_> =
            fs::read_dir(&runtime).map_or(Vec::new(), |dir| dir.flatten().map(|e| e.file_name()).collect());
        assert!(
            !runtime.exists(),
            "left its EAL runtime folder {} ({left:?}): {}",
            runtime.display(),
            child.describe()
        );
    }
    let stderr = child.stderr();
    Outcome {
        status,
        stdout: child.stdout(),
        eal_started: stderr.contains("EAL: Detected CPU lcores"),
        eal_cleaned_up: stderr.contains("EAL cleaned up"),
        stderr,
        outputs: read_outputs(outputs),
        before_stop: Vec::new(),
        stats: None,
    }
}

/// Waits until the forwarder says it entered its main loop (l3fwd-rs:
/// "lcore N: forwarding", C: "entering main loop on lcore N" or, in
/// eventdev mode, "entering lpm_event_loop_burst on lcore N", on either
/// stream), so that a slow start on a loaded machine is not taken for
/// idleness; returns its status if it exited meanwhile.
fn wait_for_main_loop(child: &mut Process) -> Option<ExitStatus> {
    wait_for_log(child, "main loop", |p| {
        let logs = p.stderr() + &p.stdout();
        logs.contains(": forwarding") || logs.contains("entering main loop") || logs.contains("_event_loop")
    })
}

/// Waits until `found` sees `what` in the run's logs; returns the
/// process's status if it exited meanwhile.
fn wait_for_log(child: &mut Process, what: &str, found: impl Fn(&Process) -> bool) -> Option<ExitStatus> {
    match child.wait_until(MAX_RUN, found) {
        Ok(()) => None,
        Err(Some(status)) => Some(status),
        Err(None) => panic!("no {what} within {MAX_RUN:?}: {}", child.describe()),
    }
}

/// Waits until the process has left the files in `dir` (its inputs and
/// outputs) untouched for [`QUIET`], after at least [`MIN_RUN`]. Returns
/// its status if it exited meanwhile.
fn wait_until_idle(child: &mut Process, dir: &Path) -> Option<ExitStatus> {
    let start = Instant::now();
    let mut last = Vec::new();
    let mut last_change = start;
    loop {
        if let Some(status) = child.try_wait() {
            return Some(status);
        }
        let now = Instant::now();
        let offsets = open_file_offsets(child.pid(), dir);
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lcore_lists_are_counted() {
        assert_eq!(lcore_count("0"), 1);
        assert_eq!(lcore_count("0-1,3"), 3);
    }

    #[test]
    fn the_tests_own_memory_and_prefix_are_not_given_twice() {
        let given = ["-m".to_string(), "64".to_string()];
        let args = virtual_eal(512, "p", &given);
        assert_eq!(args, ["--no-pci", "--no-huge", "--file-prefix", "p"]);
        let huge = [
            "--huge-dir".to_string(),
            "/mnt".to_string(),
            "--file-prefix".to_string(),
        ];
        assert_eq!(virtual_eal(512, "p", &huge), ["--no-pci", "-m", "512"]);
    }

    #[test]
    fn lcores_given_with_the_eal_arguments_replace_the_default() {
        let run = Run::new("l3fwd").eal_args(&["--lcores", "1@1"]).two_ports();
        let line = run.command_line("p", vec!["--vdev=net_null0".into()]);
        assert!(!line.contains(&"-l".to_string()), "{line:?}");
        let run = Run::new("l3fwd").lcores("0-1");
        let line = run.command_line("p", Vec::new());
        let at = line.iter().position(|a| a == "-l").expect("-l");
        assert_eq!(line[at + 1], "0-1");
    }
}
