//! One measured run: start a forwarder, wait until it forwards, count its TX packets
//! over a window, stop it. Also how long it took to forward its first packet and how
//! much memory it holds.

use crate::telemetry::{self, Telemetry};
use rustix::process::{kill_process, Pid, Signal};
use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::thread::sleep;
use std::time::{Duration, Instant};

const PORTS: u16 = 2;
const STOP_TIMEOUT: Duration = Duration::from_secs(10);
const POLL: Duration = Duration::from_millis(100);
/// Until the first packet is sent, telemetry is read this often: the
/// resolution of [`Sample::first_tx_secs`].
const START_POLL: Duration = Duration::from_millis(10);

#[derive(Clone, Copy)]
pub struct Timing {
    /// EAL init with --no-huge, tables and pcap setup take seconds; more
    /// than this means something is wrong.
    pub start_timeout: Duration,
    pub warmup: Duration,
    pub window: Duration,
}

/// What one run measured.
#[derive(Clone, Copy, PartialEq, Debug)]
pub struct Sample {
    /// TX packets of both ports per second over the window, in millions.
    pub mpps: f64,
    /// Seconds from starting the process to the first telemetry read that
    /// shows a packet sent.
    pub first_tx_secs: f64,
    /// Peak resident memory (VmHWM) at the end of the window, in MB.
    pub rss_mb: f64,
    /// l3fwd-rs's busy TSC cycles per received packet over the whole run
    /// (its `--stats-json`): the work of its forwarding lcores, idle polls
    /// left out. None for C and testpmd, which do not count them.
    pub cycles_per_packet: Option<f64>,
}

/// How a process is asked to stop.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    Sigint,
    /// testpmd (not interactive) waits for a line on stdin, then exits cleanly.
    CloseStdin,
}

/// `sample`, unless the process it came from did not stop cleanly.
pub fn stopped_after(sample: Result<Sample, String>, stopped: Result<ExitStatus, String>) -> Result<Sample, String> {
    let sample = sample?;
    match stopped {
        Ok(_) => Ok(sample),
        Err(e) => Err(format!("measured {:.2} Mpps, but {e}", sample.mpps)),
    }
}

/// A forwarder that has sent its first packets, with its telemetry socket;
/// killed if dropped while still running. Its EAL runtime directory is
/// removed when it stops.
pub struct Forwarding {
    proc: Proc,
    telemetry: Telemetry,
    prefix: String,
    /// Seconds from starting the process to the first telemetry read that
    /// shows a packet sent.
    pub first_tx_secs: f64,
}

impl Forwarding {
    /// Starts `cmd` (EAL file prefix `prefix`, output into `log`) and waits
    /// until it forwards, at most `timeout`. A process that does not is
    /// stopped and its EAL runtime directory removed (C l3fwd leaves it).
    pub fn start(cmd: Command, stop: Stop, prefix: &str, log: &Path, timeout: Duration) -> Result<Forwarding, String> {
        Self::wait_forwarding(cmd, stop, prefix, log, timeout).inspect_err(|_| {
            let _ = std::fs::remove_dir_all(dpdk::runtime_dir_of(prefix));
        })
    }

    fn wait_forwarding(
        cmd: Command,
        stop: Stop,
        prefix: &str,
        log: &Path,
        timeout: Duration,
    ) -> Result<Forwarding, String> {
        let started = Instant::now();
        let mut proc = Proc::spawn(cmd, stop, log)?;
        let wait_until = |what: &str| {
            if started.elapsed() > timeout {
                return Err(format!("{what} after {}s", timeout.as_secs()));
            }
            sleep(START_POLL);
            Ok(())
        };
        let path = telemetry::socket_path(prefix);
        let telemetry = loop {
            proc.check_alive()?;
            if let Ok(t) = Telemetry::connect(&path) {
                break t;
            }
            wait_until("no telemetry socket")?;
        };
        let mut run = Forwarding {
            proc,
            telemetry,
            prefix: prefix.to_string(),
            first_tx_secs: 0.0,
        };
        // Warm-up starts once packets flow, so slow start-up does not eat into it.
        while run
            .telemetry
            .opackets(PORTS)
            .map_err(|e| run.proc.why_lost(e))?
            .unwrap_or(0)
            == 0
        {
            wait_until("forwarded nothing")?;
        }
        run.first_tx_secs = started.elapsed().as_secs_f64();
        Ok(run)
    }

    /// Its TX rate over `timing.window`, after `timing.warmup`.
    pub fn sample(&mut self, timing: &Timing) -> Result<Sample, String> {
        sleep(timing.warmup);
        let (before, start) = (self.opackets()?, Instant::now());
        sleep(timing.window);
        let (after, end) = (self.opackets()?, Instant::now());
        let rss_mb = peak_rss_mb(self.pid()).ok_or("cannot read the process's memory use")?;
        Ok(Sample {
            mpps: after.saturating_sub(before) as f64 / (end - start).as_secs_f64() / 1e6,
            first_tx_secs: self.first_tx_secs,
            rss_mb,
            cycles_per_packet: None,
        })
    }

    /// Freezes the process (SIGSTOP) with its tables, pool and ports as
    /// they are, so that another can run alone; [`Self::resume`] goes on.
    pub fn pause(&self) -> Result<(), String> {
        self.proc.signal(Signal::STOP)
    }

    pub fn resume(&self) -> Result<(), String> {
        self.proc.signal(Signal::CONT)
    }

    /// See [`Telemetry::set_timeout`].
    pub fn set_telemetry_timeout(&self, timeout: Duration) -> Result<(), String> {
        self.telemetry
            .set_timeout(timeout)
            .map_err(|e| format!("telemetry: {e}"))
    }

    pub fn pid(&self) -> u32 {
        self.proc.child.id()
    }

    /// TX packets of both ports so far.
    pub fn opackets(&mut self) -> Result<u64, String> {
        match self.telemetry.opackets(PORTS) {
            Ok(Some(n)) => Ok(n),
            Ok(None) => Err("ports disappeared from telemetry".into()),
            Err(e) => Err(self.proc.why_lost(e)),
        }
    }

    /// Stops the process ([`Proc::stop_cleanly`]).
    pub fn stop(&mut self) -> Result<ExitStatus, String> {
        self.proc.stop_cleanly()
    }

    /// [`Self::stop`] for a process whose exit may be slow (under
    /// valgrind): killed for not stopping in time is no failure, only a
    /// note (`Some`); exiting with an error still is one.
    pub fn stop_slowly(&mut self) -> Result<Option<String>, String> {
        match self.proc.stop() {
            Ok(status) => self.proc.ended_well(status).map(|_| None),
            Err(killed) => Ok(Some(killed)),
        }
    }
}

impl Drop for Forwarding {
    fn drop(&mut self) {
        // EAL leaves its runtime files behind; one directory per run would pile up.
        let _ = self.proc.stop();
        let _ = std::fs::remove_dir_all(dpdk::runtime_dir_of(&self.prefix));
    }
}

/// VmHWM of process `pid`: the most memory it has held resident, in MB.
fn peak_rss_mb(pid: u32) -> Option<f64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find_map(|l| l.strip_prefix("VmHWM:"))?;
    let kb: f64 = line.trim().strip_suffix("kB")?.trim().parse().ok()?;
    Some(kb / 1024.0)
}

/// A running forwarder (or other program); killed if dropped while still
/// running (an error path or a panic).
pub struct Proc {
    child: Child,
    stdin: Option<ChildStdin>,
    log: PathBuf,
}

impl Proc {
    /// Starts `cmd` with stdout and stderr into `log`.
    pub fn spawn(mut cmd: Command, stop: Stop, log: &Path) -> Result<Proc, String> {
        let out = File::create(log).map_err(|e| format!("cannot create {}: {e}", log.display()))?;
        let err = out.try_clone().map_err(|e| e.to_string())?;
        let stdin = if stop == Stop::CloseStdin {
            Stdio::piped()
        } else {
            Stdio::null()
        };
        let child = cmd.stdin(stdin).stdout(out).stderr(err).spawn();
        let mut child = child.map_err(|e| format!("cannot start {}: {e}", cmd.get_program().to_string_lossy()))?;
        Ok(Proc {
            stdin: child.stdin.take(),
            child,
            log: log.to_path_buf(),
        })
    }

    fn signal(&self, signal: Signal) -> Result<(), String> {
        kill_process(Pid::from_child(&self.child), signal).map_err(|e| format!("{signal:?}: {e}"))
    }

    /// Ok while running; else how it ended, with its last words.
    pub fn check_alive(&mut self) -> Result<(), String> {
        match self.child.try_wait() {
            Ok(None) => Ok(()),
            Ok(Some(status)) => Err(format!("exited early ({status}): {}", exit_reason(&self.log))),
            Err(e) => Err(e.to_string()),
        }
    }

    /// [`Self::stop`], and an exit with an error is a failure too: a
    /// forwarder that crashed at exit or found a leak failed.
    pub fn stop_cleanly(&mut self) -> Result<ExitStatus, String> {
        let status = self.stop()?;
        self.ended_well(status)
    }

    /// `status` if it is a clean exit; else how it ended, with its last words.
    fn ended_well(&self, status: ExitStatus) -> Result<ExitStatus, String> {
        if status.success() {
            Ok(status)
        } else {
            Err(format!(
                "asked to stop, it exited with an error ({status}): {}",
                exit_reason(&self.log)
            ))
        }
    }

    /// Telemetry fails when the process exits; its own error then says more than ours.
    fn why_lost(&mut self, err: std::io::Error) -> String {
        let deadline = Instant::now() + STOP_TIMEOUT;
        while Instant::now() < deadline {
            if let Err(exited) = self.check_alive() {
                return exited;
            }
            sleep(POLL);
        }
        format!("telemetry: {err}")
    }

    /// Asks the process to stop and waits for it; kills it if it does not go in time.
    pub fn stop(&mut self) -> Result<ExitStatus, String> {
        if let Ok(Some(status)) = self.child.try_wait() {
            return Ok(status);
        }
        // A paused process takes no signal but SIGKILL until it goes on.
        let _ = self.signal(Signal::CONT);
        if self.stdin.take().is_none() {
            let _ = self.signal(Signal::INT);
        }
        let deadline = Instant::now() + STOP_TIMEOUT;
        while Instant::now() < deadline {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Ok(status);
            }
            sleep(POLL);
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
        Err(format!(
            "it ignored the stop request for {}s and was killed",
            STOP_TIMEOUT.as_secs()
        ))
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// The error that made a program exit: rte_exit's "Cause:" line (EAL may log more after
/// it while cleaning up), else the last non-empty line.
fn exit_reason(log: &Path) -> String {
    let Ok(file) = File::open(log) else {
        return String::new();
    };
    let lines: Vec<String> = BufReader::new(file).lines().map_while(Result::ok).collect();
    let cause = lines.iter().rev().find(|l| l.trim_start().starts_with("Cause:"));
    let last = || lines.iter().rev().find(|l| !l.trim().is_empty());
    cause.or_else(last).map_or_else(String::new, |l| l.trim().to_string())
}

/// Busy cycles per received packet from an l3fwd-rs `--stats-json` file
/// (the sum over its lcores); None if it holds none.
pub fn cycles_per_packet(stats_json: &Path) -> Option<f64> {
    let text = std::fs::read_to_string(stats_json).ok()?;
    let stats: serde_json::Value = serde_json::from_str(&text).ok()?;
    let forwarded = &stats["forwarded"];
    let (cycles, rx) = (forwarded["busy_cycles"].as_f64()?, forwarded["rx"].as_f64()?);
    (rx > 0.0).then(|| cycles / rx)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The state letter of /proc/PID/stat: `T` when stopped by a signal.
    fn state(pid: u32) -> char {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
        stat.rsplit(')').next().unwrap().trim_start().chars().next().unwrap()
    }

    /// Whether process `pid` ignores SIGINT (its SigIgn mask).
    fn ignores_sigint(pid: u32) -> bool {
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
        let mask = status.lines().find_map(|l| l.strip_prefix("SigIgn:")).unwrap();
        u64::from_str_radix(mask.trim(), 16).unwrap() & (1 << (Signal::INT.as_raw() - 1)) != 0
    }

    /// Waits at most STOP_TIMEOUT for `done`.
    fn wait_for(what: &str, done: impl Fn() -> bool) {
        let deadline = Instant::now() + STOP_TIMEOUT;
        while !done() {
            assert!(Instant::now() < deadline, "{what}: not within {STOP_TIMEOUT:?}");
            sleep(START_POLL);
        }
    }

    #[test]
    fn a_paused_process_still_stops_when_asked() {
        use std::os::unix::process::ExitStatusExt;
        let log = std::env::temp_dir().join(format!("l3fwd-bench-pause-{}.log", std::process::id()));
        // SIGINT set back to its default: a shell's background jobs inherit it ignored.
        let mut sleeper = Command::new("perl");
        sleeper.args(["-e", "$SIG{INT} = 'DEFAULT'; sleep 60"]);
        let mut proc = Proc::spawn(sleeper, Stop::Sigint, &log).unwrap();
        let pid = proc.child.id();
        wait_for("SIGINT back to its default", || !ignores_sigint(pid));
        proc.signal(Signal::STOP).unwrap();
        wait_for("paused", || state(pid) == 'T');
        let status = proc.stop().expect("ended by its SIGINT, not killed");
        assert_eq!(status.signal(), Some(Signal::INT.as_raw()));
        std::fs::remove_file(&log).unwrap();
    }

    #[test]
    fn cycles_per_packet_come_from_the_forwarded_totals() {
        let dir = std::env::temp_dir().join(format!("l3fwd-bench-cycles-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = |name: &str, text: &str| {
            let path = dir.join(name);
            std::fs::write(&path, text).unwrap();
            path
        };
        let busy = file("busy.json", r#"{"forwarded": {"busy_cycles": 700, "rx": 10}}"#);
        assert_eq!(cycles_per_packet(&busy), Some(70.0));
        let idle = file("idle.json", r#"{"forwarded": {"busy_cycles": 0, "rx": 0}}"#);
        assert_eq!(cycles_per_packet(&idle), None);
        let cut = file("cut.json", r#"{"forwarded": {"busy_"#);
        assert_eq!(cycles_per_packet(&cut), None);
        assert_eq!(cycles_per_packet(&dir.join("absent.json")), None);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
